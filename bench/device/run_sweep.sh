#!/bin/bash
# run_sweep.sh — the kernel library's acceptance sweep (issue 13) in one call:
#   shapes   bench/device/sweep.py shapes: 328 seeded log-uniform shapes of gemm,
#            gemm_fp8, rmsnorm, layernorm, softmax, cross_entropy, fp8_row_quantize
#            (SWEEP_MODE=variance: the 20 shapes of sweep_variance_shapes.txt and every
#            6th other one, 72 in all)
#   trial 1  `cakec lib bench ARTIFACT --shapes FILE --check --sample --json`, one process
#            per group (the artifact opened once): per shape the chosen variant, its
#            `lib run --check` verdict and its time
#   peers    sweep.py peers in one process beside it: cuBLAS / torch._scaled_mm / torch
#            eager / torch.compile, each timed as a launch and as a CUDA graph replay with
#            the device's work alone between the events (gated.py), the fastest kept
#   trials   SWEEP_TRIALS (2; 3 in variance mode) in all, A B A B: after the peers' trial
#            k the library is timed again (`lib bench --shapes`, no check, the fastest
#            shapes first), then the peers' trial k+1 (the peers within 1.2x of a shape's
#            best); each side's time is its best median over the trials, the spread kept.
#            torch.compile per shape runs after the peers' trial 1 while the time lasts,
#            first where the library leads most (sweep.py peers --ours)
#   variance the 20 shapes of sweep_variance_shapes.txt also with the old peer method
#            (events around a Python loop); `sweep.py variance` prints old / new / ours per
#            trial (variance.txt). SWEEP_MODE=variance runs trial 2 with the host loaded
#            (3 busy loops per core) to show what host time does to each method
#   clocks   nvidia-smi every 250 ms through the call (clocks.csv: SM / memory MHz, power)
#   table    sweep_table.md, sweep.json, sweep.svg and the per-op summary, printed last
# Same method on both sides: L2 flushed before every run, median of 10 runs, device
# events around the device's work only (the runtime's gate; gated.py's hold for torch),
# the GPU warmed to its steady clock first. The artifact is the one carry.sh built here
# (.carry/python/cake/cake.cakelib), retabled with bench/device/sweep_table_h200.json;
# without it the library is built on the device. Every step has a timeout; the script
# honours $DEADLINE (seconds, default 470: with less, the torch.compile peer of some row-op
# shapes is a dynamic-shape compile, a weaker peer; 2026-12-02 07:00 entry of bench/RESULTS.md).
# Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_sweep.sh
#   step limits (seconds): SWEEP_T_ROWS (75: every row-op shape checked), SWEEP_T_GEMM (40), SWEEP_T_PASS (20, each
#   further library pass), SWEEP_T_ALL (0; the every-variant pass of the rows ops, the
#   tuned table's data, with what is left); SWEEP_LATER_S (70; 100 in variance mode): the
#   seconds kept for the trials after the first (the per-shape torch.compile stops then)
set -u
DEADLINE=${DEADLINE:-470}
. bench/device/lib.sh
LOG=$O/sweep_log.txt
: > "$LOG"
MODE=${SWEEP_MODE:-full}
TRIALS=${SWEEP_TRIALS:-2}
[ "$MODE" = variance ] && TRIALS=${SWEEP_TRIALS:-3}
VAR=bench/device/sweep_variance_shapes.txt

A=$(mktemp -d "${TMPDIR:-/tmp}/sweep-art.XXXXXX")   # artifacts: not under $OUT (2 MB each)
SY=$A/sync                                           # the peers' and the shell's handshakes
mkdir -p "$SY"
PIDS=""
stop_all() {   # the background jobs this script started, by their ids
    local p
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    PIDS=""
}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
    --format=csv,noheader -lms 250 > "$O/clocks.csv" 2>&1 &
CLK=$!
trap 'hogs_off; stop_all; kill $CLK 2>/dev/null; rm -rf "$A"' EXIT

LIB=${SWEEP_LIB:-.carry/python/cake/cake.cakelib}
[ -f .carry/sweep.cakelib ] && LIB=.carry/sweep.cakelib
if [ ! -f "$LIB" ]; then
    LIB=$A/sweep.cakelib
    b0=$SECONDS
    t 45 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $? in $((SECONDS - b0)) s"
fi
# a tuned table measured here before (sweep.py tune of an earlier lib_all.jsonl): the
# artifact again with it (no compiling)
TABLE=${SWEEP_TABLE:-bench/device/sweep_table_h200.json}
retable "$LIB"
say "artifact: $LIB ($(stat -c %s "$LIB" 2>/dev/null || echo 0) bytes)"

python3 bench/device/sweep.py shapes "${SWEEP_SEED:-2027}" > "$O/shapes.txt"
if [ "$MODE" = variance ]; then
    python3 bench/device/sweep.py subset "$O/shapes.txt" 6 "$VAR" > "$O/shapes.sub" && mv "$O/shapes.sub" "$O/shapes.txt"
fi
grep -E '^gemm' "$O/shapes.txt" > "$O/shapes_gemm.txt"
grep -vE '^gemm' "$O/shapes.txt" > "$O/shapes_rows.txt"
say "shapes: $(wc -l < "$O/shapes.txt") ($(wc -l < "$O/shapes_gemm.txt") GEMM), mode $MODE, $TRIALS trials"

BATCH_STARTS=6   # lib.sh's batch: restarts after a dying line

# host load for the variance experiment: busy loops, ended by their ids
hogs_on() {
    local i
    for i in $(seq $((3 * $(nproc)))); do
        ( while :; do :; done ) &
        HOGS="${HOGS:-} $!"
    done
    say "  host loaded: $((3 * $(nproc))) busy loops"
}
hogs_off() {
    local p
    for p in ${HOGS:-}; do kill "$p" 2>/dev/null; done
    [ -n "${HOGS:-}" ] && say "  host load ended"
    HOGS=""
}

: > "$O/lib.jsonl"
l0=$SECONDS
batch "${SWEEP_T_ROWS:-75}" "$O/shapes_rows.txt" "$O/lib.jsonl" --check --sample --runs 10 --timeout 5
say "trial 1, library, rows ops (checked): in $((SECONDS - l0)) s, $(cnt '"op"' "$O/lib.jsonl") shapes"
l0=$SECONDS
batch "${SWEEP_T_GEMM:-40}" "$O/shapes_gemm.txt" "$O/lib.jsonl" --check --sample --runs 10 --timeout 5
say "trial 1, library, GEMM (checked): in $((SECONDS - l0)) s, $(cnt '"op"' "$O/lib.jsonl") shapes in all"
python3 bench/device/sweep.py order "$O/lib.jsonl" > "$A/order.txt"

# the peers: trial 1 now, the later ones when the shell says go (after each library pass)
p0=$SECONDS
LATER=${SWEEP_LATER_S:-70}   # seconds kept for the later trials
[ "$MODE" = variance ] && LATER=${SWEEP_LATER_S:-100}
SWEEP_STATIC_UNTIL=$(( $(left) - LATER )) timeout -k 3 $(( $(left) - 12 )) python3 bench/device/sweep.py peers \
    "$O/shapes.txt" "$O/peers.jsonl" --trials "$TRIALS" --sync "$SY" --old "$VAR" --ours "$O/lib.jsonl" >> "$LOG" 2>&1 &
PP=$!
PIDS="$PP"
# wait_peers FILE: until the peers wrote FILE, or ended, or the time is short
wait_peers() {
    while [ ! -f "$1" ] && kill -0 "$PP" 2>/dev/null && [ "$(left)" -gt 20 ]; do sleep 0.2; done
    [ -f "$1" ]
}
for k in $(seq 2 "$TRIALS"); do
    wait_peers "$SY/peers_$((k - 1)).done" || break
    say "peers trial $((k - 1)): done at $((SECONDS - T0)) s ($((SECONDS - p0)) s), $(cnt . "$O/peers.jsonl") rows"
    hogs_off
    [ "$MODE" = variance ] && [ "$k" = 2 ] && hogs_on
    [ "$(left)" -lt 30 ] && { say "no time for trial $k"; break; }
    : > "$O/lib_t$k.jsonl"
    l0=$SECONDS
    batch "${SWEEP_T_PASS:-20}" "$A/order.txt" "$O/lib_t$k.jsonl" --runs 10 --timeout 5
    say "trial $k, library: in $((SECONDS - l0)) s"
    touch "$SY/go_$k"
done
[ -f "$SY/go_$TRIALS" ] || touch "$SY/stop"   # cut short: the peers stop waiting
wait_peers "$SY/peers.done" || touch "$SY/stop"
hogs_off
wait "$PP"
say "peers: exit $? at $((SECONDS - T0)) s ($((SECONDS - p0)) s), $(cnt . "$O/peers.jsonl") rows"
PIDS=""

# every variant of the rows ops timed at each shape (no check): the tuned table's data
: > "$O/lib_all.jsonl"
if [ "${SWEEP_T_ALL:-0}" -gt 0 ] && [ "$(left)" -gt 30 ]; then
    l0=$SECONDS
    batch "${SWEEP_T_ALL}" "$O/shapes_rows.txt" "$O/lib_all.jsonl" --all --runs 5 --timeout 5
    say "library, every variant of the rows ops: in $((SECONDS - l0)) s, $(cnt '"op"' "$O/lib_all.jsonl") shapes"
fi
kill $CLK 2>/dev/null
MORE=$(ls "$O"/lib_t*.jsonl 2>/dev/null)
# shellcheck disable=SC2086
timeout 20 python3 bench/device/sweep.py slim "$O/lib.jsonl" "$O/lib_all.jsonl" $MORE
rm -f "$O/rest.txt"
timeout 10 python3 bench/device/sweep.py variance "$O/peers.jsonl" "$O/lib.jsonl" $MORE > "$O/variance.txt" 2>&1
say "== variance: the 20 shapes of $VAR, peer by the old and the new method, and ours, per trial"
cat "$O/variance.txt" | tee -a "$LOG"
awk -F', ' '{ print $2 }' "$O/clocks.csv" | sort | uniq -c | sort -rn | head -4 | tr '\n' ';' | sed 's/^/SM clock samples (count MHz): /' | tee -a "$LOG"
echo | tee -a "$LOG"
say "== sweep summary (at $((SECONDS - T0)) s; ratio = peer ms / library ms, each its best median over the trials)"
# shellcheck disable=SC2086
timeout 20 python3 bench/device/sweep.py table "$O/lib.jsonl" "$O/peers.jsonl" "$O" $MORE | tee -a "$LOG"
