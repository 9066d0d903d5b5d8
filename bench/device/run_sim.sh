#!/bin/bash
# run_sim.sh — the H200 side of `run --sim` (docs/sim.md): every example of
# tests/sim/shapes.txt with plain `cakec run` (the device) at the same small
# ragged shapes and seed as the CI's `run --sim`, each checked against the fp64
# reference, with its outputs dumped (--dump-outputs) so that the simulator's
# outputs can be compared with the device's byte for byte or within bf16.
# usage (device machine, repo root): bash bench/device/run_sim.sh
# expects .carry/ from bench/device/carry.sh. Honours $DEADLINE (seconds, default 20).
# Output under $OUT: NAME.json / NAME.err per job, dumps.tar.gz (NAME/ARG.SHAPE.bin),
# sums.txt (sha256 of every dump), sim.tsv, and the summary table last on stdout.
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out-sim}
mkdir -p "$O/dumps"
DEADLINE=${DEADLINE:-20}
SEED=${SIM_SEED:-7}
T0=$(date +%s)

one_job() { # NAME FILE ARGS...
    local name=$1
    shift
    local left=$((DEADLINE - 2 - ($(date +%s) - T0)))
    if [ "$left" -lt 2 ]; then
        printf '%s\tskipped\t-\n' "$name" > "$O/$name.row"
        return
    fi
    local s=$EPOCHREALTIME
    timeout -k 1 "$left" "$C" run "$@" --seed "$SEED" --dump-outputs "$O/dumps/$name" --json \
        > "$O/$name.json" 2> "$O/$name.err"
    local rc=$?
    python3 - "$name" "$rc" "$s" "$EPOCHREALTIME" "$O/$name.json" > "$O/$name.row" <<'PY'
import json, sys
name, rc, s, e, path = sys.argv[1:]
try:
    doc = json.load(open(path))
except Exception:
    doc = {}
reps = doc.get("check", []) if isinstance(doc, dict) else []
ok = int(rc) == 0 and reps and all(r.get("ok") for r in reps)
err = max((r.get("max_rel_err", 0) for r in reps), default=-1)
print("%s\t%s\t%.2f\t%.3g" % (name, "pass" if ok else "FAIL(rc=%s)" % rc, float(e) - float(s), err))
PY
}
export -f one_job
export C O DEADLINE SEED T0

grep -v '^#' tests/sim/shapes.txt | grep . | \
    xargs -P 8 -L 1 bash -c 'one_job "$@"' _
(cd "$O/dumps" && find . -name '*.bin' | sort | xargs -r sha256sum) > "$O/sums.txt"
tar -C "$O" -czf "$O/dumps.tar.gz" dumps && rm -rf "$O/dumps"
cat "$O"/*.row | sort > "$O/sim.tsv"
rm -f "$O"/*.row
echo "# run_sim.sh: cakec run (device) at the run --sim shapes, seed $SEED"
printf '%-24s %-12s %8s %12s\n' job check seconds max_rel_err
awk -F'\t' '{printf "%-24s %-12s %8s %12s\n", $1, $2, $3, $4}' "$O/sim.tsv"
