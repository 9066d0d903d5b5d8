#!/bin/bash
# run_trust3.sh — Trust II's large sampled checks and the multi-worker tuning (issues 16, 20)
# on the device in one call (builds nothing heavy there):
#   checks  `run --check --json --shape M=N=K=16384` of gemm_fp8, gemm_sm90 and
#           gemm_sm90_persistent, 16384x16384x64 (gemm_sm90) and 64x64x16384 (gemm_fp8)
#           (each a sampled verdict, pass, <= 60 s), and the planted
#           run-time bugs (tests/corpus: every entry whose header says `# corpus: dynamic`,
#           and tests/corpus/dynamic/) under the DEFAULT `run --check` (each must fail);
#           all in parallel (TRUST3_JOBS, default 8), the 16384 ones first; each timed alone.
#   tune    `lib build` of bench/device/trust3_lib (rmsnorm and softmax variants), then
#           `lib tune` of it at 4 shapes with 1 worker, with 2 workers sharing the GPU
#           (`--workers 2 --devices 0,0`), and with 1 worker again (the run-to-run noise),
#           then at one shape without --workers (one worker per GPU the driver sees);
#           the tables compared: the choice per shape and the time differences.
# There is no peer to time here: the checks are verdicts (against the fp64 oracle), the
# tune compares cakec with itself. Honours $DEADLINE (seconds, default 60): the checks get
# what is left minus 22 s, the tune the rest.
#   usage (device machine, repo root): bash bench/device/run_trust3.sh
# expects .carry/ from bench/device/carry.sh. Output under $OUT: checks/*.json|err|row,
# trust3.tsv, tune/{one,two,again}.json and tune logs, tune.txt; the summary last on stdout.
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out-trust3}
DEADLINE=${DEADLINE:-60}
JOBS=${TRUST3_JOBS:-8}
T0=$(date +%s)
mkdir -p "$O/checks" "$O/tune"
left() { echo $((DEADLINE - ($(date +%s) - T0))); }

# ---- checks --------------------------------------------------------------------------------
jobs_list() {
    echo "fp8_16384 pass 60 examples/gemm_fp8.tir --shape M=16384,N=16384,K=16384"
    echo "sm90_16384 pass 60 examples/gemm_sm90.tir --shape M=16384,N=16384,K=16384"
    echo "persistent_16384 pass 60 examples/gemm_sm90_persistent.tir --shape M=16384,N=16384,K=16384"
    # the other corners of "every GEMM shape up to 16384^3": a large output over a short K,
    # a long K under a small output
    echo "sm90_16384x16384x64_16384 pass 60 examples/gemm_sm90.tir --shape M=16384,N=16384,K=64"
    echo "fp8_64x64x16384_16384 pass 60 examples/gemm_fp8.tir --shape M=64,N=64,K=16384"
    local bugs
    bugs=$( (ls tests/corpus/dynamic/*.tir; grep -l '^# corpus: dynamic' tests/corpus/*/*.tir) 2>/dev/null | sort -u)
    for f in $bugs; do
        case $f in *flash_attn* | */causal_*) echo "bug_$(basename "$(dirname "$f")")_$(basename "$f" .tir) fail 30 $f" ;; esac
    done
    for f in $bugs; do
        case $f in *flash_attn* | */causal_*) ;; *) echo "bug_$(basename "$(dirname "$f")")_$(basename "$f" .tir) fail 30 $f" ;; esac
    done
}

one_job() { # NAME EXPECT LIMIT FILE ARGS...
    local name=$1 expect=$2 limit=$3 file=$4
    shift 4
    local l=$((CHECK_END - $(date +%s)))
    if [ "$l" -lt 3 ]; then
        printf '%s\t%s\t%s\t-\tskipped\tno time left\n' "$name" "$expect" "$limit" > "$O/checks/$name.row"
        return
    fi
    local t=$((limit + 5)); [ "$t" -gt "$l" ] && t=$l
    local s=$EPOCHREALTIME
    timeout -k 3 "$t" "$C" run "$file" --check --json "$@" > "$O/checks/$name.json" 2> "$O/checks/$name.err"
    local rc=$?
    python3 - "$name" "$expect" "$limit" "$rc" "$s" "$EPOCHREALTIME" "$O/checks/$name.json" > "$O/checks/$name.row" <<'PY'
import json, sys
name, expect, limit, rc, s, e, path = sys.argv[1:]
rc, dt, limit = int(rc), float(e) - float(s), float(limit)
try:
    doc = json.load(open(path))
except Exception:
    doc = {}
reps = doc.get("check", []) if isinstance(doc, dict) else []
bad = [r for r in reps if not r.get("ok")]
codes = sorted({d.get("code", "") for d in doc.get("diagnostics", [])} if isinstance(doc, dict) else set())
if rc in (124, 137):
    got = "timeout"
elif rc == 0 and reps and not bad:
    got = "pass"
elif rc == 1 and bad:
    got = "fail"
else:
    got = "error(rc=%d)" % rc
ok = got == expect and dt <= limit
what = "%d shapes" % len(reps)
for r in reps:
    smp = r.get("sample")
    if smp:
        what += "; sampled %s %s of %s" % (smp.get("count"), smp.get("kind"), smp.get("of"))
        if "ref_seconds" in r:
            what += ", reference %.2f s, device %.2f s" % (r["ref_seconds"], r.get("device_seconds", 0))
if bad:
    what += "; first failing: " + str(bad[0].get("shape", "?"))
if codes:
    what += "; codes " + ",".join(c for c in codes if c)
print("\t".join([name, expect, "%g" % limit, "%.1f" % dt, got + ("" if ok else " !!"), what]))
PY
}
export -f one_job
CHECK_END=$((T0 + DEADLINE - 22))
export C O CHECK_END

jobs_list > "$O/checks/jobs.txt"
echo "== checks: $(wc -l < "$O/checks/jobs.txt") jobs, $JOBS at a time, until $((CHECK_END - T0)) s"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader > "$O/gpu_before.txt" 2>&1
xargs -P "$JOBS" -L 1 bash -c 'one_job "$@"' _ < "$O/checks/jobs.txt"
printf 'job\texpect\tlimit_s\tseconds\tgot\twhat\n' > "$O/trust3.tsv"
while read -r name _; do
    cat "$O/checks/$name.row" 2>/dev/null || printf '%s\t?\t?\t-\tmissing\t\n' "$name"
done < "$O/checks/jobs.txt" >> "$O/trust3.tsv"
echo "== checks done at $(( $(date +%s) - T0 )) s"

# ---- tune: 1 worker, 2 workers on the one GPU, 1 worker again ---------------------------
TU=$O/tune
SHAPES=$TU/shapes.txt
printf 'rmsnorm M=16384,N=1024\nrmsnorm M=4096,N=8192\nsoftmax M=32768,N=1024\nsoftmax M=4096,N=8192\n' > "$SHAPES"
tune_one() { # NAME LIMIT ARGS...
    local name=$1 lim=$2 l
    shift 2
    l=$(left)
    [ "$l" -lt "$lim" ] && lim=$l
    if [ "$lim" -lt 4 ]; then echo "$name: skipped (no time left)" >> "$TU/times.txt"; return; fi
    local s=$EPOCHREALTIME
    timeout -k 2 "$lim" "$C" lib tune "$TU/t3.cakelib" --shapes "$SHAPES" -o "$TU/$name.json" \
        --runs 20 --timeout 2 --child-timeout 8 "$@" > "$TU/$name.log" 2>&1
    local rc=$?
    echo "$name: exit $rc in $(python3 -c "print('%.1f' % ($EPOCHREALTIME - $s))") s ($*)" >> "$TU/times.txt"
}
: > "$TU/times.txt"
l=$(left); [ "$l" -gt 10 ] && l=10
if [ "$l" -ge 3 ] && timeout -k 2 "$l" "$C" lib build bench/device/trust3_lib -o "$TU/t3.cakelib" -j 8 --no-model \
        > "$TU/build.log" 2>&1; then
    echo "build: ok at $(( $(date +%s) - T0 )) s" >> "$TU/times.txt"
    tune_one one 14 --workers 1
    tune_one two 10 --workers 2 --devices 0,0
    tune_one again 14 --workers 1
    # without --workers: one worker per GPU the driver sees (1 here)
    head -1 "$SHAPES" > "$TU/one_shape.txt"
    l=$(left)
    if [ "$l" -ge 4 ]; then
        timeout -k 2 "$l" "$C" lib tune "$TU/t3.cakelib" --shapes "$TU/one_shape.txt" -o "$TU/auto.json" \
            --runs 5 --timeout 2 --child-timeout 8 > "$TU/auto.log" 2>&1
        echo "auto (no --workers): exit $? — $(grep -m1 'candidates at' "$TU/auto.log")" >> "$TU/times.txt"
    fi
else
    echo "build: failed or no time ($(tail -1 "$TU/build.log" 2>/dev/null))" >> "$TU/times.txt"
fi
python3 - "$TU" > "$O/tune.txt" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(n):
    try:
        return json.load(open(os.path.join(d, n + ".json")))
    except Exception:
        return None
one, two, again = load("one"), load("two"), load("again")
print(open(os.path.join(d, "times.txt")).read().rstrip())
def key(e):
    return e["op"] + " " + ",".join("%s=%s" % kv for kv in e["shape"].items())
def diffs(a, b):
    """relative time differences of every candidate timed in both, and the choices"""
    rel, rows = [], []
    eb = {key(e): e for e in b["entries"]}
    for e in a["entries"]:
        f = eb.get(key(e))
        if not f:
            continue
        ta, tb = e["times_ms"], f["times_ms"]
        for v in ta:
            if v in tb:
                rel.append(abs(ta[v] - tb[v]) / min(ta[v], tb[v]))
        if not ta or not tb:
            rows.append((key(e), "-", "-", float("nan")))
            continue
        ca, cb = min(ta, key=ta.get), min(tb, key=tb.get)
        gap = abs(ta.get(cb, float("nan")) - ta.get(ca, float("nan"))) / ta[ca] if ta and cb in ta else float("nan")
        rows.append((key(e), ca, cb, gap))
    return rel, rows
def clocks(t):
    out = []
    for e in t["entries"]:
        for m in e.get("measured_on", {}).values():
            c = m.get("sm_clock_mhz")
            if c:
                out += c
    return "%d-%d MHz" % (min(out), max(out)) if out else "not recorded"
if not one or not two:
    print("tune: a table is missing (one: %s, two: %s)" % (one is not None, two is not None))
    sys.exit(0)
rel12, rows = diffs(one, two)
print("shape | 1 worker | 2 workers | time gap of the two choices in the 1-worker table")
same = 0
for k, a, b, gap in rows:
    same += a == b != "-"
    print("%s | %s | %s | %s" % (k, a, b, "same" if a == b else "%.1f%%" % (100 * gap)))
med = lambda x: sorted(x)[len(x) // 2] if x else float("nan")
print("1 vs 2 workers: %d of %d choices the same; candidate times differ by median %.1f%%, max %.1f%% (%d candidates)"
      % (same, len(rows), 100 * med(rel12), 100 * max(rel12 or [float("nan")]), len(rel12)))
if again:
    rel11, rows11 = diffs(one, again)
    print("1 vs 1 worker again (the noise): %d of %d choices the same; times differ by median %.1f%%, max %.1f%%"
          % (sum(a == b != "-" for _, a, b, _ in rows11), len(rows11), 100 * med(rel11), 100 * max(rel11 or [float("nan")])))
print("SM clocks recorded: 1 worker %s, 2 workers %s" % (clocks(one), clocks(two)))
print("devices: 1 worker %s, 2 workers %s" % (one.get("device"), two.get("device")))
PY

# ---- summary (last) ---------------------------------------------------------------------------
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader > "$O/gpu_after.txt" 2>&1
echo "== run_trust3 in $(( $(date +%s) - T0 )) s; GPU before: $(cat "$O/gpu_before.txt"); after: $(cat "$O/gpu_after.txt")"
column -t -s $'\t' "$O/trust3.tsv" 2>/dev/null || cat "$O/trust3.tsv"
python3 - "$O/trust3.tsv" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
ok = lambda r: not r[4].endswith("!!") and r[4] not in ("missing", "skipped")
bugs = [r for r in rows if r[0].startswith("bug_")]
print("planted run-time bugs caught by the default run --check: %d/%d" % (sum(ok(r) for r in bugs), len(bugs)))
for r in rows:
    if r[0].endswith("_16384") or r[0].endswith("16384_16384"):
        print("%s: %s in %s s (limit 60 s): %s" % (r[0], r[4], r[3], r[5]))
PY
cat "$O/tune.txt"
