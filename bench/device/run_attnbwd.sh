#!/bin/bash
# run_attnbwd.sh — the attention backward (attn_bwd_prep, attn_bwd + attn_bwd_dq_convert; the
# two-pass attn_bwd_dq + attn_bwd_dkdv) and
# split-KV decode (attn_decode_partial, attn_decode_merge) examples on the GPU, in one call,
# within $DEADLINE seconds (default 70):
#   1. checks     `cakec run --check` of every kernel at every declared parameter value (the
#                 checker's shapes: ragged, below one tile, many tiles) plus explicit ragged
#                 shapes with more blocks than SMs and decode splits that are empty; the decode
#                 attn_bwd's f32 dQacc with --tol-scale 16 (a bf16 rounding of dS that the fp64
#                 reference and the kernel's f32 may take apart), the decode
#                 partial's f32 outputs with --tol-scale 256 (P is rounded to bf16 before P V,
#                 as in every flash kernel: 2^-9 relative, far above the f32 bound); and
#                 compute-sanitizer memcheck / racecheck / synccheck at small shapes; up to 8
#                 at a time
#   2. peers      attnbwd_peers.py: the kernels from Python beside cuDNN SDPA backward
#                 (autograd, backward only) and the fastest SDPA backend for decode, gradients
#                 checked against cuDNN's and an f32 math reference at real O and LSE
# then the tables (printed last). Output under $OUT: ab_log.txt, ab_checks.md, ab_raw.tar.gz,
# attnbwd_results.jsonl.
#   usage (device machine, repo root):  bash bench/device/run_attnbwd.sh
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
R=$O/ab_raw
LOG=$O/ab_log.txt
DEADLINE=${DEADLINE:-70}
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
DEADLINE=$(( DEADLINE - 4 )) OUT=$O timeout -k 3 $(( DEADLINE - 2 )) python3 bench/device/attnbwd_peers.py all "$GO" \
    > "$O/peers.stdout" 2> "$O/peers.stderr" &
PEERS=$!

E=examples
JOBS=$R/jobs.txt
: > "$JOBS"
# tag|command (run from the repo root)
j() { echo "$1|$2" >> "$JOBS"; }
for hd in 64 128; do
    j prep_$hd "$C run $E/attn_bwd_prep.tir --check --set HD=$hd --json"
    for c in 0 1; do
        j dq_${hd}_$c "$C run $E/attn_bwd_dq.tir --check --set HD=$hd,CAUSAL=$c --json"
        j dkdv_${hd}_$c "$C run $E/attn_bwd_dkdv.tir --check --set HD=$hd,CAUSAL=$c --json"
    done
    for c in 0 1; do
        j bwd_${hd}_$c "$C run $E/attn_bwd.tir --check --set HD=$hd,CAUSAL=$c --tol-scale 16 --json"
    done
    j conv_$hd "$C run $E/attn_bwd_dq_convert.tir --check --set HD=$hd --json"
    j dec_$hd "$C run $E/attn_decode_partial.tir --check --set HD=$hd --tol-scale 256 --json"
    j merge_$hd "$C run $E/attn_decode_merge.tir --check --set HD=$hd --json"
done
j dec_s3 "$C run $E/attn_decode_partial.tir --check --set HD=128,STAGES=3 --tol-scale 256 --json"
# the library's one-launch reference kernel and the accumulator's zeroing
j lib_naive "$C run library/kernels/attention_bwd.tir --kernel attention_bwd_naive --check --set HD=64,CAUSAL=1 --json"
j lib_zero "$C run library/kernels/attention_bwd.tir --kernel attention_bwd_zero --check --json"
j lib_dec "$C run library/kernels/attention_decode.tir --kernel attention_decode --check --set HD=128 --json"
# tma.store.add itself: four blocks add into the same rows
j tsa "$C run tests/diag/sync/ok_tma_store_add.tir --check --json"
# more blocks than SMs (sampled rows), ragged
j bwd_s2 "$C run $E/attn_bwd.tir --check --set HD=128,CAUSAL=1,STAGES=2 --tol-scale 16 --json"
j bwd_x0 "$C run $E/attn_bwd.tir --check --set HD=128,CAUSAL=0,XWG=1 --tol-scale 16 --json"
j bwd_x1 "$C run $E/attn_bwd.tir --check --set HD=128,CAUSAL=1,XWG=1 --tol-scale 16 --json"
j bwd_xmany "$C run $E/attn_bwd.tir --check --set HD=128,CAUSAL=1,XWG=1 --tol-scale 16 --shape BH=64,S=300 --json"
j bwd_many "$C run $E/attn_bwd.tir --check --set HD=128,CAUSAL=1 --tol-scale 16 --shape BH=64,S=300 --json"
j bwd_many0 "$C run $E/attn_bwd.tir --check --set HD=64,CAUSAL=0 --tol-scale 16 --shape BH=48,S=333 --json"
j dq_many "$C run $E/attn_bwd_dq.tir --check --set HD=128,CAUSAL=1 --shape BH=64,S=300 --json"
j dkdv_many "$C run $E/attn_bwd_dkdv.tir --check --set HD=128,CAUSAL=1 --shape BH=64,S=300 --json"
j dkdv_many0 "$C run $E/attn_bwd_dkdv.tir --check --set HD=64,CAUSAL=0 --shape BH=48,S=333 --json"
j dec_many "$C run $E/attn_decode_partial.tir --check --tol-scale 256 --shape BHK=8,R=8,S=2600,NS=20 --json"
j dec_empty "$C run $E/attn_decode_partial.tir --check --tol-scale 256 --shape BHK=2,R=5,S=300,NS=4 --json"
j merge_many "$C run $E/attn_decode_merge.tir --check --shape BHK=140,R=16,NS=7 --json"
# compute-sanitizer at small shapes: every tool on the main kernels, memcheck on the rest
CS="compute-sanitizer --error-exitcode 9"
for t in racecheck synccheck memcheck; do
    j cs_${t}_bwd "$CS --tool $t $C run $E/attn_bwd.tir --check --tol-scale 16 --set HD=64,CAUSAL=1 --shape BH=1,S=200"
    j cs_${t}_bwdx "$CS --tool $t $C run $E/attn_bwd.tir --check --tol-scale 16 --set HD=128,CAUSAL=1,XWG=1 --shape BH=1,S=200"
    j cs_${t}_dec "$CS --tool $t $C run $E/attn_decode_partial.tir --check --tol-scale 256 --set HD=64 --shape BHK=1,R=8,S=300,NS=2"
done
j cs_memcheck_dq "$CS --tool memcheck $C run $E/attn_bwd_dq.tir --check --set HD=64,CAUSAL=1 --shape BH=1,S=200"
j cs_memcheck_dkdv "$CS --tool memcheck $C run $E/attn_bwd_dkdv.tir --check --set HD=64,CAUSAL=1 --shape BH=1,S=200"
j cs_memcheck_prep "$CS --tool memcheck $C run $E/attn_bwd_prep.tir --check --shape BH=2,S=77"
j cs_memcheck_conv "$CS --tool memcheck $C run $E/attn_bwd_dq_convert.tir --check --shape BH=2,S=77"
j cs_memcheck_merge "$CS --tool memcheck $C run $E/attn_decode_merge.tir --check --shape BHK=2,R=5,NS=3"
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
tr '\n' '\0' < "$JOBS" | xargs -0 -P 10 -I{} bash -c 'runjob "$1" '"$CT" _ {}
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
if grep -qE "^bwd_(64|128)_[01] (124|137|2|3)$" "$R/rc.txt"; then
    touch "$GO.skip_fused"
    say "attn_bwd's check hung or crashed: the peers time the two-pass kernels only"
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
