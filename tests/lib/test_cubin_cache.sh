#!/bin/sh
# test_cubin_cache.sh — the cubin cache of `cakec lib build` (runtime/nvjitlink.c): a
# first build fills $CAKE_CACHE_DIR/cubin, a second reads it and writes the same
# artifact byte for byte; a corrupted entry is ignored (relinked) and the artifact is
# still the same; CAKE_CACHE_DIR=none writes nothing; -j 2 (two part builds) gives the
# artifact -j 1 gives. Skips (77) where there is no nvJitLink (no cubins: PTX images).
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || exit 2
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-cubin-cache.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
CAKE_CACHE_DIR=$T/cache "$C" lib build tests/lib/small -o "$T/a.cakelib" --no-model -j 1 > /dev/null 2>&1 ||
    { echo "FAIL: first build"; exit 1; }
n=$(ls "$T/cache/cubin" 2> /dev/null | wc -l)
if [ "$n" -eq 0 ]; then
    echo "no cubins cached (no nvJitLink here): skipped"
    exit 77
fi
CAKE_CACHE_DIR=$T/cache "$C" lib build tests/lib/small -o "$T/b.cakelib" --no-model -j 1 > /dev/null 2>&1 &&
    cmp -s "$T/a.cakelib" "$T/b.cakelib" || { echo "FAIL: the cached build differs"; fail=1; }
one=$(ls "$T/cache/cubin" | head -1)
printf 'garbage' > "$T/cache/cubin/$one"
CAKE_CACHE_DIR=$T/cache "$C" lib build tests/lib/small -o "$T/c.cakelib" --no-model -j 1 > /dev/null 2>&1 &&
    cmp -s "$T/a.cakelib" "$T/c.cakelib" || { echo "FAIL: a corrupted entry changed the artifact"; fail=1; }
[ "$(wc -c < "$T/cache/cubin/$one")" -gt 7 ] || { echo "FAIL: the corrupted entry was not rewritten"; fail=1; }
CAKE_CACHE_DIR=none HOME=$T/home XDG_CACHE_HOME= "$C" lib build tests/lib/small -o "$T/d.cakelib" --no-model -j 2 \
    > /dev/null 2>&1 && cmp -s "$T/a.cakelib" "$T/d.cakelib" || { echo "FAIL: -j 2 without a cache differs"; fail=1; }
[ -e "$T/home/.cache" ] && { echo "FAIL: CAKE_CACHE_DIR=none wrote a cache"; fail=1; }
echo "$n cubins cached"
exit $fail
