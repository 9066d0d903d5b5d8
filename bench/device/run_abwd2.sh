#!/bin/bash
# run_abwd2.sh — the attention backward's schedule candidates on the GPU in one call, within
# $DEADLINE seconds (default 150); builds nothing there:
#   0. peers   abwd2_peers.py starts at once: imports torch, compiles every kernel it times
#              (threads) beside the checks, then waits for the go file
#   1. checks  `cakec run --check` (the checker's shapes: ragged, below one tile, many tiles)
#              of every candidate point of examples/attn_bwd.tir: DQO = 1 at HD x CAUSAL,
#              XWG = 1 at HD = 64 (alone and with DQO = 1), at more blocks than SMs (BH=64,
#              S=300), LSM = 0 at a ragged S (333), ROT = 1 (the rotated query walk), the code
#              generator's CAKE_WG_HOIST=1 (docs/tir.md §8.4) on four of them; attn_bwd_prep_zero at WARPS = 16 and 32;
#              compute-sanitizer racecheck, synccheck, memcheck on the new points at S=200
#   1b. A/B    CAKE_WG_HOIST=1 and CAKE_CVT_PAIRS=1 on flash_attn_fwd_pp/_ppx and attn_bwd by
#              `cakec run --bench`
#   2. timings abwd2_peers.py: the 18 shapes of the acceptance, the most telling first, each
#              candidate as the whole three-launch sequence beside cuDNN SDPA backward
#              (gated.py's method, the same call), every candidate checked against cuDNN's
#              gradients; the compact table printed last
# usage (device machine, repo root): bash bench/device/run_abwd2.sh
# expects .carry/ (bench/device/carry.sh). Output under $OUT: a2_checks.md, a2_log.txt,
# a2_hoist_ab.tsv, a2_peers.txt, abwd2_results.jsonl, a2_raw.tar.gz
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out-abwd2}
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

GO=$R/go
OUT=$O DEADLINE=$((DEADLINE - 8)) timeout -k 3 $((DEADLINE - 4)) python3 bench/device/abwd2_peers.py "$GO" \
    > "$R/peers.txt" 2> "$R/peers.err" &
PEERS=$!

E=examples/attn_bwd.tir
JOBS=$R/jobs.txt
: > "$JOBS"
j() { echo "$1|$2" >> "$JOBS"; }
T="--tol-scale 512 --check"
CS="compute-sanitizer --error-exitcode 9"
for t in racecheck synccheck memcheck; do
    j cs_${t}_64xd "$CS --tool $t $C run $E $T --set HD=64,CAUSAL=1,XWG=1,DQO=1 --shape BH=1,S=200"
    j cs_${t}_128d "$CS --tool $t $C run $E $T --set HD=128,CAUSAL=0,DQO=1 --shape BH=1,S=200"
    j cs_${t}_128r "$CS --tool $t $C run $E $T --set HD=128,CAUSAL=1,DQO=1,ROT=1 --shape BH=1,S=300"
done
for c in 0 1; do
    j bwd_128_${c}_dqo "$C run $E $T --set HD=128,CAUSAL=$c,DQO=1"
    j bwd_64_${c}_dqo "$C run $E $T --set HD=64,CAUSAL=$c,DQO=1"
    j bwd_64_${c}_xa "$C run $E $T --set HD=64,CAUSAL=$c,XWG=1"
    j bwd_64_${c}_xadqo "$C run $E $T --set HD=64,CAUSAL=$c,XWG=1,DQO=1"
done
j many_128_dqo "$C run $E $T --set HD=128,CAUSAL=1,DQO=1 --shape BH=64,S=300"
j many_64_xadqo "$C run $E $T --set HD=64,CAUSAL=1,XWG=1,DQO=1 --shape BH=64,S=300"
j many_64_xa "$C run $E $T --set HD=64,CAUSAL=0,XWG=1 --shape BH=64,S=300"
j lsm0_64_xadqo "$C run $E $T --set HD=64,CAUSAL=1,XWG=1,DQO=1,LSM=0 --shape BH=48,S=333"
j lsm0_128_dqo "$C run $E $T --set HD=128,CAUSAL=0,DQO=1,LSM=0 --shape BH=48,S=333"
j rot_128_1_dqo "$C run $E $T --set HD=128,CAUSAL=1,DQO=1,ROT=1"
j rot_128_0 "$C run $E $T --set HD=128,CAUSAL=0,ROT=1"
j rot_64_1_xadqo "$C run $E $T --set HD=64,CAUSAL=1,XWG=1,DQO=1,ROT=1"
j rot_64_0_xadqo "$C run $E $T --set HD=64,CAUSAL=0,XWG=1,DQO=1,ROT=1"
j rotmany_128_0_dqo "$C run $E $T --set HD=128,CAUSAL=0,DQO=1,ROT=1 --shape BH=64,S=300"
j rotmany_64_1_lsm0 "$C run $E $T --set HD=64,CAUSAL=1,XWG=1,DQO=1,ROT=1,LSM=0 --shape BH=48,S=333"
j hoist_128_0 "CAKE_WG_HOIST=1 $C run $E $T --set HD=128,CAUSAL=0"
j hoist_128_1_dqo "CAKE_WG_HOIST=1 $C run $E $T --set HD=128,CAUSAL=1,DQO=1"
j hoist_64_1_xadqo "CAKE_WG_HOIST=1 $C run $E $T --set HD=64,CAUSAL=1,XWG=1,DQO=1"
j hoist_64_0 "CAKE_WG_HOIST=1 $C run $E $T --set HD=64,CAUSAL=0 --shape BH=64,S=300"
j pairs_128_0 "CAKE_CVT_PAIRS=1 $C run $E $T --set HD=128,CAUSAL=0"
j pairs_128_1_dqo "CAKE_CVT_PAIRS=1 $C run $E $T --set HD=128,CAUSAL=1,DQO=1"
j pairs_64_1_xadqo "CAKE_CVT_PAIRS=1 $C run $E $T --set HD=64,CAUSAL=1,XWG=1,DQO=1"
j pairs_64_0 "CAKE_CVT_PAIRS=1 $C run $E $T --set HD=64,CAUSAL=0 --shape BH=64,S=300"
j dk0_64_xadqo "$C run $E $T --set HD=64,CAUSAL=0,XWG=1,DQO=1,DKRS=0"
for hd in 64 128; do
    j prepz32_$hd "$C run examples/attn_bwd_prep.tir --kernel attn_bwd_prep_zero --check --set HD=$hd,WARPS=32"
    j prepz16_$hd "$C run examples/attn_bwd_prep.tir --kernel attn_bwd_prep_zero --check --set HD=$hd,WARPS=16"
done
j prepz32_many "$C run examples/attn_bwd_prep.tir --kernel attn_bwd_prep_zero --check --set WARPS=32 --shape BH=300,S=333"
j prepz16_many "$C run examples/attn_bwd_prep.tir --kernel attn_bwd_prep_zero --check --set WARPS=16 --shape BH=300,S=333"
# the SASS of the main kernel (ptxas, cuobjdump there; CPU only, beside the checks): the
# bf16 conversions (F2FP, and PRMT packing pairs), spills, HGMMA, the injected arrives (WARPSYNC)
sass() { # TAG SET [HOIST]
    local p=$R/sass_$1
    (if [ -n "${3:-}" ]; then export CAKE_WG_HOIST=1; fi; "$C" $E --set "$2" --emit ptx -o "$p.ptx" --no-report) > /dev/null 2>&1 &&
        ptxas -arch=sm_90a -v "$p.ptx" -o "$p.cubin" 2> "$p.ptxas" && cuobjdump -sass "$p.cubin" > "$p.sass" 2>&1
    [ -s "$p.sass" ] || { echo "$1: no sass"; return; }
    echo "$1: $(grep -cE '^ +/\*[0-9a-f]+\*/' "$p.sass") instr, F2FP $(grep -c F2FP "$p.sass") ($(grep -oE 'F2FP[.A-Z0-9_]*' "$p.sass" | sort | uniq -c | tr '\n' ' ')), PRMT $(grep -c PRMT "$p.sass"), HGMMA $(grep -c HGMMA "$p.sass"), WARPGROUP $(grep -c WARPGROUP "$p.sass"), MUFU $(grep -c MUFU "$p.sass"), STL $(grep -c STL "$p.sass"), LDL $(grep -c LDL "$p.sass"); $(grep -c C7519 "$p.ptxas") C7519"
}
( sass d128 HD=128,CAUSAL=0; sass d128h HD=128,CAUSAL=0 1; CAKE_CVT_PAIRS=1 sass d128p HD=128,CAUSAL=0; sass d64 HD=64,CAUSAL=0; sass d64xa HD=64,CAUSAL=0,XWG=1,DQO=1 ) > "$R/sass_summary.txt" 2>&1 &
SASS=$!
say "== checks: $(wc -l < "$JOBS") runs (at $((SECONDS - T0)) s)"
CT=$(( $(left) * 30 / 100 ))
runjob() {
    local tag=${1%%|*} cmd=${1#*|} t0=$SECONDS
    timeout -k 2 "$2" bash -c "$cmd --json" > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    echo "$tag $? $((SECONDS - t0))" >> "$R/rc.txt"
}
export -f runjob
export C R
: > "$R/rc.txt"
timeout -k 3 $CT xargs -P 12 -d '\n' -I{} bash -c 'runjob "$1" '"$((CT - 2))" _ {} < "$JOBS"
# the code generator's CAKE_WG_HOIST=1 on the forward kernels too (their PTX changes, ptxas
# injected nothing there): `cakec run --bench` (the runtime's gated timer) without and with,
# alone on the GPU before the peers time anything (while the deadline allows)
ABT=$R/hoist_ab.tsv
: > "$ABT"
if [ "$(left)" -gt 95 ]; then
    for spec in "examples/flash_attn_fwd_pp.tir|D=128,CAUSAL=1|BH=16,BHK=16,S=2048" \
                "$E|HD=128,CAUSAL=0|BH=32,S=2048" "examples/flash_attn_fwd_ppx.tir|D=128,CAUSAL=0|BH=16,BHK=16,S=2048"; do
        IFS='|' read -r f set shape <<< "$spec"
        [ "$(left)" -gt 88 ] || break
        for h in 0 1 2; do   # 1: CAKE_WG_HOIST=1, 2: CAKE_CVT_PAIRS=1
            ms=$( (if [ $h = 1 ]; then export CAKE_WG_HOIST=1; fi; if [ $h = 2 ]; then export CAKE_CVT_PAIRS=1; fi
                   timeout 20 "$C" run "$f" --set "$set" --shape "$shape" --bench --runs 20 --json 2> /dev/null) |
                 python3 -c 'import json,sys
def f(d):
    if isinstance(d, dict):
        if "median_ms" in d: return d["median_ms"]
        for v in d.values():
            r = f(v)
            if r is not None: return r
    if isinstance(d, list):
        for v in d:
            r = f(v)
            if r is not None: return r
try: print(f(json.load(sys.stdin)))
except Exception: print("-")')
            printf '%s\t%s\t%s\t%s\t%s\n' "$(basename "$f" .tir)" "$set" "$shape" "$h" "$ms" >> "$ABT"
        done
    done
fi
cp "$ABT" "$O/a2_hoist_ab.tsv"
for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 $SASS 2> /dev/null || break; sleep 1; done
kill $SASS 2> /dev/null; wait $SASS 2> /dev/null
cp "$R/sass_summary.txt" "$O/a2_sass.txt" 2> /dev/null
touch "$GO"
say "== checks done at $((SECONDS - T0)) s: $(awk '$2 == 0' "$R/rc.txt" | wc -l) exit 0 of $(wc -l < "$JOBS")"
python3 - "$R" "$JOBS" > "$O/a2_checks.md" <<'PY'
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
say "== timings ($(left) s left)"
wait $PEERS
say "peers exit $? at $((SECONDS - T0)) s"
grep -E "^precompile|^timings start" "$R/peers.txt" | tee -a "$LOG"
tail -5 "$R/peers.err" >> "$LOG"
cp "$R/peers.txt" "$O/a2_peers.txt"
tar -czf "$O/a2_raw.tar.gz" -C "$O" a2_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks: $(grep -cE '^\| [a-z_0-9]+ \| -?[0-9]' "$O/a2_checks.md") runs; not exit 0:"
grep -vE '^\| [a-z_0-9]+ \| 0 \|' "$O/a2_checks.md" | grep -vE '^\|---|^\| check|^\| cs_' || echo "(none)"
grep -E '^\| cs_' "$O/a2_checks.md"
echo "SASS of attn_bwd:"; cat "$O/a2_sass.txt" 2> /dev/null
echo "A/B (cakec run --bench median ms: plain, CAKE_WG_HOIST=1, CAKE_CVT_PAIRS=1):"
awk -F'\t' '{k=$1" "$2" "$3; v[k]=v[k]" "$5} END {for (k in v) print "  " k ":" v[k]}' "$O/a2_hoist_ab.tsv" 2> /dev/null
if grep -q '^best per shape' "$O/a2_peers.txt"; then
    sed -n '/^| shape | cuDNN ms/,$p' "$O/a2_peers.txt"
else   # the peers were cut short: the table of what they recorded
    tail -5 "$O/a2_peers.txt"
    timeout 30 python3 bench/device/abwd2_peers.py table "$O/abwd2_results.jsonl" 2>&1 | tail -40
fi
