#!/bin/sh
# run_one.sh CAKEC FILE ARGS... — one example of tests/sim/shapes.txt under
# `cakec run --sim` (seed 7, the seed bench/device/run_sim.sh runs on the H200):
# it must exit 0 with every check report ok, within 60 seconds.
set -u
CAKEC=$1
shift
out=${TMPDIR:-/tmp}/cake-sim-$$.json
t0=$(date +%s)
"$CAKEC" run "$@" --sim --seed 7 --json > "$out"
rc=$?
t1=$(date +%s)
python3 - "$out" "$rc" $((t1 - t0)) <<'PY'
import json, sys
path, rc, dt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
doc = json.load(open(path))
reps = doc.get("check", [])
for r in reps:
    print("check %-40s %-6s max_rel_err %.3g" % (r["shape"], r["status"], r["max_rel_err"]))
for d in doc.get("diagnostics", []):
    print("%s %s" % (d["code"], d["message"][:300]))
ok = rc == 0 and reps and all(r["ok"] for r in reps)
print("run --sim: %s in %d s (limit 60)" % ("pass" if ok else "FAIL (exit %d)" % rc, dt))
sys.exit(0 if ok and dt <= 60 else 1)
PY
rc=$?
rm -f "$out"
exit $rc
