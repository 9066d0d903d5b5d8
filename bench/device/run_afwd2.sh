#!/bin/bash
# run_afwd2.sh — the attention forward and decode forms (issue 15) on the H200
# in one call, within $DEADLINE seconds (default 150); builds nothing there:
#   0. peers   afwd2_peers.py starts at once: it compiles every kernel it times (threads)
#              beside the checks, then waits for the go file
#   1. checks  `cakec run --check` of what the timings run: the causal pair order (PAIR = 1:
#              round 2 takes it for BH == BHK only, GQA falls back to heaviest-first) of
#              flash_attn_fwd_pp and _ppx at D 128 / 64: the checker's shapes, GQA and MHA with
#              an odd tile count, MQA, more tiles than blocks (sm.count); the other forms
#              (q2, x, bn192) at GQA 8 with more tiles than blocks; the fused decode at DEFER 0 / 1
#              (ragged R and S, empty splits, more blocks than SMs, NS = 64);
#              compute-sanitizer racecheck, synccheck and memcheck on the pair order (MHA) and
#              its GQA fallback; up to 14 at a time, the sanitizer runs first
#              (round 1 checked the candidates it timed: EMU, a diagonal-block form, a two-pass
#              decode merge; bench/RESULTS.md)
#   2. timings gated.py's method (cold L2, the stream held until the run is queued, median
#              of 10, trials A B A B): decode (8 shapes) beside the fastest SDPA backend, then
#              the 44 dense forward shapes of the sweep beside cuDNN and flash SDPA, `ours` the
#              dispatch's pick, the other forms beside it, every timed kernel checked; compact
#              tables printed last
#   usage (device machine, repo root): bash bench/device/run_afwd2.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: a2_table.md, a2_sweep.json,
#   a2_checks.tsv, a2_log.txt, a2_raw.tar.gz
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out-afwd2}
R=$O/a2_raw
LOG=$O/a2_log.txt
DEADLINE=${DEADLINE:-150}
mkdir -p "$R"
: > "$LOG"
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.carry/python${PYTHONPATH:+:$PYTHONPATH}
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
left() { echo $((DEADLINE - (SECONDS - T0))); }
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"

# ---- 0. the peers' process: compiles now, times after the go file ---------------------------
GO=$R/go
timeout -k 3 $((DEADLINE - 4)) python3 bench/device/afwd2_peers.py --out "$O/a2_sweep.json" \
    --deadline $((DEADLINE - 9)) --go "$GO" > "$R/sweep.txt" 2>&1 &
PEERS=$!

# ---- 1. checks and sanitizer: TAG|COMMAND ----------------------------------------------------
PP=examples/flash_attn_fwd_pp.tir
PX=examples/flash_attn_fwd_ppx.tir
DF=examples/attn_decode_fused.tir
LF=library/kernels/attention_decode_fused.tir
JOBS=$R/jobs.txt
: > "$JOBS"
j() { echo "$1|$2" >> "$JOBS"; }
CS="compute-sanitizer --error-exitcode 9"
# round 2: the pair order (PAIR = 1) for BH == BHK only; GQA falls back to heaviest-first
for t in racecheck synccheck memcheck; do
    j cs_${t}_pp_pair_mha "$CS --tool $t $C run $PP --set D=128,CAUSAL=1,PAIR=1 --shape BH=3,BHK=3,S=300,sm.count=2 --check --timeout 25"
    j cs_${t}_pp_pair_gqa "$CS --tool $t $C run $PP --set D=64,CAUSAL=1,PAIR=1 --shape BH=4,BHK=2,S=300,sm.count=2 --check --timeout 25"
done
for D in 128 64; do
    for F in $PP $PX; do
        n=$(basename $F .tir); n=${n#flash_attn_fwd_}
        j ${n}_${D}_p_default "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --check"
        j ${n}_${D}_p_gqa_odd "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --shape BH=15,BHK=3,S=300,sm.count=5 --check"
        j ${n}_${D}_p_mha_odd "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --shape BH=5,BHK=5,S=300,sm.count=5 --check"
        j ${n}_${D}_p_many "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --shape BH=20,BHK=20,S=260,sm.count=7 --check"
        j ${n}_${D}_p_mqa "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --shape BH=8,BHK=1,S=700,sm.count=3 --check"
    done
    j pp_${D}_q2_c1 "$C run $PP --set D=$D,CAUSAL=1 --shape BH=16,BHK=2,S=300,sm.count=5 --check"
    j pp_${D}_q2_c0 "$C run $PP --set D=$D,CAUSAL=0 --shape BH=16,BHK=2,S=300,sm.count=5 --check"
    j ppx_${D}_c0 "$C run $PX --set D=$D,CAUSAL=0 --shape BH=16,BHK=2,S=300,sm.count=5 --check"
done
j pp_64_bn192_c0 "$C run $PP --set D=64,CAUSAL=0,BN=192 --shape BH=8,BHK=2,S=400,sm.count=3 --check"
j pp_64_bn192_c1 "$C run $PP --set D=64,CAUSAL=1,BN=192 --shape BH=8,BHK=2,S=400,sm.count=3 --check"
DT="--tol-scale 256 --check"
for hd in 128 64; do
    for v in DEFER=0 DEFER=1; do
        j df_${hd}_${v//[,=]/_}_ragged "$C run $DF --set HD=$hd,$v --shape BHK=3,R=9,S=2600,NS=11 $DT"
        j df_${hd}_${v//[,=]/_}_empty "$C run $DF --set HD=$hd,$v --shape BHK=2,R=5,S=300,NS=20 $DT"
    done
    j df_${hd}_many "$C run $DF --set HD=$hd --shape BHK=140,R=8,S=700,NS=2 $DT"
    j df_${hd}_ns64 "$C run $DF --set HD=$hd --shape BHK=2,R=8,S=9000,NS=64 $DT"
done
say "== checks: $(wc -l < "$JOBS") runs in the background (at $((SECONDS - T0)) s)"
CT=$(( $(left) * 36 / 100 ))
{ grep -E '^cs_' "$JOBS"; grep -vE '^cs_' "$JOBS"; } > "$JOBS.sorted" && mv "$JOBS.sorted" "$JOBS"
runjob() {
    local tag=${1%%|*} cmd=${1#*|} t0=$SECONDS
    timeout -k 2 40 bash -c "$cmd --json" > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    echo "$tag $? $((SECONDS - t0))" >> "$R/rc.txt"
}
export -f runjob
export C R
: > "$R/rc.txt"
timeout -k 3 $CT xargs -P 14 -d '\n' -n 1 bash -c 'runjob "$1"' _ < "$JOBS"
touch "$GO"
say "== checks done at $((SECONDS - T0)) s: $(awk '$2 == 0' "$R/rc.txt" | wc -l) exit 0 of $(wc -l < "$JOBS")"
python3 - "$R" "$JOBS" > "$O/a2_checks.tsv" <<'PY'
import json, os, sys
R, jobs = sys.argv[1], sys.argv[2]
rc = {}
for l in open(os.path.join(R, "rc.txt")):
    p = l.split()
    if len(p) >= 3:
        rc[p[0]] = (int(p[1]), p[2])
print("tag\texit\tseconds\tshapes\tfailing / sanitizer")
for l in open(jobs):
    tag = l.split("|")[0]
    code, secs = rc.get(tag, (-1, "-"))
    try:
        doc = json.load(open(os.path.join(R, tag + ".json")))
    except Exception:
        doc = {}
    reps = doc.get("check", []) if isinstance(doc, dict) else []
    bad = [r.get("message", r.get("shape", "?"))[:100] for r in reps if not r.get("ok")]
    def text(ext):
        try:
            return open(os.path.join(R, tag + ext)).read()
        except OSError:
            return ""
    extra = ""
    if code == -1:
        extra = "not run (out of time)"
    elif tag.startswith("cs_"):
        err = text(".err") + text(".json")
        extra = " ".join(x.strip("= ") for x in err.splitlines() if "SUMMARY" in x)[:120]
    elif code != 0 and not bad:
        extra = text(".err")[-160:].replace("\n", " ").replace("\t", " ")
    print(f"{tag}\t{code}\t{secs}\t{len(reps)}\t{';'.join(bad[:2])} {extra}")
PY

# ---- 2. the timings (started at the go file) ---------------------------------------------------
say "== timings from $((SECONDS - T0)) s ($(left) s left)"
wait $PEERS
say "peers exit $? at $((SECONDS - T0)) s"
grep -E "^precompile|^timings start" "$R/sweep.txt" | tee -a "$LOG"
sed -n '/^== tables/,$p' "$R/sweep.txt" > "$O/a2_table.md"
if [ ! -s "$O/a2_table.md" ]; then   # the peers were cut short: the tables from what they saved
    tail -30 "$R/sweep.txt" | tee -a "$LOG"
    timeout 20 python3 -c "import json, sys; sys.path.insert(0, 'bench/device'); import afwd2_peers as a
d = json.load(open('$O/a2_sweep.json')); print('== tables (from a2_sweep.json)'); print(a.tables(d['fwd'], d['decode']))" \
        > "$O/a2_table.md" 2>> "$LOG"
fi
tar -czf "$O/a2_raw.tar.gz" -C "$O" a2_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks (exit 0 = every shape passed; sanitizer: exit 0 and its summary):"
awk -F'\t' '$2 != 0 || $1 ~ /^cs_/' "$O/a2_checks.tsv" | cut -f1-5
echo "checks: $(awk -F'\t' 'NR > 1 && $2 == 0' "$O/a2_checks.tsv" | wc -l) of $(($(wc -l < "$O/a2_checks.tsv") - 1)) exit 0"
cat "$O/a2_table.md"
