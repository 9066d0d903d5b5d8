#!/bin/sh
# fake_cakec.sh — stands in for cakec's compile, `cost` and `run` in the tune
# test (as CAKE_RUN_CMD), without a GPU: predictions (in the cost model's JSON
# layout) and timings come from the tables below; BM=64,STAGES=2 does not
# compile, BM=256,STAGES=3 is rejected by the cost model, BM=64,STAGES=3 is
# one it is unsure of (verdict "measure"), BM=256,STAGES=4 faults (exit 3,
# E0972), BM=256,STAGES=2 hangs; a run says where it ran (measured_on: an H200,
# or with FAKE_MIXED=1 an A100 on CUDA_VISIBLE_DEVICES=1). FAKE_NO_COST=1 makes `cost`
# answer like a cakec without the cost model (E0004). Any other command goes
# to the real cakec ($CAKEC).
cmd=$1
set=""
prev=""
for a in "$@"; do
    [ "$prev" = "--set" ] && set=$a
    prev=$a
done
diag() { # code message
    printf '{"command":"%s","ok":false,"errors":1,"warnings":0,"diagnostics":[{"code":"%s","severity":"error","message":"%s","span":null,"snippet":null,"notes":[],"help":[],"fixits":[]}]}\n' "$cmd" "$1" "$2"
}
case "$cmd" in
*.tir)  # compiling: BM=64,STAGES=2 does not (FAKE_REAL_COMPILE=1: the real cakec decides)
    [ "${FAKE_REAL_COMPILE:-0}" = 1 ] && exec "$CAKEC" "$@"
    cmd=compile
    case "$set" in BM=64,STAGES=2) diag E0802 "index 1 of As may be out of bounds"; exit 1 ;; esac
    printf '{"command":"compile","ok":true,"errors":0,"warnings":0,"diagnostics":[]}\n'
    ;;
cost)
    if [ "${FAKE_NO_COST:-0}" = 1 ]; then diag E0004 "the cost model is not built yet"; exit 1; fi
    case "$set" in
    BM=64,STAGES=2) p=3.0 ;; BM=64,STAGES=3) p=2.9 ;; BM=64,STAGES=4) p=2.8 ;;
    BM=128,STAGES=2) p=2.0 ;; BM=128,STAGES=3) p=1.9 ;; BM=128,STAGES=4) p=1.8 ;;
    BM=256,STAGES=2) p=1.5 ;; BM=256,STAGES=4) p=1.4 ;; "") p=1.1 ;;
    *) diag E0501 "shared memory over the limit"; exit 1 ;;
    esac
    verdict=model
    [ "$set" = BM=64,STAGES=3 ] && verdict=measure
    printf '{"command":"cost","ok":true,"errors":0,"warnings":0,"diagnostics":[],"cost":{"time_ms":%s,"verdict":"%s","bottleneck":"tensor","roofline":{"ms":0.01}}}\n' "$p" "$verdict"
    ;;
run)
    case "$set" in
    BM=256,STAGES=4) diag E0972 "kernel gemm_sm90 failed during the bench: CUDA_ERROR_ILLEGAL_ADDRESS"; exit 3 ;;
    BM=256,STAGES=2) sleep 30; exit 0 ;;
    "") ms=1.0 ;;
    BM=128,STAGES=3) ms=0.8 ;;
    BM=128,STAGES=4) ms=0.9 ;;
    *) ms=1.2 ;;
    esac
    dev="NVIDIA H200"   # FAKE_MIXED=1: the GPU CUDA_VISIBLE_DEVICES=1 is an A100
    [ "${FAKE_MIXED:-0}" = 1 ] && [ "${CUDA_VISIBLE_DEVICES:-}" = 1 ] && dev="NVIDIA A100-SXM4-80GB"
    printf '{"command":"run","ok":true,"errors":0,"warnings":0,"diagnostics":[],"check":[],"bench":{"shape":"M=4096","median_ms":%s},"measured_on":{"device":"%s","visible_devices":"%s"},"argv":"%s"}\n' "$ms" "$dev" "${CUDA_VISIBLE_DEVICES:-}" "$*"
    ;;
*)
    exec "$CAKEC" "$@"
    ;;
esac
