#!/bin/bash
# run_afwd3.sh — session 8's attention forward candidates (issue 15) on the H200 in one call,
# within $DEADLINE seconds (default 150); builds nothing there:
#   0. peers   afwd3_peers.py starts at once: it compiles every kernel it times (threads)
#              beside the checks, then waits for the go file
#   1. checks  `cakec run --check` of every candidate the timings run, at every declared value:
#              flash_attn_fwd_pp3 (D = 64, three consumer warpgroups) at CAUSAL 0 / 1: the
#              checker's shapes, GQA with a ragged S and more tiles than blocks (sm.count),
#              MQA, S below a tile; pp, ppx, varlen, d256, the fused decode and the backward
#              again (this branch changes the code of every T[r, c] = ... statement), pp
#              D = 128 with CAKE_FRESH=conv; compute-sanitizer racecheck, synccheck and
#              memcheck on pp3 (both CAUSAL values, 2+ tiles a block) and pp D = 128 causal
#   2. sass    cuobjdump -sass (pp D = 128 causal as main compiles it, with CAKE_FRESH=1 and
#              =conv; pp D = 64; pp3): instructions, HGMMA, MUFU.EX2,
#              STL / LDL (spills), BAR; files kept
#   3. timings gated.py's method (cold L2, the stream held until queued, median of 10, trials
#              A B A B): the 44 dense forward shapes (D = 64 first) beside cuDNN and flash SDPA,
#              `ours` the dispatch's pick, the candidates beside it, every timed kernel checked
#   usage (device machine, repo root): bash bench/device/run_afwd3.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: a3_table.md, a3_sweep.json,
#   a3_checks.tsv, a3_sass.txt, a3_log.txt, a3_raw.tar.gz
#   AFWD3_DRY=1: no GPU work (the job list and the PTX of every candidate only)
set -u
DEADLINE=${DEADLINE:-150}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/a3_log.txt
: > "$LOG"
export PYTHONUNBUFFERED=1
DRY=${AFWD3_DRY:-0}
R=$O/a3_raw
mkdir -p "$R"
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"

# ---- 0. the peers' process: compiles now, times after the go file ---------------------------
GO=$R/go
PEERS=
if [ "$DRY" != 1 ]; then
    t $((DEADLINE - 4)) python3 bench/device/afwd3_peers.py --out "$O/a3_sweep.json" \
        --deadline $((DEADLINE - 9)) --go "$GO" > "$R/sweep.txt" 2>&1 &
    PEERS=$!
fi

# ---- 1. checks and sanitizer: TAG|COMMAND ----------------------------------------------------
# CAKE_FRESH=1 (the timed *_f forms) reads thread.x fresh for an element's coordinates
# (NF_FRESH): the code of every T[r, c] = ... statement changes, so the forward, decode and
# backward kernels are checked with it at every declared value; CAKE_FRESH=conv (the timed
# *_c forms) too; pp3 as main compiles it and with CAKE_FRESH=1
PP=examples/flash_attn_fwd_pp.tir
PX=examples/flash_attn_fwd_ppx.tir
P3=examples/flash_attn_fwd_pp3.tir
VL=examples/flash_attn_varlen_fwd.tir
P256=examples/flash_attn_fwd_pp_d256.tir
DF=examples/attn_decode_fused.tir
JOBS=$R/jobs.txt
: > "$JOBS"
j() { echo "$1|$2" >> "$JOBS"; }
F="CAKE_FRESH=1"
CS="compute-sanitizer --error-exitcode 9"
for tl in racecheck synccheck memcheck; do
    for c in 0 1; do
        j cs_${tl}_pp3_c$c "$F $CS --tool $tl $C run $P3 --set CAUSAL=$c --shape BH=4,BHK=2,S=400,sm.count=2 --check --timeout 25"
    done
    j cs_${tl}_pp128c1_conv "CAKE_FRESH=conv $CS --tool $tl $C run $PP --set D=128,CAUSAL=1 --shape BH=4,BHK=2,S=300,sm.count=2 --check --timeout 25"
done
for c in 0 1; do
    j pp3_c${c}_default "$F $C run $P3 --set CAUSAL=$c --check"
    j pp3_c${c}_main "$C run $P3 --set CAUSAL=$c --shape BH=16,BHK=2,S=500,sm.count=5 --check"
    j pp3_c${c}_gqa8 "$F $C run $P3 --set CAUSAL=$c --shape BH=16,BHK=2,S=500,sm.count=5 --check"
    j pp3_c${c}_mqa "$F $C run $P3 --set CAUSAL=$c --shape BH=6,BHK=1,S=1000,sm.count=4 --check"
    j pp3_c${c}_short "$F $C run $P3 --set CAUSAL=$c --shape BH=3,BHK=3,S=130,sm.count=2 --check"
    j pp3_c${c}_many "$F $C run $P3 --set CAUSAL=$c --shape BH=20,BHK=20,S=385,sm.count=7 --check"
    for D in 128 64; do
        for q in 2 1; do
            j pp_${D}_${c}_q${q}_default "$F $C run $PP --set D=$D,CAUSAL=$c,QST=$q --check"
            j pp_${D}_${c}_q${q}_gqa8 "$F $C run $PP --set D=$D,CAUSAL=$c,QST=$q --shape BH=16,BHK=2,S=130,sm.count=5 --check"
        done
        j ppx_${D}_${c}_gqa8 "$F $C run $PX --set D=$D,CAUSAL=$c,QST=2 --shape BH=16,BHK=2,S=300,sm.count=5 --check"
        j vl_${D}_${c}_gqa "$F $C run $VL --set D=$D,CAUSAL=$c --shape H=4,HK=2,T=260,B1=4,sm.count=2 --check"
        j pp_${D}_${c}_p_many "$F $C run $PP --set D=$D,CAUSAL=$c,PAIR=1 --shape BH=20,BHK=20,S=260,sm.count=7 --check"
        j ppx_${D}_${c}_p_odd "$F $C run $PX --set D=$D,CAUSAL=$c,PAIR=1 --shape BH=5,BHK=5,S=300,sm.count=5 --check"
    done
    j pp_64_${c}_bn192 "$F $C run $PP --set D=64,CAUSAL=$c,BN=192 --shape BH=8,BHK=2,S=400,sm.count=3 --check"
    j pp_64_${c}_bn192_default "$F $C run $PP --set D=64,CAUSAL=$c,BN=192 --check"
    j pp256_${c}_gqa4 "$F $C run $P256 --set CAUSAL=$c --shape BH=8,BHK=2,S=200,sm.count=3 --check"
    for p in 0 1; do
        j pp_128_${c}_p${p}_conv "CAKE_FRESH=conv $C run $PP --set D=128,CAUSAL=$c,PAIR=$p --shape BH=20,BHK=20,S=260,sm.count=7 --check"
        j pp_128_${c}_p${p}_conv_gqa "CAKE_FRESH=conv $C run $PP --set D=128,CAUSAL=$c,PAIR=$p --shape BH=15,BHK=3,S=300,sm.count=5 --check"
    done
done
for hd in 64 128; do
    for c in 0 1; do j bwd_${hd}_$c "$F $C run examples/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c --tol-scale 512"; done
    j df_${hd}_ragged "$F $C run $DF --set HD=$hd --shape BHK=3,R=9,S=2600,NS=11 --tol-scale 256 --check"
    j df_${hd}_r64 "$F $C run $DF --set HD=$hd --shape BHK=2,R=64,S=1000,NS=3 --tol-scale 256 --check"
done

# ---- 2. SASS of the consumer loops (ptxas and cuobjdump are on the device) -------------------
sass() { # TAG FILE SET [ENV=1]
    env ${4:-X_=1} "$C" "$2" --set "$3" --emit ptx -o "$R/$1.ptx" > /dev/null 2>&1 || { echo "$1: no ptx"; return; }
    [ "$DRY" = 1 ] && { echo "$1: ptx $(wc -l < "$R/$1.ptx") lines"; return; }
    ptxas -arch=sm_90a -v "$R/$1.ptx" -o "$R/$1.cubin" 2> "$R/$1.ptxas" &&
        cuobjdump -sass "$R/$1.cubin" > "$O/$1.sass" 2>&1
    local f=$O/$1.sass
    [ -s "$f" ] || { echo "$1: no sass"; return; }
    echo "$1: $(grep -cE '^ +/\*[0-9a-f]+\*/' "$f") instructions, HGMMA $(grep -c HGMMA "$f"),"\
        "MUFU.EX2 $(grep -c 'MUFU.EX2' "$f"), STL $(grep -c STL "$f"), LDL $(grep -c LDL "$f"),"\
        "BAR $(grep -cE ' BAR\.' "$f"), USETMAXREG $(grep -c USETMAXREG "$f"), max R$(grep -oE '\bR[0-9]+\b' "$f" | tr -d R | sort -n | tail -1);"\
        "$(grep -o 'Used [0-9]* registers.*' "$R/$1.ptxas"); $(grep -o '[0-9]* bytes spill stores, [0-9]* bytes spill loads' "$R/$1.ptxas")"
    gzip -9 "$f"
}
( sass pp128c1_main $PP D=128,CAUSAL=1; sass pp128c1_f $PP D=128,CAUSAL=1 CAKE_FRESH=1
  sass pp128c1_conv $PP D=128,CAUSAL=1 CAKE_FRESH=conv; sass pp64c0 $PP D=64,CAUSAL=0
  sass pp3c0_f $P3 CAUSAL=0 CAKE_FRESH=1; sass pp3c1_f $P3 CAUSAL=1 CAKE_FRESH=1; sass pp3c1_main $P3 CAUSAL=1 ) > "$O/a3_sass.txt" 2>&1 &
SASS=$!
say "== checks: $(wc -l < "$JOBS") runs in the background (at $((SECONDS - T0)) s)"
{ grep -E '^cs_' "$JOBS"; grep -vE '^cs_' "$JOBS"; } > "$JOBS.sorted" && mv "$JOBS.sorted" "$JOBS"
runjob() {
    local tag=${1%%|*} cmd=${1#*|} t0=$SECONDS
    timeout -k 2 40 bash -c "$cmd --json" > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    echo "$tag $? $((SECONDS - t0))" >> "$R/rc.txt"
}
export -f runjob
export C R
: > "$R/rc.txt"
if [ "$DRY" != 1 ]; then
    t $(( $(left) * 36 / 100 )) xargs -P 14 -d '\n' -n 1 bash -c 'runjob "$1"' _ < "$JOBS"
fi
touch "$GO"
say "== checks done at $((SECONDS - T0)) s: $(awk '$2 == 0' "$R/rc.txt" | wc -l) exit 0 of $(wc -l < "$JOBS")"
python3 bench/device/checks_tsv.py "$R" "$JOBS" > "$O/a3_checks.tsv"

# ---- 3. the timings (started at the go file) ---------------------------------------------------
say "== timings from $((SECONDS - T0)) s ($(left) s left)"
[ -n "$PEERS" ] && { wait $PEERS; say "peers exit $? at $((SECONDS - T0)) s"; }
wait $SASS
grep -E "^precompile|^timings start" "$R/sweep.txt" 2>/dev/null | tee -a "$LOG"
sed -n '/^== tables/,$p' "$R/sweep.txt" > "$O/a3_table.md" 2>/dev/null
[ -s "$O/a3_table.md" ] || tail -30 "$R/sweep.txt" >> "$LOG" 2>/dev/null
rm -f "$R"/*.cubin "$R"/*.ptx
tar -czf "$O/a3_raw.tar.gz" -C "$O" a3_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
cat "$O/a3_sass.txt"
echo "checks (exit 0 = every shape passed; sanitizer: exit 0 and its summary):"
awk -F'\t' '$2 != 0 || $1 ~ /^cs_/' "$O/a3_checks.tsv" | cut -f1-5
echo "checks: $(awk -F'\t' 'NR > 1 && $2 == 0' "$O/a3_checks.tsv" | wc -l) of $(($(wc -l < "$O/a3_checks.tsv") - 1)) exit 0"
cat "$O/a3_table.md"
