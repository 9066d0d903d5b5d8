#!/bin/bash
# run_trust2.sh — Trust II on the device in one call (builds nothing there):
#   1. the planted run-time bugs (tests/corpus/dynamic/*.tir and every corpus entry
#      whose header says `# corpus: dynamic`) under the DEFAULT `run --check`: each
#      must fail the check (exit 1 with a check report that is not ok);
#   2. every example's default `run --check`: each must pass, in <= 30 s;
#   3. the large-GEMM sampled check: `run --check --shape M=N=K=3072` and 16384 on
#      gemm_sm90.tir (16384 also on the persistent and the fp8 GEMM), each a sampled
#      verdict (pass) in <= 60 s.
# The jobs run in parallel (TRUST2_JOBS, default 8), the heaviest first; each is timed
# on its own. usage (device machine, repo root): bash bench/device/run_trust2.sh
# expects .carry/ from bench/device/carry.sh. Honours $DEADLINE (seconds, default 95).
# Output under $OUT: one NAME.json / NAME.err per job, trust2.tsv, and the summary
# table last on stdout.
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out-trust2}
mkdir -p "$O"
DEADLINE=${DEADLINE:-95}
JOBS=${TRUST2_JOBS:-8}
T0=$(date +%s)

# NAME EXPECT LIMIT_S FILE [ARGS...] — one line per job, heaviest first
jobs_list() {
    echo "gemm16384 pass 60 examples/gemm_sm90.tir --shape M=16384,N=16384,K=16384"
    echo "gemm16384_persistent pass 60 examples/gemm_sm90_persistent.tir --shape M=16384,N=16384,K=16384"
    echo "gemm16384_fp8 pass 60 examples/gemm_fp8.tir --shape M=16384,N=16384,K=16384"
    local bugs=$( (ls tests/corpus/dynamic/*.tir; grep -l '^# corpus: dynamic' tests/corpus/*/*.tir) 2>/dev/null | sort -u)
    # attention first (its references cost the most), then the rest
    for f in examples/flash_attn_fwd*.tir; do echo "ex_$(basename "$f" .tir) pass 30 $f"; done
    for f in $bugs; do
        case $f in *flash_attn* | */causal_*) echo "bug_$(basename "$(dirname "$f")")_$(basename "$f" .tir) fail 60 $f" ;; esac
    done
    echo "gemm3072 pass 60 examples/gemm_sm90.tir --shape M=3072,N=3072,K=3072"
    for f in $bugs; do
        case $f in *flash_attn* | */causal_*) ;; *) echo "bug_$(basename "$(dirname "$f")")_$(basename "$f" .tir) fail 60 $f" ;; esac
    done
    for f in examples/*.tir; do
        case $f in *flash_attn_fwd*) continue ;; esac
        echo "ex_$(basename "$f" .tir) pass 30 $f"
    done
}

one_job() { # NAME EXPECT LIMIT FILE ARGS...
    local name=$1 expect=$2 limit=$3 file=$4
    shift 4
    local left=$((DEADLINE - ($(date +%s) - T0)))
    if [ "$left" -lt 5 ]; then
        printf '%s\t%s\t%s\t-\tskipped\tno time left\n' "$name" "$expect" "$limit" > "$O/$name.row"
        return
    fi
    local t=$((limit + 10)); [ "$t" -gt "$left" ] && t=$left
    local s=$EPOCHREALTIME
    timeout -k 5 "$t" "$C" run "$file" --check --json "$@" > "$O/$name.json" 2> "$O/$name.err"
    local rc=$?
    python3 - "$name" "$expect" "$limit" "$rc" "$s" "$EPOCHREALTIME" "$O/$name.json" > "$O/$name.row" <<'PY'
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
sampled = sum(1 for r in reps if "sample" in r)
if rc in (124, 137):
    got = "timeout"
elif rc == 0 and reps and not bad:
    got = "pass"
elif rc == 1 and bad:
    got = "fail"
else:
    got = "error(rc=%d)" % rc
ok = got == expect and dt <= limit
what = "%d shapes, %d sampled" % (len(reps), sampled)
if bad:
    what += "; first failing: " + bad[0].get("shape", "?")
if codes:
    what += "; codes " + ",".join(c for c in codes if c)
print("\t".join([name, expect, "%g" % limit, "%.1f" % dt, got + ("" if ok else " !!"), what]))
PY
}
export -f one_job
export C O DEADLINE T0

jobs_list > "$O/jobs.txt"
# shellcheck disable=SC2086
xargs -P "$JOBS" -L 1 bash -c 'one_job "$@"' _ < "$O/jobs.txt"

printf 'job\texpect\tlimit_s\tseconds\tgot\twhat\n' > "$O/trust2.tsv"
while read -r name _; do
    cat "$O/$name.row" 2>/dev/null || printf '%s\t?\t?\t-\tmissing\t\n' "$name"
done < "$O/jobs.txt" >> "$O/trust2.tsv"
python3 - "$O/trust2.tsv" > "$O/summary.txt" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
def cat(prefix):
    return [r for r in rows if r[0].startswith(prefix)]
def secs(r):
    try:
        return float(r[3])
    except ValueError:
        return float("nan")
bugs, exs, big = cat("bug_"), cat("ex_"), cat("gemm")
ok = lambda r: not r[4].endswith("!!") and r[4] not in ("missing", "skipped")
print("planted run-time bugs caught by the default run --check: %d/%d" % (sum(ok(r) for r in bugs), len(bugs)))
print("examples passing their default run --check within 30 s: %d/%d (slowest %.1f s)" % (
    sum(ok(r) for r in exs), len(exs), max([secs(r) for r in exs] or [0])))
for r in big:
    print("%s: %s in %s s (limit 60 s): %s" % (r[0], r[4], r[3], r[5]))
PY
nbad=$(tail -n +2 "$O/trust2.tsv" | grep -c '!!\|missing\|skipped')
echo "== run_trust2: $(($(tail -n +2 "$O/trust2.tsv" | wc -l) - nbad)) of $(tail -n +2 "$O/trust2.tsv" | wc -l) jobs as expected, in $(($(date +%s) - T0)) s"
column -t -s $'\t' "$O/trust2.tsv" 2>/dev/null || cat "$O/trust2.tsv"
cat "$O/summary.txt"
