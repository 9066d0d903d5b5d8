#!/bin/bash
# run_gemm3.sh — session 9, round 2 (issue 13): the GEMM picks that the fold of session 8's
# tuning rows (bench/device/gemm3_fold.py) and the fit's span (docs/library.md, "The fit's
# span") change at the acceptance sweep's shapes, timed beside the peers, and tuning data
# where the narrow-N variants were never timed.
#   picks  bench/device/gemm3_changed.txt (`OP SHAPE NEW OLD`: every gemm and gemm_fp8 shape
#          of the sweep, sweep.py shapes 2027, whose pick changed; gemm3_picks.py --changed,
#          made on the development machine with the branch's cakec, so that the carried
#          cakec's own dispatch does not matter): the new pick, then the old one, each through
#          `lib bench --check --sample --runs 10` (new.jsonl, old.jsonl); these are sweep
#          shapes: diagnosis only, never table entries
#   peers  cuBLAS / torch._scaled_mm (sweep.py peers) at those shapes, in this call
#   tune   every variant (`--all --runs 5`) at bench/device/gemm3_tune_shapes.txt
#          (gemm3_shapes.py: none of the sweep's shapes) for the next fold (tune.jsonl)
#   check  the fastest variant of every tuning shape through `lib bench --check --sample`
# Every step has a timeout; honours $DEADLINE (default 150). Output under $OUT: gemm3_log.txt,
# new.jsonl, old.jsonl, peers.jsonl, tune.jsonl, best_checks.jsonl, before_after.md
# (gemm2.py before: old pick vs new pick vs peer per shape, and per op); the summary last.
#   usage (device machine, repo root): bash bench/device/run_gemm3.sh
set -u
DEADLINE=${DEADLINE:-150}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/gemm3_log.txt
: > "$LOG"

A=$(mktemp -d "${TMPDIR:-/tmp}/gemm3-art.XXXXXX")   # scratch: not under $OUT
trap 'rm -rf "$A"' EXIT
LIB=${GEMM3_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    t 50 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $?"
fi
say "artifact: $LIB ($(stat -c %s "$LIB" 2>/dev/null || echo 0) bytes); gpu: $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>&1)"
BATCH_STARTS=4

awk '{ print $1, $2, $3 }' bench/device/gemm3_changed.txt > "$A/new.txt"
awk '{ print $1, $2, $4 }' bench/device/gemm3_changed.txt > "$A/old.txt"
: > "$O/new.jsonl"; : > "$O/old.jsonl"
s0=$SECONDS
batch 25 "$A/new.txt" "$O/new.jsonl" --check --sample --runs 10 --timeout 5
batch 25 "$A/old.txt" "$O/old.jsonl" --check --sample --runs 10 --timeout 5
say "picks: new $(cnt '"bench"' "$O/new.jsonl") timed ($(cnt '"check_ok":false' "$O/new.jsonl") FAIL), old $(cnt '"bench"' "$O/old.jsonl") ($(cnt '"check_ok":false' "$O/old.jsonl") FAIL) of $(cnt . "$A/new.txt") in $((SECONDS - s0)) s"

awk '{ print $1, $2 }' bench/device/gemm3_changed.txt > "$A/shapes.txt"
s0=$SECONDS
t 22 python3 bench/device/sweep.py peers "$A/shapes.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "peers: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") of $(cnt . "$A/shapes.txt") shapes"

grep '^gemm ' bench/device/gemm3_tune_shapes.txt > "$A/t.txt"; grep '^gemm_fp8 ' bench/device/gemm3_tune_shapes.txt > "$A/t8.txt"
: > "$O/tune.jsonl"
s0=$SECONDS
batch 38 "$A/t.txt" "$O/tune.jsonl" --all --runs 5 --timeout 5
batch 10 "$A/t8.txt" "$O/tune.jsonl" --all --runs 5 --timeout 5
say "tune: $(cnt '"bench_all"' "$O/tune.jsonl") of $(cnt . bench/device/gemm3_tune_shapes.txt) shapes in $((SECONDS - s0)) s"

check_best $(( $(left) - 6 )) "$O/best_checks.jsonl" "$O/tune.jsonl"

say "== gemm3 (at $((SECONDS - T0)) s; ratio = peer ms / ours; before = the old pick, after = the new)"
timeout 5 python3 bench/device/gemm2.py before "$O/new.jsonl" "$O/old.jsonl" "$O/peers.jsonl" "$O/before_after.md" 2>&1 | tee -a "$LOG"
grep "^| gemm" "$O/before_after.md" 2>/dev/null
exit 0
