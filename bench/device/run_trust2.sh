#!/bin/bash
# run_trust2.sh — Trust II on the device in one call (builds nothing there):
#   1. the planted run-time bugs (tests/corpus/dynamic/*.tir and every corpus entry
#      whose header says `# corpus: dynamic`) under the DEFAULT `run --check`: each
#      must fail the check (exit 1 with a check report that is not ok);
#   2. every example's default `run --check`: each must pass, in <= 30 s;
#   3. the large-GEMM sampled check: `run --check --shape M=N=K=3072` and 16384 on
#      gemm_sm90.tir, each a sampled verdict (pass) in <= 60 s.
# The jobs run in parallel (TRUST2_JOBS, default 6), the heaviest first; each is timed
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
JOBS=${TRUST2_JOBS:-6}
T0=$(date +%s)

# NAME EXPECT LIMIT_S FILE [ARGS...] — one line per job, heaviest first
jobs_list() {
    echo "gemm16384 pass 60 examples/gemm_sm90.tir --shape M=16384,N=16384,K=16384"
    for f in examples/flash_attn_fwd.tir examples/flash_attn_fwd_d64.tir; do
        echo "ex_$(basename "$f" .tir) pass 30 $f"
    done
    for f in tests/corpus/dynamic/*.tir $(grep -l '^# corpus: dynamic' tests/corpus/*/*.tir 2>/dev/null); do
        [ -f "$f" ] && echo "bug_$(basename "$f" .tir) fail 60 $f"
    done | sort -u -k1,1
    echo "gemm3072 pass 60 examples/gemm_sm90.tir --shape M=3072,N=3072,K=3072"
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
nbad=$(tail -n +2 "$O/trust2.tsv" | grep -c '!!\|missing\|skipped')
echo "== run_trust2: $(($(tail -n +2 "$O/trust2.tsv" | wc -l) - nbad)) of $(tail -n +2 "$O/trust2.tsv" | wc -l) jobs as expected, in $(($(date +%s) - T0)) s"
column -t -s $'\t' "$O/trust2.tsv" 2>/dev/null || cat "$O/trust2.tsv"
