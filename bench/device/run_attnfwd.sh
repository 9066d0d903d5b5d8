#!/bin/bash
# run_attnfwd.sh — the attention forward kernels of issue 15 on the H200 in one call,
# within $DEADLINE seconds (default 90); builds nothing there:
#   1. checks     `cakec run --check` of examples/flash_attn_fwd_pp.tir (persistent ping-pong)
#                 and examples/flash_attn_varlen_fwd.tir for every declared parameter value
#                 (D 64/128 x CAUSAL 0/1): the checker's own shapes (ragged ones, sm.count
#                 below the tile count so that blocks walk 2+ tiles) and explicit ragged GQA /
#                 MQA shapes with sm.count = 2 or 3; up to 12 at a time, in the background
#   2. sanitizer  compute-sanitizer racecheck, synccheck and memcheck of both kernels at a
#                 small shape (2+ tiles per block), while the checks run
#   3. sweep      attnfwd_peers.py: >= 40 shapes beside torch SDPA (cuDNN backend, flash
#                 backend) in the same process, each shape checked; the table is printed last
#   usage (device machine, repo root): bash bench/device/run_attnfwd.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: af_table.md, af_sweep.json,
#   af_checks.tsv, af_log.txt, af_raw.tar.gz
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out-attnfwd}
R=$O/af_raw
LOG=$O/af_log.txt
DEADLINE=${DEADLINE:-90}
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
PP=examples/flash_attn_fwd_pp.tir
VL=examples/flash_attn_varlen_fwd.tir
VL_SAN_SHAPE=H=2,HK=1,T=300,B1=4,sm.count=2

# ---- 1. checks: FILE SET SHAPE TAG ------------------------------------------------------
CHK=$R/checks.txt
: > "$CHK"
for D in 128 64; do for c in 1 0; do
    s=D=$D,CAUSAL=$c
    echo "$PP $s BH=4,BHK=1,S=300,sm.count=2 pp_${D}_${c}_mqa" >> "$CHK"
    echo "$PP $s BH=8,BHK=2,S=200,sm.count=3 pp_${D}_${c}_gqa4" >> "$CHK"
    echo "$PP $s BH=16,BHK=2,S=130,sm.count=5 pp_${D}_${c}_gqa8" >> "$CHK"
    echo "$PP $s - pp_${D}_${c}_default" >> "$CHK"
    [ -f $VL ] && echo "$VL $s H=4,HK=2,T=260,B1=4,sm.count=2 vl_${D}_${c}_gqa" >> "$CHK"
    [ -f $VL ] && echo "$VL $s H=2,HK=1,T=400,B1=5,sm.count=3 vl_${D}_${c}_mqa" >> "$CHK"
    [ -f $VL ] && echo "$VL $s - vl_${D}_${c}_default" >> "$CHK"
done; done
one_check() { # FILE SET SHAPE TAG
    local sh=() t0=$SECONDS
    [ "$3" != - ] && sh=(--shape "$3")
    timeout -k 3 60 "$C" run "$1" --set "$2" "${sh[@]}" --check --json --timeout 20 \
        > "$R/check_$4.json" 2> "$R/check_$4.err" < /dev/null
    echo "$? $4 $((SECONDS - t0))"
}
export -f one_check
export C R
say "== checks: $(wc -l < "$CHK") runs in the background (at $((SECONDS - T0)) s)"
( timeout -k 3 $((DEADLINE * 45 / 100)) xargs -P 12 -L 1 bash -c 'one_check "$@"' _ < "$CHK" \
    > "$R/check_rc.txt" ) &
CHECKS=$!

# ---- 2. sanitizer (one at a time: the GPU is shared with the checks) ---------------------
SAN=$R/sanitizer.txt
: > "$SAN"
san() { # TOOL FILE SET SHAPE TAG
    if [ "$(left)" -lt 45 ]; then echo "$5 $1 skipped (time)" >> "$SAN"; return; fi
    timeout -k 3 30 compute-sanitizer --tool "$1" --error-exitcode 9 "$C" run "$2" --set "$3" \
        --shape "$4" --check --timeout 25 > "$R/san_$5_$1.txt" 2>&1 < /dev/null
    local rc=$?
    echo "$5 $1 exit $rc: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|hazard' "$R/san_$5_$1.txt" | head -2 | tr '\n' ' ')" >> "$SAN"
}
for tool in racecheck synccheck memcheck; do
    san $tool $PP D=128,CAUSAL=1 BH=2,BHK=1,S=200,sm.count=1 pp128c
    san $tool $PP D=64,CAUSAL=0 BH=3,BHK=3,S=130,sm.count=2 pp64
    [ -f $VL ] && san $tool $VL D=128,CAUSAL=1 "$VL_SAN_SHAPE" vl128c
done
say "== sanitizer done at $((SECONDS - T0)) s"
cat "$SAN" | tee -a "$LOG"

# ---- 3. the sweep ---------------------------------------------------------------------------
wait $CHECKS
say "== checks done at $((SECONDS - T0)) s: $(awk '$1 == 0' "$R/check_rc.txt" | wc -l) exit 0 of $(wc -l < "$CHK")"
python3 - "$R" "$CHK" > "$O/af_checks.tsv" <<'PY'
import json, os, sys
R, chk = sys.argv[1], sys.argv[2]
rc = {}
for l in open(os.path.join(R, "check_rc.txt")):
    p = l.split()
    if len(p) >= 3:
        rc[p[1]] = (int(p[0]), p[2])
print("tag\texit\tseconds\tshapes\tfailing")
for l in open(chk):
    f, s, sh, tag = l.split()
    code, secs = rc.get(tag, (-1, "-"))
    try:
        doc = json.load(open(os.path.join(R, f"check_{tag}.json")))
    except Exception:
        doc = {}
    reps = doc.get("check", []) if isinstance(doc, dict) else []
    bad = [r.get("shape", "?") for r in reps if not r.get("ok")]
    codes = sorted({d.get("code", "") for d in doc.get("diagnostics", [])}) if isinstance(doc, dict) else []
    print(f"{tag}\t{code}\t{secs}\t{len(reps)}\t{';'.join(bad[:2])} {','.join(c for c in codes if c)}")
PY
cat "$O/af_checks.tsv" | tee -a "$LOG"
say "== sweep (at $((SECONDS - T0)) s, $(left) s left)"
timeout -k 3 $(( $(left) - 4 )) python3 bench/device/attnfwd_peers.py --out "$O/af_sweep.json" \
    --deadline $(( $(left) - 12 )) > "$R/sweep.txt" 2>&1
say "sweep exit $? at $((SECONDS - T0)) s"
sed -n '/^| shape/,$p' "$R/sweep.txt" > "$O/af_table.md"
grep -h "^cake.ops attention" "$R/sweep.txt" >> "$O/af_table.md"
[ -s "$O/af_table.md" ] || tail -20 "$R/sweep.txt" >> "$LOG"
tar -czf "$O/af_raw.tar.gz" -C "$O" af_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks (exit 0 = every shape passed):"
cut -f1-5 "$O/af_checks.tsv"
echo "sanitizer:"
grep -h "" "$O/af_log.txt" | grep -E "racecheck|synccheck|memcheck" | head -9
cat "$O/af_table.md"
