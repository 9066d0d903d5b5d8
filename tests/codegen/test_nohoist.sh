#!/bin/sh
# test_nohoist.sh — `for ... nohoist` (docs/tir.md 10.1): the loop's LLVM IR carries
# llvm.licm.disable (and a loop without it does not), the printer keeps the word, and on
# examples/attn_bwd.tir (HD = 128, MSK = 0: the mask whose column indices LLVM hoists) the
# consumer loop with `nohoist` assembles spill-free where without it ptxas spills
# (the last part skipped without ptxas).
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_nohoist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
has() { if grep -q -- "$2" "$1"; then ok; else bad "$3: no /$2/ in $1"; fi; }
hasnt() { if grep -q -- "$2" "$1"; then bad "$3: unexpected /$2/"; else ok; fi; }
cat > "$tmp/k.tir" <<'TIR'
kernel nh
  target sm_90a
  arg x: global f32[N]
  arg y: global f32[N]
  grid [1]
  threads 128
  assume N % 128 == 0
{
  for i in 0 .. N / 128 nohoist {
    store y[i * 128 + thread.x] <- load x[i * 128 + thread.x] * 2.0
  }
}
TIR
sed 's/ nohoist {/ {/' "$tmp/k.tir" > "$tmp/h.tir"
"$CAKEC" "$tmp/k.tir" --emit llvm -o "$tmp/k.ll" --no-report && ok || bad "compile nohoist"
has "$tmp/k.ll" 'llvm.licm.disable' "nohoist -> llvm.licm.disable"
"$CAKEC" "$tmp/h.tir" --emit llvm -o "$tmp/h.ll" --no-report && ok || bad "compile plain"
hasnt "$tmp/h.ll" 'llvm.licm.disable' "plain loop"
"$CAKEC" "$tmp/k.tir" --emit tirl -o "$tmp/k.tirl" --no-report 2> /dev/null && has "$tmp/k.tirl" 'nohoist {' "printed" ||
    bad "--emit tirl"
if "$CAKEC" "$ROOT/examples/fp8_quant.tir" -o "$tmp/q.ptx" --json 2> /dev/null | grep -q '"resources_from":"none'; then
    echo "no ptxas or nvJitLink here: attn_bwd part skipped"
else
    spills() { # FILE -> spill store bytes of attn_bwd HD=128, MSK=0
        "$CAKEC" "$1" --set HD=128,CAUSAL=0,MSK=0 -o "$tmp/a.ptx" --json 2> /dev/null |
            sed -n 's/.*"name":"attn_bwd"[^}]*"spill_store_bytes":\([0-9]*\).*/\1/p'
    }
    grep -q 'for t in i0 .. nq nohoist {' "$ROOT/examples/attn_bwd.tir" && ok || bad "attn_bwd's consumer loop is not nohoist"
    sed 's/for t in i0 .. nq nohoist {/for t in i0 .. nq {/' "$ROOT/examples/attn_bwd.tir" > "$tmp/plain.tir"
    a=$(spills "$ROOT/examples/attn_bwd.tir") b=$(spills "$tmp/plain.tir")
    [ "$a" = 0 ] && ok || bad "attn_bwd with nohoist spills '$a' bytes"
    [ -n "$b" ] && [ "$b" -gt 0 ] && ok || bad "attn_bwd without nohoist spills '$b' bytes (expected > 0)"
    echo "attn_bwd HD=128 MSK=0: $b bytes of spill stores without nohoist, $a with"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
