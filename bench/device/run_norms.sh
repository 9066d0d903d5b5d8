#!/bin/bash
# run_norms.sh — the row ops of the kernel library (rmsnorm, layernorm, softmax,
# cross_entropy, fp8_row_quantize) beside the best of torch eager / torch.compile, and
# the cost of a dispatch, in one call:
#   dispatch  `lib bench ART --shapes bench/device/norms_shapes.txt --check --sample --all`:
#             the variant the artifact's table picks, checked and timed, then every variant
#             whose domain holds, timed (lib.jsonl = all.jsonl; the data for a tuned table:
#             norms_tuned_h200.json, from bench/device/sweep.py tune)
#   fastest   the fastest variant of each shape where it is not the dispatched one, again,
#             `--check --sample` and timed (best.jsonl)
#   cost      `lib select --repeat` (ns per call), `lib bench --overhead` (host time of
#             select + cake_lib_launch against the same launch prepared once), with
#             NORMS_FLOOR=1 a bare cuLaunchKernel of an empty kernel (launch_floor.c)
#   peers     bench/device/sweep.py peers: torch eager, F.rms_norm, torch.compile specialised
#             per shape while the time lasts (NORMS_DYNAMIC=S: dynamic compiles in the first
#             S seconds too), L2 flushed
#   table     norms_table.md, norms.json and the per-op summary, printed last
# The artifact is the carried one (.carry/python/cake/cake.cakelib, built here from this
# tree), with the tuned table bench/device/sweep_table_h200.json folded in. Every step
# has a timeout; honours $DEADLINE (seconds, default 40). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_norms.sh
set -u
DEADLINE=${DEADLINE:-40}
T_RESERVE=4
. bench/device/lib.sh   # C, O, PATH and the rest; say, cnt, left, t
LOG=$O/norms_log.txt
S=bench/device/norms_shapes.txt
: > "$LOG"

A=$(mktemp -d "${TMPDIR:-/tmp}/norms.XXXXXX")
trap 'rm -rf "$A"' EXIT
LIB=${NORMS_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    b0=$SECONDS
    t 40 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $? in $((SECONDS - b0)) s"
fi
TABLE=bench/device/sweep_table_h200.json
if [ -f "$TABLE" ] && t 10 "$C" lib build "$LIB" --table "$TABLE" -o "$A/tuned.cakelib" >> "$LOG" 2>&1; then
    LIB=$A/tuned.cakelib
    say "artifact tuned with $TABLE"
fi
say "artifact: $LIB, shapes: $(grep -c '=' "$S")"

# one pass: the dispatched variant checked and timed, then every variant timed
b0=$SECONDS
t $(( $(left) * 45 / 100 )) "$C" lib bench "$LIB" --shapes "$S" --check --sample --all --runs 5 --timeout 5 \
    --json > "$O/lib.jsonl" 2>> "$LOG"
say "dispatched (checked) and every variant: exit $? in $((SECONDS - b0)) s, $(cnt '"check_ok":true' "$O/lib.jsonl") pass, $(cnt '"bench_all"' "$O/lib.jsonl") shapes"
cp "$O/lib.jsonl" "$O/all.jsonl"
python3 bench/device/sweep.py tune "$O/all.jsonl" "NVIDIA H200" > "$O/norms_tuned_h200.json" 2>> "$LOG"
# the fastest variant where it is not the dispatched one: checked (and timed again)
python3 bench/device/norms_table.py best "$O/all.jsonl" --not-dispatched > "$O/best.txt" 2>> "$LOG"
b0=$SECONDS
t $(( $(left) * 25 / 100 )) "$C" lib bench "$LIB" --shapes "$O/best.txt" --check --sample --runs 5 --timeout 5 --json \
    > "$O/best.jsonl" 2>> "$LOG"
say "fastest variants where not dispatched, checked: exit $? in $((SECONDS - b0)) s, $(cnt '"check_ok":true' "$O/best.jsonl") of $(cnt . "$O/best.txt") pass"

# the cost of a dispatch (NORMS_FLOOR=1: also a bare cuLaunchKernel, launch_floor.c)
b0=$SECONDS
: > "$O/dispatch.txt"
for q in "softmax M=137906,N=273" "fp8_row_quantize M=760755,N=67"; do
    t 3 "$C" lib select "$LIB" --op "${q%% *}" --shape "${q#* }" --repeat 200000 >> "$O/dispatch.txt" 2>&1
done
t 4 "$C" lib bench "$LIB" --op rmsnorm --shape M=64,N=1024 --overhead >> "$O/dispatch.txt" 2>&1
t 4 "$C" lib bench "$LIB" --op softmax --shape M=64,N=1024 --overhead >> "$O/dispatch.txt" 2>&1
if [ "${NORMS_FLOOR:-0}" = 1 ]; then
    printf 'extern "C" __global__ void empty(float *a, float *b, float *c, float *d, int m, float eps)\n{ if (m < 0) a[threadIdx.x] = eps; }\n' > "$A/empty.cu"
    if t 15 nvcc -arch=sm_90a -cubin -o "$A/empty.cubin" "$A/empty.cu" >> "$LOG" 2>&1 &&
       t 10 cc -O2 bench/device/launch_floor.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda \
            -o "$A/launch_floor" >> "$LOG" 2>&1; then
        t 5 "$A/launch_floor" "$A/empty.cubin" empty 2000 >> "$O/dispatch.txt" 2>&1
    fi
fi
say "dispatch cost in $((SECONDS - b0)) s:"
grep -E " -> |ns per call|dispatch:|bare_launch" "$O/dispatch.txt" | tee -a "$LOG"

p0=$SECONDS
SWEEP_RUNS=10 SWEEP_PEERS_BUDGET=${NORMS_DYNAMIC:-0} SWEEP_STATIC_UNTIL=$(( $(left) - 10 )) \
    t $(( $(left) - 6 )) python3 bench/device/sweep.py peers "$S" "$O/peers.jsonl" >> "$LOG" 2>&1
say "peers: exit $? in $((SECONDS - p0)) s, $(cnt . "$O/peers.jsonl") rows"

say "== norms (at $((SECONDS - T0)) s; ratio = peer ms / library ms; fastest = the best variant at the shape)"
timeout 10 python3 bench/device/norms_table.py table "$O/lib.jsonl" "$O/best.jsonl" "$O/peers.jsonl" \
    "$O/all.jsonl" "$O" | tee -a "$LOG"
