#!/bin/bash
# run_norms.sh — the row ops of the kernel library (rmsnorm, layernorm, softmax,
# cross_entropy, fp8_row_quantize) beside the best of torch eager / torch.compile, and
# the cost of a dispatch, in one call:
#   all       `lib bench ART --shapes bench/device/norms_shapes.txt --all`: every variant
#             whose domain holds, timed at each shape (all.jsonl; the data for a tuned table:
#             norms_tuned_h200.json, from bench/device/sweep.py tune)
#   fastest   the fastest variant of each shape again, `--check --sample` and timed (best.jsonl)
#   dispatch  the variant the artifact's table picks, `--check --sample` and timed (lib.jsonl)
#   cost      `lib select --repeat` per op (ns per call), `lib bench --overhead` (host time of
#             select + cake_lib_launch against the same launch prepared once), and a bare
#             cuLaunchKernel of an empty kernel with a norm's parameters (launch_floor.c)
#   peers     bench/device/sweep.py peers: torch eager, F.rms_norm, torch.compile (dynamic,
#             then specialised per shape while the time lasts), L2 flushed
#   table     norms_table.md, norms.json and the per-op summary, printed last
# The artifact is the carried one (.carry/python/cake/cake.cakelib, built here from this
# tree), with the tuned table bench/device/sweep_table_h200.json folded in. Every step
# has a timeout; honours $DEADLINE (seconds, default 60). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_norms.sh
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
DEADLINE=${DEADLINE:-60}
LOG=$O/norms_log.txt
S=bench/device/norms_shapes.txt
mkdir -p "$O"
: > "$LOG"
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
cnt() { local n; n=$(grep -c "$1" "$2" 2>/dev/null); echo "${n:-0}"; }
left() { echo $((DEADLINE - (SECONDS - T0))); }
t() {   # t LIMIT CMD...: CMD under LIMIT seconds, or what is left less a reserve of 4
    local lim=$1 l
    shift
    l=$(($(left) - 4))
    [ "$l" -lt "$lim" ] && lim=$l
    [ "$lim" -lt 2 ] && { say "skip (out of time): $*"; return 124; }
    timeout -k 2 "$lim" "$@"
}

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

b0=$SECONDS
t 12 "$C" lib bench "$LIB" --shapes "$S" --all --runs 5 --timeout 5 --json > "$O/all.jsonl" 2>> "$LOG"
say "every variant: exit $? in $((SECONDS - b0)) s, $(cnt '"bench_all"' "$O/all.jsonl") shapes"
python3 bench/device/norms_table.py best "$O/all.jsonl" > "$O/best.txt" 2>> "$LOG"
python3 bench/device/sweep.py tune "$O/all.jsonl" "NVIDIA H200" > "$O/norms_tuned_h200.json" 2>> "$LOG"

b0=$SECONDS
t 10 "$C" lib bench "$LIB" --shapes "$O/best.txt" --check --sample --runs 10 --timeout 5 --json \
    > "$O/best.jsonl" 2>> "$LOG"
say "fastest variants, checked: exit $? in $((SECONDS - b0)) s, $(cnt '"check_ok":true' "$O/best.jsonl") of $(cnt . "$O/best.txt") pass"
b0=$SECONDS
t 10 "$C" lib bench "$LIB" --shapes "$S" --check --sample --runs 10 --timeout 5 --json > "$O/lib.jsonl" 2>> "$LOG"
say "dispatched, checked: exit $? in $((SECONDS - b0)) s, $(cnt '"check_ok":true' "$O/lib.jsonl") pass"

# the cost of a dispatch
b0=$SECONDS
: > "$O/dispatch.txt"
for q in "rmsnorm M=16384,N=1024" "layernorm M=1915,N=1772" "softmax M=137906,N=273" \
         "cross_entropy B=2048,V=32000" "fp8_row_quantize M=760755,N=67"; do
    t 3 "$C" lib select "$LIB" --op "${q%% *}" --shape "${q#* }" --repeat 200000 >> "$O/dispatch.txt" 2>&1
done
t 5 "$C" lib bench "$LIB" --op rmsnorm --shape M=64,N=1024 --overhead >> "$O/dispatch.txt" 2>&1
t 5 "$C" lib bench "$LIB" --op softmax --shape M=64,N=1024 --overhead >> "$O/dispatch.txt" 2>&1
printf 'extern "C" __global__ void empty(float *a, float *b, float *c, float *d, int m, float eps)\n{ if (m < 0) a[threadIdx.x] = eps; }\n' > "$A/empty.cu"
if t 15 nvcc -arch=sm_90a -cubin -o "$A/empty.cubin" "$A/empty.cu" >> "$LOG" 2>&1 &&
   t 10 cc -O2 bench/device/launch_floor.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda \
        -o "$A/launch_floor" >> "$LOG" 2>&1; then
    t 5 "$A/launch_floor" "$A/empty.cubin" empty 2000 >> "$O/dispatch.txt" 2>&1
fi
say "dispatch cost in $((SECONDS - b0)) s:"
grep -E " -> |ns per call|dispatch:|bare_launch" "$O/dispatch.txt" | tee -a "$LOG"

p0=$SECONDS
SWEEP_RUNS=10 SWEEP_PEERS_BUDGET=$(( $(left) / 3 )) SWEEP_STATIC_UNTIL=$(( $(left) - 12 )) \
    t $(( $(left) - 6 )) python3 bench/device/sweep.py peers "$S" "$O/peers.jsonl" >> "$LOG" 2>&1
say "peers: exit $? in $((SECONDS - p0)) s, $(cnt . "$O/peers.jsonl") rows"

say "== norms (at $((SECONDS - T0)) s; ratio = peer ms / library ms; fastest = the best variant at the shape)"
timeout 10 python3 bench/device/norms_table.py table "$O/lib.jsonl" "$O/best.jsonl" "$O/peers.jsonl" \
    "$O/all.jsonl" "$O" | tee -a "$LOG"
