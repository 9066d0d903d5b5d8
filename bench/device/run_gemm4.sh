#!/bin/bash
# run_gemm4.sh — session 10, round 2 of the GEMM table (issue 13): the sweep's GEMM picks that the
# fold of run_gemm3.sh's tuning rows changed, timed beside the peers, and tuning rows beside the
# sweep's losing shapes for the next fold.
#   picks  bench/device/gemm4_changed.txt (`OP SHAPE NEW OLD`, gemm4_shapes.py against session 9's
#          first sweep): NEW, then OLD, each through `lib bench --check --sample --runs 10`
#          (new.jsonl, old.jsonl): sweep shapes, diagnosis only, never table entries
#   peers  cuBLAS / torch._scaled_mm (sweep.py peers) at those shapes, in this call
#   tune   every variant (`--all --runs 5`) at bench/device/gemm4_tune_shapes.txt (a neighbour of
#          each losing or re-picked sweep shape, none of the sweep's) (tune.jsonl)
#   check  the fastest variant of every tuning shape through `lib bench --check --sample`
# The artifact is the carried one with bench/device/sweep_table_h200.json folded in (lib.sh's
# retable). Honours $DEADLINE (default 150). Output under $OUT: gemm4_log.txt, new.jsonl,
# old.jsonl, peers.jsonl, tune.jsonl, best_checks.jsonl, before_after.md; the summary last.
# Fold afterwards: python3 bench/device/gemm3_fold.py tune.jsonl --checks best_checks.jsonl
#   usage (device machine, repo root): bash bench/device/run_gemm4.sh
set -u
DEADLINE=${DEADLINE:-150}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/gemm4_log.txt
: > "$LOG"
D=bench/device
A=$(mktemp -d "${TMPDIR:-/tmp}/gemm4.XXXXXX")   # scratch: not under $OUT
trap 'rm -rf "$A"' EXIT
retable .carry/python/cake/cake.cakelib
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>&1)"
BATCH_STARTS=4

awk '{ print $1, $2, $3 }' $D/gemm4_changed.txt > "$A/new.txt"
awk '{ print $1, $2, $4 }' $D/gemm4_changed.txt > "$A/old.txt"
awk '{ print $1, $2 }' $D/gemm4_changed.txt > "$A/shapes.txt"
: > "$O/new.jsonl"; : > "$O/old.jsonl"
s0=$SECONDS
batch 25 "$A/new.txt" "$O/new.jsonl" --check --sample --runs 10 --timeout 5
batch 25 "$A/old.txt" "$O/old.jsonl" --check --sample --runs 10 --timeout 5
say "picks: new $(cnt '"bench"' "$O/new.jsonl") timed ($(cnt '"check_ok":false' "$O/new.jsonl") FAIL), old $(cnt '"bench"' "$O/old.jsonl") ($(cnt '"check_ok":false' "$O/old.jsonl") FAIL) of $(cnt . "$A/new.txt") in $((SECONDS - s0)) s"
s0=$SECONDS
t 25 python3 $D/sweep.py peers "$A/shapes.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "peers: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") of $(cnt . "$A/shapes.txt") shapes"

grep '^gemm ' $D/gemm4_tune_shapes.txt > "$A/t.txt"; grep '^gemm_fp8 ' $D/gemm4_tune_shapes.txt > "$A/t8.txt"
: > "$O/tune.jsonl"
s0=$SECONDS
batch $(( ($(left) - 20) * 80 / 100 )) "$A/t.txt" "$O/tune.jsonl" --all --runs 5 --timeout 5
batch $(( $(left) - 20 )) "$A/t8.txt" "$O/tune.jsonl" --all --runs 5 --timeout 5
say "tune: $(cnt '"bench_all"' "$O/tune.jsonl") of $(cnt . $D/gemm4_tune_shapes.txt) shapes in $((SECONDS - s0)) s"

check_best $(( $(left) - 6 )) "$O/best_checks.jsonl" "$O/tune.jsonl"

say "== gemm4 (at $((SECONDS - T0)) s; ratio = peer ms / ours; before = the old pick, after = the new)"
timeout 5 python3 $D/gemm2.py before "$O/new.jsonl" "$O/old.jsonl" "$O/peers.jsonl" "$O/before_after.md" 2>&1 | tee -a "$LOG"
grep "^| gemm" "$O/before_after.md" 2>/dev/null
exit 0
