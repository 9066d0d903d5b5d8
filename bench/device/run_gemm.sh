#!/bin/bash
# run_gemm.sh — the library's bf16 GEMM variants (issue 13: skinny M, ragged waves, cubes,
# tall) on the H200 in one call, within $DEADLINE seconds (default 80):
#   1. checks   `cakec run --check` of every new kernel (gemm_splitk_fused, gemm_streamk) at every declared parameter value
#               (the checker's own shapes, ragged ones included) and at explicit ragged
#               shapes where blocks get two tiles or more (persistent loops) and the K
#               splits are uneven; the atomics test kernel (tests/codegen/cases/atomics.tir)
#               must pass and tests/gpu/atomics_dirty.tir must fail with E0963 (its
#               workspace is not left zero); 12 at a time
#   2. timing   bench/device/gemm_bench.py (compiled during step 1): ~40 shapes of the
#               sweep's GEMM classes, every variant whose domain holds checked against an
#               f32 reference and timed beside torch.matmul (cuBLAS) in the same process
#               (L2 flushed before every run, median of device-event times)
# then the table (printed last): per shape the fastest correct variant, its time, cuBLAS's,
# the ratio, TFLOP/s and the fraction of the dense bf16 peak; per class: count >= 1.0, min,
# geomean.
#   usage (device machine, repo root):  bash bench/device/run_gemm.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: gemm_table.md, gemm.json,
#   gemm_log.txt, gemm_checks.tgz (every check's JSON)
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
R=$O/gemm_checks
LOG=$O/gemm_log.txt
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
GO=$R/go
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"

# ---- 2a. the timing process: imports torch and compiles now, times after the checks ------
timeout -k 5 $(( $(left) - 4 )) python3 bench/device/gemm_bench.py "$O" --go "$GO" \
    --deadline $(( DEADLINE - 8 )) > "$O/gemm_bench.stdout" 2>&1 &
BENCH=$!

# ---- 1. checks ------------------------------------------------------------------------------
CHK=$R/list.txt
: > "$CHK"
ck() { echo "$1 $2 $3 ${4:--} $5" >> "$CHK"; }   # FILE KERNEL SET SHAPE EXPECT(pass|E0xxx)
F=library/kernels/gemm_splitk_fused.tir
for bn in 64 128 256; do for sp in 2 3 4 6 8 16; do
    ck $F gemm_splitk_fused BN=$bn,SPLIT=$sp - pass
done; done
# uneven splits (KT = 18 or 17), two row tiles, a ragged last column tile
ck $F gemm_splitk_fused BN=128,SPLIT=4 M=100,N=1000,K=1096 pass
ck $F gemm_splitk_fused BN=64,SPLIT=16 M=65,N=520,K=1088 pass
ck $F gemm_splitk_fused BN=256,SPLIT=3 M=7,N=4104,K=1096 pass
S=library/kernels/gemm_streamk.tir
for bn in 128 192 256; do   # all stream-K (144 tiles > 132), data-parallel + stream-K, skinny
    ck $S gemm_streamk BN=$bn - pass
    ck $S gemm_streamk BN=$bn M=1100,N=4000,K=200 pass
    ck $S gemm_streamk BN=$bn M=3000,N=3000,K=520 pass
    ck $S gemm_streamk BN=$bn M=100,N=2000,K=4096 pass
done
P=library/kernels/gemm_persistent.tir
for bm in 64 128; do for bn in 64 128 192 256; do   # >= 133 tiles: some block takes two
    ck $P gemm_persistent BM=$bm,BN=$bn M=1100,N=4000,K=200 pass
done; done
ck tests/codegen/cases/atomics.tir colsum_atomic THREADS=256,ROWS=16 - pass
ck tests/codegen/cases/atomics.tir colsum_atomic THREADS=128,ROWS=64 M=1000,N=3000 pass
ck tests/gpu/atomics_dirty.tir colsum_dirty THREADS=256,ROWS=16 M=1000,N=3000 E0963
for f in bench/device/gemm_extra_checks.txt; do [ -f "$f" ] && cat "$f" >> "$CHK"; done
say "== checks: $(wc -l < "$CHK") runs (at $((SECONDS - T0)) s)"
one_check() { # FILE KERNEL SET SHAPE EXPECT
    local sh=() t0=$SECONDS tag
    tag=$(echo "$2_$3_$4" | tr '=,' '__')
    [ "$4" != - ] && sh=(--shape "$4")
    timeout -k 3 30 "$C" run "$1" --kernel "$2" --set "$3" "${sh[@]}" \
        --check --json --timeout 20 > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    local rc=$? verdict
    if [ "$5" = pass ]; then
        [ $rc -eq 0 ] && verdict=ok || verdict=FAIL
    else
        grep -q "$5" "$R/$tag.json" "$R/$tag.err" && [ $rc -eq 1 ] && verdict=ok || verdict=FAIL
    fi
    echo "$verdict rc=$rc $1 $2 $3 $4 expect=$5 $((SECONDS - t0))s"
}
export -f one_check
export C R
CHECK_END=$((DEADLINE * 45 / 100))
timeout -k 3 "$CHECK_END" xargs -P 12 -L 1 bash -c 'one_check "$@"' _ < "$CHK" > "$R/verdicts.txt"
touch "$GO"
NOK=$(grep -c '^ok' "$R/verdicts.txt")
NCHK=$(wc -l < "$CHK")
say "checks done at $((SECONDS - T0)) s: $NOK ok of $NCHK"
grep -v '^ok' "$R/verdicts.txt" | sed 's/^/  /' | tee -a "$LOG"
for t in $(grep -v '^ok' "$R/verdicts.txt" | awk '{print $4"_"$5"_"$6}' | tr '=,' '__' | head -3); do
    cat "$R/$t.err" "$R/$t.json" 2>/dev/null | head -c 700 | sed 's/^/    /' | tee -a "$LOG"
done

# ---- 2b. timing -------------------------------------------------------------------------------
say "== timing (at $((SECONDS - T0)) s)"
wait $BENCH
say "gemm_bench exit $? at $((SECONDS - T0)) s"
tail -n 60 "$O/gemm_bench.stdout" | grep -v '^|' >> "$LOG"
tar -czf "$O/gemm_checks.tgz" -C "$O" gemm_checks && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks: $NOK ok of $NCHK"
[ -f "$O/gemm_table.md" ] || [ ! -f "$O/gemm.json" ] ||
    timeout 10 python3 bench/device/gemm_bench.py "$O" --table > /dev/null 2>> "$LOG"
cat "$O/gemm_table.md" 2>/dev/null || { echo "no table: gemm_bench.stdout tail:"; tail -20 "$O/gemm_bench.stdout"; }
