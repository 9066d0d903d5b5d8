#!/bin/bash
# run_attnx.sh — the attention of issue 15 on the H200 in one call, within $DEADLINE seconds
# (default 110); builds nothing there:
#   0. peers   attnx_peers.py starts at once: it compiles every kernel it times (threads)
#              beside the checks, then waits for the go file
#   1. checks  `cakec run --check` of examples/attn_decode_fused.tir (split-KV decode in one
#              launch) and its library form library/kernels/attention_decode_fused.tir at
#              every declared HD x DEFER x RSKIP: the checker's shapes,
#              ragged R and S, empty splits, NS = 1, R = 64, and more blocks than SMs
#              (BHK = 140, 280 blocks; BHK = 8, NS = 20); the library's decode ops
#              attention_decode and attention_decode_d64 (`lib run --check`, a variant of
#              each kind against the op's reference); compute-sanitizer racecheck,
#              synccheck and memcheck on the fused decode (2+ splits per head, so the
#              merge runs); the forward kernels (flash_attn_fwd_pp, _ppx, _varlen, _pp_d256)
#              at every declared D x CAUSAL x QST, and the causal pair order (PAIR = 1) of
#              flash_attn_fwd_pp and _ppx (the checker's shapes; GQA, an odd tile count,
#              more tiles than blocks through sm.count); attn_bwd at HD x
#              CAUSAL and BH = 64 (192 blocks); up to 14 at a time
#   2. timings gated.py's method on both sides (cold L2, the stream held until the run is
#              queued, median of 10, trials A B A B, the peers also as CUDA graphs): decode
#              (8 shapes: fused at several split counts, the two-launch partial + merge, the
#              fastest of cuDNN / flash / efficient SDPA), the forward shapes (MODE=full,
#              the default: all 48; MODE=losing: S <= 2048 and varlen D=128 non-causal)
#              beside cuDNN and flash SDPA (causal: also the pair order, PAIR = 1),
#              then the backward (attnbwd_peers.py's 4 small + 18 shapes) beside cuDNN's
#              backward through autograd; every timed kernel checked; tables printed last
#   usage (device machine, repo root): [MODE=losing] bash bench/device/run_attnx.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: ax_table.md, ax_sweep.json,
#   ax_checks.tsv, ax_log.txt, ax_raw.tar.gz, attnbwd_results.jsonl
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out-attnx}
R=$O/ax_raw
LOG=$O/ax_log.txt
DEADLINE=${DEADLINE:-110}
MODE=${MODE:-full}
mkdir -p "$R"
: > "$LOG"
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.carry/python${PYTHONPATH:+:$PYTHONPATH}
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
left() { echo $((DEADLINE - (SECONDS - T0))); }
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1) mode $MODE"

# ---- 0. the peers' process: compiles now, times after the go file ---------------------------
GO=$R/go
FULL=; [ "$MODE" = full ] && FULL=--full
OUT=$O timeout -k 3 $((DEADLINE - 3)) python3 bench/device/attnx_peers.py --out "$O/ax_sweep.json" \
    --deadline $((DEADLINE - 8)) --go "$GO" $FULL > "$R/sweep.txt" 2>&1 &
PEERS=$!

# ---- 1. checks and sanitizer: TAG|COMMAND ----------------------------------------------------
PP=examples/flash_attn_fwd_pp.tir
DF=examples/attn_decode_fused.tir
LF=library/kernels/attention_decode_fused.tir
JOBS=$R/jobs.txt
: > "$JOBS"
j() { echo "$1|$2" >> "$JOBS"; }
CS="compute-sanitizer --error-exitcode 9"
for t in racecheck synccheck memcheck; do
    j cs_${t}_df128 "$CS --tool $t $C run $DF --set HD=128 --shape BHK=2,R=8,S=700,NS=3 --tol-scale 256 --check --timeout 25"
    j cs_${t}_df64 "$CS --tool $t $C run $DF --set HD=64 --shape BHK=2,R=5,S=300,NS=4 --tol-scale 256 --check --timeout 25"
    j cs_${t}_df128d1 "$CS --tool $t $C run $DF --set HD=128,DEFER=1 --shape BHK=2,R=8,S=700,NS=3 --tol-scale 256 --check --timeout 25"
    j cs_${t}_df128rd "$CS --tool $t $C run $DF --set HD=128,RSKIP=1,DEFER=1 --shape BHK=2,R=8,S=700,NS=3 --tol-scale 256 --check --timeout 25"
done
DT="--tol-scale 256 --check"
for hd in 128 64; do
    for v in "" ",DEFER=1" ",RSKIP=1,DEFER=$((hd / 128))"; do
        t=df_${hd}${v//[,=]/_}
        j ${t}_default "$C run $DF --set HD=$hd$v $DT"
        j ${t}_ragged "$C run $DF --set HD=$hd$v --shape BHK=3,R=9,S=2600,NS=11 $DT"
        j ${t}_empty "$C run $DF --set HD=$hd$v --shape BHK=2,R=5,S=300,NS=4 $DT"
    done
    j df_${hd}_many "$C run $DF --set HD=$hd --shape BHK=140,R=8,S=700,NS=2 $DT"
    j df_${hd}_many20 "$C run $DF --set HD=$hd --shape BHK=8,R=8,S=2600,NS=20 $DT"
    j df_${hd}_r64 "$C run $DF --set HD=$hd --shape BHK=2,R=64,S=1000,NS=3 $DT"
    j df_${hd}_ns1 "$C run $DF --set HD=$hd --shape BHK=3,R=1,S=129,NS=1 $DT"
    j lf_${hd}_ns4 "$C run $LF --set HD=$hd,NS=4 --shape BHK=5,R=8,S=3000 $DT"
    j lf_${hd}_ns64 "$C run $LF --set HD=$hd,NS=64 --shape BHK=3,R=8,S=9000 $DT"
    j lf_${hd}_many "$C run $LF --set HD=$hd,NS=16 --shape BHK=12,R=8,S=2000 $DT"
    j lf_${hd}_d1 "$C run $LF --set HD=$hd,NS=8,DEFER=1 --shape BHK=5,R=8,S=3000 $DT"
    j df_${hd}_r1r64 "$C run $DF --set HD=$hd,RSKIP=1 --shape BHK=2,R=64,S=1000,NS=3 $DT"
done
# the forward kernels' epilogue (O * (1 / l): one division per row): every declared value
PX=examples/flash_attn_fwd_ppx.tir
VL=examples/flash_attn_varlen_fwd.tir
P256=examples/flash_attn_fwd_pp_d256.tir
for D in 128 64; do for c in 1 0; do
    for q in 2 1; do
        j pp_${D}_${c}_q${q}_default "$C run $PP --set D=$D,CAUSAL=$c,QST=$q --check"
        j pp_${D}_${c}_q${q}_gqa8 "$C run $PP --set D=$D,CAUSAL=$c,QST=$q --shape BH=16,BHK=2,S=130,sm.count=5 --check"
    done
    j vl_${D}_${c}_default "$C run $VL --set D=$D,CAUSAL=$c --check"
    j vl_${D}_${c}_gqa "$C run $VL --set D=$D,CAUSAL=$c --shape H=4,HK=2,T=260,B1=4,sm.count=2 --check"
    j ppx_${D}_${c}_gqa8 "$C run $PX --set D=$D,CAUSAL=$c,QST=2 --shape BH=16,BHK=2,S=130,sm.count=5 --check"
done; done
j ppx_128_0_q1 "$C run $PX --set D=128,CAUSAL=0,QST=1 --check"
# the causal pair order (PAIR = 1): the checker's shapes, GQA with an odd tile count (GQA
# falls back to the heaviest-first order), MHA with an odd tile count, more tiles than blocks
# (sm.count; the pair order runs from 2 tiles a block), non-causal (no-op)
for D in 128 64; do
    for F in $PP $PX; do
        n=$(basename $F .tir); n=${n#flash_attn_fwd_}
        j ${n}_${D}_p_default "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --check"
        j ${n}_${D}_p_odd "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --shape BH=15,BHK=3,S=300,sm.count=5 --check"
        j ${n}_${D}_p_odd_mha "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --shape BH=5,BHK=5,S=300,sm.count=5 --check"
        j ${n}_${D}_p_many "$C run $F --set D=$D,CAUSAL=1,PAIR=1 --shape BH=20,BHK=20,S=260,sm.count=7 --check"
    done
    j pp_${D}_p_nc "$C run $PP --set D=$D,CAUSAL=0,PAIR=1 --shape BH=20,BHK=10,S=130,sm.count=3 --check"
done
j pp_64_p_bn192 "$C run $PP --set D=64,BN=192,CAUSAL=1,PAIR=1 --shape BH=8,BHK=2,S=400,sm.count=3 --check"
j pp_64_p_bn192d "$C run $PP --set D=64,BN=192,CAUSAL=1,PAIR=1 --check"
# the library's decode ops (head dim 128 and 64), each variant kind against the op's reference
for op in attention_decode attention_decode_d64; do
    for vs in fused32:BHK=2,R=8,S=9000 fused4:BHK=24,R=4,S=2000 split8:BHK=4,R=8,S=3000 fused64:BHK=1,R=5,S=17000; do
        j lop_${op#attention_}_${vs%%:*} "$C lib run library --op $op --variant ${vs%%:*} --shape ${vs#*:} --check"
    done
done
# the forward op's pair variant (D = 128 causal, S <= 4096) against the op's reference
j lop_fwd_pair "$C lib run library --op attention_fwd_gqa_causal --variant sm90_pingpong_pair_128x128 --shape BH=8,BHK=2,S=300 --check"
j lop_fwd_chained "$C lib run library --op attention_fwd_gqa --variant sm90_chained_128x128 --shape BH=2,BHK=1,S=2100 --check"
# the backward kernels the timings run (their default checks: ragged, below a tile, many tiles)
for hd in 64 128; do for c in 0 1; do
    j bwd_${hd}_$c "$C run examples/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c --tol-scale 512"
done; done
j bwd_many "$C run examples/attn_bwd.tir --check --set HD=128,CAUSAL=1 --tol-scale 512 --shape BH=64,S=300"
for c in 1 0; do j pp256_${c}_gqa4 "$C run $P256 --set CAUSAL=$c --shape BH=8,BHK=2,S=200,sm.count=3 --check"; done
# the SASS of the fused decode (ptxas and cuobjdump there): the fences (MEMBAR, and CCTL: the
# L1 invalidation of the acquire side), the atomics, spills
sass() { # TAG FILE SET
    "$C" "$2" --set "$3" --emit ptx -o "$R/$1.ptx" > /dev/null 2>&1 &&
        ptxas -arch=sm_90a "$R/$1.ptx" -o "$R/$1.cubin" 2> "$R/$1.ptxas" &&
        cuobjdump -sass "$R/$1.cubin" > "$R/$1.sass" 2>&1
    local f=$R/$1.sass
    [ -s "$f" ] || { echo "$1: no sass"; return; }
    echo "$1: $(grep -cE '^ +/\*[0-9a-f]+\*/' "$f") instructions, MEMBAR $(grep -c MEMBAR "$f"),"\
        "CCTL $(grep -c CCTL "$f"), ATOM $(grep -cE 'ATOM|RED' "$f"), HGMMA $(grep -c HGMMA "$f"),"\
        "STL $(grep -c STL "$f"), LDL $(grep -c LDL "$f"); $(grep -h MEMBAR -A2 "$f" | grep -oE '(MEMBAR|CCTL)[.A-Z]*' | sort | uniq -c | tr '\n' ' ')"
}
( sass df128 $DF HD=128; sass df64 $DF HD=64; sass pp128 $PP D=128,CAUSAL=0 ) > "$R/sass_summary.txt" 2>&1 &
SASS=$!
say "== checks: $(wc -l < "$JOBS") runs in the background (at $((SECONDS - T0)) s)"
CT=$(( $(left) * 38 / 100 ))
# the longest first: the sanitizer runs and the backward's checks, then the library's ops
{ grep -E '^(cs_|bwd_|lop_)' "$JOBS"; grep -vE '^(cs_|bwd_|lop_)' "$JOBS"; } > "$JOBS.sorted" && mv "$JOBS.sorted" "$JOBS"
runjob() {
    local tag=${1%%|*} cmd=${1#*|} t0=$SECONDS
    timeout -k 2 45 bash -c "$cmd --json" > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    echo "$tag $? $((SECONDS - t0))" >> "$R/rc.txt"
}
export -f runjob
export C R
: > "$R/rc.txt"
timeout -k 3 $CT xargs -P 14 -d '\n' -n 1 bash -c 'runjob "$1"' _ < "$JOBS"
touch "$GO"
say "== checks done at $((SECONDS - T0)) s: $(awk '$2 == 0' "$R/rc.txt" | wc -l) exit 0 of $(wc -l < "$JOBS")"
python3 - "$R" "$JOBS" > "$O/ax_checks.tsv" <<'PY'
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
sed -n '/^cake.ops attention/,$p' "$R/sweep.txt" > "$O/ax_table.md"
[ -s "$O/ax_table.md" ] || tail -30 "$R/sweep.txt" >> "$LOG"
kill $SASS 2> /dev/null; wait $SASS 2> /dev/null
cat "$R/sass_summary.txt" | tee -a "$LOG"
rm -f "$R"/*.cubin "$R"/*.ptx
tar -czf "$O/ax_raw.tar.gz" -C "$O" ax_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks (exit 0 = every shape passed; sanitizer: exit 0 and its summary):"
awk -F'\t' '$2 != 0 || $1 ~ /^cs_/' "$O/ax_checks.tsv" | cut -f1-5
echo "checks: $(awk -F'\t' 'NR > 1 && $2 == 0' "$O/ax_checks.tsv" | wc -l) of $(($(wc -l < "$O/ax_checks.tsv") - 1)) exit 0"
cat "$O/ax_table.md"
