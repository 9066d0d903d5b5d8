#!/bin/bash
# run_python.sh — `import cake` on the device in one call (builds nothing there):
# bench/device/python_device.py checks every cake.ops op against torch on >= 50
# shapes, two kernels on two torch streams overlapping, ordering with torch's own
# kernels on one stream, a CUDA graph of cake.ops.gemm + rms_norm, torch.compile
# (fullgraph) of an MLP of torch.ops.cake.*, the call overhead of a cached kernel
# beside a bare launch and a torch op of the same size, and the llama_mlp example;
# the summary table is printed last.
#   A section that hangs (a kernel that never ends) is stopped by the script itself
#   and recorded as failed; the script is then started again for the sections left,
#   until none is left or the time is up.
#   usage (on the device machine, from the repo root):  bash bench/device/run_python.sh
#   expects .carry/ from bench/device/carry.sh (.carry/python/cake: the module)
#   environment: OUT (results), DEADLINE (seconds, default 95), CAKE_OPS_AVOID
#   (library variants cake.ops must not pick, "op/name,..."); a library variant that
#   hung an op's check is added to it for the runs after (listed in $OUT/avoid.txt)
# Output: $OUT/python_device.json, $OUT/results.jsonl, $OUT/python_log.txt
set -u
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.carry/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
AVOID0=${CAKE_OPS_AVOID-}
O=${OUT:-/tmp/cake-out}
mkdir -p "$O"
export OUT=$O RESULTS=$O/results.jsonl PROGRESS=$O/progress.txt
D=${DEADLINE:-95}
END=$((SECONDS + D - 4))
LOG=$O/python_log.txt
P=bench/device/python_device.py
: > "$RESULTS"
: > "$LOG"
: > "$O/avoid.txt"
if [ ! -f .carry/python/cake/_cake.abi3.so ]; then
    echo "run_python.sh: .carry/python/cake/_cake.abi3.so is missing (bench/device/carry.sh)"
    exit 1
fi
runs=0
while [ $runs -lt 8 ]; do
    left=$((END - SECONDS))
    [ $left -lt 10 ] && break
    todo=$(python3 $P --todo)
    [ -z "$todo" ] && break
    runs=$((runs + 1))
    echo "== run $runs: $todo ($left s left)" >> "$LOG"
    : > "$PROGRESS"
    CAKE_OPS_AVOID=$(printf '%s\n' "$AVOID0" $(cat "$O/avoid.txt") | grep . | paste -sd, -)
    export CAKE_OPS_AVOID
    PY_SECTIONS=$todo DEADLINE=$left timeout -k 3 "$left" python3 $P >> "$LOG" 2>&1
    rc=$?
    [ $rc -eq 0 ] && continue
    python3 $P --killed $rc >> "$LOG" 2>&1      # the section it was in: failed
done
python3 $P --table
rc=$?
echo "run_python.sh: $runs runs, exit $rc; variants avoided after a hang: $(paste -sd' ' "$O/avoid.txt")"
exit $rc
