#!/bin/sh
# test_rows_tables.sh — the row ops' tuning helpers of bench/device (run_rowsx.sh):
# table_merge.py takes each op a part has entries for from the parts only and keeps the
# base's other ops (and refuses a part from another device); rowsx_shapes.py's tuning
# set holds no shape of the 2027 sweep and is the same at every run; its dispatch class
# of a shape is the one `cakec lib select` reports.
set -u
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$SRC" || exit 2
command -v python3 > /dev/null || { echo "no python3"; exit 77; }
T=$(mktemp -d "${TMPDIR:-/tmp}/cake-rowtab.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail=0
D=bench/device
e() {   # e OP M N VARIANT MS: one table entry
    printf '{"op": "%s", "shape": {"M": %s, "N": %s}, "times_ms": {"%s": %s}, "failed": {}}' "$1" "$2" "$3" "$4" "$5"
}
printf '{"device": "NVIDIA H200", "runner": "local", "entries": [%s, %s, %s]}\n' \
    "$(e gemm 64 64 p 1)" "$(e rmsnorm 10 100 old 1)" "$(e rmsnorm 20 200 old 1)" > "$T/base.json"
printf '{"device": "NVIDIA H200", "runner": "local", "entries": [%s, %s]}\n' \
    "$(e rmsnorm 30 300 new 1)" "$(e softmax 40 400 new 1)" > "$T/part.json"
printf '{"device": "NVIDIA A100", "runner": "local", "entries": [%s]}\n' "$(e softmax 1 2 x 1)" > "$T/other.json"
python3 $D/table_merge.py "$T/base.json" "$T/part.json" -o "$T/out.json" 2> /dev/null || { echo "FAIL: merge"; fail=1; }
got=$(python3 -c "import json; print(' '.join(e['op'] + ':' + list(e['times_ms'])[0] for e in json.load(open('$T/out.json'))['entries']))")
if [ "$got" = "gemm:p rmsnorm:new softmax:new" ]; then
    echo "ok: merge keeps gemm, takes rmsnorm and softmax from the part"
else
    echo "FAIL: merged entries are '$got'"
    fail=1
fi
if python3 $D/table_merge.py "$T/base.json" "$T/other.json" -o "$T/bad.json" 2> /dev/null; then
    echo "FAIL: a part from another device was merged"
    fail=1
else
    echo "ok: a part from another device is refused"
fi
(cd $D && python3 rowsx_shapes.py tune) > "$T/a.txt" && (cd $D && python3 rowsx_shapes.py tune) > "$T/b.txt"
(cd $D && python3 sweep.py shapes 2027) > "$T/sweep.txt"
if cmp -s "$T/a.txt" "$T/b.txt" && [ -s "$T/a.txt" ] && ! grep -qxFf "$T/sweep.txt" "$T/a.txt"; then
    echo "ok: the tuning set ($(wc -l < "$T/a.txt") shapes) is deterministic and holds no sweep shape"
else
    echo "FAIL: the tuning set differs between runs, is empty, or holds a sweep shape"
    fail=1
fi
for s in M=9131,N=3976 M=1,N=64 M=290950,N=112 M=65536,N=1024; do
    want=$("$C" lib select tests/lib/small --op rmsnorm --shape "$s" --json | python3 -c "import sys, json; print(json.load(sys.stdin)['select']['class'])")
    have=$(cd $D && python3 rowsx_shapes.py class rmsnorm "$s")
    if [ "$want" = "$have" ]; then
        echo "ok: class of $s is $have"
    else
        echo "FAIL: class of $s: cakec says $want, rowsx_shapes.py $have"
        fail=1
    fi
done
exit $fail
