#!/bin/sh
# test_whole_program.sh — `cakec lib build` assembles PTX that holds setmaxnreg or
# wgmma with the ptxas program, whole, as the driver's JIT does: nvJitLink's
# separate compilation would ignore the register budgets (ptxas info C7504) and
# serialize every wgmma (C7509). Such a variant's image is "cubin by ptxas"; a
# SIMT kernel's stays "cubin by nvJitLink"; without ptxas the wgmma variant keeps
# its PTX for the driver's JIT. Skips (77) where there is no nvJitLink or ptxas.
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || exit 2
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-whole.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
CAKE_CACHE_DIR=none "$C" lib build tests/lib/small -o "$T/s.cakelib" --no-model -j 1 -v > "$T/s.txt" 2>&1 ||
    { echo "FAIL: build of tests/lib/small"; cat "$T/s.txt"; exit 1; }
if ! grep -q 'cubin by nvJitLink' "$T/s.txt" || ! command -v ptxas > /dev/null; then
    echo "no nvJitLink or no ptxas here: skipped"
    exit 77
fi
CAKE_CACHE_DIR=$T/cache "$C" lib build tests/lib/skinny -o "$T/k.cakelib" --no-model -j 1 -v > "$T/k.txt" 2>&1 ||
    { echo "FAIL: build of tests/lib/skinny"; cat "$T/k.txt"; exit 1; }
grep -q 'persistent_64x64 .* cubin by ptxas$' "$T/k.txt" || { echo "FAIL: wgmma variant not by ptxas"; cat "$T/k.txt"; fail=1; }
grep -q 'sm80_64x64 .* ptx$' "$T/k.txt" || { echo "FAIL: the sm_80 variant is not PTX"; fail=1; }
# the second build reads the whole-program cubins from the cache: the same artifact
CAKE_CACHE_DIR=$T/cache "$C" lib build tests/lib/skinny -o "$T/k2.cakelib" --no-model -j 1 > /dev/null 2>&1 &&
    cmp -s "$T/k.cakelib" "$T/k2.cakelib" || { echo "FAIL: the cached build differs"; fail=1; }
# no ptxas: the wgmma variants keep their PTX (the driver assembles it whole)
CAKE_PTXAS=/nonexistent CAKE_CACHE_DIR=none "$C" lib build tests/lib/skinny -o "$T/n.cakelib" --no-model -j 1 -v \
    > "$T/n.txt" 2>&1 || { echo "FAIL: build without ptxas"; cat "$T/n.txt"; fail=1; }
grep -q 'persistent_64x64 .* ptx$' "$T/n.txt" || { echo "FAIL: without ptxas the wgmma variant is not PTX"; cat "$T/n.txt"; fail=1; }
grep -q 'by nvJitLink' "$T/n.txt" && { echo "FAIL: a wgmma variant went through nvJitLink"; fail=1; }
[ $fail = 0 ] && echo "ok"
exit $fail
