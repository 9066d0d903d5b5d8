#!/bin/sh
# test_set_default.sh — an instance bound by `--set P=V` compiles to the same
# PTX, byte for byte, as the same file with V written as P's default: binding a
# copy of the verified kernel (lib/instance.c) is the same as having written
# the value. Every single-kernel case of ptx_cases.txt whose --set verifies.
# Needs the code generator plugin (CAKEC from ctest; skips, 77, without it).
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CAKEC=${CAKEC:-$ROOT/build/cakec}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cakeset.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
"$CAKEC" "$ROOT/examples/copy.tir" --emit ptx -o "$TMP/probe.ptx" 2>/dev/null || {
    echo "skip: cakec cannot emit PTX here (no code generator plugin)"
    exit 77
}
grep -v '^#' "$HERE/ptx_cases.txt" | while read -r ex tg set; do
    [ -n "$set" ] || continue
    f=$ROOT/examples/$ex.tir
    [ "$(grep -c '^kernel ' "$f")" = 1 ] || continue           # one kernel: one header to edit
    "$CAKEC" "$f" --target "$tg" --set "$set" --emit ptx -o "$TMP/set.ptx" 2>/dev/null || continue
    # the kernel line with each bound default replaced: `kernel k<A = 1, B = 2>`
    cp "$f" "$TMP/$ex.tir"
    for kv in $(echo "$set" | tr ',' ' '); do
        sed -E -i "/^kernel /s/([<,] *)${kv%%=*} = [0-9]+/\1${kv%%=*} = ${kv#*=}/" "$TMP/$ex.tir"
    done
    if cmp -s "$f" "$TMP/$ex.tir"; then
        echo "FAIL: $ex $set: no default to edit"
        echo x >> "$TMP/failed"
        continue
    fi
    "$CAKEC" "$TMP/$ex.tir" --target "$tg" --emit ptx -o "$TMP/dflt.ptx" 2>"$TMP/err" || {
        echo "FAIL: $ex with the defaults $set does not compile: $(head -1 "$TMP/err")"
        echo x >> "$TMP/failed"
        continue
    }
    if cmp -s "$TMP/set.ptx" "$TMP/dflt.ptx"; then
        echo "ok: $ex $tg --set $set"
    else
        echo "FAIL: $ex $tg --set $set differs from the file with those defaults"
        diff "$TMP/set.ptx" "$TMP/dflt.ptx" | head -5
        echo x >> "$TMP/failed"
    fi
done
[ -f "$TMP/failed" ] && exit 1
exit 0
