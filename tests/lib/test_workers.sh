#!/bin/sh
# test_workers.sh — the local runner of `cakec lib tune --workers N` (issue 20):
# candidates spread over N workers, worker w on CUDA_VISIBLE_DEVICES = the w-th
# of --devices; two workers on one GPU give the table one worker gives; a
# candidate that hangs or faults ends that candidate only (its entry in `failed`
# says how) while the others are timed. Candidates measure with the cost model
# (--fake-measure), so no GPU is needed.
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || exit 2
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-workers.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
check() { name=$1; shift; if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi; }
"$C" lib build tests/lib/small -o "$T/lib.cakelib" --ptx --no-model > /dev/null 2>&1 || { echo "FAIL: build"; exit 1; }
printf 'rmsnorm M=16384,N=512\nsoftmax M=4096,N=512\ngemm M=128,N=4096,K=4096\nrmsnorm M=1000,N=256\n' > "$T/shapes.txt"
"$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/one.json" > /dev/null 2>&1
check "one worker" [ $? = 0 ]
"$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/two.json" \
    --workers 2 --devices 0 > /dev/null 2>&1
check "two workers on one GPU" [ $? = 0 ]
check "the same table" cmp -s "$T/one.json" "$T/two.json"
"$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/batch.json" \
    --per-task shape --workers 2 > /dev/null 2>&1
check "one task per shape (lib bench --all) gives the same table" cmp -s "$T/one.json" "$T/batch.json"
WRAPPER_LOG=$T/devices.txt CAKE_RUN_CMD=$SRC/tests/lib/tune_wrapper.sh CAKEC=$C \
    "$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/faults.json" \
    --workers 2 --devices 3,5 --child-timeout 3 > "$T/faults.out" 2>&1
check "a hang and a fault do not end the tune" [ $? = 0 ]
check "the workers saw GPUs 3 and 5" sh -c "grep -q '^3 ' '$T/devices.txt' && grep -q '^5 ' '$T/devices.txt' && ! grep -qv '^[35] ' '$T/devices.txt'"
python3 - "$T/one.json" "$T/faults.json" << 'PY'
import json, sys
one, bad = (json.load(open(p)) for p in sys.argv[1:3])
e = bad["entries"][0]
assert e["failed"].get("block256") == "timeout", e
assert e["failed"].get("block64_short") == "fault", e
assert not e["times_ms"], e
for a, b in zip(one["entries"][1:], bad["entries"][1:]):
    assert a == b, (a, b)   # the other shapes: as without the faults
print("ok: the hang is `timeout`, the fault `fault`, the other shapes as without them")
PY
check "faults are entries" [ $? = 0 ]
exit $fail
