#!/bin/sh
# run_diag.sh CAKEC DIR|FILE... — the golden diagnostics suite.
#
# Every .tir under the given folders carries its expectations inline:
#   # expect error[E0201] at 12:9
#   # expect note at 4:17            (the diagnostic above has a note there)
#   # expect help: did you mean `acc`
# A file without expectations must check clean (exit 0). The checker,
# cake_diagcheck (tests/golden/diagcheck.c, built next to the tests), runs
# `cakec check --json` and `cakec check` on each file, prints a diff per
# failing file and `N passed, N failed`; it exits 1 when any file failed.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 CAKEC DIR|FILE..." >&2
    exit 2
fi
CAKEC=$1
shift
CHECK=${CAKE_DIAGCHECK:-$(dirname "$CAKEC")/tests/cake_diagcheck}
if [ ! -x "$CHECK" ]; then
    echo "run_diag.sh: checker $CHECK not built (make cake_diagcheck, or set CAKE_DIAGCHECK)" >&2
    exit 2
fi
files=$(find "$@" -name '*.tir' -type f | LC_ALL=C sort)
if [ -z "$files" ]; then
    echo "run_diag.sh: no .tir files under $*"
    echo "0 passed, 0 failed"
    exit 0
fi
# shellcheck disable=SC2086 # the file names have no spaces (checked by the suite's layout)
exec "$CHECK" "$CAKEC" $files
