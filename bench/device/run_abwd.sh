#!/bin/bash
# run_abwd.sh — the attention backward on the GPU in one call, within $DEADLINE seconds
# (default 60): attn_bwd_prep, attn_bwd (dK, dV, dQ by tma.store.add) + attn_bwd_dq_convert,
# the two-pass attn_bwd_dq + attn_bwd_dkdv, and the library ops attention_bwd*:
#   1. checks     `cakec run --check` of attn_bwd at every combination of its declared
#                 parameters (HD, CAUSAL, XWG, DKRS, LSM) and at the other query tiles the peers
#                 time (the checker's shapes: ragged, below one tile, many tiles), at ragged
#                 shapes with more blocks than SMs (BH=64, S=300: 192 blocks; the causal grid
#                 is transposed), the other backward kernels at every declared value, the
#                 library ops against their reference; dQacc at --tol-scale 512 (a bf16
#                 rounding of dS that the fp64 reference and the kernel's f32 may take
#                 apart); compute-sanitizer memcheck / racecheck / synccheck at small shapes
#   2. peers      attnbwd_peers.py bwd: every point of attn_bwd (and the two-pass kernels on
#                 four shapes) from Python beside cuDNN SDPA backward (autograd, backward
#                 only) and the flash backend, gradients checked at every timed shape against
#                 cuDNN's (and an f32 math reference at the small shapes), real O and LSE
# then the tables (printed last). Output under $OUT: ab_log.txt, ab_checks.md, ab_raw.tar.gz,
# attnbwd_results.jsonl.
#   usage (device machine, repo root):  bash bench/device/run_abwd.sh
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
R=$O/ab_raw
LOG=$O/ab_log.txt
DEADLINE=${DEADLINE:-60}
mkdir -p "$R"
: > "$LOG"
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
left() { echo $((DEADLINE - (SECONDS - T0))); }
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"

# the peers' process starts now: it imports torch and compiles its kernels beside the
# checks, then waits for the go file before it times anything
GO=$R/go
DEADLINE=$(( DEADLINE - 4 )) OUT=$O timeout -k 3 $(( DEADLINE - 2 )) python3 bench/device/attnbwd_peers.py bwd "$GO" \
    > "$O/peers.stdout" 2> "$O/peers.stderr" &
PEERS=$!

E=examples
JOBS=$R/jobs.txt
: > "$JOBS"
# tag|command (run from the repo root)
j() { echo "$1|$2" >> "$JOBS"; }
T="--tol-scale 512 --json"
for hd in 64 128; do
    j prep_$hd "$C run $E/attn_bwd_prep.tir --check --set HD=$hd --json"
    j conv_$hd "$C run $E/attn_bwd_dq_convert.tir --check --set HD=$hd --json"
    for c in 0 1; do
        j dq_${hd}_$c "$C run $E/attn_bwd_dq.tir --check --set HD=$hd,CAUSAL=$c --json"
        j dkdv_${hd}_$c "$C run $E/attn_bwd_dkdv.tir --check --set HD=$hd,CAUSAL=$c --json"
        for k in 0 1; do
            j bwd_${hd}_${c}_dk$k "$C run $E/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c,DKRS=$k,XWG=1 $T"
        done
        # the query tiles the peers time beside the default
        if [ $hd = 128 ]; then
            j bwd_${hd}_${c}_x0 "$C run $E/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c,XWG=0,DKRS=1 $T"
            j bwd_${hd}_${c}_x0dk0 "$C run $E/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c,XWG=0,DKRS=0 $T"
        else
            j bwd_${hd}_${c}_bm128 "$C run $E/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c,BM=128,DKRS=0 $T"
        fi
        j bwd_${hd}_${c}_lsm "$C run $E/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c,LSM=1 $T"
        j bwd_many_${hd}_${c}_lsm "$C run $E/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c,LSM=1 $T --shape BH=64,S=300"
        # more blocks than SMs, ragged
        j bwd_many_${hd}_$c "$C run $E/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c $T --shape BH=64,S=300"
    done
done
j bwd_many_dk0 "$C run $E/attn_bwd.tir --check --set HD=128,CAUSAL=1,DKRS=0 $T --shape BH=64,S=333"
j dq_many "$C run $E/attn_bwd_dq.tir --check --set HD=128,CAUSAL=1 --shape BH=64,S=300 --json"
j dkdv_many "$C run $E/attn_bwd_dkdv.tir --check --set HD=128,CAUSAL=1 --shape BH=64,S=300 --json"
j dkdv_many0 "$C run $E/attn_bwd_dkdv.tir --check --set HD=64,CAUSAL=0 --shape BH=48,S=333 --json"
# the library's one-launch reference kernel, the accumulator's zeroing, and the ops
j lib_naive "$C run library/kernels/attention_bwd.tir --kernel attention_bwd_naive --check --set HD=64,CAUSAL=1 --json"
j lib_zero "$C run library/kernels/attention_bwd.tir --kernel attention_bwd_zero --check --json"
j lop_bwd "$C lib run library --op attention_bwd --variant fa3_tma_add --shape BH=2,S=300 --check --json"
j lop_bwd2 "$C lib run library --op attention_bwd --variant two_pass --shape BH=2,S=300 --check --json"
j lop_bwdc "$C lib run library --op attention_bwd_causal --variant fa3_tma_add --shape BH=3,S=257 --check --json"
j lop_bwd64 "$C lib run library --op attention_bwd_d64 --variant fa3_tma_add --shape BH=2,S=300 --check --json"
j lop_bwd64c "$C lib run library --op attention_bwd_d64_causal --variant fa3_tma_add --shape BH=3,S=257 --check --json"
j tsa "$C run tests/diag/sync/ok_tma_store_add.tir --check --json"
# compute-sanitizer at small shapes: every tool on the main kernel's defaults, memcheck on the rest
CS="compute-sanitizer --error-exitcode 9"
for t in racecheck synccheck memcheck; do
    j cs_${t}_64c "$CS --tool $t $C run $E/attn_bwd.tir --check --tol-scale 512 --set HD=64,CAUSAL=1 --shape BH=1,S=200"
    j cs_${t}_128c "$CS --tool $t $C run $E/attn_bwd.tir --check --tol-scale 512 --set HD=128,CAUSAL=1 --shape BH=1,S=200"
    j cs_${t}_128 "$CS --tool $t $C run $E/attn_bwd.tir --check --tol-scale 512 --set HD=128,CAUSAL=0 --shape BH=1,S=200"
    j cs_${t}_128lsm "$CS --tool $t $C run $E/attn_bwd.tir --check --tol-scale 512 --set HD=128,CAUSAL=1,LSM=1 --shape BH=1,S=200"
done
j cs_memcheck_dq "$CS --tool memcheck $C run $E/attn_bwd_dq.tir --check --set HD=64,CAUSAL=1 --shape BH=1,S=200"
j cs_memcheck_dkdv "$CS --tool memcheck $C run $E/attn_bwd_dkdv.tir --check --set HD=64,CAUSAL=1 --shape BH=1,S=200"
j cs_memcheck_prep "$CS --tool memcheck $C run $E/attn_bwd_prep.tir --check --shape BH=2,S=77"
j cs_memcheck_conv "$CS --tool memcheck $C run $E/attn_bwd_dq_convert.tir --check --shape BH=2,S=77"
# the sanitizer runs first: they take longest
{ grep '^cs_' "$JOBS"; grep -v '^cs_' "$JOBS"; } > "$JOBS.sorted" && mv "$JOBS.sorted" "$JOBS"
say "== checks: $(wc -l < "$JOBS") runs (at $((SECONDS - T0)) s)"
CT=$(( $(left) * 50 / 100 ))
[ $CT -lt 10 ] && CT=10
export C R
runjob() {
    local tag=${1%%|*} cmd=${1#*|}
    timeout -k 2 "$2" bash -c "$cmd" > "$R/$tag.out" 2> "$R/$tag.err"
    echo "$tag $?" >> "$R/rc.txt"
}
export -f runjob
: > "$R/rc.txt"
# the longest first; every job stops by the checks' share of the deadline
tr '\n' '\0' < "$JOBS" | xargs -0 -P 12 -I{} bash -c 'runjob "$1" '"$CT" _ {}
say "== checks done (at $((SECONDS - T0)) s)"
{
    echo "| check | exit | shapes | passed | worst max_rel_err |"
    echo "|---|---|---|---|---|"
    sort "$R/rc.txt" | while read -r tag rc; do
        python3 - "$R/$tag.out" "$tag" "$rc" <<'PY'
import json, sys
path, tag, rc = sys.argv[1:4]
try:
    doc = json.load(open(path))
    reps = doc.get("check", [])
except Exception:
    reps = None
if reps is None:
    print(f"| {tag} | {rc} | - | - | - |")
else:
    worst = max((r.get("max_rel_err") or 0 for r in reps), default=0)
    print(f"| {tag} | {rc} | {len(reps)} | {sum(1 for r in reps if r.get('ok'))} | {worst:.3g} |")
PY
    done
    echo
    echo "checks: $(awk '$2 == 0' "$R/rc.txt" | wc -l) of $(wc -l < "$R/rc.txt") exit 0"
} > "$O/ab_checks.md"
for f in "$R"/*.err; do [ -s "$f" ] && { echo "--- $(basename "$f")"; tail -5 "$f"; } >> "$LOG"; done

# the fused backward's own check hung or failed: the peers time the two-pass kernels only
if grep -qE "^bwd_(64|128)_[01]_dk1 (124|137|2|3)$" "$R/rc.txt"; then
    touch "$GO.skip_fused"
    say "attn_bwd's check hung or crashed: the peers time the two-pass kernels only"
fi
# Nsight Compute on one launch of the main kernel per head dim (alone on the GPU, before the
# peers time anything): where the time goes (tensor pipe, shared memory, L2 and its
# reductions, stalls), when ncu is there and the deadline allows
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ] && [ "$(left)" -gt 40 ]; then
    for hd in 128 64; do
        say "== ncu attn_bwd HD=$hd (at $((SECONDS - T0)) s)"
        timeout -k 2 10 "$NCU" -k attn_bwd -c 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
            --section MemoryWorkloadAnalysis --section WarpStateStats \
            "$C" run $E/attn_bwd.tir --bench --runs 1 --set HD=$hd --shape BH=32,S=4096 \
            > "$O/ab_ncu_$hd.txt" 2>&1
        echo "ncu exit $?" >> "$O/ab_ncu_$hd.txt"
    done
else
    say "ncu: ${NCU:-not found}, $(left) s left: skipped"
fi
touch "$GO"
wait $PEERS
say "== peers exit $? (at $((SECONDS - T0)) s)"
tail -5 "$O/peers.stderr" >> "$LOG"
tar czf "$O/ab_raw.tar.gz" -C "$R" . 2>/dev/null && rm -rf "$R"
echo
cat "$O/ab_checks.md"
echo
if grep -q "geomean" "$O/peers.stdout"; then
    cat "$O/peers.stdout"
else   # the peers were cut short: the table of what they recorded
    cat "$O/peers.stdout"
    timeout 20 python3 bench/device/attnbwd_peers.py table "$O/attnbwd_results.jsonl" 2>&1 | tail -40
fi
