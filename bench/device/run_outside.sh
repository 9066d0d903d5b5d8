#!/bin/bash
# run_outside.sh — the outside engineer's corpus and kernels on the GPU, in one call, within
# $DEADLINE seconds (default 20; builds nothing). Two modes:
#   OUTSIDE_FULL=1 (round 1, 30 s):
#     1. bugs     every planted bug of tests/outside/corpus that `cakec check` leaves clean
#                 (corpus/RUN.txt, written by tests/outside/score.py: the `# corpus: dynamic`
#                 ones and the static ones check misses) under the DEFAULT `cakec run --check`:
#                 each must FAIL the check (exit 1, a report not ok) to count as caught
#     2. kernels  every kernel of tests/outside/kernels under the default `run --check`
#     all in one parallel step, up to $OUTSIDE_JOBS (16) at a time, heaviest first
#   default (round 2, 20 s):
#     1. the bugs of corpus/EXTRA.txt (those the default check missed or did not finish in
#        round 1) at an explicit shape: each must fail
#   both modes then:
#     3. `run --check --shape` of every kernel at its bench shape (kernels/BENCH.txt; sampled
#        where large), in the same parallel step, capped at $OUTSIDE_CHECK_S seconds (full: the
#        deadline; default: 8)
#     4. one at a time, `run --bench --shape` of each kernel that passed, then every torch peer
#        (tests/outside/peers.py, one process that imported torch meanwhile; CUDA events, the
#        same shapes) after the last cake bench, so that no timings overlap
# then the table, printed last: job, expect, got, seconds, what (codes, first failing shape),
# after the bench table (cake ms, peer ms, peer/cake).
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
DEADLINE=${DEADLINE:-20}
FULL=${OUTSIDE_FULL:-0}
CHECK_S=${OUTSIDE_CHECK_S:-8}
[ "$FULL" = 1 ] && CHECK_S=$DEADLINE
JOBS=${OUTSIDE_JOBS:-16}
T0=$(date +%s)
export C R DEADLINE T0 CHECK_S

# NAME EXPECT FILE [ARGS...] — heaviest first (attention references cost the most)
jobs_list() {
    local n shape f args
    if [ "$FULL" = 1 ]; then
        grep -E '^(pp|vl|fa|dp)_' tests/outside/corpus/RUN.txt | while read -r n; do
            echo "bug_$n fail tests/outside/corpus/$n.tir"
        done
    else
        grep -v '^#' tests/outside/corpus/EXTRA.txt | while read -r n args; do
            echo "bugx_$n fail tests/outside/corpus/$n.tir $args"
        done
    fi
    grep -v '^#' tests/outside/kernels/BENCH.txt | while read -r n shape; do
        echo "kb_$n pass tests/outside/kernels/$n.tir --shape $shape"
    done
    if [ "$FULL" = 1 ]; then
        for f in tests/outside/kernels/*.tir; do
            echo "k_$(basename "$f" .tir) pass $f"
        done
        grep -vE '^(pp|vl|fa|dp)_' tests/outside/corpus/RUN.txt | while read -r n; do
            echo "bug_$n fail tests/outside/corpus/$n.tir"
        done
    fi
}

one_job() { # NAME EXPECT FILE [ARGS...]
    local name=$1 expect=$2 file=$3
    shift 3
    local left=$((CHECK_S - ($(date +%s) - T0)))
    local dl=$((DEADLINE - ($(date +%s) - T0) - 4))
    [ "$dl" -lt "$left" ] && left=$dl
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

# the peers' process imports torch while the checks run; it times nothing before $R/go exists
if [ -f tests/outside/peers.py ]; then
    python3 tests/outside/peers.py --wait "$R/go" "$R" tests/outside/kernels/BENCH.txt > "$R/peers.tsv" 2> "$R/peers.err" &
    PEERS=$!
fi
jobs_list > "$R/jobs.txt"
xargs -P "$JOBS" -L 1 bash -c 'one_job "$@"' _ < "$R/jobs.txt"

printf 'job\texpect\tgot\tseconds\twhat\n' > "$O/outside.tsv"
while read -r name _; do
    cat "$R/$name.row" 2>/dev/null || printf '%s\t?\tmissing\t-\t\n' "$name"
done < "$R/jobs.txt" >> "$O/outside.tsv"

# ---- benches, one at a time: each kernel whose bench-shape check (and in full mode its
# default check) passed
grep -v '^#' tests/outside/kernels/BENCH.txt | while read -r n shape; do
    grep -q "^kb_$n	pass	pass" "$O/outside.tsv" || continue
    if [ "$FULL" = 1 ]; then grep -q "^k_$n	pass	pass" "$O/outside.tsv" || continue; fi
    left=$((DEADLINE - ($(date +%s) - T0) - 5))
    [ "$left" -lt 2 ] && break
    timeout -k 1 "$left" "$C" run "tests/outside/kernels/$n.tir" --bench --runs 20 --shape "$shape" --json \
        > "$R/bench_$n.json" 2> "$R/bench_$n.err"
done
# ---- the torch peers, after every cake bench (no timing overlaps)
touch "$R/go"
printf 'kernel\tshape\tcake_ms\tpeer\tpeer_ms\tpeer/cake\tnote\n' > "$O/bench.tsv"
if [ -n "${PEERS:-}" ]; then
    left=$((DEADLINE - ($(date +%s) - T0) - 1))
    [ "$left" -lt 1 ] && left=1
    ( sleep "$left"; kill "$PEERS" 2> /dev/null ) &
    KILLER=$!
    wait "$PEERS" 2> /dev/null
    kill "$KILLER" 2> /dev/null
    cat "$R/peers.tsv" >> "$O/bench.tsv"
fi
grep -v '^#' tests/outside/kernels/BENCH.txt | while read -r n shape; do
    grep -q "^$n	" "$O/bench.tsv" && continue
    if [ -f "$R/bench_$n.json" ]; then
        ms=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('bench',{}).get('median_ms','-'))" "$R/bench_$n.json" 2> /dev/null)
        printf '%s\t%s\t%s\t-\t-\t-\tno peer time (out of time)\n' "$n" "$shape" "${ms:--}" >> "$O/bench.tsv"
    else
        printf '%s\t%s\t-\t-\t-\t-\tnot timed (check failed or no time left)\n' "$n" "$shape" >> "$O/bench.tsv"
    fi
done

tar czf "$O/outside_raw.tgz" -C "$R" . 2> /dev/null && rm -rf "$R"
python3 - "$O/outside.tsv" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
bugs = [r for r in rows if r[0].startswith("bug_")]
bx = [r for r in rows if r[0].startswith("bugx_")]
ks = [r for r in rows if r[0].startswith("k_") and not r[0].startswith("kb_")]
if bugs: print("planted bugs check leaves clean, failed by the default run --check (caught): %d/%d; passed (missed): %d; timeout/skipped/error: %d" % (
    sum(r[2] == "fail" for r in bugs), len(bugs), sum(r[2] == "pass" for r in bugs),
    sum(r[2] not in ("fail", "pass") for r in bugs)))
if bx:
    print("run-time bugs the default check missed in round 1, at an explicit shape: failed (caught) %d/%d" % (
        sum(r[2] == "fail" for r in bx), len(bx)))
kb = [r for r in rows if r[0].startswith("kb_")]
if ks: print("outside kernels passing their default run --check: %d/%d" % (sum(r[2] == "pass" for r in ks), len(ks)))
print("outside kernels passing run --check at their bench shape: %d/%d" % (sum(r[2] == "pass" for r in kb), len(kb)))
PY
echo "== run_outside: $(($(date +%s) - T0)) s"
column -t -s $'\t' "$O/bench.tsv" 2>/dev/null || cat "$O/bench.tsv"
column -t -s $'\t' "$O/outside.tsv" 2>/dev/null || cat "$O/outside.tsv"
