#!/bin/sh
# test_setmaxnreg_budget.sh — the fact W0902's spill form rests on (lib/cake_res.c):
# ptxas allocates the code after `setmaxnreg.inc N` within N registers, not within the
# entry count (.maxnreg) that its "Used R registers" line reports. attn_bwd at HD = 128
# (384 threads: .maxnreg 168, consumers raised to 240) is assembled with its consumers'
# budget set to 168 and to 240: the reported count stays 168 while the spills shrink (with
# ptxas 13.0: 664 -> 100 bytes of spill stores). Skipped (77) without ptxas.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
PTXAS=${CAKE_PTXAS:-$(command -v ptxas || echo /usr/local/cuda/bin/ptxas)}
[ -x "$PTXAS" ] || { echo "no ptxas here: skipped"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_nreg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
"$CAKEC" "$ROOT/examples/attn_bwd.tir" --set HD=128,CAUSAL=0 --emit ptx -o "$tmp/a.ptx" --no-report ||
    { echo "FAIL: compile"; exit 1; }
if grep -q '^\.maxnreg 168' "$tmp/a.ptx" && grep -q 'setmaxnreg.inc.sync.aligned.u32 240;' "$tmp/a.ptx"; then ok; else bad "no .maxnreg 168 / setmaxnreg.inc 240"; fi
spill() { # BUDGET -> "REGS STORES"
    sed "s/setmaxnreg.inc.sync.aligned.u32 240;/setmaxnreg.inc.sync.aligned.u32 $1;/" "$tmp/a.ptx" > "$tmp/b$1.ptx"
    "$PTXAS" -arch=sm_90a -v "$tmp/b$1.ptx" -o "$tmp/b$1.cubin" 2>&1 |
        sed -n -e 's/.* \([0-9]*\) bytes spill stores.*/s \1/p' -e 's/.*Used \([0-9]*\) registers.*/r \1/p' |
        sort | awk '{printf "%s ", $2}'
}
lo=$(spill 168) hi=$(spill 240)
set -- $lo; r168=$1 s168=$2
set -- $hi; r240=$1 s240=$2
[ "$r168" = 168 ] && [ "$r240" = 168 ] && ok || bad "reported registers $r168 / $r240, not the entry count 168"
[ -n "$s240" ] && [ "$s168" -gt "$s240" ] && ok || bad "spill stores at budget 168: $s168, at 240: $s240 (not fewer)"
echo "budget 168: $s168 bytes of spill stores, budget 240: $s240 (ptxas reports $r168 / $r240 registers)"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
