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

# ---- golden JSON ---------------------------------------------------------------------
golden() { # name args... (paths relative to ROOT: a diagnostic's span names the file as given)
    name=$1; shift
    (cd "$ROOT" && "$CAKEC" cost "$@" --json) > "$TMP/$name.json" 2> "$TMP/$name.err"
    rc=$?
    if [ "$UPDATE" = 1 ]; then cp "$TMP/$name.json" "$G/$name.json"; ok; return; fi
    if [ $rc -ne 0 ]; then bad "$name: exit $rc: $(cat "$TMP/$name.err")"; return; fi
    if cmp -s "$TMP/$name.json" "$G/$name.json"; then ok; else
        bad "$name: differs from $G/$name.json"; diff "$G/$name.json" "$TMP/$name.json" | head -5; fi
}
UPDATE=0
[ "${1:-}" = "--update" ] && UPDATE=1
for f in "$ROOT"/examples/*.tir; do
    golden "$(basename "$f" .tir)" "examples/$(basename "$f")"
done
golden softmax_warp_h200 "examples/softmax.tir" --kernel softmax_warp --device h200
golden gemm_sm80_h200 "examples/gemm_sm80.tir" --device h200
golden rmsnorm_mi300x "examples/rmsnorm.tir" --target gfx942
golden rmsnorm_mi250x "examples/rmsnorm.tir" --target gfx90a --shape M=4096,N=4096
golden attn_causal "examples/flash_attn_fwd.tir" --shape BH=128,S=4096 --set CAUSAL=1
golden sweep_gemm_sm90 "examples/gemm_sm90.tir" --shape M=4096,N=4096,K=4096 --sweep BN=128,256 STAGES=3,4
[ "$UPDATE" = 1 ] && { echo "updated $pass goldens"; exit 0; }

# ---- properties (one python process runs the cakec calls) ------------------------------
python3 - "$CAKEC" "$ROOT" > "$TMP/prop.txt" <<'PY'
import json, subprocess, sys
cakec, root = sys.argv[1], sys.argv[2]
def cost(ex, *a):
    p = subprocess.run([cakec, "cost", "%s/examples/%s.tir" % (root, ex), "--json"] + list(a),
                       capture_output=True, text=True)
    return json.loads(p.stdout)
def t(ex, *a):
    return cost(ex, *a)["cost"]["time_ms"]
def mono(name, xs, up=True):
    ok = all(b >= a for a, b in zip(xs, xs[1:])) if up else all(b <= a for a, b in zip(xs, xs[1:]))
    print("ok" if ok else "FAIL: %s not monotonic: %s" % (name, xs))
# more bytes (a longer copy, a longer row) never predicts faster
mono("copy over N", [t("copy", "--shape", "N=%d" % n) for n in (1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28)])
mono("rmsnorm over N", [t("rmsnorm", "--shape", "M=16384,N=%d" % n) for n in (1024, 2048, 4096, 8192)])
# more FLOPs (a longer K) never predicts faster
mono("gemm_sm90 over K", [t("gemm_sm90", "--shape", "M=4096,N=4096,K=%d" % k) for k in (512, 1024, 2048, 4096, 8192)])
# more stages never keep less data in flight per block
for ex in ("gemm_sm90", "gemm_sm80", "flash_attn_fwd_d64"):
    mono(ex + " in flight over STAGES",
         [cost(ex, "--set", "STAGES=%d" % s)["cost"]["in_flight"]["block_bytes"] for s in (2, 3, 4)])
# more stages never make a pipeline's latency bound longer (Little's law per pipeline)
for ex in ("gemm_sm90", "gemm_sm80", "flash_attn_fwd_d64"):
    mono(ex + " pipeline latency over STAGES",
         [cost(ex, "--set", "STAGES=%d" % s)["cost"]["in_flight"]["pipeline_ms"] for s in (2, 3, 4)], up=False)
# the interval holds the prediction
for ex in ("copy", "vector_add", "rmsnorm", "layernorm", "softmax", "gemm_sm80", "gemm_sm90",
           "gemm_sm90_persistent", "gemm_bias_act", "gemm_fp8", "flash_attn_fwd", "flash_attn_fwd_d64"):
    c = cost(ex)["cost"]
    lo, hi = c["interval_ms"]
    print("ok" if 0 < lo <= c["time_ms"] <= hi else "FAIL: %s interval %s vs %s" % (ex, c["interval_ms"], c["time_ms"]))
# causal attention predicts faster than the full one
a, b = t("flash_attn_fwd", "--set", "CAUSAL=1"), t("flash_attn_fwd")
print("ok" if a < b else "FAIL: causal %s not below %s" % (a, b))
# the sweep is sorted by predicted time, the points that cannot launch last (infeasible, with why);
# BN=256,STAGES=4 needs 192 KiB of shared memory, over sm_80's: skipped (E0501), not costed
sw = cost("gemm_sm80", "--sweep", "BN=128,256", "STAGES=2,3,4")
rows = sw["sweep"]
s = [r["time_ms"] for r in rows if r["feasible"]]
bad = [r for r in rows if not r["feasible"]]
print("ok" if s == sorted(s) and len(rows) == 5 and sw["skipped"] == ["BN=256,STAGES=4"]
      and rows[:len(s)] == [r for r in rows if r["feasible"]]
      and all(r["cost"]["occupancy"]["blocks_per_sm"] == 0 and "cannot launch" in r["infeasible"] for r in bad)
      else "FAIL: sweep %s" % [(r["set"], r["time_ms"], r.get("infeasible")) for r in rows])
# unswizzled shared tiles: bank conflicts, predicted slower and said
a = cost("gemm_sm80", "--device", "h200")["cost"]
p = subprocess.run([cakec, "cost", root + "/tests/cost/noswizzle.tir", "--device", "h200", "--json"],
                   capture_output=True, text=True)
b = json.loads(p.stdout)["cost"]
print("ok" if b["resources_ms"]["shared"] > 4 * a["resources_ms"]["shared"] and
      any("8-way" in n for n in b["assumptions"]) else "FAIL: no bank conflicts for noswizzle.tir")
# a spilling variant says `measure`
v = cost("gemm_sm80", "--set", "BM=256,BN=256")["cost"]["verdict"]
print("ok" if v == "measure" else "FAIL: gemm_sm80 256x256 verdict %s" % v)
PY
while read -r line; do
    case $line in ok) ok ;; *) bad "${line#FAIL: }" ;; esac
done < "$TMP/prop.txt"
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
