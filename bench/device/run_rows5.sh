#!/bin/bash
# run_rows5.sh — session 10, rounds 2 and 3 of the row ops' new variants (issue 13): tuning lines
# ($ROWS5_LINES, default bench/device/rows5_tune_lines.txt: run_rows4.sh's rows4_tune_lines.txt
# from line 222 on, which its call did not reach, the second non-sweep shape of each loser class,
# every variant whose domain holds; round 3: rows6_tune_lines.txt, rows6_lines.py), each through `lib bench --check --sample --runs 10`, so that the new variants get the
# tuned shapes their fits need. The artifact: the carried one with bench/device/sweep_table_h200.json
# folded in (lib.sh's retable). Honours $DEADLINE (default 160). Output under $OUT: tune.jsonl,
# rows5_log.txt. Fold afterwards: python3 bench/device/rows2_fold.py tune.jsonl
#   usage (device machine, repo root): bash bench/device/run_rows5.sh
set -u
DEADLINE=${DEADLINE:-160}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/rows5_log.txt
: > "$LOG"
D=bench/device
A=$(mktemp -d "${TMPDIR:-/tmp}/rows5.XXXXXX")
trap 'rm -rf "$A"' EXIT
retable .carry/python/cake/cake.cakelib
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>&1)"
: > "$O/tune.jsonl"
BATCH_STARTS=3
u0=$SECONDS
L=${ROWS5_LINES:-$D/rows5_tune_lines.txt}
batch $(( $(left) - 6 )) "$L" "$O/tune.jsonl" --check --sample --runs 10 --timeout 5
say "tuning lines (checked): in $((SECONDS - u0)) s, $(cnt '"check_ok":true' "$O/tune.jsonl") checks pass, $(cnt '"check_ok":false' "$O/tune.jsonl") FAIL of $(cnt '"op"' "$O/tune.jsonl") rows ($(grep -c . "$L") lines of $L)"
exit 0
