#!/bin/sh
# test_fresh.sh — `for ... fresh` (docs/tir.md 10.1): in the body of a `fresh` loop an
# element's coordinates read thread.x where the statement stands (an inline `mov` from
# %tid.x in the LLVM IR; none without the word), the printer keeps the word, `fresh` is
# still a name elsewhere, examples/flash_attn_fwd_pp3.tir (its consumer loop `fresh`)
# compiles to the PTX that CAKE_FRESH=1 gives the plain loop (the code bench/device/
# run_afwd3.sh timed), and with ptxas its causal consumers are spill-free with the word
# and spill without it (that part skipped without ptxas).
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_fresh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
P3=$ROOT/examples/flash_attn_fwd_pp3.tir
LOOP='for k in 0 .. nk fresh {'
grep -q "$LOOP" "$P3" && ok || bad "pp3's consumer loop is not fresh"
sed "s/$LOOP/for k in 0 .. nk {/" "$P3" > "$tmp/plain.tir"
asm() { grep -c 'mov.u32 $0, %tid.x;' "$1"; }
"$CAKEC" "$P3" --set CAUSAL=0 --emit llvm -o "$tmp/f.ll" --no-report && ok || bad "compile pp3"
"$CAKEC" "$tmp/plain.tir" --set CAUSAL=0 --emit llvm -o "$tmp/p.ll" --no-report && ok || bad "compile plain pp3"
a=$(asm "$tmp/f.ll") b=$(asm "$tmp/p.ll")
[ "$a" -gt 0 ] && ok || bad "fresh: no thread.x read in place"
[ "$b" = 0 ] && ok || bad "plain: $b thread.x reads in place"
for c in 0 1; do
    "$CAKEC" "$P3" --set CAUSAL=$c --emit ptx -o "$tmp/f$c.ptx" --no-report &&
        CAKE_FRESH=1 "$CAKEC" "$tmp/plain.tir" --set CAUSAL=$c --emit ptx -o "$tmp/e$c.ptx" --no-report &&
        cmp -s "$tmp/f$c.ptx" "$tmp/e$c.ptx" && ok || bad "CAUSAL=$c: fresh and CAKE_FRESH=1 differ"
done
"$CAKEC" "$P3" --emit tirl -o "$tmp/k.tirl" --no-report 2> /dev/null && grep -q 'nk fresh {' "$tmp/k.tirl" && ok ||
    bad "--emit tirl does not print fresh"
cat > "$tmp/name.tir" <<'TIR'
kernel nm
  target sm_90a
  arg y: global f32[128]
  grid [1]
  threads 128
{
  let fresh = 2.0
  for i in 0 .. 2 nohoist fresh {
    store y[thread.x] <- fresh
  }
}
TIR
"$CAKEC" check "$tmp/name.tir" > /dev/null 2>&1 && ok || bad "fresh as a name, nohoist fresh"
if "$CAKEC" "$ROOT/examples/fp8_quant.tir" -o "$tmp/q.ptx" --json 2> /dev/null | grep -q '"resources_from":"none'; then
    echo "no ptxas or nvJitLink here: spill part skipped"
else
    spills() { # FILE -> spill store bytes of pp3 CAUSAL=1
        "$CAKEC" "$1" --set CAUSAL=1 -o "$tmp/s.ptx" --json 2> /dev/null |
            sed -n 's/.*"name":"flash_attn_fwd_pp3"[^}]*"spill_store_bytes":\([0-9]*\).*/\1/p'
    }
    a=$(spills "$P3") b=$(spills "$tmp/plain.tir")
    [ "$a" = 0 ] && ok || bad "pp3 causal with fresh spills '$a' bytes"
    [ -n "$b" ] && [ "$b" -gt 0 ] && ok || bad "pp3 causal without fresh spills '$b' bytes (expected > 0)"
    echo "pp3 CAUSAL=1: $b bytes of spill stores without fresh, $a with"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
