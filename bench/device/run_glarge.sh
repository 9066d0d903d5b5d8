#!/bin/bash
# run_glarge.sh — the bf16 GEMM at medium and large shapes and gemm_fp8 (issue 13) on the
# H200 in one call, within $DEADLINE seconds (default 60):
#   1. checks  `cakec run --check` of gemm_streamk where data-parallel and stream-K tiles
#              both run (and all stream-K), at shapes the oracle samples (the workspace
#              must come back zero: E0963 before the sampled-check fix), and of
#              gemm_fp8_splitk_fused at uneven splits and ragged edges, gemm_persistent_cpa at
#              ragged shapes; 10 at a time
#   2. timing  bench/device/glarge_bench.py (compiling during step 1): ~21 bf16 shapes beside
#              cuBLAS and ~13 gemm_fp8 shapes beside torch._scaled_mm (or, where it refuses
#              N or K, cuBLAS bf16 on the dequantized operands / torch eager), every
#              candidate checked against an f32 reference at each timed shape, and at a
#              ragged K pitch the best variants again on a 128-byte-multiple pitch
# then the table (printed last).
#   usage (device machine, repo root):  bash bench/device/run_glarge.sh
#   expects .carry/ (bench/device/carry.sh); writes under $OUT: glarge_table.md, glarge.json,
#   glarge_log.txt, glarge_checks.tgz
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
R=$O/glarge_checks
LOG=$O/glarge_log.txt
DEADLINE=${DEADLINE:-60}
mkdir -p "$R"
: > "$LOG"
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.carry/python${PYTHONPATH:+:$PYTHONPATH}
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
left() { echo $((DEADLINE - (SECONDS - T0))); }
GO=$R/go
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"

timeout -k 3 $(( $(left) - 3 )) python3 bench/device/glarge_bench.py "$O" --go "$GO" \
    --deadline $(( DEADLINE - 6 )) > "$O/glarge_bench.stdout" 2>&1 &
BENCH=$!

CHK=$R/list.txt
: > "$CHK"
S=library/kernels/gemm_streamk.tir
F=library/kernels/gemm_fp8_splitk_fused.tir
cat >> "$CHK" <<LIST
$S BN=128 M=1100,N=4000,K=200
$S BN=128 M=3000,N=3000,K=520
$S BN=256 M=100,N=2000,K=4096
$S BN=192,WAVE=0 M=3000,N=3000,K=520
$S BN=256,WAVE=0 M=1100,N=4000,K=200
library/kernels/gemm_persistent_cpa.tir BM=128,BN=192 M=1100,N=4000,K=200
library/kernels/gemm_persistent_cpa.tir BM=128,BN=256 M=3000,N=3000,K=3000
$F BN=64,SPLIT=4 M=1723,N=224,K=14688
$F BN=128,SPLIT=3 M=100,N=1000,K=2048
$F BN=256,SPLIT=2 M=65,N=520,K=1040
LIST
one_check() { # FILE SET SHAPE
    local t0=$SECONDS tag
    tag=$(basename "$1" .tir)_$(echo "$2_$3" | tr '=,' '__')
    timeout -k 3 40 "$C" run "$1" --set "$2" --shape "$3" --check --json --timeout 30 \
        > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    local rc=$?
    [ $rc -eq 0 ] && echo "ok rc=0 $1 $2 $3 $((SECONDS - t0))s" || echo "FAIL rc=$rc $1 $2 $3 $((SECONDS - t0))s"
}
export -f one_check
export C R
say "== checks: $(wc -l < "$CHK") runs"
timeout -k 3 $((DEADLINE * 40 / 100)) xargs -P 10 -L 1 bash -c 'one_check "$@"' _ < "$CHK" > "$R/verdicts.txt"
touch "$GO"
NOK=$(grep -c '^ok' "$R/verdicts.txt")
NCHK=$(wc -l < "$CHK")
say "checks done at $((SECONDS - T0)) s: $NOK ok of $NCHK"
sed 's/^/  /' "$R/verdicts.txt" | tee -a "$LOG"
for f in "$R"/*.json; do
    grep -q '"ok":false' "$f" 2>/dev/null && head -c 600 "$f" | sed 's/^/    /' >> "$LOG"
done
wait $BENCH
say "glarge_bench exit $? at $((SECONDS - T0)) s"
grep -v '^|' "$O/glarge_bench.stdout" | tail -n 50 >> "$LOG"
tar -czf "$O/glarge_checks.tgz" -C "$O" glarge_checks && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks: $NOK ok of $NCHK"
[ -f "$O/glarge_table.md" ] || [ ! -f "$O/glarge.json" ] ||
    timeout 10 python3 -c "import json,sys; sys.path.insert(0,'bench/device'); import glarge_bench as g; g.table(json.load(open('$O/glarge.json'))['results'], '$O/glarge_table.md')" > /dev/null 2>> "$LOG"
cat "$O/glarge_table.md" 2>/dev/null || { echo "no table: glarge_bench.stdout tail:"; tail -20 "$O/glarge_bench.stdout"; }
