#!/bin/sh
# test_ragged.sh — the row kernels' ragged-N paths (issue 13): each line of
# ragged_points.txt (FILE SET SHAPE) runs on the simulator against the kernel's
# reference (`cakec run --sim --check`), so every alignment path of rmsnorm, layernorm,
# softmax and the fp8 quantizer is computed and compared, with no GPU.
set -u
CAKEC=${CAKEC:-build/cakec}
fail=0
n=0
while read -r file set shape; do
    case "$file" in ''|'#'*) continue ;; esac
    n=$((n + 1))
    if ! out=$("$CAKEC" run "library/kernels/$file" --set "$set" --shape "$shape" --check --sim 2>&1) ||
       ! echo "$out" | grep -q ' pass '; then
        echo "FAIL $file --set $set --shape $shape:"
        echo "$out" | tail -5
        fail=1
    fi
done < tests/libkernels/ragged_points.txt
echo "$n points"
exit $fail
