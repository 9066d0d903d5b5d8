#!/bin/bash
# run_rows2.sh — where the row ops' short-row microseconds go (issue 13), in one call:
# rmsnorm and layernorm at the shapes the 2026-12-02 02:43 acceptance call lost
# (bench/device/rows2_shapes.txt, `rows2_lines.py losers` of bench/results/2026-12-02-s6),
# the current picks and the candidates beside torch eager / torch.compile, each measured
# with the gated method (the runtime's gate for ours, bench/device/gated.py for the peers):
#   select   build/cake_lib_select_speed (carried as .carry/cake_lib_select_speed) over
#            every op at 64 seeded shapes, and `cakec lib select --repeat` at five shapes (one
#            of them measured by the table: the exact-shape rule, `why: measured`)
#   library  `lib bench ART --shapes bench/device/rows2_lines.txt --check --sample`: per
#            losing shape the dispatched variant, then every short-row variant whose domain
#            holds there (`OP SHAPE VARIANT` lines: the lane-group kernels, the new
#            single-path kernels/*_lean.tir with the weights loaded before the reduction,
#            the small blocks), each checked by the oracle (sampled rows) and timed
#   probe    bench/device/rows2_probe.tir: a short-row rmsnorm cut down to its stores, a copy,
#            the copy and the reduction, and rmsnorm with w loaded after / before the
#            reduction, `cakec run --bench` at M=6,N=474 (and the last two at M=3000)
#   tune     the same for bench/device/rows2_tune_lines.txt: shapes of the losers' dispatch
#            classes (`rows2_lines.py tune`, never a shape of the acceptance sweep), every
#            short-row variant checked and timed: the table of round 2
#   peers    bench/device/sweep.py peers over the same shapes: torch eager, F.rms_norm,
#            torch.compile (specialised per shape while the time lasts)
#   table    rows2_table.py: per shape the pick, the fastest old variant, the fastest lean
#            variant, the peer and the ratios; per op the share >= 1.0 with the pick and
#            with the fastest variant timed (printed last)
# The artifact is the carried one (.carry/python/cake/cake.cakelib, this tree's library)
# with bench/device/sweep_table_h200.json folded in. Every step has a timeout; honours
# $DEADLINE (seconds, default 120). Output under $OUT (< 2 MB).
#   usage (device machine, repo root): bash bench/device/run_rows2.sh
#   ROWS2_DRY=1: no GPU work (the artifact, the select timing, the table of what exists)
set -u
DEADLINE=${DEADLINE:-120}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/rows2_log.txt
: > "$LOG"
D=bench/device
DRY=${ROWS2_DRY:-0}

A=$(mktemp -d "${TMPDIR:-/tmp}/rows2.XXXXXX")
PP=
WARMPID=
trap '[ -n "$PP" ] && kill "$PP" 2> /dev/null; [ -n "$WARMPID" ] && kill "$WARMPID" 2> /dev/null; rm -rf "$A"' EXIT
if [ "$DRY" != 1 ]; then
    # torch's first import on a fresh machine is slow: once in the background, on the host's
    # cores, so the peers' own import finds its files in the page cache
    timeout 60 python3 -c "import torch, torch.nn.functional, torch._dynamo, torch._inductor" > /dev/null 2>&1 &
    WARMPID=$!
fi
LIB=${ROWS2_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    b0=$SECONDS
    t 45 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $? in $((SECONDS - b0)) s"
fi
TABLE=$D/sweep_table_h200.json
if t 15 "$C" lib build "$LIB" --table "$TABLE" -o "$A/tuned.cakelib" >> "$LOG" 2>&1; then
    LIB=$A/tuned.cakelib
    say "artifact tuned with $TABLE"
else
    say "FAIL: the artifact could not be tuned with $TABLE (untuned dispatch below)"
fi

# the cost of a select on this host: every op at 64 seeded shapes (the thread's CPU time),
# then `lib select --repeat` at four shapes
SPEED=${ROWS2_SPEED:-.carry/cake_lib_select_speed}
[ -x "$SPEED" ] || SPEED=build/cake_lib_select_speed
: > "$O/select.txt"
if [ -x "$SPEED" ]; then
    t 12 "$SPEED" "$LIB" 4000 >> "$O/select.txt" 2>> "$LOG"
    say "cake_lib_select_speed: exit $?"
else
    say "no cake_lib_select_speed (carry.sh copies it into .carry)"
fi
for s in "gemm M=4096,N=4096,K=4096" "layernorm M=51361,N=374" "rmsnorm M=6,N=474" "rmsnorm M=3,N=1702" "softmax M=1,N=262144"; do
    set -- $s
    ns=$(t 4 "$C" lib select "$LIB" --op "$1" --shape "$2" --repeat 30000 2>> "$LOG" | awk '/select:/ { print $2 }')
    echo "repeat $1 $2 ${ns:-none}" >> "$O/select.txt"
done
# the choice and why at a losing shape, and at a shape the table measured (`measured`)
for s in "rmsnorm M=6,N=474 loser" "layernorm M=5,N=987 loser" "rmsnorm M=3,N=1702 measured"; do
    set -- $s
    t 4 "$C" lib select "$LIB" --op "$1" --shape "$2" --json > "$O/select_$1_$3.json" 2>> "$LOG"
done

LINES=$D/rows2_lines.txt
: > "$O/lib.jsonl"
: > "$O/peers.jsonl"
: > "$O/probe.txt"
if [ "$DRY" = 1 ]; then
    say "dry run: no library timing, no peers"
else
    l0=$SECONDS
    BATCH_STARTS=4
    batch $(( $(left) * 32 / 100 )) "$LINES" "$O/lib.jsonl" --check --sample --runs 10 --timeout 5
    say "library (checked): in $((SECONDS - l0)) s, $(cnt '"check_ok":true' "$O/lib.jsonl") checks pass of $(cnt '"op"' "$O/lib.jsonl") rows ($(grep -c . "$LINES") lines)"
    # where the microseconds go: rows2_probe.tir's modes at one losing shape (and two at
    # more rows), `cakec run --bench` (the same gated timer)
    : > "$O/probe.txt"
    for ms in "0 M=6,N=474" "1 M=6,N=474" "2 M=6,N=474" "3 M=6,N=474" "4 M=6,N=474" "3 M=3000,N=474" "4 M=3000,N=474"; do
        set -- $ms
        CK=
        [ "$1" -ge 3 ] && CK=--check
        t 6 "$C" run $D/rows2_probe.tir --set MODE=$1 --shape "$2" $CK --bench --runs 20 --json > "$A/probe.json" 2>> "$LOG"
        echo "probe MODE=$1 $2 exit $? $(python3 -c 'import json,sys
def find(d, k):
    if isinstance(d, dict):
        if k in d: return d[k]
        for v in d.values():
            r = find(v, k)
            if r is not None: return r
    if isinstance(d, list):
        for v in d:
            r = find(v, k)
            if r is not None: return r
try:
    d = json.load(open(sys.argv[1]))
    print("median_us %.2f min_us %.2f check %s" % (find(d, "median_ms") * 1e3, find(d, "min_ms") * 1e3, find(d, "status")))
except Exception as e:
    print("no result:", type(e).__name__)' "$A/probe.json")" >> "$O/probe.txt"
    done
    say "probe: $(grep -c median "$O/probe.txt") of 7 timed"
    # the tuning shapes (never the sweep's): the same families timed and checked, for the
    # table of round 2
    l0=$SECONDS
    : > "$O/tune.jsonl"
    batch $(( $(left) * 40 / 100 )) $D/rows2_tune_lines.txt "$O/tune.jsonl" --check --sample --runs 10 --timeout 5
    say "tuning lines (checked): in $((SECONDS - l0)) s, $(cnt '"check_ok":true' "$O/tune.jsonl") checks pass of $(cnt '"op"' "$O/tune.jsonl") rows ($(grep -c . $D/rows2_tune_lines.txt) lines)"
    wait "$WARMPID" 2> /dev/null
    WARMPID=
    grep -v '^#' $D/rows2_shapes.txt > "$A/peers_in.txt"
    p0=$SECONDS
    PEER_S=$(( $(left) - 8 ))
    if [ "$PEER_S" -ge 15 ]; then
        SWEEP_RUNS=10 SWEEP_PEERS_BUDGET=$(( PEER_S / 3 )) SWEEP_WARM_S=0.5 SWEEP_STATIC_UNTIL=$(( PEER_S - 6 )) \
            timeout -k 3 "$PEER_S" python3 $D/sweep.py peers "$A/peers_in.txt" "$O/peers.jsonl" >> "$LOG" 2>&1 &
        PP=$!
        wait "$PP"
        say "peers: exit $? in $((SECONDS - p0)) s, $(cnt . "$O/peers.jsonl") rows ($(cnt torch_compile "$O/peers.jsonl") with torch.compile)"
        PP=
    else
        say "no time for the peers"
    fi
fi
timeout 10 python3 $D/rows2_table.py slim "$O/lib.jsonl" "$O/tune.jsonl" 2>> "$LOG"
say "== select (ns per select on this host)"
grep -E '^(gemm|rmsnorm|layernorm|softmax|cross_entropy|fp8_row_quantize|worst) |^repeat' "$O/select.txt" | tee -a "$LOG"
say "== probe (rows2_probe.tir: 0 stores only, 1 copy, 2 + reduction, 3 rmsnorm w after, 4 w before)"
tee -a "$LOG" < "$O/probe.txt"
say "== rows2 (ratio = peer ms / library ms, both gated; at $((SECONDS - T0)) s)"
[ -f "$O/tune.jsonl" ] && timeout 10 python3 $D/rows2_table.py tune "$O/tune.jsonl" | tee -a "$LOG"
timeout 10 python3 $D/rows2_table.py "$O/lib.jsonl" "$O/peers.jsonl" "$O/rows2_table.md" | tee -a "$LOG"
