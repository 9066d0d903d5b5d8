#!/bin/sh
# same_ptx.sh — the PTX and the TIR-L dump of every compile in ptx_cases.txt,
# from two cakecs, byte for byte: a refactoring of how kernels are bound,
# lowered and emitted must not change what comes out.
#
#   tests/instances/same_ptx.sh OLD_CAKEC NEW_CAKEC
#
# Prints one line per case (same / DIFFERS / both fail with the same output)
# and exits 1 when any case differs.
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
OLD=${1:?usage: same_ptx.sh OLD_CAKEC NEW_CAKEC}
NEW=${2:?usage: same_ptx.sh OLD_CAKEC NEW_CAKEC}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cakeptx.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
status=0
n=0
grep -v '^#' "$HERE/ptx_cases.txt" | while read -r ex tg set; do
    [ -n "$ex" ] || continue
    f=$ROOT/examples/$ex.tir
    for emit in ptx ir; do
        for which in old new; do
            if [ $which = old ]; then c=$OLD; else c=$NEW; fi
            if [ -n "$set" ]; then
                "$c" "$f" --target "$tg" --emit $emit --set "$set" > "$TMP/$which" 2>&1
            else
                "$c" "$f" --target "$tg" --emit $emit > "$TMP/$which" 2>&1
            fi
            echo "rc $?" >> "$TMP/$which"
        done
        if cmp -s "$TMP/old" "$TMP/new"; then
            printf '%-22s %-7s %-4s %-28s same (%s bytes)\n' "$ex" "$tg" $emit "${set:--}" "$(wc -c < "$TMP/new")"
        else
            printf '%-22s %-7s %-4s %-28s DIFFERS\n' "$ex" "$tg" $emit "${set:--}"
            diff "$TMP/old" "$TMP/new" | head -5
            echo x >> "$TMP/failed"
        fi
    done
done
[ -f "$TMP/failed" ] && status=1
exit $status
