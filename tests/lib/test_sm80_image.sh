#!/bin/sh
# test_sm80_image.sh — the image kind of each variant of an artifact (the regression
# test of the sweep's one failed check: gemm M=465,N=7432,K=88 chose the sm_80 variant
# `sm80_128x128`, stored as an sm_80 cubin, which the H200 refused to load, E0971
# RT_LOAD_ERROR: SASS runs only on GPUs of its own major version). Built for the h200
# (the default `--device`), an sm_80 variant is PTX (the driver JITs it for sm_90) and
# an sm_90a variant a cubin where nvJitLink is present; built for the a100, sm_80
# variants are cubins again.
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-sm80img.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
"$C" lib build "$SRC/tests/lib/small" -o "$T/h200.cakelib" -v 2> "$T/h200.log" ||
    { cat "$T/h200.log"; echo "FAIL: lib build tests/lib/small"; exit 1; }
if ! grep -q ' cubin$' "$T/h200.log"; then
    echo "skip: no nvJitLink here (every image is PTX)"
    exit 77
fi
for v in sm80_64x64 sm80_128x128; do
    if grep -qE "lib build: $v +sm_80 +[0-9]+ bytes ptx$" "$T/h200.log"; then
        echo "ok: $v is PTX in an artifact for the h200"
    else
        echo "FAIL: $v is not PTX in an artifact for the h200:"; grep "$v " "$T/h200.log"; fail=1
    fi
done
if grep -qE "lib build: block256 +sm_90a +[0-9]+ bytes cubin$" "$T/h200.log"; then
    echo "ok: block256 (sm_90a) is a cubin"
else
    echo "FAIL: block256 (sm_90a) is not a cubin"; fail=1
fi
"$C" lib build "$SRC/tests/lib/small" -o "$T/a100.cakelib" --device a100 -v 2> "$T/a100.log" ||
    { cat "$T/a100.log"; echo "FAIL: lib build --device a100"; exit 1; }
if grep -qE "lib build: sm80_128x128 +sm_80 +[0-9]+ bytes cubin$" "$T/a100.log"; then
    echo "ok: sm80_128x128 is a cubin in an artifact for the a100"
else
    echo "FAIL: sm80_128x128 is not a cubin for the a100:"; cat "$T/a100.log"; fail=1
fi
exit $fail
