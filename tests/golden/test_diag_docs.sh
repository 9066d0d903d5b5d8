#!/bin/sh
# test_diag_docs.sh — every diagnostic code has an entry in docs/diagnostics.md.
#
# Reads the DIAG(code, severity, title) rows of ir/diagcodes_{front,verify,sync,back}.h
# and the `### CODE — title` headings of docs/diagnostics.md. Fails (exit 1,
# listing them) when a code has no heading, or a heading names a code that
# does not exist. Prints `N passed, N failed`.
# Run by ctest as `sh FILE` with CAKE_SOURCE_DIR in the environment; without
# it, the source tree is found from the script's own place.
set -eu
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
DOC=$SRC/docs/diagnostics.md
pass=0
fail=0
for f in front verify sync back lib; do
    if [ ! -f "$SRC/ir/diagcodes_$f.h" ]; then
        echo "test_diag_docs: missing $SRC/ir/diagcodes_$f.h" >&2
        exit 2
    fi
done
if [ ! -f "$DOC" ]; then
    echo "test_diag_docs: missing $DOC" >&2
    exit 2
fi
codes=$(cat "$SRC/ir/diagcodes_front.h" "$SRC/ir/diagcodes_verify.h" \
            "$SRC/ir/diagcodes_sync.h" "$SRC/ir/diagcodes_back.h" "$SRC/ir/diagcodes_lib.h" |
        sed -n 's/^[[:space:]]*DIAG([[:space:]]*\([EW][0-9][0-9]*\)[[:space:]]*,.*/\1/p')
heads=$(sed -n 's/^###[[:space:]][[:space:]]*\([EW][0-9][0-9]*\)\([^0-9].*\)\{0,1\}$/\1/p' "$DOC")
if [ -z "$codes" ]; then
    echo "test_diag_docs: no DIAG rows found" >&2
    exit 2
fi
for c in $codes; do
    if printf '%s\n' "$heads" | grep -qx "$c"; then
        pass=$((pass + 1))
    else
        echo "FAIL: $c has no \`### $c\` heading in docs/diagnostics.md"
        fail=$((fail + 1))
    fi
done
for h in $heads; do
    if ! printf '%s\n' "$codes" | grep -qx "$h"; then
        echo "FAIL: docs/diagnostics.md has a heading for $h, which no ir/diagcodes_*.h defines"
        fail=$((fail + 1))
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
