#!/bin/sh
# test_workers.sh — the local runner of `cakec lib tune --workers N` (issue 20):
# candidates spread over N workers, worker w on CUDA_VISIBLE_DEVICES = the w-th
# of --devices; without --workers, one worker per GPU of $CUDA_VISIBLE_DEVICES;
# two workers on one GPU give the table one worker gives (the same entries: times
# and failures; each measurement's measured_on says where it ran); a candidate
# that hangs or faults ends that candidate only (its entry in `failed` says how)
# while the others are timed; measurements from two kinds of GPU are E1213 and no
# table. Candidates measure with the cost model (--fake-measure), so no GPU is needed.
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || exit 2
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-workers.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
check() { name=$1; shift; if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi; }
# same_table A B: the same entries (times, failures) once measured_on is set aside
same_table() {
    python3 - "$1" "$2" << 'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
strip = lambda t: [{k: v for k, v in e.items() if k != "measured_on"} for e in t["entries"]]
sys.exit(0 if strip(a) == strip(b) and a["device"] == b["device"] else 1)
PY
}
"$C" lib build tests/lib/small -o "$T/lib.cakelib" --ptx --no-model > /dev/null 2>&1 || { echo "FAIL: build"; exit 1; }
printf 'rmsnorm M=16384,N=512\nsoftmax M=4096,N=512\ngemm M=128,N=4096,K=4096\nrmsnorm M=1000,N=256\n' > "$T/shapes.txt"
"$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/one.json" > /dev/null 2>&1
check "one worker" [ $? = 0 ]
"$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/two.json" \
    --workers 2 --devices 0 > /dev/null 2>&1
check "two workers on one GPU" [ $? = 0 ]
check "the same table" same_table "$T/one.json" "$T/two.json"
"$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/batch.json" \
    --per-task shape --workers 2 > /dev/null 2>&1
check "one task per shape (lib bench --all) gives the same table" same_table "$T/one.json" "$T/batch.json"
python3 - "$T/two.json" << 'PY'
import json, sys
t = json.load(open(sys.argv[1]))
ons = [m for e in t["entries"] for m in e["measured_on"].values()]
assert ons and all(m["device"] == "fake:h200" and m.get("visible_devices") == "0" for m in ons), ons
assert t["devices"] == [{"device": "fake:h200", "where": "0", "candidates": len(ons)}], t["devices"]
print("ok: every measurement says where it ran (%d on GPU 0)" % len(ons))
PY
check "measured_on" [ $? = 0 ]
WRAPPER_LOG=$T/spread.txt CAKE_RUN_CMD=$SRC/tests/lib/tune_wrapper.sh CAKEC=$C CUDA_VISIBLE_DEVICES=2,7 \
    "$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/spread.json" \
    --child-timeout 3 > "$T/spread.out" 2>&1
check "without --workers: one worker per GPU of CUDA_VISIBLE_DEVICES" sh -c "grep -q '2 workers over 2 GPUs' '$T/spread.out' && grep -q '^2 ' '$T/spread.txt' && grep -q '^7 ' '$T/spread.txt'"
CAKE_RUN_CMD=$SRC/tests/lib/mixed_wrapper.sh CAKEC=$C "$C" lib tune "$T/lib.cakelib" --shapes "$T/shapes.txt" \
    --fake-measure h200 -o "$T/mixed.json" --workers 2 --devices 3,5 > "$T/mixed.out" 2>&1
rc=$?
check "two kinds of GPU: exit 1, E1213, no table" sh -c "[ $rc = 1 ] && grep -q 'E1213' '$T/mixed.out' && [ ! -e '$T/mixed.json' ]"
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
    a.pop("measured_on"); b.pop("measured_on")
    assert a == b, (a, b)   # the other shapes: as without the faults
print("ok: the hang is `timeout`, the fault `fault`, the other shapes as without them")
PY
check "faults are entries" [ $? = 0 ]
CAKE_RUN_CMD=$SRC/tests/lib/batch_wrapper.sh CAKEC=$C "$C" lib tune "$T/lib.cakelib" \
    --shapes "$T/shapes.txt" --fake-measure h200 -o "$T/retry.json" --per-task shape > "$T/retry.out" 2>&1
check "a shape batch that broke the device" [ $? = 0 ]
python3 - "$T/one.json" "$T/retry.json" << 'PY'
import json, sys
one, got = (json.load(open(p)) for p in sys.argv[1:3])
e = got["entries"][0]
assert e["failed"] == {"block256": "fault"}, e
assert e["times_ms"]["block64_short"] == one["entries"][0]["times_ms"]["block64_short"], e
print("ok: the variants after the one that broke the device ran again, one task each")
PY
check "retried" [ $? = 0 ]
exit $fail
