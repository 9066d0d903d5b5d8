#!/bin/sh
# test_reference_label.sh — `run --reference FILE` labels each checked shape with the checked
# kernel's dims and bindings, never with the reference kernel's own parameters (it printed
# `N=1000, BLK=64`, BLK being the reference's). On the CPU executor (--sim): no GPU needed.
set -u
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
out=$("$CAKEC" run "$ROOT/examples/vector_add.tir" --sim --target sm_90a \
      --reference "$ROOT/tests/oracle/reference/vadd_ref.tir" --set THREADS=128 --shape N=1000 2>&1)
rc=$?
[ $rc -eq 0 ] || { echo "FAIL: exit $rc"; printf '%s\n' "$out"; exit 1; }
printf '%s\n' "$out" | grep -q '^check N=1000 .*pass' || { echo "FAIL: no passing check of N=1000"; printf '%s\n' "$out"; exit 1; }
if printf '%s\n' "$out" | grep -q 'BLK'; then
    echo "FAIL: the report names the reference's parameter BLK"; printf '%s\n' "$out"; exit 1
fi
echo "ok: --reference reports the checked kernel's shape only"
