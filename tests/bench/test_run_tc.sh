#!/bin/sh
# test_run_tc.sh — bench/device/run_tc.sh keeps going when its tools are missing (no
# GPU, no cuobjdump, no torch, an example not written yet): every step logs its
# outcome, the table is written and printed, the raw documents are packed, exit 0.
# Runs the sass and check steps on gemm_sm90 and a missing example, under a deadline.
command -v python3 > /dev/null || exit 77
command -v timeout > /dev/null || exit 77
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
CAKEC=${CAKEC:-$ROOT/build/cakec}
[ -x "$CAKEC" ] || exit 77
T=$(mktemp -d "${TMPDIR:-/tmp}/runtc.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$ROOT" || exit 1
OUT=$T CAKEC=$CAKEC TC_DEADLINE=60 \
    TC_STEPS="sass check" TC_TILES="gemm_sm90 no_such_example" \
    bash bench/device/run_tc.sh > "$T/stdout" 2>&1
rc=$?
status=0
fail() { echo "$1"; status=1; }
[ $rc = 0 ] || fail "run_tc.sh exited $rc"
[ -s "$T/tc_table.md" ] || fail "no tc_table.md"
[ -s "$T/tc_raw.tar.gz" ] || fail "no tc_raw.tar.gz"
[ -d "$T/tc_raw" ] && fail "tc_raw/ left beside its tarball"
grep -q "^## Steps" "$T/stdout" || fail "the table is not printed"
grep -q "not there, skipped: .*examples/no_such_example.tir" "$T/tc_table.md" ||
    fail "the missing example is not reported"
grep -q "| gemm_sm90 |" "$T/tc_table.md" || fail "no check row for gemm_sm90"
grep -q "^check:gemm_sm90: " "$T/tc_log.txt" || fail "the check of gemm_sm90 is not logged"
[ $status = 0 ] || cat "$T/stdout"
exit $status
