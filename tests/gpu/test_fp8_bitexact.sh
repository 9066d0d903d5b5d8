#!/bin/sh
# test_fp8_bitexact.sh — cakec's fp8 conversions on the GPU equal the oracle's
# rounding bit for bit: every bf16 and f16 pattern and a dense f32 sample to
# e4m3/e5m2, every fp8 pattern back (tests/gpu/fp8/bitexact.py says what).
# The oracle side is ir/numfmt.c, compiled here with the C compiler; the GPU
# side is tests/gpu/fp8/conv.tir compiled by cakec. Exits 77 without a GPU.
# By hand: CAKEC=build/cakec sh tests/gpu/test_fp8_bitexact.sh [JSON_OUT]
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
D=$ROOT/tests/gpu/fp8
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_fp8.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
CC=${CC:-$(command -v cc || command -v gcc || echo cc)}
command -v python3 > /dev/null || { echo "no python3: skipped"; exit 77; }
"$CC" -O1 -I"$ROOT/ir" "$D/oracle_bits.c" "$ROOT/ir/numfmt.c" -lm -o "$tmp/oracle_bits" ||
    { echo "FAIL: cannot build oracle_bits"; exit 1; }
mkdir -p "$tmp/o" && "$tmp/oracle_bits" "$tmp/o" || { echo "FAIL: oracle_bits"; exit 1; }
"$CAKEC" "$D/conv.tir" --target sm_90a --no-report -o "$tmp/conv.ptx" || { echo "FAIL: cakec conv.tir"; exit 1; }
if [ -n "${1:-}" ]; then
    python3 "$D/bitexact.py" "$tmp/o" "$tmp/conv.ptx" --json "$1"
else
    python3 "$D/bitexact.py" "$tmp/o" "$tmp/conv.ptx"
fi
