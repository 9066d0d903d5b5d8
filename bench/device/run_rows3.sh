#!/bin/bash
# run_rows3.sh — session 8's round 2 of the row ops (issue 13): the retuned dispatch against
# the static torch.compile peer at the acceptance sweep's own shapes, in one call:
#   library  `lib bench ART --shapes bench/device/rows3_lines.txt --check --sample`: per sweep
#            shape of rmsnorm, layernorm, fp8_row_quantize and cross_entropy (sweep.py shapes
#            2027) the variant the retuned table picks (`OP SHAPE`) and, where it differs, the
#            pick of the 2026-12-02 07:00 sweep (`OP SHAPE VARIANT`): before and after in one
#            process, each checked by the oracle (sampled rows)
#   peers    bench/device/sweep.py peers over the same shapes (rows3_shapes.txt: the shapes
#            whose pick changed first), torch eager and torch.compile specialised to each
#            shape (dynamic=False) while the time lasts; no dynamic-shape compile
#   table    rows3_table.py: per shape before / after / peer and the ratios; per op the share
#            >= 1.0, min and geomean over the shapes that got their static compile, and the
#            same with the 07:00 sweep's ratio standing in where a shape did not
# The artifact is the carried one (.carry/python/cake/cake.cakelib) with
# bench/device/sweep_table_h200.json (the retuned table) folded in; the old call's ratios
# from $ROWS3_REF (default: session 9's first sweep). Honours $DEADLINE
# (seconds, default 150). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_rows3.sh
set -u
DEADLINE=${DEADLINE:-150}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/rows3_log.txt
: > "$LOG"
D=bench/device
A=$(mktemp -d "${TMPDIR:-/tmp}/rows3.XXXXXX")
WARMPID=
trap '[ -n "$WARMPID" ] && kill "$WARMPID" 2> /dev/null; rm -rf "$A"' EXIT
warm_torch
LIB=${ROWS3_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    t 60 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $?"
fi
retable "$LIB"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader >> "$LOG" 2>&1
: > "$O/lib.jsonl"
: > "$O/peers.jsonl"
l0=$SECONDS
BATCH_STARTS=3
batch $(( $(left) * 25 / 100 )) $D/rows3_lines.txt "$O/lib.jsonl" --check --sample --runs 10 --timeout 5
say "library (checked): in $((SECONDS - l0)) s, $(cnt '"check_ok":true' "$O/lib.jsonl") checks pass of $(cnt '"op"' "$O/lib.jsonl") rows ($(grep -c . $D/rows3_lines.txt) lines)"
static_peers $(( $(left) - 8 )) $D/rows3_shapes.txt "$O/peers.jsonl"
timeout 10 python3 $D/rows2_table.py slim "$O/lib.jsonl" 2>> "$LOG"
say "== rows3 (ratio = peer ms / ours, both gated; at $((SECONDS - T0)) s)"
timeout 10 python3 $D/rows3_table.py "$O/lib.jsonl" "$O/peers.jsonl" "${ROWS3_REF:-bench/results/2026-12-03-s9/round1/sweep/sweep.json}" \
    "$O/rows3_table.md" 2>> "$LOG" | tee -a "$LOG"
