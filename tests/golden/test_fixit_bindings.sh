#!/bin/sh
# test_fixit_bindings.sh — fix-its and edit-proposing helps are re-checked at the
# bindings the check ran with, and on `cakec check FILE` without any (lib/fixit_verify.c):
#   1. `check --set VEC=4` of fixit/vec_assume.tir keeps the fix-it `assume N % 4 == 0`
#      (it works at VEC=4; re-checked at the default VEC=8 it would not, and was withdrawn);
#   2. without --set the fix-it is `assume N % 8 == 0` (re-checked too: it used not to be);
#   3. a help that says to add a header line is re-checked with the lines below it moved
#      down one: E0801_wrong_at_shape.tir keeps its "say so instead: `assume N % 256 == 0`" help
#      (the error left on the line above is not taken for the one it clears).
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fail=0
fixits() { # FILE ARGS...: the replacements of the E0810 fix-its, one per line
    f=$1
    shift
    "$C" check "$f" --json "$@" | python3 -c "
import json, sys
for d in json.load(sys.stdin)['diagnostics']:
    if d['code'] == 'E0810':
        for x in d['fixits']:
            print(x['replacement'].strip())"
}
F=$SRC/tests/golden/fixit/vec_assume.tir
got=$(fixits "$F" --set VEC=4 | sort -u)
[ "$got" = "assume N % 4 == 0" ] && echo "ok: --set VEC=4 keeps its fix-it" || { echo "FAIL: --set VEC=4: '$got'"; fail=1; }
got=$(fixits "$F" | sort -u)
[ "$got" = "assume N % 8 == 0" ] && echo "ok: the default's fix-it" || { echo "FAIL: default: '$got'"; fail=1; }
"$C" check "$SRC/tests/diag/bounds/E0801_wrong_at_shape.tir" 2>&1 | grep -q 'say so instead: `assume N % 256 == 0`' &&
    echo "ok: the header-line help survives its re-check" || { echo "FAIL: the assume help was withdrawn"; fail=1; }
exit $fail
