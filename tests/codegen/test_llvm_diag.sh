#!/bin/sh
# test_llvm_diag.sh — LLVM's own warnings (here: a factorless `unroll` on a loop
# whose start is the thread index, which LLVM cannot unroll fully) come out as
# CAKE's W0903 at the kernel, once per distinct message, and never as LLVM's raw
# "warning: <unknown>:0:0:" line on stderr; the verifier's W0301 names the loop.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_llvmdiag.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
has() { if grep -q -- "$2" "$1"; then ok; else bad "$3: no /$2/ in $(head -c 600 "$1")"; fi; }
hasnt() { if grep -q -- "$2" "$1"; then bad "$3: unexpected /$2/"; else ok; fi; }

f="$ROOT/tests/diag/verify/W0301_unroll_dynamic.tir"
"$CAKEC" "$f" --emit ptx -o "$tmp/k.ptx" --no-report 2> "$tmp/err.txt"
rc=$?
[ "$rc" = 0 ] && ok || bad "exit $rc (want 0: warnings only)"
has "$tmp/err.txt" 'W0301_unroll_dynamic.tir:3:1: warning\[W0903\]: LLVM warning: loop not unrolled' "W0903 at the kernel"
has "$tmp/err.txt" 'W0301_unroll_dynamic.tir:9:12: warning\[W0301\]' "W0301 at the loop's start"
hasnt "$tmp/err.txt" '<unknown>' "LLVM's raw line"
n=$(grep -c 'W0903' "$tmp/err.txt")
[ "$n" = 1 ] && ok || bad "W0903 reported $n times (want once)"
"$CAKEC" "$f" --emit ptx -o "$tmp/k.ptx" --no-report --json > "$tmp/k.json" 2> /dev/null
has "$tmp/k.json" '"code":"W0903"' "W0903 in the JSON document"
# a loop of compile-time bounds unrolls: no warning from either layer
"$CAKEC" "$ROOT/examples/attn_bwd_prep.tir" --emit ptx -o "$tmp/p.ptx" --no-report 2> "$tmp/p.txt"
hasnt "$tmp/p.txt" 'W0903\|W0301' "attn_bwd_prep"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
