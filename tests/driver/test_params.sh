#!/bin/sh
# test_params.sh — `--set` and `--shape` are honoured by `check` and agree
# with `run` and compiling (one parser, cake_parse_bindings): check --set
# verifies the bound instance, a value outside a parameter's declared values
# is E0006 for check and for compiling alike, an unknown name is E0002, a
# --shape that breaks an assume is E0961 (as for run), and
# the declared values of flash_attn_fwd's CAUSAL are all checked. Prints
# `N passed, N failed`.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
GEMM=$ROOT/examples/gemm_sm90.tir
FA=$ROOT/examples/flash_attn_fwd.tir
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
# expect CODE EXIT CMD...: the command exits EXIT and its JSON names CODE ("" none)
expect() {
    code=$1 want=$2
    shift 2
    out=$("$@" --json 2>/dev/null)
    rc=$?
    [ "$rc" -eq "$want" ] || { bad "$* exited $rc, expected $want"; return; }
    if [ -n "$code" ] && ! printf '%s' "$out" | grep -q "\"$code\""; then
        bad "$* did not report $code"
        return
    fi
    ok
}

expect "" 0 "$CAKEC" check "$GEMM"
expect E0501 1 "$CAKEC" check "$GEMM" --set STAGES=9
expect E0501 1 "$CAKEC" check "$GEMM" --set=STAGES=9
expect "" 0 "$CAKEC" check "$GEMM" --set STAGES=3
expect E0002 1 "$CAKEC" check "$GEMM" --set NOPE=3
expect E0002 1 "$CAKEC" check "$GEMM" --shape M=abc
expect "" 0 "$CAKEC" check "$GEMM" --shape M=8192,N=8192,K=4096
expect E0961 1 "$CAKEC" check "$GEMM" --shape K=100
expect "" 0 "$CAKEC" check "$FA"
expect "" 0 "$CAKEC" check "$FA" --set CAUSAL=1
expect E0006 1 "$CAKEC" check "$FA" --set CAUSAL=2
expect E0006 1 "$CAKEC" "$FA" --set CAUSAL=2 --emit tirl -o /dev/null
expect E0970 1 "$CAKEC" check "$FA" --kernel nope --set CAUSAL=1
# the compiled instance is the one --set names
if "$CAKEC" "$FA" --set CAUSAL=1 --emit tirl 2>/dev/null | head -1 | grep -q "CAUSAL = 1 in {0, 1}"; then
    ok
else
    bad "--set CAUSAL=1 --emit tirl does not print the bound value"
fi
# `-o -` is standard output, not a file named `-`
T=$(mktemp -d)
C=$(realpath "$CAKEC" 2>/dev/null || command -v "$CAKEC")
if (cd "$T" && "$C" "$FA" --emit tirl -o - 2>/dev/null | grep -q "kernel") && [ ! -e "$T/-" ]; then
    ok
else
    bad "-o - did not write to standard output"
fi
rm -rf "$T"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
