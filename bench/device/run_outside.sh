#!/bin/bash
# run_outside.sh — the outside engineer's corpus and kernels on the GPU, in one call, within
# $DEADLINE seconds (default 30; builds nothing):
#   1. bugs     every planted bug of tests/outside/corpus that `cakec check` leaves clean (the
#               `# corpus: dynamic` ones and the static ones check misses: corpus/RUN.txt,
#               written by tests/outside/score.py) under the
#               DEFAULT `cakec run --check`: each must FAIL the check (exit 1, a report not ok)
#               to count as caught; up to $OUTSIDE_JOBS (16) at a time, heaviest first
#   2. kernels  every kernel of tests/outside/kernels: the default `run --check` and
#               `run --check --shape` at its bench shape (kernels/BENCH.txt; sampled where
#               large) must pass (in the same parallel step); then, one at a time, `run
#               --bench` at that shape, then every torch peer (tests/outside/peers.py, one
#               process, CUDA events, the same shapes) after the last cake bench
# then the table, printed last: job, expect, got, seconds, what (codes, first failing shape,
# ms and ratio to the peer).
#   usage (device machine, repo root): bash bench/device/run_outside.sh
#   expects .carry/ from bench/device/carry.sh. Output under $OUT: outside.tsv (one row per
#   check job), bench.tsv (cake vs peer), outside_raw.tgz (every JSON document and stderr).
set -u
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
C=${CAKEC:-.carry/cakec}
[ -x "$C" ] || C=build/cakec
O=${OUT:-/tmp/cake-out-outside}
R=$O/raw
mkdir -p "$R"
DEADLINE=${DEADLINE:-30}
JOBS=${OUTSIDE_JOBS:-16}
T0=$(date +%s)
export C R DEADLINE T0

# NAME EXPECT FILE [ARGS...] — heaviest first (attention references cost the most)
jobs_list() {
    local n shape f
    grep -E '^(pp|vl|fa|dp)_' tests/outside/corpus/RUN.txt | while read -r n; do
        echo "bug_$n fail tests/outside/corpus/$n.tir"
    done
    grep -v '^#' tests/outside/kernels/BENCH.txt | while read -r n shape; do
        echo "kb_$n pass tests/outside/kernels/$n.tir --shape $shape"
    done
    for f in tests/outside/kernels/*.tir; do
        echo "k_$(basename "$f" .tir) pass $f"
    done
    grep -vE '^(pp|vl|fa|dp)_' tests/outside/corpus/RUN.txt | while read -r n; do
        echo "bug_$n fail tests/outside/corpus/$n.tir"
    done
}

one_job() { # NAME EXPECT FILE [ARGS...]
    local name=$1 expect=$2 file=$3
    shift 3
    local left=$((DEADLINE - ($(date +%s) - T0) - 4))
    if [ "$left" -lt 2 ]; then
        printf '%s\t%s\t-\tskipped\tno time left\n' "$name" "$expect" > "$R/$name.row"
        return
    fi
    local s=$EPOCHREALTIME
    timeout -k 1 "$left" "$C" run "$file" --check --json "$@" > "$R/$name.json" 2> "$R/$name.err"
    local rc=$?
    python3 - "$name" "$expect" "$rc" "$s" "$EPOCHREALTIME" "$R/$name.json" > "$R/$name.row" <<'PY'
import json, sys
name, expect, rc, s, e, path = sys.argv[1:]
rc, dt = int(rc), float(e) - float(s)
try:
    doc = json.load(open(path))
except Exception:
    doc = {}
reps = doc.get("check", []) if isinstance(doc, dict) else []
bad = [r for r in reps if not r.get("ok")]
codes = sorted({d.get("code", "") for d in doc.get("diagnostics", [])} if isinstance(doc, dict) else set())
sampled = sum(1 for r in reps if "sample" in r)
if rc in (124, 137):
    got = "timeout"
elif rc == 0 and reps and not bad:
    got = "pass"
elif rc == 1 and bad:
    got = "fail"
else:
    got = "error(rc=%d)" % rc
what = "%d shapes" % len(reps) + (", %d sampled" % sampled if sampled else "")
if bad:
    what += "; first failing: %s" % bad[0].get("shape", "?")
if codes:
    what += "; codes " + ",".join(c for c in codes if c)
print("\t".join([name, expect, got, "%.1f" % dt, what]))
PY
}
export -f one_job

jobs_list > "$R/jobs.txt"
xargs -P "$JOBS" -L 1 bash -c 'one_job "$@"' _ < "$R/jobs.txt"

printf 'job\texpect\tgot\tseconds\twhat\n' > "$O/outside.tsv"
while read -r name _; do
    cat "$R/$name.row" 2>/dev/null || printf '%s\t?\tmissing\t-\t\n' "$name"
done < "$R/jobs.txt" >> "$O/outside.tsv"

# ---- benches, one at a time: each kernel whose default check and bench-shape check passed
grep -v '^#' tests/outside/kernels/BENCH.txt | while read -r n shape; do
    grep -q "^k_$n	pass	pass" "$O/outside.tsv" && grep -q "^kb_$n	pass	pass" "$O/outside.tsv" || continue
    left=$((DEADLINE - ($(date +%s) - T0) - 6))
    [ "$left" -lt 2 ] && break
    timeout -k 1 "$left" "$C" run "tests/outside/kernels/$n.tir" --bench --shape "$shape" --json \
        > "$R/bench_$n.json" 2> "$R/bench_$n.err"
done
# ---- the torch peers, in one process, after every cake bench (no timing overlaps)
printf 'kernel\tshape\tcake_ms\tpeer\tpeer_ms\tpeer/cake\tnote\n' > "$O/bench.tsv"
left=$((DEADLINE - ($(date +%s) - T0) - 1))
if ls "$R"/bench_*.json > /dev/null 2>&1 && [ "$left" -ge 3 ]; then
    timeout -k 1 "$left" python3 tests/outside/peers.py "$R" tests/outside/kernels/BENCH.txt >> "$O/bench.tsv" 2> "$R/peers.err"
fi
grep -v '^#' tests/outside/kernels/BENCH.txt | while read -r n shape; do
    grep -q "^$n	" "$O/bench.tsv" || printf '%s\t%s\t-\t-\t-\t-\tnot timed (check failed or no time left)\n' "$n" "$shape" >> "$O/bench.tsv"
done

tar czf "$O/outside_raw.tgz" -C "$R" . 2> /dev/null && rm -rf "$R"
python3 - "$O/outside.tsv" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
bugs = [r for r in rows if r[0].startswith("bug_")]
ks = [r for r in rows if r[0].startswith("k_") and not r[0].startswith("kb_")]
print("planted bugs check leaves clean, failed by the default run --check (caught): %d/%d; passed (missed): %d; timeout/skipped/error: %d" % (
    sum(r[2] == "fail" for r in bugs), len(bugs), sum(r[2] == "pass" for r in bugs),
    sum(r[2] not in ("fail", "pass") for r in bugs)))
kb = [r for r in rows if r[0].startswith("kb_")]
print("outside kernels passing their default run --check: %d/%d; at the bench shape: %d/%d" % (
    sum(r[2] == "pass" for r in ks), len(ks), sum(r[2] == "pass" for r in kb), len(kb)))
PY
echo "== run_outside: $(($(date +%s) - T0)) s"
column -t -s $'\t' "$O/bench.tsv" 2>/dev/null || cat "$O/bench.tsv"
column -t -s $'\t' "$O/outside.tsv" 2>/dev/null || cat "$O/outside.tsv"
