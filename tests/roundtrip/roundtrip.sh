#!/bin/sh
# roundtrip.sh CAKEC [FILE.tir ...] — parse -> print -> parse -> print must give
# identical text for every file the parser accepts. Without files: every
# .tir under examples/ and tests/frontend/inputs/ (files with syntax errors
# are diagnostics tests and are skipped). Exit 0 when all pass, 1 otherwise.
set -u
CAKEC=${1:?usage: roundtrip.sh CAKEC [FILE.tir ...]}
shift
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 0 ] && set -- "$ROOT"/examples/*.tir "$ROOT"/tests/frontend/inputs/*.tir
TMP=${TMPDIR:-/tmp}/cake-roundtrip.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
fail=0 n=0
for f in "$@"; do
    [ -f "$f" ] || continue
    "$CAKEC" print "$f" > "$TMP/1.tir" 2>/dev/null || continue
    n=$((n + 1))
    if ! "$CAKEC" print "$TMP/1.tir" > "$TMP/2.tir" 2> "$TMP/err"; then
        echo "FAIL $f: the printed IR does not parse"; cat "$TMP/err"; fail=1; continue
    fi
    if ! diff -u "$TMP/1.tir" "$TMP/2.tir" > "$TMP/diff"; then
        echo "FAIL $f: print is not a fixed point"; cat "$TMP/diff"; fail=1
    fi
done
echo "roundtrip: $n files checked"
[ "$n" -gt 0 ] || exit 1
exit $fail
