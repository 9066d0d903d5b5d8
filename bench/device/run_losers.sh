#!/bin/bash
# run_losers.sh — diagnosis of an acceptance sweep's losing shapes (issue 13): every variant whose
# domain holds (`lib bench --all --runs 5`) at the shapes of $LOSERS (default
# bench/device/losers_s10.txt: session 10's sweep, ratio under 0.9), then the fastest of each
# through `lib bench --check --sample`: whether a variant the library has would win there (a
# dispatch problem) or none does (a kernel problem). Sweep shapes: never table entries.
# The artifact: the carried one with the sweep's table (lib.sh's retable). Honours $DEADLINE
# (default 120). Output under $OUT: losers_all.jsonl, best_checks.jsonl, losers_log.txt.
#   usage (device machine, repo root): bash bench/device/run_losers.sh
set -u
DEADLINE=${DEADLINE:-120}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/losers_log.txt
: > "$LOG"
A=$(mktemp -d "${TMPDIR:-/tmp}/losers.XXXXXX")
trap 'rm -rf "$A"' EXIT
retable .carry/python/cake/cake.cakelib
L=${LOSERS:-bench/device/losers_s10.txt}
: > "$O/losers_all.jsonl"
s0=$SECONDS
BATCH_STARTS=3
batch $(( ($(left) - 10) * 80 / 100 )) "$L" "$O/losers_all.jsonl" --all --runs 5 --timeout 5
say "all variants: $(cnt '"bench_all"' "$O/losers_all.jsonl") of $(cnt . "$L") shapes in $((SECONDS - s0)) s"
check_best $(( $(left) - 4 )) "$O/best_checks.jsonl" "$O/losers_all.jsonl"
exit 0
