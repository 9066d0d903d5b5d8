#!/bin/sh
# test_tile_store_mask.sh — the distribute pass on tile stores (tile_store_mask.tir):
# with a per-element mask, every element of one thread's mma fragment is stored
# alone, at start + its coordinates, under the mask evaluated at the same
# coordinates (m16n8 C fragment: thread l holds rows g, g + 8 and columns 2t,
# 2t + 1 of each 8-column block, g = l / 4, t = l % 4); with a whole-tile mask,
# pairs stay bf16x2 vectors under one `if`. The PTX assembles with ptxas when
# it is on PATH.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
IN=$ROOT/tests/passes/tile_store_mask.tir
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cakets.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
CAKE_LCHECK=1 "$CAKEC" "$IN" --target sm_80 -o "$tmp/out.ptx" --dump-after distribute 2>"$tmp/dump" || {
    echo "FAIL: cakec exited $?"; cat "$tmp/dump"; exit 1; }
# the per-element kernel: each `if` joined with the statement it guards
sed -n '/^kernel ragged_store/,/^kernel whole_tile/p' "$tmp/dump" |
    awk '/^ *if / { held = $0; next } held != "" { print held " |" $0; held = ""; next }' >"$tmp/guarded"
# element e, row offset, column offset (of the thread's base row g and column 2t)
for spec in "0 0 0" "1 0 1" "2 8 0" "3 8 1" "4 0 8" "5 0 9" "6 8 8" "7 8 9"; do
    set -- $spec
    e=$1 dr=$2 dc=$3
    if [ "$dr" = 0 ]; then mrow='bm \+ row[0-9]+\)'; srow='row[0-9]+'; else
        mrow="bm \\+ \\(row[0-9]+ \\+ $dr\\)\\)"; srow="row[0-9]+ \\+ $dr"; fi
    if [ "$dc" = 0 ]; then mcol='bn \+ col[0-9]+\)'; scol='col[0-9]+'; else
        mcol="bn \\+ \\(col[0-9]+ \\+ $dc\\)\\)"; scol="col[0-9]+ \\+ $dc"; fi
    re="if i64\\($mrow < M && i64\\($mcol < N \\{ \\| *store C\\[$srow, $scol\\] <- bf16\\(acc\\[$e\\]\\)\$"
    if ! grep -Eq -- "$re" "$tmp/guarded"; then
        echo "FAIL: element $e (row + $dr, column + $dc) is not stored under its own mask"; fail=1
    fi
done
n=$(grep -c 'store C' "$tmp/guarded")
[ "$n" = 8 ] || { echo "FAIL: $n guarded stores, expected 8"; fail=1; }
if sed -n '/^kernel ragged_store/,/^kernel whole_tile/p' "$tmp/dump" | grep -q '@pack'; then
    echo "FAIL: a per-element masked store was vectorized"; fail=1
fi
# the whole-tile mask: four bf16x2 stores under one `if`
n=$(sed -n '/^kernel whole_tile/,$p' "$tmp/dump" | grep -c 'store C\[row[0-9]*\( + 8\)\?, col[0-9]*\( + 8\)\? : +2\] <- @pack')
[ "$n" = 4 ] || { echo "FAIL: $n bf16x2 stores under the whole-tile mask, expected 4"; fail=1; }
PTXAS=${PTXAS:-$(command -v ptxas || true)}
if [ -n "$PTXAS" ] && [ -x "$PTXAS" ]; then
    "$PTXAS" -arch=sm_80 "$tmp/out.ptx" -o "$tmp/out.cubin" || { echo "FAIL: ptxas"; fail=1; }
    grep -q 'st\.global\.b16' "$tmp/out.ptx" || { echo "FAIL: no 16-bit stores in the PTX"; fail=1; }
fi
[ $fail = 0 ] && echo "ok"
exit $fail
