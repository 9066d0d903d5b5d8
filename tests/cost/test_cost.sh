#!/bin/sh
# test_cost.sh — `cakec cost` (docs/cost-model.md): golden JSON predictions of
# every example at fixed inputs (built-in calibration constants, so the goldens
# do not move when bench/cost/*.json is recalibrated), properties of the model
# seen from outside, and its diagnostics (never an internal error). Prints
# `N passed, N failed`.
#   sh tests/cost/test_cost.sh            (CAKEC names the cakec binary)
#   sh tests/cost/test_cost.sh --update   rewrite tests/cost/golden/*.json
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
G=$ROOT/tests/cost/golden
CAKE_COST_DIR=none
export CAKE_COST_DIR
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
TMP=${TMPDIR:-/tmp}/cake_cost_test.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
# a field of the cost JSON on stdin: jf PATH (python-free: the value after "name":)
jf() { python3 -c "import json,sys; d=json.load(sys.stdin); [d:=d[k] if not k.isdigit() else d[int(k)] for k in sys.argv[1].split('.')]; print(d)" "$1"; }

# ---- golden JSON ---------------------------------------------------------------------
golden() { # name args...
    name=$1; shift
    "$CAKEC" cost "$@" --json > "$TMP/$name.json" 2> "$TMP/$name.err"
    rc=$?
    if [ "$UPDATE" = 1 ]; then cp "$TMP/$name.json" "$G/$name.json"; ok; return; fi
    if [ $rc -ne 0 ]; then bad "$name: exit $rc: $(cat "$TMP/$name.err")"; return; fi
    if cmp -s "$TMP/$name.json" "$G/$name.json"; then ok; else
        bad "$name: differs from $G/$name.json"; diff "$G/$name.json" "$TMP/$name.json" | head -5; fi
}
UPDATE=0
[ "${1:-}" = "--update" ] && UPDATE=1
for f in "$ROOT"/examples/*.tir; do
    golden "$(basename "$f" .tir)" "$f"
done
golden softmax_warp_h200 "$ROOT/examples/softmax.tir" --kernel softmax_warp --device h200
golden gemm_sm80_h200 "$ROOT/examples/gemm_sm80.tir" --device h200
golden rmsnorm_mi300x "$ROOT/examples/rmsnorm.tir" --target gfx942
golden rmsnorm_mi250x "$ROOT/examples/rmsnorm.tir" --target gfx90a --shape M=4096,N=4096
golden attn_causal "$ROOT/examples/flash_attn_fwd.tir" --shape BH=128,S=4096 --set CAUSAL=1
golden sweep_gemm_sm90 "$ROOT/examples/gemm_sm90.tir" --shape M=4096,N=4096,K=4096 --sweep BN=128,256 STAGES=3,4
[ "$UPDATE" = 1 ] && { echo "updated $pass goldens"; exit 0; }

# ---- properties ----------------------------------------------------------------------------
t() { "$CAKEC" cost "$@" --json | jf cost.time_ms; }
# more bytes (a longer copy, a longer row) never predicts faster
prev=0
for n in 1048576 4194304 16777216 67108864 268435456; do
    x=$(t "$ROOT/examples/copy.tir" --shape N=$n)
    python3 -c "import sys; sys.exit(0 if $x >= $prev else 1)" && ok || bad "copy N=$n: $x ms < $prev ms"
    prev=$x
done
prev=0
for n in 1024 2048 4096 8192; do
    x=$(t "$ROOT/examples/rmsnorm.tir" --shape M=16384,N=$n)
    python3 -c "import sys; sys.exit(0 if $x >= $prev else 1)" && ok || bad "rmsnorm N=$n: $x ms < $prev ms"
    prev=$x
done
# more FLOPs (a longer K) never predicts faster
prev=0
for k in 512 1024 2048 4096 8192; do
    x=$(t "$ROOT/examples/gemm_sm90.tir" --shape M=4096,N=4096,K=$k)
    python3 -c "import sys; sys.exit(0 if $x >= $prev else 1)" && ok || bad "gemm_sm90 K=$k: $x ms < $prev ms"
    prev=$x
done
# more stages never keep less data in flight per block
for ex in gemm_sm90 gemm_sm80 flash_attn_fwd_d64; do
    prev=0
    for s in 2 3 4; do
        x=$("$CAKEC" cost "$ROOT/examples/$ex.tir" --set STAGES=$s --json | jf cost.in_flight.block_bytes)
        python3 -c "import sys; sys.exit(0 if $x >= $prev else 1)" && ok || bad "$ex STAGES=$s: $x B in flight < $prev"
        prev=$x
    done
done
# the interval holds the prediction; a causal attention predicts faster than the full one
for f in "$ROOT"/examples/*.tir; do
    "$CAKEC" cost "$f" --json | python3 -c "import json,sys; c=json.load(sys.stdin)['cost']; lo,hi=c['interval_ms']; sys.exit(0 if lo <= c['time_ms'] <= hi and c['time_ms'] > 0 else 1)" \
        && ok || bad "$(basename "$f"): interval does not hold the prediction"
done
a=$(t "$ROOT/examples/flash_attn_fwd.tir" --set CAUSAL=1); b=$(t "$ROOT/examples/flash_attn_fwd.tir")
python3 -c "import sys; sys.exit(0 if $a < $b else 1)" && ok || bad "causal attention $a ms not below $b ms"
# the sweep is sorted by predicted time
"$CAKEC" cost "$ROOT/examples/gemm_sm80.tir" --sweep BN=128,256 STAGES=2,3,4 --json |
    python3 -c "import json,sys; s=[r['time_ms'] for r in json.load(sys.stdin)['sweep']]; sys.exit(0 if s == sorted(s) and len(s) == 6 else 1)" \
    && ok || bad "sweep not sorted or not 6 rows"
# a spilling variant says `measure`
"$CAKEC" cost "$ROOT/examples/gemm_sm80.tir" --set BM=256,BN=256 --json | jf cost.verdict | grep -qx measure \
    && ok || bad "gemm_sm80 256x256 (spills) is not marked measure"
# text output, --compare, --svg
"$CAKEC" cost "$ROOT/examples/rmsnorm.tir" | grep -q "^  bottleneck  dram" && ok || bad "text output"
"$CAKEC" cost "$ROOT/examples/gemm_sm90.tir" --compare "$ROOT/examples/gemm_sm90_persistent.tir" | grep -q "predicted" \
    && ok || bad "--compare"
"$CAKEC" cost "$ROOT/examples/gemm_sm90.tir" --svg "$TMP/r.svg" > /dev/null && grep -q "</svg>" "$TMP/r.svg" \
    && ok || bad "--svg"

# ---- diagnostics: exit 1 with the code, never 2 ----------------------------------------
diag() { # code args...
    code=$1; shift
    "$CAKEC" cost "$@" --json > "$TMP/d.json" 2>&1
    rc=$?
    if [ $rc -eq 1 ] && grep -q "\"code\":\"$code\"" "$TMP/d.json"; then ok; else bad "expected $code (exit 1), got exit $rc: $(head -c 300 "$TMP/d.json")"; fi
}
diag E1001 "$ROOT/examples/copy.tir" --device tpu9
diag E1002 "$ROOT/examples/gemm_sm90.tir" --device a100
diag E1002 "$ROOT/examples/copy.tir" --target gfx942 --device h200
diag E1003 "$ROOT/tests/cost/noshape.tir"
diag E1005 "$ROOT/examples/copy.tir" --sweep UNROLL
diag E1006 "$ROOT/examples/copy.tir" --svg /nonexistent/dir/r.svg
diag E0112 "$ROOT/examples/copy.tir" --target sm_99
diag E0002 "$ROOT/examples/copy.tir" --set NOPE=3
diag E0961 "$ROOT/examples/rmsnorm.tir" --set ITERS=1
diag E0970 "$ROOT/examples/gemm_sm90.tir" --target sm_100a
CAKE_COST_DIR=$ROOT/tests/cost/badcalib "$CAKEC" cost "$ROOT/examples/gemm_sm90.tir" --json > "$TMP/w.json"
[ $? -eq 0 ] && grep -q '"code":"W1001"' "$TMP/w.json" && ok || bad "W1001 for a broken calibration file"
CAKE_COST_DIR=$ROOT/bench/cost "$CAKEC" cost "$ROOT/examples/gemm_sm90.tir" --json | grep -q 'bench/cost/h200.json' \
    && ok || bad "bench/cost/h200.json is not read"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
