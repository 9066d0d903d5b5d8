#!/bin/bash
# run_cost.sh — the cost model against the GPU in one call (issue 18), within $DEADLINE
# seconds (default 100):
#   1. measure   bench/cost/measure.py times (median of 20) every case of bench/cost/cases.tsv (the
#                training kernels and the held-out ones of tests/cost/heldout/, 3 shapes
#                each) in one process, each checked against a torch reference at the
#                shape it is timed at; a case that hangs is stopped by the watchdog,
#                recorded as failed, and the script goes on with the rest;
#   2. fit       `cakec calibrate` fits the constants on the training cases only and
#                predicts every case with them (bench/cost/calibrate: the method);
#   3. report    bench/cost/report.py: held-out error, the share within 25% of the
#                `model` cases, Spearman and the predicted-best gap per family, the
#                constants file with the command, the date and both errors; the
#                acceptance table of issue 18 last (held out, outside, train).
# The cases: training kernels (examples, library, bench/cost/train), the held-out ones
# (tests/cost/heldout) and the kernels written outside the project (tests/outside/kernels,
# split "outside", reported apart). A second fit counts on the source level
# (CAKE_COST_LEVEL=source) for comparison: its held-out line goes to the log.
# The peer: torch's own op for the families that have one (report.py, "peer" column).
#   usage (device machine, repo root):  bash bench/device/run_cost.sh
#   expects .carry/ from bench/device/carry.sh. Output under $OUT: measured.jsonl,
#   fit.json, h200.json (the constants: commit as bench/cost/h200.json), calibration.md,
#   calibration.json, log.txt; the summary table last on stdout.
set -u
O=${OUT:-/tmp/cake-out}
mkdir -p "$O"
export OUT=$O
D=${DEADLINE:-100}
T0=$SECONDS
left() { echo $((D - (SECONDS - T0))); }
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.carry/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
C=${CAKEC:-.carry/cakec}
LOG=$O/log.txt
: > "$O/measured.jsonl"
: > "$LOG"

# 1. measure: restart after a hang (the watchdog exits the process), skipping what is done
tries=0
while [ "$tries" -lt 6 ]; do
    l=$(($(left) - 12))   # 12 s stay for the two fits and the report
    [ "$l" -lt 14 ] && break
    timeout -k 2 $((l - 8)) python3 bench/cost/measure.py --runs 20 --deadline $((l - 12)) --skip-done >> "$LOG" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && break
    if [ -f "$O/progress.txt" ]; then   # the case that was running: failed
        python3 - "$O" "$rc" <<'PY'
import json, sys
o, rc = sys.argv[1], sys.argv[2]
r = json.load(open(o + "/progress.txt"))
r.update({"error": "hung or crashed (exit %s): stopped by the watchdog" % rc, "split": "?", "family": "?"})
open(o + "/measured.jsonl", "a").write(json.dumps(r) + "\n")
PY
        rm -f "$O/progress.txt"
    fi
    echo "run_cost.sh: measure.py exit $rc, restarting ($(left) s left)" | tee -a "$LOG"
    tries=$((tries + 1))
done
echo "run_cost.sh: $(grep -c meas_ms "$O/measured.jsonl") cases measured in $((SECONDS - T0)) s" | tee -a "$LOG"

# 2. fit on the training cases, predict all
t=$(($(left) - 6)); [ "$t" -lt 3 ] && t=3
timeout $t "$C" calibrate "$O/measured.jsonl" --device h200 -o "$O/h200.json" --json > "$O/fit.json" 2>> "$LOG"
echo "run_cost.sh: calibrate exit $?" | tee -a "$LOG"
# the same fit counted on the source level (the model before TIR-L counting), for comparison,
# when the time left allows it (the report needs a few seconds)
t=$(($(left) - 4)); [ "$t" -lt 1 ] && t=1
[ "$t" -ge 12 ] && CAKE_COST_LEVEL=source timeout $t "$C" calibrate "$O/measured.jsonl" --device h200 -o "$O/h200_source.json" \
    --json > "$O/fit_source.json" 2>> "$LOG"
echo "run_cost.sh: calibrate (source level) exit $?" | tee -a "$LOG"
python3 - "$O/h200_source.json" <<'PY' 2>> "$LOG" | tee -a "$LOG"
import json, sys
h = json.load(open(sys.argv[1]))["heldout"]
print("run_cost.sh: source level, held out: %d model cases, %.0f%% within 25%%, median |err| %.1f%%"
      % (h["model_cases"], 100 * h["model_within_25"], 100 * h["median_abs_err"]))
PY

# 3. the report (summary table last)
t=$(($(left) - 1)); [ "$t" -lt 3 ] && t=3
timeout $t python3 bench/cost/report.py --measured "$O/measured.jsonl" --fit "$O/fit.json" \
    --constants "$O/h200.json" --out "$O"
