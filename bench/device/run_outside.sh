#!/bin/bash
# run_outside.sh — the outside engineer's corpus and kernels on the GPU, in one call, within
# $DEADLINE seconds (default 30; builds nothing):
#   1. bugs     every planted bug of tests/outside/corpus that `cakec check` leaves clean (the
#               `# corpus: dynamic` ones and the static ones check misses: corpus/RUN.txt,
#               written by tests/outside/score.py) under the
#               DEFAULT `cakec run --check`: each must FAIL the check (exit 1, a report not ok)
#               to count as caught; up to $OUTSIDE_JOBS (12) at a time, heaviest first
#   2. kernels  every kernel of tests/outside/kernels: the default `run --check` must pass (in
#               the same parallel step), then, one at a time, `run --bench` at the kernel's
#               `shape` clause beside its torch peer (tests/outside/peers.py, same process
#               order, CUDA events, the same shape; the peer's output is compared with cake's
#               first, so a timed shape is a checked shape)
# then the table, printed last: job, expect, got, seconds, what (codes, first failing shape,
# ms and ratio to the peer).
#   usage (device machine, repo root): bash bench/device/run_outside.sh
#   expects .carry/ from bench/device/carry.sh. Output under $OUT: outside.tsv, bench.tsv,
#   outside_raw.tgz (every JSON document and stderr).
set -u
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
C=${CAKEC:-.carry/cakec}
[ -x "$C" ] || C=build/cakec
O=${OUT:-/tmp/cake-out-outside}
R=$O/raw
mkdir -p "$R"
DEADLINE=${DEADLINE:-30}
JOBS=${OUTSIDE_JOBS:-12}
T0=$(date +%s)
export C R DEADLINE T0

# NAME EXPECT FILE — heaviest first (attention references cost the most)
jobs_list() {
    local f n
    while read -r n; do                                         # the entries check leaves clean,
        echo "bug_$n fail tests/outside/corpus/$n.tir"          # listed by score.py, heaviest first
    done < tests/outside/corpus/RUN.txt
    for f in tests/outside/kernels/*.tir; do
        [ -f "$f" ] && echo "k_$(basename "$f" .tir) pass $f"
    done
}

one_job() { # NAME EXPECT FILE
    local name=$1 expect=$2 file=$3
    local left=$((DEADLINE - ($(date +%s) - T0) - 3))
    if [ "$left" -lt 2 ]; then
        printf '%s\t%s\t-\tskipped\tno time left\n' "$name" "$expect" > "$R/$name.row"
        return
    fi
    local s=$EPOCHREALTIME
    timeout -k 2 "$left" "$C" run "$file" --check --json > "$R/$name.json" 2> "$R/$name.err"
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
if rc in (124, 137):
    got = "timeout"
elif rc == 0 and reps and not bad:
    got = "pass"
elif rc == 1 and bad:
    got = "fail"
else:
    got = "error(rc=%d)" % rc
what = "%d shapes" % len(reps)
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

# ---- benches: one at a time, each kernel that passed its check, beside its torch peer
printf 'kernel\tshape\tcake_ms\tpeer\tpeer_ms\tratio\tpeer_check\n' > "$O/bench.tsv"
for f in tests/outside/kernels/*.tir; do
    [ -f "$f" ] || continue
    n=$(basename "$f" .tir)
    grep -q "^k_$n	pass	pass" "$O/outside.tsv" || continue
    left=$((DEADLINE - ($(date +%s) - T0) - 2))
    [ "$left" -lt 4 ] && { printf '%s\t-\t-\t-\t-\t-\tno time left\n' "$n" >> "$O/bench.tsv"; continue; }
    timeout -k 2 "$left" "$C" run "$f" --bench --json > "$R/bench_$n.json" 2> "$R/bench_$n.err"
    left=$((DEADLINE - ($(date +%s) - T0) - 1))
    if [ "$left" -ge 3 ]; then
        timeout -k 2 "$left" python3 tests/outside/peers.py "$f" "$R/bench_$n.json" >> "$O/bench.tsv" 2> "$R/peer_$n.err" \
            || printf '%s\t-\t-\t-\t-\t-\tpeer failed (see raw/peer_%s.err)\n' "$n" "$n" >> "$O/bench.tsv"
    else
        printf '%s\t-\t-\t-\t-\t-\tno time left for the peer\n' "$n" >> "$O/bench.tsv"
    fi
done

tar czf "$O/outside_raw.tgz" -C "$R" . 2> /dev/null && rm -rf "$R"
python3 - "$O/outside.tsv" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
bugs = [r for r in rows if r[0].startswith("bug_")]
ks = [r for r in rows if r[0].startswith("k_")]
print("planted bugs check leaves clean, failed by the default run --check (caught): %d/%d; passed (missed): %d; timeout/skipped/error: %d" % (
    sum(r[2] == "fail" for r in bugs), len(bugs), sum(r[2] == "pass" for r in bugs),
    sum(r[2] not in ("fail", "pass") for r in bugs)))
print("outside kernels passing their default run --check: %d/%d" % (sum(r[2] == "pass" for r in ks), len(ks)))
PY
echo "== run_outside: $(($(date +%s) - T0)) s"
column -t -s $'\t' "$O/bench.tsv" 2>/dev/null || cat "$O/bench.tsv"
column -t -s $'\t' "$O/outside.tsv" 2>/dev/null || cat "$O/outside.tsv"
