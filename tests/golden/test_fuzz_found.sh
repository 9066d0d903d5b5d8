#!/bin/sh
# test_fuzz_found.sh — the compile-mode fuzzer's findings (tests/golden/fuzz_found), each
# kept as a regression test once fixed. Every file says what it must do now in a header
# line:
#   # fuzz-found: exit 1 E0205       `cakec FILE --emit ptx` exits 1 and reports the code
#   # fuzz-found: exit 0              it compiles, and ptxas (where found) accepts the PTX
# Never exit 2 or a signal (what the fuzzer counted as a failure).
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
P=${PTXAS:-$(command -v ptxas 2>/dev/null)}
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-fuzzfound.XXXXXX")
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
for f in "$SRC"/tests/golden/fuzz_found/*.tir; do
    spec=$(sed -n 's/^# fuzz-found: //p' "$f" | head -1)
    [ -n "$spec" ] || { echo "FAIL: $f has no '# fuzz-found:' line"; fail=$((fail + 1)); continue; }
    want_rc=$(echo "$spec" | awk '{print $2}')
    code=$(echo "$spec" | awk '$3 ~ /^E[0-9]+$/ {print $3}')
    "$C" "$f" --emit ptx -o "$T/out.ptx" > "$T/out.txt" 2>&1
    rc=$?
    ok=1
    [ "$rc" = "$want_rc" ] || ok=0
    if [ -n "$code" ] && ! grep -q "error\[$code\]" "$T/out.txt"; then ok=0; fi
    if [ "$ok" = 1 ] && [ "$want_rc" = 0 ] && [ -n "$P" ]; then
        arch=$(sed -n 's/^\.target \([a-z0-9_]*\).*/\1/p' "$T/out.ptx" | head -1)
        "$P" -arch="$arch" "$T/out.ptx" -o /dev/null > "$T/ptxas.txt" 2>&1 || ok=0
    fi
    if [ "$ok" = 1 ]; then
        pass=$((pass + 1))
        echo "ok: $(basename "$f") ($spec)"
    else
        fail=$((fail + 1))
        echo "FAIL: $(basename "$f"): want $spec, got exit $rc"
        head -5 "$T/out.txt"
        [ -f "$T/ptxas.txt" ] && head -5 "$T/ptxas.txt"
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
