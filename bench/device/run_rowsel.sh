#!/bin/bash
# run_rowsel.sh — the row ops' dispatch after the layernorm regression of the 2026-12-02
# acceptance sweep (issue 13), and the cost of a select, in one call:
#   select   build/cake_lib_select_speed (carried as .carry/cake_lib_select_speed by carry.sh)
#            over every op at 64 seeded shapes, and `cakec lib select --repeat` at the shapes
#            the sweep's entry timed (gemm 4096^3 and M=393,N=1184,K=14008, layernorm
#            M=51361,N=374, rmsnorm M=47351,N=622): the select's plan (lib_domain.c, lib_fit.c)
#   library  the sweep's layernorm and rmsnorm shapes (sweep.py shapes 2027, the same seeded
#            shapes as the acceptance sweep) through `cakec lib bench ART --shapes F --check
#            --sample` (one process: the chosen variant checked by the oracle and timed), and
#            a second timing pass (no check) after the peers, as run_sweep.sh does
#   peers    sweep.py peers beside it: torch eager, F.rms_norm, torch.compile (dynamic, then
#            specialised per shape while the time lasts), each as a launch and a CUDA graph
#            replay with the device's work alone between the events (gated.py)
#   table    sweep.py table (sweep_table.md, sweep.json, sweep.svg), then rowsel_table.py:
#            per op the share >= 1.0 and the geomean against this call's peer and against the
#            faster of it and the acceptance sweep's (bench/results/2026-12-02-sweep-s5), the
#            shapes whose pick changed since that sweep, and the select times (printed last)
# The artifact is the carried one (.carry/python/cake/cake.cakelib) with
# bench/device/sweep_table_h200.json folded in by this tree's cakec (its fit rules: a row
# variant never within 5% of the fastest at a tuned shape is not fitted). Every step has a
# timeout; honours $DEADLINE (seconds, default 150). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_rowsel.sh
#   ROWSEL_DRY=1: no GPU work (no lib bench, no peers): the shapes, the artifact, the select
#   timing and the table of whatever rows exist (a check of the script where there is no GPU)
set -u
DEADLINE=${DEADLINE:-150}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/rowsel_log.txt
: > "$LOG"
D=bench/device
DRY=${ROWSEL_DRY:-0}

A=$(mktemp -d "${TMPDIR:-/tmp}/rowsel.XXXXXX")
PP=
trap '[ -n "$PP" ] && kill "$PP" 2> /dev/null; rm -rf "$A"' EXIT
LIB=${ROWSEL_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    b0=$SECONDS
    t 45 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $? in $((SECONDS - b0)) s"
fi
TABLE=$D/sweep_table_h200.json
if t 20 "$C" lib build "$LIB" --table "$TABLE" -o "$A/tuned.cakelib" >> "$LOG" 2>&1; then
    LIB=$A/tuned.cakelib
    say "artifact tuned with $TABLE"
else
    say "FAIL: the artifact could not be tuned with $TABLE (untuned dispatch below)"
fi

# the cost of a select: every op at 64 seeded shapes (the thread's CPU time), then the
# standalone `lib select --repeat` at the sweep entry's shapes
SPEED=${ROWSEL_SPEED:-.carry/cake_lib_select_speed}
[ -x "$SPEED" ] || SPEED=build/cake_lib_select_speed
: > "$O/select.txt"
if [ -x "$SPEED" ]; then
    t 30 "$SPEED" "$LIB" 20000 >> "$O/select.txt" 2>> "$LOG"
    say "cake_lib_select_speed: exit $?"
else
    say "no cake_lib_select_speed (carry.sh copies it into .carry)"
fi
for s in "gemm M=4096,N=4096,K=4096" "gemm M=393,N=1184,K=14008" "layernorm M=51361,N=374" "rmsnorm M=47351,N=622"; do
    set -- $s
    ns=$(t 8 "$C" lib select "$LIB" --op "$1" --shape "$2" --repeat 100000 2>> "$LOG" | awk '/select:/ { print $2 }')
    echo "repeat $1 $2 ${ns:-none}" >> "$O/select.txt"
done

python3 $D/sweep.py shapes 2027 | grep -E '^(layernorm|rmsnorm) ' > "$O/shapes.txt"
say "shapes: $(wc -l < "$O/shapes.txt") (layernorm and rmsnorm of the 2027 sweep)"

: > "$O/lib.jsonl"
if [ "$DRY" = 1 ]; then
    say "dry run: no library timing, no peers"
else
    # torch's first import on a fresh machine is slow: start it now on the host's cores
    timeout 40 python3 -c "import torch, torch._dynamo, torch._inductor" > /dev/null 2>&1 &
    l0=$SECONDS
    BATCH_STARTS=4
    batch 45 "$O/shapes.txt" "$O/lib.jsonl" --check --sample --runs 10 --timeout 5
    say "library (checked): in $((SECONDS - l0)) s, $(cnt '"check_ok":true' "$O/lib.jsonl") checks pass of $(cnt '"op"' "$O/lib.jsonl") rows"
    python3 $D/sweep.py order "$O/lib.jsonl" > "$A/order.txt" 2>> "$LOG"
    # the peers in one process, specialised compiles while their share lasts; the second
    # library pass after them
    p0=$SECONDS
    PEER_S=$(( $(left) - 30 ))
    [ "$PEER_S" -gt 70 ] && PEER_S=70
    if [ "$PEER_S" -ge 15 ]; then
        SWEEP_PEERS_BUDGET=$(( PEER_S / 3 )) SWEEP_STATIC_UNTIL=$(( PEER_S - 8 )) \
            timeout -k 3 "$PEER_S" python3 $D/sweep.py peers "$O/shapes.txt" "$O/peers.jsonl" \
            --ours "$O/lib.jsonl" >> "$LOG" 2>&1 &
        PP=$!
        wait "$PP"
        say "peers: exit $? in $((SECONDS - p0)) s, $(cnt . "$O/peers.jsonl") rows"
        PP=
    else
        say "no time for the peers"
    fi
    : > "$O/lib_t2.jsonl"
    if [ "$(left)" -gt 20 ] && [ -s "$A/order.txt" ]; then
        l0=$SECONDS
        batch $(( $(left) - 14 )) "$A/order.txt" "$O/lib_t2.jsonl" --runs 10 --timeout 5
        say "library, second pass: in $((SECONDS - l0)) s"
    fi
fi
touch "$O/peers.jsonl"
MORE=$(ls "$O"/lib_t2.jsonl 2>/dev/null)
# shellcheck disable=SC2086
timeout 10 python3 $D/sweep.py slim "$O/lib.jsonl" $MORE 2>> "$LOG"
rm -f "$O/rest.txt"
say "== sweep table (this call's peer)"
# shellcheck disable=SC2086
timeout 15 python3 $D/sweep.py table "$O/lib.jsonl" "$O/peers.jsonl" "$O" $MORE >> "$LOG" 2>&1 ||
    say "sweep.py table: no table (no rows?)"
say "== rowsel summary (ratio = peer ms / library ms; ref = the faster of this call's peer and the 2026-12-02 sweep's)"
timeout 15 python3 $D/rowsel_table.py "$O" bench/results/2026-12-02-sweep-s5/sweep.json | tee -a "$LOG"
