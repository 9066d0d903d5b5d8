#!/bin/bash
# run_rows2.sh — what torch.compile's row kernels do that ours do not (issue 13, session 8,
# round 1), in one call:
#   tune     `lib bench ART --shapes bench/device/rows2_s8_tune_lines.txt --check --sample`: the
#            tuning shapes (`rows2_lines.py tune` of the losing shapes of the 2026-12-02 07:00
#            sweep, one per shape, seed 8013: never a sweep shape), per shape the dispatched
#            variant and every variant of the new single-path families (rmsnorm_leanb,
#            layernorm_leanb: a block per row, w and b loaded with the row; fp8_quant_lean,
#            fp8_quant_leanb) whose domain holds (`rows2_lines.py new`): the table of round 2
#   peer     bench/device/rows2_peer.py over bench/device/rows2_s8_peer_lines.txt (30 losing
#            shapes of rmsnorm, layernorm, fp8_row_quantize, cross_entropy, softmax): per
#            shape torch.compile (static) timed, its Triton kernels' source, config, grid,
#            block, registers and SASS (cuobjdump); the current pick and the new candidates
#            on torch tensors under the same timer (gated.py), checked against torch eager,
#            their grid, block and SASS; x, w, y 8 MiB apart against adjacent (pages)
#   losers   the same `lib bench` for bench/device/rows2_s8_lines.txt: the losing shapes
#            themselves, the dispatched variant and the new ones (the runtime's timer)
#   table    rows2_peer_table.py: per shape the peer, the pick, the best new variant (us),
#            the peer's config and the SASS counts side by side
# The artifact is the carried one (.carry/python/cake/cake.cakelib, this tree's library) with
# bench/device/sweep_table_h200.json folded in. Every step has a timeout; honours $DEADLINE
# (seconds, default 150). Output under $OUT (< 2 MB: the SASS packed as sass.tgz).
#   usage (device machine, repo root): bash bench/device/run_rows2.sh
#   ROWS2_DRY=1: no GPU work (the artifact and the lines only)
set -u
DEADLINE=${DEADLINE:-150}
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
    # torch's first import on a fresh machine is slow: once in the background
    timeout 60 python3 -c "import torch, torch.nn.functional, torch._dynamo, torch._inductor" > /dev/null 2>&1 &
    WARMPID=$!
fi
LIB=${ROWS2_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    b0=$SECONDS
    t 60 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $? in $((SECONDS - b0)) s"
fi
TABLE=$D/sweep_table_h200.json
if t 15 "$C" lib build "$LIB" --table "$TABLE" -o "$A/tuned.cakelib" >> "$LOG" 2>&1; then
    LIB=$A/tuned.cakelib
    say "artifact tuned with $TABLE"
else
    say "FAIL: the artifact could not be tuned with $TABLE (untuned dispatch below)"
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader >> "$LOG" 2>&1
command -v cuobjdump > /dev/null || say "no cuobjdump on PATH: no SASS"

: > "$O/tune.jsonl"
: > "$O/peer.jsonl"
: > "$O/losers.jsonl"
mkdir -p "$A/sass"
if [ "$DRY" = 1 ]; then
    say "dry run: no GPU work"
else
    l0=$SECONDS
    BATCH_STARTS=3
    batch $(( $(left) * 30 / 100 )) $D/rows2_s8_tune_lines.txt "$O/tune.jsonl" --check --sample --runs 10 --timeout 5
    say "tuning lines (checked): in $((SECONDS - l0)) s, $(cnt '"check_ok":true' "$O/tune.jsonl") checks pass of $(cnt '"op"' "$O/tune.jsonl") rows ($(grep -c . $D/rows2_s8_tune_lines.txt) lines)"
    wait "$WARMPID" 2> /dev/null
    WARMPID=
    p0=$SECONDS
    PEER_S=$(( $(left) * 62 / 100 ))
    if [ "$PEER_S" -ge 20 ]; then
        PYTHONUNBUFFERED=1 ROWS2_ART=$LIB CAKEC=$C timeout -k 5 "$PEER_S" \
            python3 $D/rows2_peer.py $D/rows2_s8_peer_lines.txt "$O/peer.jsonl" "$A/sass" $(( PEER_S - 12 )) >> "$LOG" 2>&1 &
        PP=$!
        wait "$PP"
        say "peer: exit $? in $((SECONDS - p0)) s, $(cnt . "$O/peer.jsonl") of $(grep -c . $D/rows2_s8_peer_lines.txt) shapes"
        PP=
    else
        say "no time for the peer"
    fi
    l0=$SECONDS
    batch $(( $(left) - 8 )) $D/rows2_s8_lines.txt "$O/losers.jsonl" --check --sample --runs 10 --timeout 5
    say "losing shapes (checked): in $((SECONDS - l0)) s, $(cnt '"check_ok":true' "$O/losers.jsonl") checks pass of $(cnt '"op"' "$O/losers.jsonl") rows ($(grep -c . $D/rows2_s8_lines.txt) lines)"
fi
tar czf "$O/sass.tgz" -C "$A" sass 2> /dev/null
timeout 10 python3 $D/rows2_table.py slim "$O/tune.jsonl" "$O/losers.jsonl" 2>> "$LOG"
say "== rows2 (us; ratio = peer / ours, one timer: gated.py; at $((SECONDS - T0)) s)"
timeout 10 python3 $D/rows2_peer_table.py "$O/peer.jsonl" "$O/tune.jsonl" "$O/losers.jsonl" 2>> "$LOG" | tee "$O/rows2_table.md"
