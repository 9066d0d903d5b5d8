#!/bin/bash
# run_rowt.sh — the row ops' tuning data at the classes of session 9's losing sweep shapes
# (issue 13), in one call:
#   tune   `lib bench ART --shapes bench/device/rows2_s9_tune_lines.txt --check --sample`:
#          one tuning shape in the dispatch class of each row-op shape that call 1 of
#          session 9 lost (rows2_s9_losers.txt; `rows2_lines.py tune ... 1 9013`: never a
#          sweep shape), per shape the dispatched variant and every variant of every family
#          whose domain holds (`rows2_lines.py every`): what rows2_fold.py folds into the table
# The artifact is the carried one with bench/device/sweep_table_h200.json folded in.
# Honours $DEADLINE (seconds, default 150). Output under $OUT: tune.jsonl, rowt_log.txt.
#   usage (device machine, repo root): bash bench/device/run_rowt.sh
set -u
DEADLINE=${DEADLINE:-150}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/rowt_log.txt
: > "$LOG"
D=bench/device
A=$(mktemp -d "${TMPDIR:-/tmp}/rowt.XXXXXX")
trap 'rm -rf "$A"' EXIT
LIB=${ROWT_LIB:-.carry/python/cake/cake.cakelib}
retable "$LIB"
: > "$O/tune.jsonl"
l0=$SECONDS
BATCH_STARTS=3
batch $(( $(left) - 6 )) $D/rows2_s9_tune_lines.txt "$O/tune.jsonl" --check --sample --runs 10 --timeout 5
say "tuning lines (checked): in $((SECONDS - l0)) s, $(cnt '"check_ok":true' "$O/tune.jsonl") checks pass of $(cnt '"op"' "$O/tune.jsonl") rows ($(grep -c . $D/rows2_s9_tune_lines.txt) lines)"
