#!/bin/bash
# run_libkernels.sh — the library kernels of issue 13 (library/kernels/*.tir) on the GPU,
# in one call, within $DEADLINE seconds (default 100):
#   1. checks   `cakec run --check` of every kernel at several parameter points (every
#               declared value of every parameter at least once), on the checker's own
#               shapes (ragged ones included) and explicit ragged / huge-row shapes;
#               up to 8 at a time
#   2. benches  `cakec run --check --bench` at a sweep of shapes, one variant each (a
#               two-launch op, split-row or split-K, is two documents, summed)
#   3. peers    libkernels_peers.py: torch eager, torch.compile (compiled during step 1),
#               cuBLAS for GEMM; timed after step 2 so that no timing overlaps
# then the table (printed last): shape, cake ms, peer ms, ratio.
#   usage (device machine, repo root):  bash bench/device/run_libkernels.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: lk_table.md,
#   lk_log.txt, lk_raw.tar.gz (every JSON document)
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
R=$O/lk_raw
LOG=$O/lk_log.txt
DEADLINE=${DEADLINE:-100}
K=library/kernels
mkdir -p "$R"
: > "$LOG"
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=8
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
left() { echo $((DEADLINE - (SECONDS - T0))); }
CASES=$R/cases.tsv
GO=$R/go
: > "$CASES"

# ---- bench cases: name op shape file launches; a launch is KERNEL|SET|SHAPE (SHAPE empty:
# the case's), several launches (split-row, split-K) separated by ';'
BENCH=$R/bench.tsv
cat > "$BENCH" <<'TSV'
rms_M65536_N1024	rmsnorm	M=65536,N=1024	rmsnorm_warp	rmsnorm_warp|LPR=32,WARPS=4,ITERS=4|
rms_M65536_N1024_l16	rmsnorm	M=65536,N=1024	rmsnorm_warp	rmsnorm_warp|LPR=16,WARPS=8,ITERS=8|
rms_M65536_N1024_b64	rmsnorm	M=65536,N=1024	rmsnorm_block	rmsnorm_block|THREADS=64,ITERS=2|
ln_M65536_N1024	layernorm	M=65536,N=1024	layernorm_warp	layernorm_warp|LPR=32,WARPS=4,ITERS=4|
sm_M8192_N10000	softmax	M=8192,N=10000	softmax_block	softmax_block|THREADS=512,ITERS=8|
sm_M8192_N10000_o	softmax	M=8192,N=10000	softmax_online	softmax_online|THREADS=512,UNROLL=2|
sm_M1024_N49152_s	softmax	M=1024,N=49152	softmax_smem	softmax_smem|THREADS=1024,NMAX=57344|
sm_M1024_N49152_o	softmax	M=1024,N=49152	softmax_online	softmax_online|THREADS=1024,UNROLL=4|
sm_M512_N65536_s	softmax	M=512,N=65536	softmax_smem	softmax_smem|THREADS=1024,NMAX=57344|
sm_M512_N65536	softmax	M=512,N=65536	softmax_online	softmax_online|THREADS=1024,UNROLL=4|
sm_M1_N262144	softmax	M=1,N=262144	softmax_split	softmax_split_stats|THREADS=256,ITERS=2|;softmax_split_apply|THREADS=256,ITERS=2|
ce_B1_V262144_s	cross_entropy	B=1,V=262144	cross_entropy_split	cross_entropy_split_stats|THREADS=256,ITERS=2|;cross_entropy_split_finish|THREADS=256,ITERS=2|
ce_B1_V262144_o	cross_entropy	B=1,V=262144	cross_entropy_online	cross_entropy_online|THREADS=1024,UNROLL=4|
g_M128_N8192_K8192_64x128	gemm	M=128,N=8192,K=8192	gemm_persistent	gemm_persistent|BM=64,BN=128|
g_M128_N8192_K8192_64x256	gemm	M=128,N=8192,K=8192	gemm_persistent	gemm_persistent|BM=64,BN=256|
g_M3072_cube_128x192	gemm	M=3072,N=3072,K=3072	gemm_persistent	gemm_persistent|BM=128,BN=192|
g_M3072_cube_128x128	gemm	M=3072,N=3072,K=3072	gemm_persistent	gemm_persistent|BM=128,BN=128|
g_M3072_cube_128x256	gemm	M=3072,N=3072,K=3072	gemm_persistent	gemm_persistent|BM=128,BN=256|
g_M16_N8192_K8192_sk4	gemm	M=16,N=8192,K=8192	gemm_splitk	gemm_splitk_partial|BN=128,SPLIT=4|;gemm_splitk_reduce|SPLIT=4|M=16,N=8192
g_M16_N8192_K8192_64x64	gemm	M=16,N=8192,K=8192	gemm_persistent	gemm_persistent|BM=64,BN=64|
rms_M2_N65536_s	rmsnorm	M=2,N=65536	rmsnorm_split	rmsnorm_split_stats|THREADS=256,ITERS=2|;rmsnorm_split_apply|THREADS=256,ITERS=2|
rms_M2_N65536_b	rmsnorm	M=2,N=65536	rmsnorm_smem	rmsnorm_smem|THREADS=1024,NMAX=65536|
ln_M2_N65536_s	layernorm	M=2,N=65536	layernorm_split	layernorm_split_stats|THREADS=256,ITERS=2|;layernorm_split_apply|THREADS=256,ITERS=2|
rms_M1000000_N64	rmsnorm	M=1000000,N=64	rmsnorm_warp	rmsnorm_warp|LPR=8,WARPS=8,ITERS=1|
rms_M65536_N1001	rmsnorm	M=65536,N=1001	rmsnorm_warp	rmsnorm_warp|LPR=32,WARPS=4,ITERS=4|
rms_M16384_N4096	rmsnorm	M=16384,N=4096	rmsnorm_block	rmsnorm_block|THREADS=512,ITERS=1|
rms_M4096_N16384	rmsnorm	M=4096,N=16384	rmsnorm_block	rmsnorm_block|THREADS=1024,ITERS=2|
rms_M1024_N65536	rmsnorm	M=1024,N=65536	rmsnorm_smem	rmsnorm_smem|THREADS=1024,NMAX=65536|
ln_M16384_N4096	layernorm	M=16384,N=4096	layernorm_block	layernorm_block|THREADS=512,ITERS=1|
ln_M1024_N65536	layernorm	M=1024,N=65536	layernorm_smem	layernorm_smem|THREADS=1024,NMAX=65536|
sm_M65536_N1024	softmax	M=65536,N=1024	softmax_warp	softmax_warp|LPR=32,WARPS=4,ITERS=8|
sm_M8192_N8192	softmax	M=8192,N=8192	softmax_block	softmax_block|THREADS=256,ITERS=8|
sm_M128_N262144	softmax	M=128,N=262144	softmax_online	softmax_online|THREADS=1024,UNROLL=4|
sm_M4_N262144	softmax	M=4,N=262144	softmax_split	softmax_split_stats|THREADS=256,ITERS=4|;softmax_split_apply|THREADS=256,ITERS=4|
ce_B2048_V32000	cross_entropy	B=2048,V=32000	cross_entropy_online	cross_entropy_online|THREADS=256,UNROLL=4|
ce_B65536_V1024	cross_entropy	B=65536,V=1024	cross_entropy_warp	cross_entropy_warp|LPR=32,WARPS=4|
ce_B256_V128256	cross_entropy	B=256,V=128256	cross_entropy_online	cross_entropy_online|THREADS=1024,UNROLL=4|
g_M16_N8192_K8192_64x128	gemm	M=16,N=8192,K=8192	gemm_persistent	gemm_persistent|BM=64,BN=128|
g_M16_N8192_K8192_sk8	gemm	M=16,N=8192,K=8192	gemm_splitk	gemm_splitk_partial|BN=64,SPLIT=8|;gemm_splitk_reduce|SPLIT=8|M=16,N=8192
rms_M16384_N2048_w	rmsnorm	M=16384,N=2048	rmsnorm_warp	rmsnorm_warp|LPR=32,WARPS=4,ITERS=8|
rms_M16384_N2048_b	rmsnorm	M=16384,N=2048	rmsnorm_block	rmsnorm_block|THREADS=256,ITERS=1|
TSV
while IFS=$'\t' read -r name op shape file launches; do
    docs=""
    i=0
    for l in ${launches//;/ }; do docs="$docs,bench_${name}_$i.json"; i=$((i + 1)); done
    printf '%s\t%s\t%s\t%s\n' "$name" "$op" "$shape" "${docs#,}" >> "$CASES"
done < "$BENCH"

say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"
say "cakec: $("$C" --version 2>&1 | head -1)"

# ---- 3a. peers: compile now (CPU), time after the benches -------------------------
timeout -k 5 $(( $(left) - 3 )) python3 bench/device/libkernels_peers.py peers "$CASES" "$R/peers.json" \
    --go "$GO" --deadline $(( DEADLINE - 6 )) > "$R/peers.stdout" 2>&1 &
PEERS=$!

# ---- 1. checks ---------------------------------------------------------------------
CHK=$R/checks.txt
: > "$CHK"
ck() { # FILE KERNEL SET [SHAPE]
    local tag="$2_${3//[=,]/_}${4:+_${4//[=,]/_}}"
    echo "$1 $2 $3 ${4:--} $tag" >> "$CHK"
}
for s in LPR=4,WARPS=2,ITERS=1 LPR=8,WARPS=4,ITERS=2 LPR=16,WARPS=8,ITERS=4 LPR=32,WARPS=4,ITERS=8 LPR=32,WARPS=2,ITERS=1; do
    ck rmsnorm_warp rmsnorm_warp $s; ck layernorm_warp layernorm_warp $s
done
ck rmsnorm_warp rmsnorm_warp LPR=8,WARPS=4,ITERS=1 M=1,N=63
ck layernorm_warp layernorm_warp LPR=32,WARPS=8,ITERS=8 M=3001,N=2047
for s in THREADS=64,ITERS=2 THREADS=128,ITERS=4 THREADS=256,ITERS=4 THREADS=512,ITERS=1 THREADS=1024,ITERS=4; do
    ck rmsnorm_block rmsnorm_block $s; ck layernorm_block layernorm_block $s
done
ck rmsnorm_block rmsnorm_block THREADS=1024,ITERS=4 M=3,N=32768
ck layernorm_block layernorm_block THREADS=1024,ITERS=4 M=2,N=32767
for s in THREADS=256,NMAX=32768 THREADS=512,NMAX=65536 THREADS=1024,NMAX=114688; do
    ck rmsnorm_smem rmsnorm_smem $s; ck layernorm_smem layernorm_smem $s
done
ck rmsnorm_smem rmsnorm_smem THREADS=1024,NMAX=65536 M=3,N=65536
ck layernorm_smem layernorm_smem THREADS=1024,NMAX=114688 M=2,N=114687
for s in THREADS=128,ITERS=1 THREADS=256,ITERS=2 THREADS=512,ITERS=4; do
    for k in rmsnorm layernorm; do
        ck ${k}_split ${k}_split_stats $s; ck ${k}_split ${k}_split_apply $s
    done
done
ck rmsnorm_split rmsnorm_split_stats THREADS=256,ITERS=2 M=3,N=65535
ck layernorm_split layernorm_split_stats THREADS=256,ITERS=2 M=2,N=65536
for s in LPR=4,WARPS=4,ITERS=1 LPR=8,WARPS=8,ITERS=2 LPR=16,WARPS=4,ITERS=4 LPR=32,WARPS=8,ITERS=8 LPR=32,WARPS=4,ITERS=16 LPR=32,WARPS=4,ITERS=32; do
    ck softmax_warp softmax_warp $s
done
for s in THREADS=128,ITERS=1 THREADS=256,ITERS=8 THREADS=512,ITERS=2 THREADS=1024,ITERS=4; do
    ck softmax_block softmax_block $s
done
for s in THREADS=256,UNROLL=1 THREADS=512,UNROLL=2 THREADS=1024,UNROLL=4; do
    ck softmax_online softmax_online $s
    ck cross_entropy_online cross_entropy_online $s
done
for s in THREADS=256,NMAX=16384 THREADS=512,NMAX=32768 THREADS=1024,NMAX=57344; do
    ck softmax_smem softmax_smem $s
done
ck softmax_smem softmax_smem THREADS=1024,NMAX=57344 M=3,N=65536
ck softmax_smem softmax_smem THREADS=512,NMAX=16384 M=2,N=20001
ck softmax_online softmax_online THREADS=1024,UNROLL=4 M=3,N=70001
ck softmax_online softmax_online THREADS=1024,UNROLL=4 M=2,N=262144
for s in LPR=4,WARPS=4 LPR=8,WARPS=8 LPR=16,WARPS=4 LPR=32,WARPS=8; do
    ck cross_entropy_warp cross_entropy_warp $s
done
ck cross_entropy_warp cross_entropy_warp LPR=32,WARPS=4 B=7,V=3
ck cross_entropy_online cross_entropy_online THREADS=128,UNROLL=2 B=5,V=100003
ck cross_entropy_online cross_entropy_online THREADS=1024,UNROLL=4 B=1,V=262144
for s in THREADS=128,ITERS=1 THREADS=256,ITERS=4 THREADS=512,ITERS=8 THREADS=256,ITERS=2; do
    ck softmax_split softmax_split_stats $s; ck softmax_split softmax_split_apply $s
    ck cross_entropy_split cross_entropy_split_stats $s
done
ck softmax_split softmax_split_stats THREADS=256,ITERS=4 M=2,N=262143
ck cross_entropy_split cross_entropy_split_stats THREADS=256,ITERS=4 B=1,V=262144
for s in THREADS=128,ITERS=1,WARPS=1 THREADS=256,ITERS=4,WARPS=4 THREADS=512,ITERS=8,WARPS=4 THREADS=256,ITERS=2,WARPS=1; do
    ck cross_entropy_split cross_entropy_split_finish $s
done
for bm in 64 128; do for bn in 64 128 192 256; do
    ck gemm_persistent gemm_persistent BM=$bm,BN=$bn
done; done
ck gemm_persistent gemm_persistent BM=64,BN=256 M=130,N=1032,K=520
ck gemm_persistent gemm_persistent BM=128,BN=192 M=1000,N=4000,K=136
ck gemm_persistent gemm_persistent BM=64,BN=64 M=100,N=8200,K=72
for s in BN=64,SPLIT=2 BN=128,SPLIT=4 BN=256,SPLIT=8 BN=128,SPLIT=16; do
    ck gemm_splitk gemm_splitk_partial $s
done
ck gemm_splitk gemm_splitk_partial BN=128,SPLIT=4 M=5,N=1000,K=1048
for s in SPLIT=2,THREADS=128 SPLIT=4,THREADS=256 SPLIT=8,THREADS=128 SPLIT=16,THREADS=256; do
    ck gemm_splitk gemm_splitk_reduce $s
done
say "== checks: $(wc -l < "$CHK") runs (at $((SECONDS - T0)) s)"
one_check() { # FILE KERNEL SET SHAPE TAG
    local sh=() t0=$SECONDS
    [ "$4" != - ] && sh=(--shape "$4")
    timeout -k 3 25 "$C" run "library/kernels/$1.tir" --kernel "$2" --set "$3" "${sh[@]}" \
        --check --json --timeout 20 > "$R/check_$5.json" 2> "$R/check_$5.err" < /dev/null
    echo "$? $5 $((SECONDS - t0))"
}
export -f one_check
export C R
CHECK_END=$((DEADLINE * 30 / 100))
timeout -k 3 "$CHECK_END" xargs -P 8 -L 1 bash -c 'one_check "$@"' _ < "$CHK" > "$R/check_rc.txt"
say "checks done at $((SECONDS - T0)) s: $(awk '$1 == 0' "$R/check_rc.txt" | wc -l) exit 0 of $(wc -l < "$CHK")"
awk '$1 != 0 { print "  check FAILED (exit " $1 "): " $2 }' "$R/check_rc.txt" | tee -a "$LOG"

# ---- 2. benches ----------------------------------------------------------------------
say "== benches (at $((SECONDS - T0)) s)"
while IFS=$'\t' read -r name op shape file launches; do
    i=0
    for l in ${launches//;/ }; do
        IFS='|' read -r k set sh <<< "$l"
        [ -n "$sh" ] || sh=$shape
        if [ "$(left)" -lt 22 ]; then say "bench $name: skipped (out of time)"; break; fi
        timeout -k 3 25 "$C" run "$K/$file.tir" --kernel "$k" --set "$set" --shape "$sh" \
            --check --bench --runs 20 --json --timeout 20 > "$R/bench_${name}_$i.json" \
            2> "$R/bench_${name}_$i.err" < /dev/null
        rc=$?
        say "bench $name ($k): exit $rc at $((SECONDS - T0)) s"
        i=$((i + 1))
    done
done < "$BENCH"
touch "$GO"
say "== peers (at $((SECONDS - T0)) s)"
wait $PEERS
say "peers exit $? at $((SECONDS - T0)) s"
tail -3 "$R/peers.stdout" >> "$LOG"

# ---- table ------------------------------------------------------------------------------
python3 bench/device/libkernels_peers.py table "$CASES" "$R/peers.json" "$R" > "$O/lk_table.md" 2>> "$LOG"
tar -czf "$O/lk_raw.tar.gz" -C "$O" lk_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
cat "$O/lk_table.md"
