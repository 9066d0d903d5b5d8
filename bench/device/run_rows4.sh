#!/bin/bash
# run_rows4.sh — session 10's new row variants (issue 13) at the structural losers of
# session 9's sweep and at tuning shapes of their classes, in one call:
#   losers  `lib bench ART --shapes bench/device/rows4_loser_lines.txt --check --sample`:
#           per loser sweep shape (rows4_losers.txt) the current pick (`OP SHAPE`), then
#           every new variant whose domain holds there (rows4_new.txt: kernels/*_rows.tir,
#           and the new bindings of the lean, leanb and async kernels) and the sweep's own
#           picks: diagnosis only (sweep shapes are never tuning entries) -> lib.jsonl
#   peers   bench/device/sweep.py peers over the loser shapes (torch eager and
#           torch.compile specialised to each shape, graph or launch) -> peers.jsonl
#   tune    `lib bench` of rows4_tune_lines.txt: two shapes in the dispatch class of each
#           loser (`rows2_lines.py tune rows4_losers.txt 2 4127`, never a sweep shape), per
#           shape the pick and every variant whose domain holds (`rows2_lines.py every`),
#           the first shape of every class before the second ones -> tune.jsonl, what
#           rows2_fold.py folds into the table afterwards (it drops sweep shapes itself)
#   table   rows4_table.py: per loser shape the pick, the fastest new variant, the peer
#           and both ratios; per tuning shape the fastest and whether it is new
# The artifact is the carried one (.carry/python/cake/cake.cakelib) when it holds the new
# variants, else one built here from library/; bench/device/sweep_table_h200.json folded in.
# Honours $DEADLINE (seconds, default 120). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_rows4.sh
set -u
DEADLINE=${DEADLINE:-120}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/rows4_log.txt
: > "$LOG"
D=bench/device
A=$(mktemp -d "${TMPDIR:-/tmp}/rows4.XXXXXX")
WARMPID=
trap '[ -n "$WARMPID" ] && kill "$WARMPID" 2> /dev/null; rm -rf "$A"' EXIT
warm_torch
LIB=${ROWS4_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ] || ! "$C" lib select "$LIB" --op layernorm --shape M=22465,N=548 --json 2>/dev/null \
        | grep -q '"variant":"rows2_v4_n640"'; then
    say "the artifact $LIB lacks the new variants: building library/ here"
    LIB=$A/lib.cakelib
    t 40 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $?"
fi
retable "$LIB"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader >> "$LOG" 2>&1
: > "$O/lib.jsonl"
: > "$O/tune.jsonl"
: > "$O/peers.jsonl"
BATCH_STARTS=3
l0=$SECONDS
batch $(( $(left) * 25 / 100 )) $D/rows4_loser_lines.txt "$O/lib.jsonl" --check --sample --runs 10 --timeout 5
say "losers (checked): in $((SECONDS - l0)) s, $(cnt '"check_ok":true' "$O/lib.jsonl") checks pass of $(cnt '"op"' "$O/lib.jsonl") rows ($(grep -c . $D/rows4_loser_lines.txt) lines)"
static_peers $(( $(left) * 40 / 100 )) $D/rows4_losers.txt "$O/peers.jsonl"
u0=$SECONDS
batch $(( $(left) - 8 )) $D/rows4_tune_lines.txt "$O/tune.jsonl" --check --sample --runs 10 --timeout 5
say "tuning lines (checked): in $((SECONDS - u0)) s, $(cnt '"check_ok":true' "$O/tune.jsonl") checks pass of $(cnt '"op"' "$O/tune.jsonl") rows ($(grep -c . $D/rows4_tune_lines.txt) lines)"
say "== rows4 (ratio = peer ms / ours; * = the peer of session 9's sweep; at $((SECONDS - T0)) s)"
timeout 10 python3 $D/rows4_table.py "$O/lib.jsonl" "$O/tune.jsonl" "$O/peers.jsonl" $D/rows4_new.txt \
    "$O/rows4_table.md" bench/results/2026-12-03-s9/round1/sweep/sweep.json \
    bench/results/2026-12-03-s9/round3/sweep/sweep.json 2>> "$LOG" | tee -a "$LOG"
