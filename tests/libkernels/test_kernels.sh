#!/bin/sh
# test_kernels.sh — the library kernels (library/kernels/*.tir, issue 13) check clean, print
# back to a fixed point, their references evaluate on the checker's shapes (cake_refcheck:
# run --check's reference half, no GPU; every kernel of a file, at its defaults), and they
# compile at their default parameters to PTX that ptxas accepts (sm_90a, and sm_80 where a
# kernel lists it). Every declared parameter point:
# scripts/lib_kernels_ptx.py without --defaults (a few minutes), by hand.
set -u
CAKEC=${CAKEC:-build/cakec}
PTXAS=${PTXAS:-ptxas}
files=$(ls library/kernels/*.tir 2> /dev/null)
if [ -z "$files" ]; then
    echo "no library/kernels/*.tir"
    exit 1
fi
fail=0
for f in $files; do
    if ! out=$("$CAKEC" check "$f" 2>&1) || [ -n "$out" ]; then
        echo "FAIL check $f:"
        echo "$out" | head -20
        fail=1
    fi
done
sh tests/golden/roundtrip.sh "$CAKEC" $files || fail=1
REFCHECK=${CAKE_REFCHECK:-$(dirname "$CAKEC")/tests/cake_refcheck}
if [ -x "$REFCHECK" ]; then
    one=$(mktemp -d "${TMPDIR:-/tmp}/lkref.XXXXXX")
    python3 scripts/lib_kernels_ptx.py --split "$one" $files
    for k in "$one"/*.tir; do
        "$REFCHECK" "$k" || { echo "FAIL reference of $(basename "$k" .tir)"; fail=1; }
    done
    rm -rf "$one"
else
    echo "cake_refcheck not built: the reference half is skipped"
fi
if ! command -v "$PTXAS" > /dev/null 2>&1; then
    echo "ptxas not found: the PTX half is skipped"
    [ $fail = 0 ] && exit 77
    exit 1
fi
python3 scripts/lib_kernels_ptx.py --cakec "$CAKEC" --ptxas "$PTXAS" --defaults $files || fail=1
exit $fail
