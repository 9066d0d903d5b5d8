#!/bin/bash
# run_trust.sh — Trust II on the device in one call (issue 16; builds nothing there).
# Steps (TRUST_STEPS, default "fuzz checks"; the two run at the same time):
#   fuzz     the compile-mode fuzzer (.carry/cake_fuzz_compile, from bench/device/carry.sh)
#            on the CPU cores: TRUST_FUZZ_PROCS processes (default: cores - 1, at most 15)
#            with seeds TRUST_FUZZ_SEED + i, at nice 19 (the checks keep the CPU they
#            need), over examples/*.tir and library/kernels/*.tir, each mutant through
#            `--emit ptx` and one distinct PTX in TRUST_FUZZ_PTXAS_EVERY (default 4)
#            through ptxas; for DEADLINE - 20 s (at most 50 s). A crash, an internal
#            error (exit 2) or a ptxas rejection is a failure: the mutants are kept under
#            $OUT/fuzz/.
#   checks   `cakec run --check --json` jobs, TRUST_JOBS (default 10) at a time, each
#            timed on its own, until DEADLINE - 6 s:
#              - GEMMs at 16384^3 (gemm_sm90, persistent, fp8) and the corners
#                16384x16384x64, 64x64x16384: a sampled verdict, pass, <= 60 s;
#              - every planted run-time bug (tests/corpus: `# corpus: dynamic` headers,
#                tests/corpus/dynamic/): the DEFAULT `run --check` must fail;
#              - every example with an NVIDIA target at its default check: pass, <= 30 s.
#   difftest, large, calibrate   the older trust session's steps (tests/gpu/difftest/run.sh,
#            tests/gpu/test_oracle_large.sh, bench/device/calibrate_cost.sh), when named.
# usage (device machine, repo root): bash bench/device/run_trust.sh
# expects .carry/ from bench/device/carry.sh. Output under $OUT: checks/NAME.{json,err,row},
# trust.tsv, fuzz/fuzz-I.txt (each process's counts) and any failing mutant; the summary
# table last on stdout. No peer applies: verdicts against the fp64 oracle and a fuzzer.
set -u
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export CAKEC=${CAKEC:-.carry/cakec}
C=$CAKEC
O=${OUT:-/tmp/cake-out-trust}
DEADLINE=${DEADLINE:-70}
STEPS=${TRUST_STEPS:-"fuzz checks"}
T0=$(date +%s)
mkdir -p "$O"
wants() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader > "$O/gpu_before.txt" 2>&1

# ---- fuzz (background, nice 19) -------------------------------------------------------------
FZ=$O/fuzz
FZT=${TMPDIR:-/tmp}/cake-trust-fuzz
FZ_PIDS=""
if wants fuzz; then
    mkdir -p "$FZ"
    if [ -x .carry/cake_fuzz_compile ]; then
        cores=$(nproc)
        n=${TRUST_FUZZ_PROCS:-$((cores > 1 ? cores - 1 : 1))}
        [ "$n" -gt 15 ] && n=15
        secs=$((DEADLINE - 20)); [ "$secs" -gt 50 ] && secs=50; [ "$secs" -lt 5 ] && secs=5
        seed=${TRUST_FUZZ_SEED:-2026120216}
        px=$(command -v ptxas || true)
        echo "fuzz: $n processes x $secs s, seeds $seed + i, ptxas ${px:-none} (one distinct PTX in ${TRUST_FUZZ_PTXAS_EVERY:-4})" > "$FZ/plan.txt"
        for i in $(seq 0 $((n - 1))); do
            mkdir -p "$FZT/$i"
            CAKE_LLVM_PLUGIN=$PWD/.carry/libcake-llvm.so nice -n 19 .carry/cake_fuzz_compile --seconds "$secs" \
                --seed $((seed + i)) --ptxas "$px" --ptxas-every "${TRUST_FUZZ_PTXAS_EVERY:-4}" \
                --out "$FZT/$i" examples/*.tir library/kernels/*.tir > "$FZ/fuzz-$i.txt" 2>&1 &
            FZ_PIDS="$FZ_PIDS $!"
        done
    else
        echo "fuzz: no .carry/cake_fuzz_compile (bench/device/carry.sh packs it)" > "$FZ/plan.txt"
    fi
fi

# ---- checks ---------------------------------------------------------------------------------
# NAME EXPECT LIMIT_S FILE [ARGS...], the heaviest first
jobs_list() {
    echo "fp8_16384 pass 60 examples/gemm_fp8.tir --shape M=16384,N=16384,K=16384"
    echo "sm90_16384 pass 60 examples/gemm_sm90.tir --shape M=16384,N=16384,K=16384"
    echo "persistent_16384 pass 60 examples/gemm_sm90_persistent.tir --shape M=16384,N=16384,K=16384"
    local bugs f
    bugs=$( (ls tests/corpus/dynamic/*.tir; grep -l '^# corpus: dynamic' tests/corpus/*/*.tir) 2>/dev/null | sort -u)
    for f in examples/attn_bwd*.tir examples/flash_attn*.tir examples/attn_decode*.tir; do
        grep -q '^  target .*sm_' "$f" && echo "ex_$(basename "$f" .tir) pass 30 $f"
    done
    for f in $bugs; do
        case $f in *attn* | */causal_*) echo "bug_$(basename "$(dirname "$f")")_$(basename "$f" .tir) fail 60 $f" ;; esac
    done
    echo "sm90_16384x16384x64 pass 60 examples/gemm_sm90.tir --shape M=16384,N=16384,K=64"
    echo "fp8_64x64x16384 pass 60 examples/gemm_fp8.tir --shape M=64,N=64,K=16384"
    for f in $bugs; do
        case $f in *attn* | */causal_*) ;; *) echo "bug_$(basename "$(dirname "$f")")_$(basename "$f" .tir) fail 60 $f" ;; esac
    done
    for f in examples/*.tir; do
        case $f in *attn*) continue ;; esac
        grep -q '^  target .*sm_' "$f" && echo "ex_$(basename "$f" .tir) pass 30 $f"
    done
}

one_job() { # NAME EXPECT LIMIT FILE ARGS...
    local name=$1 expect=$2 limit=$3 file=$4
    shift 4
    local l=$((CHECK_END - $(date +%s)))
    if [ "$l" -lt 3 ]; then
        printf '%s\t%s\t%s\t-\tskipped\tno time left\n' "$name" "$expect" "$limit" > "$CK/$name.row"
        return
    fi
    local t=$((limit + 5)); [ "$t" -gt "$l" ] && t=$l
    local s=$EPOCHREALTIME
    timeout -k 3 "$t" "$CAKEC" run "$file" --check --json "$@" > "$CK/$name.json" 2> "$CK/$name.err"
    local rc=$?
    python3 - "$name" "$expect" "$limit" "$rc" "$s" "$EPOCHREALTIME" "$CK/$name.json" > "$CK/$name.row" <<'PY'
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
ok = got == expect and (dt <= limit or expect == "fail")
what = "%d shapes" % len(reps)
for r in reps:
    smp = r.get("sample")
    if smp:
        what += "; sampled %s %s of %s" % (smp.get("count"), smp.get("kind"), smp.get("of"))
        if "ref_seconds" in r:
            what += ", reference %.2f s, device %.2f s" % (r["ref_seconds"], r.get("device_seconds", 0))
        break
if bad:
    what += "; first failing: " + str(bad[0].get("shape", "?"))
if codes:
    what += "; codes " + ",".join(c for c in codes if c)
print("\t".join([name, expect, "%g" % limit, "%.1f" % dt, got + ("" if ok else " !!"), what]))
PY
}
CK=$O/checks
if wants checks; then
    mkdir -p "$CK"
    CHECK_END=$((T0 + DEADLINE - 6))
    export -f one_job
    export CK CHECK_END
    jobs_list > "$CK/jobs.txt"
    echo "== checks: $(wc -l < "$CK/jobs.txt") jobs, ${TRUST_JOBS:-10} at a time, until $((CHECK_END - T0)) s"
    xargs -P "${TRUST_JOBS:-10}" -L 1 bash -c 'one_job "$@"' _ < "$CK/jobs.txt"
    printf 'job\texpect\tlimit_s\tseconds\tgot\twhat\n' > "$O/trust.tsv"
    while read -r name _; do
        cat "$CK/$name.row" 2>/dev/null || printf '%s\t?\t?\t-\tmissing\t\n' "$name"
    done < "$CK/jobs.txt" >> "$O/trust.tsv"
    echo "== checks done at $(( $(date +%s) - T0 )) s"
fi

# ---- the older steps, when named ------------------------------------------------------------
if wants difftest; then
    DT_DEADLINE=${DT_DEADLINE:-150} DT_REDUCE_BUDGET=${DT_REDUCE_BUDGET:-60} bash tests/gpu/difftest/run.sh > /dev/null 2>&1
    echo "difftest exit $? at $(( $(date +%s) - T0 )) s"
    [ -d "$O/difftest" ] && tar czf "$O/difftest.tgz" --exclude='*.cubin' -C "$O" difftest && rm -rf "$O/difftest"
fi
if wants large; then
    timeout 180 sh tests/gpu/test_oracle_large.sh > "$O/large.txt" 2>&1
    echo "test_oracle_large exit $? at $(( $(date +%s) - T0 )) s"
fi
if wants calibrate; then
    CAL_DEADLINE=${CAL_DEADLINE:-150} bash bench/device/calibrate_cost.sh > "$O/cal_log.txt" 2>&1
    echo "calibration exit $? at $(( $(date +%s) - T0 )) s"
fi

# ---- the fuzzer's counts --------------------------------------------------------------------
if [ -n "$FZ_PIDS" ]; then
    for p in $FZ_PIDS; do wait "$p"; done
    for d in "$FZT"/*; do
        ls "$d"/crash-* "$d"/bug-* "$d"/ptxas-* "$d"/slow-* 2> /dev/null | head -20 | while read -r f; do
            cp "$f" "$FZ/$(basename "$d")-$(basename "$f")"
        done
    done
    python3 - "$FZ" > "$FZ/summary.txt" <<'PY'
import glob, re, sys
keys = ["mutants", "rejected", "noptx", "ptx", "assembled", "slow", "crashes", "bugs", "ptxfail"]
tot = dict.fromkeys(keys, 0)
n = 0
pat = re.compile(r"fuzz_compile: (\d+) mutants in (\d+) s: (\d+) rejected by check, (\d+) accepted without PTX "
                 r"\(a diagnostic\), (\d+) reached PTX \([\d.]+%\), (\d+) distinct PTX assembled.*?; (\d+) compiles "
                 r"over a minute[^;]*; failures: (\d+) crashes, (\d+) internal errors, (\d+) ptxas")
for f in sorted(glob.glob(sys.argv[1] + "/fuzz-*.txt")):
    m = pat.search(open(f).read())
    if not m:
        print("%s: no final count" % f.rsplit("/", 1)[-1])
        continue
    n += 1
    v = [int(x) for x in m.groups()]
    for k, x in zip(keys, [v[0], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]]):
        tot[k] += x
m = tot["mutants"]
print("fuzz: %d processes: %d mutants, %d rejected by check, %d diagnostic without PTX, %d reached PTX (%.1f%%), "
      "%d assembled by ptxas, %d over a minute of CPU; failures: %d crashes, %d internal errors, %d ptxas rejections"
      % (n, m, tot["rejected"], tot["noptx"], tot["ptx"], 100.0 * tot["ptx"] / max(m, 1), tot["assembled"],
         tot["slow"], tot["crashes"], tot["bugs"], tot["ptxfail"]))
PY
fi

# ---- summary (last) -------------------------------------------------------------------------
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader > "$O/gpu_after.txt" 2>&1
echo "== run_trust in $(( $(date +%s) - T0 )) s; GPU before: $(cat "$O/gpu_before.txt"); after: $(cat "$O/gpu_after.txt")"
if [ -f "$O/trust.tsv" ]; then
    column -t -s $'\t' "$O/trust.tsv" 2>/dev/null || cat "$O/trust.tsv"
    python3 - "$O/trust.tsv" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])][1:]
ok = lambda r: not r[4].endswith("!!") and r[4] not in ("missing", "skipped")
bugs = [r for r in rows if r[0].startswith("bug_")]
exs = [r for r in rows if r[0].startswith("ex_")]
big = [r for r in rows if "16384" in r[0]]
t = lambda r: float(r[3]) if r[3] not in ("-", "") else -1.0
print("planted run-time bugs caught by the default run --check: %d/%d%s" % (
    sum(ok(r) for r in bugs), len(bugs), "; missed: " + " ".join(r[0] for r in bugs if not ok(r)) if any(not ok(r) for r in bugs) else ""))
print("examples' default run --check: %d/%d pass within 30 s, slowest %.1f s (%s)" % (
    sum(ok(r) for r in exs), len(exs), max((t(r) for r in exs), default=0), max(exs, key=t)[0] if exs else "-"))
for r in big:
    print("%s: %s in %s s (limit 60 s): %s" % (r[0], r[4], r[3], r[5]))
PY
fi
[ -f "$FZ/summary.txt" ] && cat "$FZ/summary.txt"
exit 0
