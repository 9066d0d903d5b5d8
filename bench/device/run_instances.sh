#!/bin/bash
# run_instances.sh — kernel instances on the device: every example checked
# against its fp64 reference (`cakec run --check`) at its defaults and at a
# `--set` binding, so the launch path built on instances (the kernel ABI's
# parameter order as KPlan.params, tensor maps filled from it, instances of
# declared and undeclared bindings) runs on the GPU. Times nothing (no peers
# needed): a correctness pass. Builds nothing there.
#   usage (device machine, repo root):  bash bench/device/run_instances.sh
#   expects .carry/ from bench/device/carry.sh; honours $DEADLINE (seconds,
#   default 95); writes $OUT/instances.txt (one line per run) and
#   $OUT/instances/*.json (each run's JSON document); prints a table last.
set -u
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
CAKEC=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
mkdir -p "$O/instances"
LIMIT=${DEADLINE:-95}
T0=$SECONDS
# example and bindings: the defaults (-), a --set of undeclared values (verified
# once by the instance), a declared value (only typed)
CASES="vector_add:- vector_add:UNROLL=2 copy:- copy:UNROLL=4,THREADS=256 rmsnorm:- rmsnorm:THREADS=64,ITERS=2
layernorm:- layernorm:THREADS=64,ITERS=2 softmax:- softmax:THREADS=128,ITERS=4
cross_entropy:- cross_entropy:THREADS=512 gemm_sm90:- gemm_sm90:BN=128
gemm_sm90_persistent:- gemm_sm90_persistent:BN=128,STAGES=5 gemm_bias_act:- gemm_bias_act:BN=128
gemm_fp8:- gemm_fp8:STAGES=3 gemm_sm80:- gemm_sm80:STAGES=3 flash_attn_fwd:- flash_attn_fwd:CAUSAL=1
flash_attn_fwd_d64:- flash_attn_fwd_d64:CAUSAL=1,STAGES=2"
: > "$O/instances.txt"
pass=0; fail=0; skipped=0
for c in $CASES; do
    ex=${c%%:*}; set=${c#*:}
    left=$((LIMIT - (SECONDS - T0)))
    if [ $left -lt 8 ]; then
        echo "$ex $set SKIPPED (deadline)" >> "$O/instances.txt"
        skipped=$((skipped + 1))
        continue
    fi
    per=$((left < 30 ? left - 2 : 30))
    name=$ex${set:+_$set}; name=${name//[=,]/_}
    args=(run "examples/$ex.tir" --check --timeout 10 --json)
    [ "$set" != - ] && args+=(--set "$set")
    a=$SECONDS
    timeout "$per" "$CAKEC" "${args[@]}" > "$O/instances/$name.json" 2> "$O/instances/$name.err"
    rc=$?
    shapes=$(grep -o '"status":"[a-z]*"' "$O/instances/$name.json" | sort | uniq -c | tr -s ' ' | tr '\n' ' ')
    verdict=FAIL
    [ $rc -eq 0 ] && verdict=pass
    [ $rc -eq 124 ] && verdict="FAIL (timeout)"
    echo "$ex ${set} rc=$rc $verdict $((SECONDS - a))s $shapes" >> "$O/instances.txt"
    if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "== run --check through instances: $pass passed, $fail failed, $skipped skipped, $((SECONDS - T0)) s"
printf '%-22s %-26s %s\n' example set result
awk '{ printf "%-22s %-26s %s\n", $1, $2, substr($0, index($0, $3)) }' "$O/instances.txt"
