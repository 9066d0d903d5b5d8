#!/bin/bash
# run_abwd3.sh — attn_bwd's session-8 candidates on the GPU in one call, within $DEADLINE
# seconds (default 130); builds nothing there:
#   0. peers   abwd3_peers.py twice, started at once (each compiles beside the checks): "plain"
#              and "sp" (CAKE_LLVM_ARGS=-nvptx-short-ptr: 32-bit shared-memory pointers); each
#              times fused (MSK = 1, the default), msk0 (MSK = 0), nl and nl_msk0 (compiled with
#              CAKE_NOLICM=1: no loop-invariant code motion) beside cuDNN SDPA backward
#   1. SASS    attn_bwd HD=128 (MSK = 0 / 1, sp) by ptxas and cuobjdump: sass_regs.py gives each
#              setmaxnreg role its highest register and its STL/LDL (W0902's question: is the
#              consumer's code allocated within 168 or within its 240?)
#   2. checks  `cakec run --check` (the checker's shapes, ragged and below one tile) of MSK = 1 at
#              HD x CAUSAL, more blocks than SMs (BH=64, S=300), LSM = 0 at a ragged S (333); the
#              same with -nvptx-short-ptr, and the small launches with it; with CAKE_NOLICM=1; compute-sanitizer
#              racecheck, synccheck, memcheck at S=200; HD = 64's BM = 128 point (P^T, dS^T in shared)
#   3. timings plain first, then sp (alone on the GPU each)
# usage (device machine, repo root): bash bench/device/run_abwd3.sh
DEADLINE=${DEADLINE:-130}
. bench/device/lib.sh
LOG=$O/a3_log.txt
: > "$LOG"
R=$O/a3_raw
mkdir -p "$R"
export PYTHONUNBUFFERED=1
SP="-nvptx-short-ptr"
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"
PD=$((DEADLINE - 6))
OUT=$O DEADLINE=$PD timeout -k 3 $((PD + 2)) python3 bench/device/abwd3_peers.py "$R/go_plain" plain \
    > "$R/peers_plain.txt" 2> "$R/peers_plain.err" &
PA=$!
CAKE_LLVM_ARGS=$SP OUT=$O DEADLINE=$PD timeout -k 3 $((PD + 2)) python3 bench/device/abwd3_peers.py "$R/go_sp" sp \
    > "$R/peers_sp.txt" 2> "$R/peers_sp.err" &
PB=$!

E=examples/attn_bwd.tir
sass() { # TAG SET [LLVM_ARGS] [NOLICM]
    local p=$R/sass_$1
    env CAKE_LLVM_ARGS="${3:-}" ${4:+CAKE_NOLICM=1} "$C" $E --set "$2" --emit ptx -o "$p.ptx" --no-report > /dev/null 2>&1 &&
        ptxas -arch=sm_90a -v "$p.ptx" -o "$p.cubin" 2> "$p.ptxas" && cuobjdump -sass "$p.cubin" > "$p.sass" 2>&1
    [ -s "$p.sass" ] || { echo "$1: no sass"; return; }
    echo "== $1 ($2 ${3:-}): $(grep -E 'spill|Used' "$p.ptxas" | tr -s ' ' | tr '\n' ' ')"
    python3 bench/device/sass_regs.py "$p.sass" "$(sed -n 's/^\.maxnreg //p' "$p.ptx")"
    grep -nE 'SETMAXREG|STL|LDL' "$p.sass" | head -12 | sed 's/^/  /'
}
( sass d128m0 HD=128,CAUSAL=0,MSK=0; sass d128 HD=128,CAUSAL=0; sass d128sp HD=128,CAUSAL=0 "$SP"
  sass d128c HD=128,CAUSAL=1; sass d128nl HD=128,CAUSAL=0 "" 1; sass d128cnl HD=128,CAUSAL=1 "" 1 ) > "$O/a3_sass.txt" 2>&1 &
SASS=$!

JOBS=$R/jobs.txt
: > "$JOBS"
j() { echo "$1|$2" >> "$JOBS"; }
T="--tol-scale 512 --check"
CS="compute-sanitizer --error-exitcode 9"
for pre in "" "sp"; do
    env=""; [ -n "$pre" ] && env="CAKE_LLVM_ARGS=$SP"
    for hd in 64 128; do
        for c in 0 1; do j ${pre}m1_${hd}_$c "$env $C run $E $T --set HD=$hd,CAUSAL=$c"; done
        j ${pre}many_${hd}_0 "$env $C run $E $T --set HD=$hd,CAUSAL=0 --shape BH=64,S=300"
        j ${pre}lsm0_${hd}_0 "$env $C run $E $T --set HD=$hd,CAUSAL=0,LSM=0 --shape BH=48,S=333"
    done
done
j spmany_128_1 "CAKE_LLVM_ARGS=$SP $C run $E $T --set HD=128,CAUSAL=1 --shape BH=64,S=300"
for hd in 64 128; do
    for c in 0 1; do j nlm1_${hd}_$c "CAKE_NOLICM=1 $C run $E $T --set HD=$hd,CAUSAL=$c"; done
    j nlmany_${hd}_1 "CAKE_NOLICM=1 $C run $E $T --set HD=$hd,CAUSAL=1 --shape BH=64,S=300"
    j nllsm0_${hd}_0 "CAKE_NOLICM=1 $C run $E $T --set HD=$hd,CAUSAL=0,LSM=0 --shape BH=48,S=333"
    j nlmsk0_${hd}_1 "CAKE_NOLICM=1 $C run $E $T --set HD=$hd,CAUSAL=1,MSK=0 --shape BH=64,S=300"
done
for hd in 64 128; do
    j sppz_$hd "CAKE_LLVM_ARGS=$SP $C run examples/attn_bwd_prep.tir --kernel attn_bwd_prep_zero --check --set HD=$hd --shape BH=300,S=333"
    j spcv_$hd "CAKE_LLVM_ARGS=$SP $C run examples/attn_bwd_dq_convert.tir --check --set HD=$hd --shape BH=300,S=333"
done
for t in racecheck synccheck memcheck; do
    j cs_${t}_128 "$CS --tool $t $C run $E $T --set HD=128,CAUSAL=0 --shape BH=1,S=200"
done
j cs_memcheck_128sp "CAKE_LLVM_ARGS=$SP $CS --tool memcheck $C run $E $T --set HD=128,CAUSAL=1 --shape BH=1,S=200"
# the other declared values with MSK = 1 (every point's code changed): XWG, DKRS, DQO
j xwg_64_1 "$C run $E $T --set HD=64,CAUSAL=1,XWG=1"
j xwg_128_0 "$C run $E $T --set HD=128,CAUSAL=0,XWG=0 --shape BH=64,S=300"
j dkrs_128_1 "$C run $E $T --set HD=128,CAUSAL=1,DKRS=0"
j dqo_128_1 "$C run $E $T --set HD=128,CAUSAL=1,DQO=1 --shape BH=64,S=300"
j dqo_64_0 "$C run $E $T --set HD=64,CAUSAL=0,DQO=1,XWG=1"
B128=BM=128
for nl in "" "CAKE_NOLICM=1"; do
    x=${nl:+nl}
    for c in 0 1; do j ${x}b128_$c "$nl $C run $E $T --set HD=64,CAUSAL=$c,$B128"; done
    j ${x}b128many_1 "$nl $C run $E $T --set HD=64,CAUSAL=1,$B128 --shape BH=64,S=300"
    j ${x}b128lsm0_0 "$nl $C run $E $T --set HD=64,CAUSAL=0,LSM=0,$B128 --shape BH=48,S=333"
    j ${x}b128lsm0_1 "$nl $C run $E $T --set HD=64,CAUSAL=1,LSM=0,$B128 --shape BH=48,S=333"
    j ${x}b128k0_1 "$nl $C run $E $T --set HD=64,CAUSAL=1,DKRS=0,$B128 --shape BH=64,S=300"
    j ${x}b128k0lsm0_0 "$nl $C run $E $T --set HD=64,CAUSAL=0,DKRS=0,LSM=0,$B128 --shape BH=48,S=333"
    j cs_racecheck_b128$x "$nl $CS --tool racecheck $C run $E $T --set HD=64,CAUSAL=1,$B128 --shape BH=1,S=300"
done
j cs_racecheck_b128k0nl "CAKE_NOLICM=1 $CS --tool racecheck $C run $E $T --set HD=64,CAUSAL=0,DKRS=0,$B128 --shape BH=1,S=300"
j cs_synccheck_b128nl "CAKE_NOLICM=1 $CS --tool synccheck $C run $E $T --set HD=64,CAUSAL=0,$B128 --shape BH=1,S=300"
j cs_memcheck_b128nl "CAKE_NOLICM=1 $CS --tool memcheck $C run $E $T --set HD=64,CAUSAL=1,$B128 --shape BH=1,S=300"
for t in racecheck synccheck memcheck; do
    j cs_${t}_128nl "CAKE_NOLICM=1 $CS --tool $t $C run $E $T --set HD=128,CAUSAL=1 --shape BH=1,S=200"
done
j cs_memcheck_64nl "CAKE_NOLICM=1 $CS --tool memcheck $C run $E $T --set HD=64,CAUSAL=0 --shape BH=1,S=200"
say "== checks: $(wc -l < "$JOBS") runs (at $((SECONDS - T0)) s)"
CT=$(( $(left) * 35 / 100 ))
runjob() {
    local tag=${1%%|*} cmd=${1#*|} t0=$SECONDS
    timeout -k 2 "$2" bash -c "$cmd --json" > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    echo "$tag $? $((SECONDS - t0))" >> "$R/rc.txt"
}
export -f runjob
export C R
: > "$R/rc.txt"
timeout -k 3 $CT xargs -P 12 -d '\n' -I{} bash -c 'runjob "$1" '"$((CT - 2))" _ {} < "$JOBS"
for _ in $(seq 25); do kill -0 $SASS 2> /dev/null || break; sleep 1; done
kill $SASS 2> /dev/null; wait $SASS 2> /dev/null
say "== checks done at $((SECONDS - T0)) s: $(awk '$2 == 0' "$R/rc.txt" | wc -l) exit 0 of $(wc -l < "$JOBS")"
python3 - "$R" "$JOBS" > "$O/a3_checks.md" <<'PY'
import json, os, sys
R, jobs = sys.argv[1], sys.argv[2]
rc = {}
for l in open(os.path.join(R, "rc.txt")):
    p = l.split()
    if len(p) >= 3:
        rc[p[0]] = (int(p[1]), p[2])
print("| check | exit | s | shapes | passed | worst max_rel_err | note |")
print("|---|---|---|---|---|---|---|")
for l in open(jobs):
    tag = l.split("|")[0]
    code, secs = rc.get(tag, (-1, "-"))
    try:
        doc = json.load(open(os.path.join(R, tag + ".json")))
    except Exception:
        doc = {}
    reps = doc.get("check", []) if isinstance(doc, dict) else []
    worst = max((r.get("max_rel_err") or 0 for r in reps), default=0)
    try:
        err = open(os.path.join(R, tag + ".err")).read()
    except OSError:
        err = ""
    note = "not run (out of time)" if code == -1 else ""
    if tag.startswith("cs_"):
        note += " ".join(x.strip("= ") for x in err.splitlines() if "SUMMARY" in x)[:120]
    elif code != 0:
        note += err[-160:].replace("\n", " ").replace("|", "/")
    print(f"| {tag} | {code} | {secs} | {len(reps)} | {sum(1 for r in reps if r.get('ok'))} | {worst:.3g} | {note} |")
PY
touch "$R/go_plain"
wait $PA
say "peers plain exit $? at $((SECONDS - T0)) s"
touch "$R/go_sp"
wait $PB
say "peers sp exit $? at $((SECONDS - T0)) s"
cp "$R/peers_plain.txt" "$R/peers_sp.txt" "$O/" 2> /dev/null
tail -3 "$R/peers_plain.err" "$R/peers_sp.err" >> "$LOG" 2> /dev/null
tar -czf "$O/a3_raw.tar.gz" -C "$O" a3_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks: not exit 0:"
grep -vE '^\| [a-z_0-9]+ \| 0 \|' "$O/a3_checks.md" | grep -vE '^\|---|^\| check' || echo "(none)"
grep -E '^\| cs_' "$O/a3_checks.md"
cat "$O/a3_sass.txt"
for t in plain sp; do grep -E "^precompiled|^timings start|precompile failed" "$O/peers_$t.txt"; sed -n '/^\[/,$p' "$O/peers_$t.txt"; done
