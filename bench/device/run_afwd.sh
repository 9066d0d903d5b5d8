#!/bin/bash
# run_afwd.sh — the attention forward and decode kernels of issue 15 on the H200 in one call,
# within $DEADLINE seconds (default 80); builds nothing there:
#   0. peers      attnfwd_peers.py starts at once: it compiles every kernel it times (threads)
#                 beside the checks, then waits for the go file
#   1. checks     `cakec run --check` of examples/flash_attn_fwd_pp.tir (persistent ping-pong),
#                 flash_attn_fwd_pp_d256.tir (its head-dim-256 form),
#                 examples/flash_attn_varlen_fwd.tir, attn_decode_partial.tir and
#                 attn_decode_merge.tir for every declared parameter value: the checker's own
#                 shapes (ragged ones; the persistent kernels with sm.count below the tile
#                 count so that blocks walk 2+ tiles) and explicit ragged GQA / MQA shapes with
#                 sm.count = 2 or 3, decode splits that are empty and more blocks than SMs;
#                 compute-sanitizer racecheck, synccheck and memcheck at small shapes (2+
#                 tiles per block); up to 12 at a time, the sanitizer runs first
#   2. sweep      >= 40 forward shapes beside torch SDPA (cuDNN backend, flash backend) and 8
#                 decode shapes beside the fastest SDPA backend, in the same process, every
#                 timed kernel checked; the tables are printed last
#   usage (device machine, repo root): bash bench/device/run_afwd.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: af_table.md, af_sweep.json,
#   af_checks.tsv, af_log.txt, af_raw.tar.gz, af_sass.tar.gz (the SASS of four kernels)
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out-afwd}
R=$O/af_raw
LOG=$O/af_log.txt
DEADLINE=${DEADLINE:-80}
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
timeout -k 3 $((DEADLINE - 3)) python3 bench/device/attnfwd_peers.py --out "$O/af_sweep.json" \
    --deadline $((DEADLINE - 8)) --go "$GO" > "$R/sweep.txt" 2>&1 &
PEERS=$!

# ---- 1. checks and sanitizer: TAG|COMMAND ----------------------------------------------------
PP=examples/flash_attn_fwd_pp.tir
P256=examples/flash_attn_fwd_pp_d256.tir
VL=examples/flash_attn_varlen_fwd.tir
DP=examples/attn_decode_partial.tir
DM=examples/attn_decode_merge.tir
JOBS=$R/jobs.txt
: > "$JOBS"
j() { echo "$1|$2" >> "$JOBS"; }
CS="compute-sanitizer --error-exitcode 9"
for t in racecheck synccheck memcheck; do
    j cs_${t}_pp128c "$CS --tool $t $C run $PP --set D=128,CAUSAL=1 --shape BH=2,BHK=1,S=200,sm.count=1 --check --timeout 25"
    j cs_${t}_pp64 "$CS --tool $t $C run $PP --set D=64,CAUSAL=0,QST=1 --shape BH=3,BHK=3,S=130,sm.count=2 --check --timeout 25"
    j cs_${t}_vl128c "$CS --tool $t $C run $VL --set D=128,CAUSAL=1 --shape H=2,HK=1,T=300,B1=4,sm.count=2 --check --timeout 25"
    j cs_${t}_dec "$CS --tool $t $C run $DP --set HD=64,STAGES=2 --shape BHK=1,R=8,S=300,NS=2 --tol-scale 256 --check --timeout 25"
done
j cs_memcheck_merge "$CS --tool memcheck $C run $DM --shape BHK=2,R=5,NS=3 --check --timeout 25"
for t in racecheck memcheck; do
    j cs_${t}_pp256c "$CS --tool $t $C run $P256 --set CAUSAL=1 --shape BH=2,BHK=1,S=130,sm.count=1 --check --timeout 25"
done
for c in 1 0; do
    j pp256_${c}_default "$C run $P256 --set CAUSAL=$c --check"
    j pp256_${c}_gqa4 "$C run $P256 --set CAUSAL=$c --shape BH=8,BHK=2,S=200,sm.count=3 --check"
done
for D in 128 64; do for c in 1 0; do
    for q in 2 1; do
        s=D=$D,CAUSAL=$c,QST=$q
        j pp_${D}_${c}_q${q}_default "$C run $PP --set $s --check"
        if [ $q = 2 ]; then
            j pp_${D}_${c}_q${q}_gqa8 "$C run $PP --set $s --shape BH=16,BHK=2,S=130,sm.count=5 --check"
            j pp_${D}_${c}_q${q}_mqa "$C run $PP --set $s --shape BH=4,BHK=1,S=300,sm.count=2 --check"
            j pp_${D}_${c}_q${q}_gqa4 "$C run $PP --set $s --shape BH=8,BHK=2,S=200,sm.count=3 --check"
        fi
    done
    s=D=$D,CAUSAL=$c
    j vl_${D}_${c}_default "$C run $VL --set $s --check"
    j vl_${D}_${c}_gqa "$C run $VL --set $s --shape H=4,HK=2,T=260,B1=4,sm.count=2 --check"
    j vl_${D}_${c}_mqa "$C run $VL --set $s --shape H=2,HK=1,T=400,B1=5,sm.count=3 --check"
done; done
for hd in 128 64; do
    for st in 3 2; do j dec_${hd}_s$st "$C run $DP --set HD=$hd,STAGES=$st --tol-scale 256 --check"; done
    j merge_$hd "$C run $DM --set HD=$hd --check"
done
j dec_many "$C run $DP --tol-scale 256 --shape BHK=8,R=8,S=2600,NS=20 --check"
j dec_empty "$C run $DP --tol-scale 256 --shape BHK=2,R=5,S=300,NS=4 --check"
j dec_many_s2 "$C run $DP --set HD=128,STAGES=2 --tol-scale 256 --shape BHK=140,R=8,S=700,NS=2 --check"
j merge_many "$C run $DM --shape BHK=140,R=16,NS=7 --check"
# the SASS of the main kernels (ptxas and cuobjdump of the device's toolkit), for the
# instruction counts between the tensor-core instructions: af_sass.tar.gz and a summary
sass() { # TAG FILE SET
    "$C" "$2" --set "$3" --emit ptx -o "$R/$1.ptx" > /dev/null 2>&1 &&
        ptxas -arch=sm_90a "$R/$1.ptx" -o "$R/$1.cubin" 2> "$R/$1.ptxas" &&
        cuobjdump -sass "$R/$1.cubin" > "$R/$1.sass" 2>&1
    local f=$R/$1.sass
    [ -s "$f" ] || { echo "$1: no sass"; return; }
    echo "$1: $(grep -cE '^ +/\*[0-9a-f]+\*/' "$f") instructions, HGMMA $(grep -c HGMMA "$f"),"\
        "WARPGROUP.ARRIVE $(grep -c 'WARPGROUP.ARRIVE' "$f"), WARPGROUP.DEPBAR $(grep -c 'WARPGROUP.DEPBAR' "$f"),"\
        "MUFU.EX2 $(grep -c 'MUFU.EX2' "$f"), STL $(grep -c 'STL' "$f"), LDL $(grep -c 'LDL' "$f"),"\
        "ptxas: $(grep -ci warn "$R/$1.ptxas") warnings"
}
( sass pp128 $PP D=128,CAUSAL=0; sass pp64 $PP D=64,CAUSAL=0; sass pp64c $PP D=64,CAUSAL=1
  sass dec128 $DP HD=128 ) > "$R/sass_summary.txt" 2>&1 &
SASS=$!
say "== checks: $(wc -l < "$JOBS") runs in the background (at $((SECONDS - T0)) s)"
CT=$(( $(left) * 45 / 100 ))
runjob() {
    local tag=${1%%|*} cmd=${1#*|} t0=$SECONDS
    timeout -k 2 40 bash -c "$cmd --json" > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    echo "$tag $? $((SECONDS - t0))" >> "$R/rc.txt"
}
export -f runjob
export C R
: > "$R/rc.txt"
timeout -k 3 $CT xargs -P 12 -d '\n' -n 1 bash -c 'runjob "$1"' _ < "$JOBS"
touch "$GO"
say "== checks done at $((SECONDS - T0)) s: $(awk '$2 == 0' "$R/rc.txt" | wc -l) exit 0 of $(wc -l < "$JOBS")"
python3 - "$R" "$JOBS" > "$O/af_checks.tsv" <<'PY'
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
    bad = [r.get("shape", "?") for r in reps if not r.get("ok")]
    extra = ""
    if tag.startswith("cs_"):
        err = open(os.path.join(R, tag + ".err")).read() + open(os.path.join(R, tag + ".json")).read()
        extra = " ".join(x.strip("= ") for x in err.splitlines() if "SUMMARY" in x)[:120]
    print(f"{tag}\t{code}\t{secs}\t{len(reps)}\t{';'.join(bad[:2])} {extra}")
PY

# ---- 2. the sweep (timings started at the go file) --------------------------------------------
say "== sweep timings from $((SECONDS - T0)) s ($(left) s left)"
wait $PEERS
say "sweep exit $? at $((SECONDS - T0)) s"
grep -E "^precompile|^timings start" "$R/sweep.txt" | tee -a "$LOG"
sed -n '/^| decode/,$p' "$R/sweep.txt" > "$O/af_table.md"
grep -h "^cake.ops attention" "$R/sweep.txt" >> "$O/af_table.md"
[ -s "$O/af_table.md" ] || tail -20 "$R/sweep.txt" >> "$LOG"
wait $SASS
cat "$R/sass_summary.txt" | tee -a "$LOG"
(cd "$R" && tar -czf "$O/af_sass.tar.gz" *.sass *.ptxas 2>/dev/null; rm -f *.sass *.cubin *.ptx)
tar -czf "$O/af_raw.tar.gz" -C "$O" af_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks (exit 0 = every shape passed; sanitizer: exit 0 and its summary):"
cut -f1-5 "$O/af_checks.tsv"
cat "$O/af_table.md"
