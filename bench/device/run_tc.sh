#!/bin/bash
# run_tc.sh — the tensor-core device session in one call (builds nothing there):
#   sass      each tile example to PTX (carried cakec), ptxas -v, cuobjdump -sass:
#             HGMMA / HMMA / QGMMA counts, local memory, registers per kernel
#   check     `run --check` of each tile example: the checker's own shapes (ragged ones
#             included) and explicit ragged shapes; attention with CAUSAL=0 and 1
#   bench     `run --bench` at the acceptance shapes
#   peers     tc_peers.py: cuBLAS, a Triton GEMM, torch bias+SiLU, _scaled_mm, SDPA flash
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck at small shapes
# then tc_table.py writes the table (printed last). A file not written yet is skipped
# with a message; every step logs its outcome and the next one runs regardless.
#
#   usage (on the device machine, from the repo root):  bash bench/device/run_tc.sh
#   expects .carry/cakec, .carry/libcake-llvm.so (-DCAKE_STATIC_LLVM=ON) and libcjson.so.1
#   environment: CAKEC (the binary), OUT, TC_DEADLINE (seconds, default 550:
#   every step ends by then), TC_STEPS (default "sass check bench peers sanitize"),
#   TC_TILES (the examples of the sass and check steps; default: all the tile examples)
# Output: $OUT/tc_table.md, $OUT/tc_log.txt, $OUT/tc_raw.tar.gz (every raw document).
set -u
C=${CAKEC:-.carry/cakec}              # loads libcake-llvm.so beside it to compile
CL=$C                                 # run directly under compute-sanitizer (one process)
O=${OUT:-/tmp/cake-out}
R=$O/tc_raw
LOG=$O/tc_log.txt
STATUS=$R/status.tsv                  # one line per command: name, exit status, seconds
CASES=$R/cases.tsv                    # one line per bench case, for tc_table.py
DEADLINE=${TC_DEADLINE:-550}
STEPS=${TC_STEPS:-"sass check bench peers sanitize"}
mkdir -p "$R"
: > "$STATUS"
: > "$CASES"
W=$(mktemp -d "${TMPDIR:-/tmp}/cake-tc.XXXXXX")
trap 'rm -rf "$W"' EXIT
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
export PYTHONUNBUFFERED=1
T0=$SECONDS
STEP_END=$DEADLINE

# the tile examples (examples/NAME.tir) of the sass and check steps, the most telling
# first (a step out of time drops the last ones); TC_TILES picks others
TILES=${TC_TILES:-"gemm_sm90 flash_attn_fwd gemm_sm80 gemm_sm90_persistent gemm_bias_act gemm_fp8 flash_attn_fwd_d64"}

say() { echo "$@" | tee -a "$LOG"; }
note() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$STATUS"; }
wants() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }

# step NAME END: the step's commands stop END seconds after the start (or at the deadline)
step() {
    local end=$2
    [ "$end" -gt "$DEADLINE" ] && end=$DEADLINE
    STEP_END=$((T0 + end))
    say "== $1 (at $((SECONDS - T0)) s; ends by $end s)"
}

# have FILE: true when the example exists; otherwise logs it as missing
have() {
    [ -f "$1" ] && return 0
    say "skip $1: does not exist yet"
    note "missing:$1" missing 0
    return 1
}

# run_to NAME LIMIT OUT ERR CMD...: CMD with stdout to OUT and stderr appended to ERR
# ("=": to OUT too), killed after LIMIT seconds or what is left of the step if less
run_to() {
    local name=$1 limit=$2 out=$3 err=$4 left t0 rc
    shift 4
    left=$((STEP_END - SECONDS))
    [ "$left" -lt "$limit" ] && limit=$left
    if [ "$limit" -lt 5 ]; then
        note "$name" skip 0
        say "$name: skipped (out of the step's time budget)"
        : > "$out"
        return 0
    fi
    t0=$SECONDS
    if [ "$err" = "=" ]; then
        timeout -k 5 "$limit" "$@" > "$out" 2>&1
    else
        timeout -k 5 "$limit" "$@" > "$out" 2>> "$err"
    fi
    rc=$?
    note "$name" "$rc" $((SECONDS - t0))
    case $rc in
        124|137) say "$name: TIMED OUT after $limit s" ;;
        *) say "$name: exit $rc ($((SECONDS - t0)) s)" ;;
    esac
    return 0
}

tag() { local s=${1//=/}; echo "${s//,/_}"; }   # M=200,N=272 -> M200_N272

gpu_state() { # WHEN
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw \
        --format=csv,noheader > "$W/gpu" 2>&1
    say "gpu $1: $(cat "$W/gpu")"
    echo "$1, $(cat "$W/gpu")" >> "$R/gpu.txt"
}

# ---- 0. the machine -----------------------------------------------------------------
: > "$LOG"
if [ ! -x "$C" ] || [ ! -x "$CL" ]; then
    say "WARNING: $C or $CL missing: fill .carry/ with bench/device/carry.sh and carry it"
fi
gpu_state start
say "cakec: $("$C" --version 2>&1 | head -1)"
say "ptxas: $(ptxas --version 2>&1 | tail -1)"
say "cuobjdump: $(cuobjdump --version 2>&1 | tail -1)"
say "compute-sanitizer: $(compute-sanitizer --version 2>&1 | tail -1)"
say "python: $(python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1 | tail -1)"

# ---- d. SASS facts (no GPU needed; first, because it is quick) ----------------------------
sass_one() { # NAME FILE [PARAMS]
    local name=$1 f=$2 params=${3:-} ptx=$W/$1.ptx target arch
    if [ -n "$params" ]; then
        run_to "ptx:$name" 120 "$R/emit_$name.json" "$LOG" "$C" "$f" --emit ptx -o "$ptx" --set "$params" --json
    else
        run_to "ptx:$name" 120 "$R/emit_$name.json" "$LOG" "$C" "$f" --emit ptx -o "$ptx" --json
    fi
    [ -s "$ptx" ] || return 0
    cp "$ptx" "$R/$name.ptx"
    target=$(sed -n 's/^\.target[[:space:]]*\([a-z0-9_]*\).*/\1/p' "$ptx" | head -1)
    # what runs on the H200 is sm_90a code: sm_80 PTX is compiled for sm_90 by the driver
    for arch in sm_90a $( [ "$target" = sm_80 ] && echo sm_80 ); do
        run_to "ptxas:$name:$arch" 120 "$R/ptxas_${name}_$arch.txt" = \
            ptxas -arch="$arch" -v "$ptx" -o "$W/${name}_$arch.cubin"
        [ -s "$W/${name}_$arch.cubin" ] || continue
        run_to "sass:$name:$arch" 60 "$R/sass_${name}_$arch.txt" "$LOG" \
            cuobjdump -sass "$W/${name}_$arch.cubin"
    done
}
if wants sass; then
    step "SASS: cakec --emit ptx, ptxas -v, cuobjdump -sass" 60
    for ex in $TILES; do
        f=examples/$ex.tir
        have "$f" || continue
        sass_one "$ex" "$f"
        case $ex in flash*) sass_one "${ex}_c1" "$f" CAUSAL=1 ;; esac
    done
fi

# ---- a. correctness ----------------------------------------------------------------------
check() { # NAME FILE SHAPE PARAMS: SHAPE "" = the checker's own shapes
    local name=$1 f=$2 shape=$3 params=$4
    set -- run "$f" --check --json --timeout 30
    [ -n "$shape" ] && set -- "$@" --shape "$shape"
    [ -n "$params" ] && set -- "$@" --set "$params"
    run_to "check:$name" 120 "$R/check_$name.json" "$LOG" "$C" "$@"
}
if wants check; then
    step "checks (the checker's shapes and explicit ragged ones)" 180
    for ex in $TILES; do
        f=examples/$ex.tir
        have "$f" || continue
        case $ex in
        flash*) # S not a multiple of the 128-row tile, one block and several
            for c in 0 1; do
                check "${ex}_c$c" "$f" "" "CAUSAL=$c"
                for s in BH=2,S=200 BH=3,S=77; do
                    check "${ex}_c${c}_$(tag $s)" "$f" "$s" "CAUSAL=$c"
                done
            done ;;
        gemm_sm80) # no TMA: any M and N (odd ones too: the epilogue stores single elements), K % 8 == 0
            check "$ex" "$f" "" ""
            for s in M=256,N=384,K=96 M=200,N=272,K=144 M=333,N=527,K=88 M=1,N=1,K=8; do
                check "${ex}_$(tag $s)" "$f" "$s" ""
            done ;;
        *) # M, N, K not multiples of the tile (K and N multiples of 16 for TMA row pitches)
            check "$ex" "$f" "" ""
            for s in M=200,N=272,K=144 M=333,N=528,K=80 M=1,N=16,K=16; do
                check "${ex}_$(tag $s)" "$f" "$s" ""
            done ;;
        esac
    done
    # the small GPU test kernels: TMA, descriptors, A from registers, role reductions
    for f in tests/gpu/tc/*.tir; do
        check "tc_$(basename "$f" .tir)" "$f" "" ""
    done
fi

# ---- b. speed at the acceptance shapes ------------------------------------------------------
# bench NAME FILE SHAPE PARAMS FLOPS RULE — RULE: peer:min_ratio,... (ratio = peer ms / our ms;
# "-": shown, no threshold); FLOPs: 2MNK, attention 4·BH·S²·D (halved when causal)
bench() {
    local name=$1 f=$2 shape=$3 params=$4 flops=$5 rule=$6
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$f" "$shape" "${params:--}" "$flops" "$rule" >> "$CASES"
    have "$f" || return 0
    set -- run "$f" --bench --shape "$shape" --runs 30 --timeout 30 --json
    [ -n "$params" ] && set -- "$@" --set "$params"
    run_to "bench:$name" 120 "$R/bench_$name.json" "$LOG" "$C" "$@"
}
if wants bench; then
    step "benches at the acceptance shapes" 280
    for n in 2048 4096 8192; do
        if [ $n = 2048 ]; then rule="cublas_bf16_$n:0.90,triton_bf16_$n:-"
        else rule="cublas_bf16_$n:0.95,triton_bf16_$n:1.0"; fi
        for ex in gemm_sm90 gemm_sm90_persistent; do
            bench "${ex}_$n" "examples/$ex.tir" "M=$n,N=$n,K=$n" "" $((2 * n * n * n)) "$rule"
        done
    done
    bench gemm_sm80_4096 examples/gemm_sm80.tir M=4096,N=4096,K=4096 "" $((2 * 4096 ** 3)) \
        "cublas_bf16_4096:0.5,triton_bf16_4096:-"
    bench gemm_bias_act_4096 examples/gemm_bias_act.tir M=4096,N=4096,K=4096 "" $((2 * 4096 ** 3)) \
        "torch_bias_silu_4096:1.0,cublas_bf16_4096:-"
    bench gemm_fp8_8192 examples/gemm_fp8.tir M=8192,N=8192,K=8192 "" $((2 * 8192 ** 3)) \
        "scaled_mm_fp8_8192:-,scaled_mm_fp8_fast_8192:-"
    for c in 0 1; do
        for d in 128 64; do
            ex=flash_attn_fwd
            [ $d = 64 ] && ex=flash_attn_fwd_d64
            bench "${ex}_c$c" "examples/$ex.tir" BH=128,S=4096 "CAUSAL=$c" \
                $((4 * 128 * 4096 * 4096 * d / (1 + c))) "sdpa_flash_d${d}_c$c:0.9,sdpa_cudnn_d${d}_c$c:-"
        done
    done
    gpu_state "after the benches"
fi

# ---- c. peers, same machine, same run -------------------------------------------------------
if wants peers; then
    step "peers (tc_peers.py)" 430
    run_to peers 360 "$R/tc_peers.stdout" "$LOG" \
        python3 bench/device/tc_peers.py --out "$R/tc_peers.json"
    gpu_state "after the peers"
fi

# ---- e. compute-sanitizer at small shapes -----------------------------------------------------
san_shape() { # EX -> "SHAPE PARAMS" for a small sanitizer run ("-": none)
    case $1 in
        flash*) echo "BH=1,S=200 CAUSAL=1" ;;
        gemm_sm80) echo "M=256,N=256,K=64 -" ;;
        *) echo "M=200,N=272,K=144 -" ;;
    esac
}
if wants sanitize; then
    step "compute-sanitizer" "$DEADLINE"
    if command -v compute-sanitizer > /dev/null; then
        # memcheck on every kernel first, then races, then barriers: the most telling first
        for tool in memcheck racecheck synccheck; do
            for ex in $TILES; do
                f=examples/$ex.tir
                [ -f "$f" ] || continue
                if wants sass && [ ! -s "$W/$ex.ptx" ]; then # the sass step could not compile it
                    note "$tool:$ex" nocompile 0
                    say "$tool:$ex: skipped (does not compile)"
                    continue
                fi
                read -r shape params <<< "$(san_shape "$ex")"
                set -- compute-sanitizer --tool "$tool" --error-exitcode 9 \
                    "$CL" run "$f" --check --shape "$shape" --timeout 60
                [ "$params" != - ] && set -- "$@" --set "$params"
                run_to "$tool:$ex" 90 "$R/${tool}_$ex.txt" = "$@"
            done
        done
    else
        say "compute-sanitizer: not on PATH, skipped"
        note "missing:compute-sanitizer (not on PATH)" missing 0
    fi
fi

# ---- f. the table -------------------------------------------------------------------------------
say "== table (at $((SECONDS - T0)) s)"
python3 bench/device/tc_table.py "$R" > "$O/tc_table.md" 2>> "$LOG" ||
    say "tc_table.py failed: exit $? (raw documents in tc_raw.tar.gz)"
tar -czf "$O/tc_raw.tar.gz" -C "$O" tc_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
cat "$O/tc_table.md"
