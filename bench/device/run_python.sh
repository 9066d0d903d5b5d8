#!/bin/bash
# run_python.sh — `import cake` on the device in one call (builds nothing there):
# bench/device/python_device.py checks every cake.ops op against torch on >= 50
# shapes, two kernels on two torch streams overlapping, ordering with torch's own
# kernels on one stream, a CUDA graph of cake.ops.gemm + rms_norm, torch.compile
# (fullgraph) of an MLP of torch.ops.cake.*, the call overhead of a cached kernel
# beside a bare launch and a torch op of the same size, and the llama_mlp example;
# the summary table is printed last.
#   usage (on the device machine, from the repo root):  bash bench/device/run_python.sh
#   expects .carry/ from bench/device/carry.sh (.carry/python/cake: the module)
#   environment: OUT (results), DEADLINE (seconds, default 95)
# Output: $OUT/python_device.json, $OUT/python_log.txt
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PYTHONPATH=.carry/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1
O=${OUT:-/tmp/cake-out}
mkdir -p "$O"
export OUT=$O
D=${DEADLINE:-95}
export DEADLINE=$((D - 5))
if [ ! -f .carry/python/cake/_cake.abi3.so ]; then
    echo "run_python.sh: .carry/python/cake/_cake.abi3.so is missing (bench/device/carry.sh)"
    exit 1
fi
timeout -k 3 "$D" python3 bench/device/python_device.py > "$O/python_log.txt" 2>&1
rc=$?
[ $rc -eq 124 ] && echo "run_python.sh: python_device.py ran past $D s (killed)" >> "$O/python_log.txt"
# the table (the script prints it last), or the log's tail when it did not get there
if grep -q "^== import cake on the device" "$O/python_log.txt"; then
    grep -v "^-- " "$O/python_log.txt" | sed -n '/^== import cake on the device/,$p'
else
    tail -30 "$O/python_log.txt"
fi
echo "run_python.sh: exit $rc"
exit $rc
