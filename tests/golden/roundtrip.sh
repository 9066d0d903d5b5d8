#!/bin/sh
# roundtrip.sh CAKEC DIR|FILE... — the printer round trip.
#
# For every .tir that checks clean (no `# expect` line):
#   cakec print f > a      succeeds and prints no diagnostics
#   cakec print a > b      succeeds and prints no diagnostics (a re-parses)
#   cmp a b                printing is a fixed point
#   cakec check f / a      report the same diagnostic codes (printing keeps meaning)
# Prints one line per failing file, then `N passed, N failed`.
set -u
if [ $# -lt 2 ]; then
    echo "usage: $0 CAKEC DIR|FILE..." >&2
    exit 2
fi
CAKEC=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_roundtrip.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
passed=0
failed=0

# the sorted "severity[CODE]" list of a text diagnostics stream
codes() {
    sed -n 's/^.*:[0-9][0-9]*:[0-9][0-9]*: \(error\|warning\)\[\([A-Z0-9]*\)\]: .*/\1[\2]/p' "$1" | LC_ALL=C sort
}

for f in $(find "$@" -name '*.tir' -type f | LC_ALL=C sort); do
    if grep -q '# expect ' "$f"; then
        continue # broken on purpose: `cakec print` refuses it (the diagnostics suite covers it)
    fi
    why=""
    : >"$tmp/detail"
    "$CAKEC" print "$f" >"$tmp/a.tir" 2>"$tmp/a.err"
    rc=$?
    if [ $rc -ne 0 ] || [ -s "$tmp/a.err" ]; then
        why="cakec print $f: exit $rc"
        cat "$tmp/a.err" >"$tmp/detail"
    else
        "$CAKEC" print "$tmp/a.tir" >"$tmp/b.tir" 2>"$tmp/b.err"
        rc=$?
        if [ $rc -ne 0 ] || [ -s "$tmp/b.err" ]; then
            why="the printed file does not re-parse (exit $rc):"
            sed "s|$tmp/a.tir|<printed>|" "$tmp/b.err" >"$tmp/detail"
        elif ! cmp -s "$tmp/a.tir" "$tmp/b.tir"; then
            why="print(print(f)) differs from print(f):"
            diff -u "$tmp/a.tir" "$tmp/b.tir" | head -40 >"$tmp/detail"
        else
            "$CAKEC" check "$f" >/dev/null 2>"$tmp/c1.err"
            rc1=$?
            "$CAKEC" check "$tmp/a.tir" >/dev/null 2>"$tmp/c2.err"
            rc2=$?
            codes "$tmp/c1.err" >"$tmp/c1"
            codes "$tmp/c2.err" >"$tmp/c2"
            if [ $rc1 -ne $rc2 ] || ! cmp -s "$tmp/c1" "$tmp/c2"; then
                why="check of the printed file differs (exit $rc1 vs $rc2):"
                { diff "$tmp/c1" "$tmp/c2"; sed "s|$tmp/a.tir|<printed>|" "$tmp/c2.err" | head -20; } >"$tmp/detail"
            fi
        fi
    fi
    if [ -n "$why" ]; then
        echo "FAIL $f: $why"
        sed 's/^/    /' "$tmp/detail"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
