#!/bin/bash
# run_rowsx.sh — the row ops (rmsnorm, layernorm, softmax, cross_entropy) where the 2027
# sweep lost (bench/device/rowsx_losers.txt: the 37 shapes below 1.0 in the 2026-12-01 20:45
# sweep), the variants added for them, and their retuning for the fitted row model
# (docs/library.md, "The fitted model", family `rows`), beside the best of torch eager /
# torch.compile in the same call:
#   losers   `lib bench ART --shapes bench/device/rowsx_losers.txt --check --sample --all`:
#            the dispatched variant checked and timed, every variant whose domain holds timed
#            (DEADLINE < 60, round 2: without --all)
#   checks2  (round 2, DEADLINE < 60) the added variants checked (sampled) at every shape
#            round 1 timed them at (bench/device/rowsx_checks2.txt, where it exists)
#   checks   (first) every added variant checked by the oracle at ragged shapes of its domain
#            (bench/device/rowsx_checks.txt; full checks, no sampling); one that fails is
#            left out of the timings below (`--skip`)
#   best     the fastest variant of each losing shape where it is not the dispatched one, checked
#   tune     (DEADLINE >= 60) `lib bench --shapes TUNE --all` over the tuning set
#            (bench/device/rowsx_shapes.py tune: the losers' classes, a grid dense along N,
#            seeded shapes at seed 5151; never the sweep's shapes), the
#            dispatched variant and every variant timed -> rows_tuned_h200.json (the row ops'
#            table, bench/device/sweep.py tune; merged into the sweep's by table_merge.py)
#   peers    bench/device/sweep.py peers over the losers: torch eager, F.rms_norm,
#            torch.compile specialised per shape while the time lasts
#   select   the cost of a select with the fitted row model at four shapes (--repeat)
#   table    the losers against this call's peer and the sweep's conservative one (REF in
#            rowsx_table.py), the tuning shapes' summary (norms_table.py), printed last
# The artifact is the carried one (.carry/python/cake/cake.cakelib, this tree's library) with
# bench/device/sweep_table_h200.json folded in. Every step has a timeout; honours $DEADLINE
# (seconds, default 90). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_rowsx.sh
set -u
DEADLINE=${DEADLINE:-90}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/rowsx_log.txt
D=bench/device
: > "$LOG"

A=$(mktemp -d "${TMPDIR:-/tmp}/rowsx.XXXXXX")
trap 'rm -rf "$A"' EXIT
# torch's first import on a fresh machine took longer than the peers' share (round 1: no
# peer row in 13 s): import it once in the background now, on the host's cores only, so
# the peers' own import finds its files in the page cache
timeout 60 python3 -c "import torch, torch.nn.functional, torch._dynamo, torch._inductor" > /dev/null 2>&1 &
WARMPID=$!
trap 'kill "$WARMPID" 2> /dev/null; rm -rf "$A"' EXIT
LIB=${ROWSX_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    b0=$SECONDS
    t 40 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $? in $((SECONDS - b0)) s"
fi
TABLE=$D/sweep_table_h200.json
if [ -f "$TABLE" ] && t 10 "$C" lib build "$LIB" --table "$TABLE" -o "$A/tuned.cakelib" >> "$LOG" 2>&1; then
    LIB=$A/tuned.cakelib
    say "artifact tuned with $TABLE"
fi
# the cost of a select with the fitted row model (every variant's prediction, then the
# domain tests in rank order), on this host
for s in "rmsnorm M=47351,N=622" "layernorm M=51361,N=374" "softmax M=137906,N=273" "cross_entropy B=4,V=5273"; do
    set -- $s
    say "select $1 $2: $(t 5 "$C" lib select "$LIB" --op "$1" --shape "$2" --repeat 50000 2>&1 | grep -E '^ *select:|->' | tr -s ' ' | tr '\n' ' ')"
done
TUNE=0
[ "$DEADLINE" -ge 60 ] && TUNE=1
( cd $D && python3 rowsx_shapes.py tune ) > "$A/tune.txt" 2>> "$LOG"
say "artifact: $LIB; losers $(grep -c '^[a-z]' $D/rowsx_losers.txt), checks $(grep -c '^[a-z]' $D/rowsx_checks.txt), tuning shapes $([ "$TUNE" = 1 ] && grep -c '=' "$A/tune.txt" || echo 0)"

# the added variants checked first: one that fails (or faults) is left out (--skip) of the
# timing of every variant below
SKIP=
if [ "$TUNE" = 1 ]; then
    b0=$SECONDS
    t $(( $(left) * 12 / 100 )) "$C" lib bench "$LIB" --shapes $D/rowsx_checks.txt --check --runs 3 --timeout 10 \
        --json > "$O/checks.jsonl" 2>> "$LOG"
    say "added variants checked: exit $? in $((SECONDS - b0)) s, $(cnt '"check_ok":true' "$O/checks.jsonl") of $(grep -c '^[a-z]' $D/rowsx_checks.txt) pass"
    SKIP=$(python3 $D/rowsx_table.py failed "$O/checks.jsonl" 2>> "$LOG")
    [ -n "$SKIP" ] && say "left out of the timings (a check failed): $SKIP"
fi
# round 2: the added variants checked (sampled rows) at the shapes round 1 timed them at
# (bench/device/rowsx_checks2.txt, made from round 1's tuning rows): a variant is timed
# only where its check passes too
if [ "$TUNE" = 0 ] && [ -f $D/rowsx_checks2.txt ]; then
    b0=$SECONDS
    t $(( $(left) * 40 / 100 )) "$C" lib bench "$LIB" --shapes $D/rowsx_checks2.txt --check --sample --runs 1 --timeout 10 \
        --json > "$O/checks2.jsonl" 2>> "$LOG"
    say "added variants checked at their round-1 shapes: exit $? in $((SECONDS - b0)) s, $(cnt '"check_ok":true' "$O/checks2.jsonl") of $(grep -c '^[a-z]' $D/rowsx_checks2.txt) pass"
fi
SKIPARG=
[ -n "$SKIP" ] && SKIPARG="--skip $SKIP"

# round 2 (no tuning): the dispatched variant only, checked, and more of the time for the peers
ALL=--all
share=22
[ "$TUNE" = 0 ] && { ALL=; share=45; }
b0=$SECONDS
t $(( $(left) * share / 100 )) "$C" lib bench "$LIB" --shapes $D/rowsx_losers.txt --check --sample $ALL $SKIPARG --runs 10 \
    --timeout 5 --json > "$O/losers.jsonl" 2>> "$LOG"
say "losers, dispatched (checked) and every variant: exit $? in $((SECONDS - b0)) s, $(cnt '"check_ok":true' "$O/losers.jsonl") pass of $(cnt '"op"' "$O/losers.jsonl")"

python3 $D/norms_table.py best "$O/losers.jsonl" --not-dispatched > "$O/best.txt" 2>> "$LOG"
b0=$SECONDS
t $(( $(left) * 5 / 100 )) "$C" lib bench "$LIB" --shapes "$O/best.txt" --check --sample --runs 10 --timeout 5 \
    --json > "$O/best.jsonl" 2>> "$LOG"
say "fastest variants where not dispatched, checked: exit $? in $((SECONDS - b0)) s, $(cnt '"check_ok":true' "$O/best.jsonl") of $(cnt . "$O/best.txt") pass"

if [ "$TUNE" = 1 ]; then
    b0=$SECONDS
    t $(( $(left) * 72 / 100 )) "$C" lib bench "$LIB" --shapes "$A/tune.txt" --all $SKIPARG --runs 5 --timeout 5 \
        --json > "$O/tune.jsonl" 2>> "$LOG"
    say "tuning set, every variant: exit $? in $((SECONDS - b0)) s, $(cnt '"bench_all"' "$O/tune.jsonl") of $(grep -c '=' "$A/tune.txt") shapes"
    python3 $D/sweep.py tune "$O/tune.jsonl" "NVIDIA H200" > "$O/rows_tuned_h200.json" 2>> "$LOG"
fi

grep -v '^#' $D/rowsx_losers.txt > "$A/peers_in.txt"

# the losers' peers (torch.compile specialised per shape while the time lasts; the tuning
# shapes get none: the table needs only the variants' times, and the tuning the time)
p0=$SECONDS
share=$(left)
SWEEP_RUNS=10 SWEEP_PEERS_BUDGET=0 SWEEP_WARM_S=0.5 SWEEP_STATIC_UNTIL=$(( share - 6 )) \
    t $(( share - 2 )) python3 $D/sweep.py peers "$A/peers_in.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "peers of the losers: exit $? in $((SECONDS - p0)) s, $(cnt . "$O/peers.jsonl") rows ($(cnt torch_compile_static "$O/peers.jsonl") with torch.compile)"

say "== rowsx (at $((SECONDS - T0)) s)"
if [ -s "$O/tune.jsonl" ]; then
    say "-- the tuning set (dispatched: the sweep's table folded in above; fastest: what a perfect table gives; no peers)"
    : > "$A/no_peers.jsonl"
    timeout 10 python3 $D/rowsx_table.py tune "$O/tune.jsonl" "$A/no_peers.jsonl" 2>> "$LOG" | tee -a "$LOG"
fi
[ -s "$O/checks.jsonl" ] && timeout 10 python3 $D/rowsx_table.py checks "$O/checks.jsonl" | tail -30 | tee -a "$LOG"
[ -s "$O/checks2.jsonl" ] && timeout 10 python3 $D/rowsx_table.py checks "$O/checks2.jsonl" | grep -v '^ok' | tail -20 | tee -a "$LOG"
say "-- the losers (ratio = peer ms / library ms; ref = the 2027 sweep's conservative peer time)"
timeout 10 python3 $D/rowsx_table.py losers "$O/losers.jsonl" "$O/best.jsonl" "$O/peers.jsonl" "$O" | tee -a "$LOG"
