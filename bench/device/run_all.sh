#!/bin/bash
# run_all.sh — the whole device session in one call (builds nothing there):
# checks every SIMT example against its fp64 reference on several shapes,
# shows that wrong, faulting and endless kernels are reported, benchmarks the
# examples at their acceptance shapes, measures the peers (torch copy, Triton
# softmax, torch norms) in the same run, and writes a table.
#   usage (on the device machine, from the repo root):
#     bash bench/device/run_all.sh        # expects .carry/cakec, .carry/libcake-llvm.so
#                                         # (a -DCAKE_STATIC_LLVM=ON build) and libcjson.so.1
# Output: $OUT/table.md, $OUT/log.txt, $OUT/raw.tar.gz (every JSON document).
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
R=$O/raw
mkdir -p "$R"
LOG=$O/log.txt
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
say() { echo "$@" | tee -a "$LOG"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv \
    > "$R/gpu.txt" 2>&1
say "== device: $(tail -1 "$R/gpu.txt")"
say "== cakec: $($C --version)"

# 1. correctness: every SIMT example on several shapes (ragged ones included)
for ex in vector_add copy rmsnorm softmax layernorm; do
    $C run examples/$ex.tir --check --json > "$R/check_$ex.json" 2>>"$LOG"
    say "check $ex: exit $?"
done
$C run examples/softmax.tir --kernel softmax_warp --check --json > "$R/check_softmax_warp.json" 2>>"$LOG"
say "check softmax_warp: exit $?"

# 2. kernels that must be caught
for w in tests/oracle/wrong/*.tir; do
    b=$(basename "$w" .tir)
    $C run "$w" --check --json > "$R/wrong_$b.json" 2>>"$LOG"
    say "wrong kernel $b: exit $? (expect 1)"
done
timeout 120 $C run tests/gpu/endless.tir --check --shape N=1024 --timeout 3 --json \
    > "$R/endless.json" 2>>"$LOG"
say "endless kernel: exit $? (expect 3, after about 3 s)"
if [ -x .carry/test_rt_gpu ]; then
    .carry/test_rt_gpu >> "$LOG" 2>&1
    say "runtime GPU tests (fault and timeout in child processes): exit $?"
fi

# 3. speed at the acceptance shapes
bench() { # name file shape [extra args]
    local n=$1 f=$2 s=$3; shift 3
    $C run "$f" --bench --shape "$s" --runs 50 --json "$@" > "$R/bench_$n.json" 2>>"$LOG"
    say "bench $n ($s): exit $?"
}
bench copy examples/copy.tir N=268435456
bench vector_add examples/vector_add.tir N=268435456
bench softmax examples/softmax.tir M=32768,N=8192
bench rmsnorm_8192 examples/rmsnorm.tir M=32768,N=8192
# N = 4096 rows are short: 128 threads per row (4 vectors each) beat 256 (see RESULTS.md)
bench rmsnorm_4096 examples/rmsnorm.tir M=32768,N=4096 --set THREADS=128
bench layernorm_8192 examples/layernorm.tir M=32768,N=8192
bench layernorm_4096 examples/layernorm.tir M=32768,N=4096 --set THREADS=128

# 4. peers, same machine, same run
PYTHONUNBUFFERED=1 python3 bench/device/peers.py > "$R/peers.json" 2>>"$LOG"
say "peers: exit $?"

# 5. memory checker on the SIMT examples (small shapes)
if command -v compute-sanitizer > /dev/null; then
    for ex in vector_add copy rmsnorm softmax layernorm; do
        compute-sanitizer --tool memcheck --error-exitcode 9 $C run examples/$ex.tir --check \
            > "$R/memcheck_$ex.txt" 2>&1
        say "memcheck $ex: exit $? ($(grep -c 'ERROR SUMMARY: 0 errors' "$R/memcheck_$ex.txt") clean summaries)"
    done
    # the kernels with shared memory and barriers (block reductions): races and barrier misuse
    for ex in rmsnorm softmax layernorm; do
        for tool in racecheck synccheck; do
            compute-sanitizer --tool $tool --error-exitcode 9 $C run examples/$ex.tir --check \
                > "$R/${tool}_$ex.txt" 2>&1
            say "$tool $ex: exit $? ($(grep -c 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' "$R/${tool}_$ex.txt") clean summaries)"
        done
    done
fi

python3 bench/device/table.py "$R" > "$O/table.md" 2>>"$LOG"
tar -czf "$O/raw.tar.gz" -C "$O" raw && rm -rf "$R"
cat "$O/table.md"
