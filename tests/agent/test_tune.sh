#!/bin/sh
# test_tune.sh — `cakec tune` without a GPU: cost and run come from
# fake_cakec.sh (CAKE_RUN_CMD). Checks the pruning by the cost model, the
# table, a faulting and a hanging candidate in the middle of the run (the run
# goes on), the best variant written as a .tir that checks clean, and the
# fallback when the cost model is unavailable.
set -eu
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export CAKE_RUN_CMD="$SRC/tests/agent/fake_cakec.sh"
chmod +x "$CAKE_RUN_CMD" 2>/dev/null || { cp "$CAKE_RUN_CMD" "$T/fake.sh"; chmod +x "$T/fake.sh"; CAKE_RUN_CMD=$T/fake.sh; }
export CAKEC
fail=0
pass=0
ok() { pass=$((pass + 1)); }
no() { echo "FAIL: $1"; fail=$((fail + 1)); }

# 1. one of 9 does not compile, the cost model rejects one and keeps the top 4
#    and one it is unsure of; of those, one faults and one hangs
rc=0
"$CAKEC" tune "$SRC/examples/gemm_sm90.tir" --space BM=64,128,256 STAGES=2,3,4 \
    --shape M=4096,N=4096,K=4096 --top 4 --child-timeout 2 -o "$T/best.tir" --json \
    >"$T/tune.json" 2>"$T/tune.err" || rc=$?
[ $rc -eq 0 ] && ok || no "tune exit $rc: $(cat "$T/tune.err")"
python3 - "$T/tune.json" <<'PY' && ok || no "tune JSON: $(cat "$T/tune.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["ok"] and j["command"] == "tune", j
assert j["variants"] == 9 and j["cost_model"] == "used", j
assert j["pruned"] == 4 and j["measured"] == 4 and j["failed"] == 2, j
rows = {r["set"]: r for r in j["table"]}
assert rows["BM=256,STAGES=4"]["status"] == "fault", rows["BM=256,STAGES=4"]
assert rows["BM=256,STAGES=2"]["status"] == "timeout", rows["BM=256,STAGES=2"]
assert rows["BM=256,STAGES=3"]["status"] == "invalid", rows["BM=256,STAGES=3"]
assert rows["BM=64,STAGES=2"]["status"] == "invalid" and "E0802" in rows["BM=64,STAGES=2"]["why"]
assert rows["BM=64,STAGES=4"]["status"] == "pruned-cost", rows["BM=64,STAGES=4"]
assert rows["BM=64,STAGES=3"]["status"] == "ok", rows["BM=64,STAGES=3"]   # "measure": kept
assert rows[""]["measured_ms"] == 1.0, rows[""]
assert rows["BM=256,STAGES=4"]["predicted_rank"] == 1
assert j["best"]["set"] == "BM=128,STAGES=3" and j["best"]["measured_ms"] == 0.8, j["best"]
assert abs(j["best"]["speedup_vs_defaults"] - 1.25) < 1e-9
assert j["predicted_best"]["set"] == "BM=256,STAGES=4" and j["predicted_best"]["measured_ms"] is None
assert j["predicted_best"]["spearman"] == 0.5    # predicted ranks 3 2 1, measured 3 1 2
PY
grep -q "kernel gemm_sm90<BM = 128, BN = 256, BK = 64, STAGES = 3, GROUP_M = 8>" "$T/best.tir" && ok \
    || no "best.tir header: $(grep '^kernel' "$T/best.tir")"
"$CAKEC" check "$T/best.tir" && ok || no "the written variant does not check clean"

# 2. text mode: the table and the summary
"$CAKEC" tune "$SRC/examples/gemm_sm90.tir" --space BM=128 STAGES=3,4 --top 2 -o "$T/b2.tir" \
    >"$T/tune.txt" 2>/dev/null || no "text tune failed"
grep -q "^best: --set BM=128,STAGES=3  0.8000 ms  (1.250x the file's defaults)" "$T/tune.txt" && ok \
    || no "text summary: $(cat "$T/tune.txt")"
grep -q "predicted best: BM=128,STAGES=4, 12.5% slower than the measured best" "$T/tune.txt" && ok \
    || no "predicted best line: $(cat "$T/tune.txt")"

# 3. without the cost model: said so, every variant measured up to --cap
rc=0
FAKE_NO_COST=1 "$CAKEC" tune "$SRC/examples/gemm_sm90.tir" --space BM=64,128 STAGES=3,4 --cap 3 \
    -o "$T/b3.tir" --json >"$T/nocost.json" 2>"$T/nocost.err" || rc=$?
grep -q "cost model is unavailable" "$T/nocost.err" && ok || no "no note on stderr: $(cat "$T/nocost.err")"
python3 - "$T/nocost.json" <<'PY' && ok || no "no-cost JSON: $(cat "$T/nocost.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["cost_model"] == "unavailable" and "E0004" in j["cost_note"], j
assert j["measured"] == 4 and j["pruned"] == 1, j          # 3 variants + the defaults; 1 over the cap
assert [r["status"] for r in j["table"]].count("over-cap") == 1
assert j["best"]["set"] == "BM=128,STAGES=3", j["best"]
PY
# 3b. the rank correlation: predicted ranks 4 3 2 1, measured 3.5 3.5 1 2: 1 - 6 * 2.5 / 60
"$CAKEC" tune "$SRC/examples/gemm_sm90.tir" --space BM=64,128 STAGES=3,4 --top 4 -o "$T/b4.tir" \
    >"$T/rho.txt" 2>/dev/null || no "rho tune failed"
grep -q "Spearman): 0.75" "$T/rho.txt" && ok || no "spearman: $(cat "$T/rho.txt")"

# 3c. --workers 2 over GPUs 0 and 1: the same table as one worker, each measurement
#     saying where it ran; two kinds of GPU among them: E1213 and no best
"$CAKEC" tune "$SRC/examples/gemm_sm90.tir" --space BM=128 STAGES=3,4 --top 4 --json \
    >"$T/w1.json" 2>/dev/null || no "tune, one worker"
"$CAKEC" tune "$SRC/examples/gemm_sm90.tir" --space BM=128 STAGES=3,4 --top 4 --json \
    --workers 2 --devices 0,1 >"$T/w2.json" 2>"$T/w2.err" || no "tune --workers 2: $(cat "$T/w2.err")"
python3 - "$T/w1.json" "$T/w2.json" <<'PY' && ok || no "tune --workers 2 table"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
strip = lambda j: [{k: v for k, v in r.items() if k != "measured_on"} for r in j["table"]]
assert strip(a) == strip(b) and a["best"] == b["best"], (a, b)
seen = {r["measured_on"]["visible_devices"] for r in b["table"] if "measured_on" in r}
assert seen == {"0", "1"}, seen
PY
rc=0
FAKE_MIXED=1 "$CAKEC" tune "$SRC/examples/gemm_sm90.tir" --space BM=128 STAGES=3,4 --top 4 --json \
    --workers 2 --devices 0,1 >"$T/mixed.json" 2>/dev/null || rc=$?
[ $rc -eq 1 ] && grep -q '"code":"E1213"' "$T/mixed.json" && ! grep -q '"best"' "$T/mixed.json" && ok ||
    no "two kinds of GPU: rc $rc $(cat "$T/mixed.json")"

# 4. a bad space is E1103
rc=0
"$CAKEC" tune "$SRC/examples/gemm_sm90.tir" --space BM --json >"$T/bad.json" 2>/dev/null || rc=$?
[ $rc -eq 1 ] && grep -q '"code":"E1103"' "$T/bad.json" && ok || no "bad space: rc $rc $(cat "$T/bad.json")"

# 5. nothing measurable is E1104 (the real cakec: no GPU here, or a GPU and a bad variant)
unset CAKE_RUN_CMD
rc=0
"$CAKEC" tune "$SRC/examples/vector_add.tir" --space VEC=3 --cap 1 --json >"$T/none.json" 2>/dev/null || rc=$?
if grep -q '"E0973"\|"no-gpu"' "$T/none.json" || [ $rc -eq 1 ]; then
    grep -q '"code":"E1104"' "$T/none.json" && ok || no "E1104: $(cat "$T/none.json")"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
