#!/bin/bash
# run_gemmx.sh — the bf16 GEMM's dispatch data (issue 13) in one device call:
#   checks   every variant new in the manifest (persistent_64x64_s2: two stages, a smaller
#            shared-memory footprint for tiny K; persistent_128x64, persistent_256x128,
#            splitk_64x128_s3, splitk_64x256_s2/_s4, splitk_128x64_s4, splitk_128x128_s3) through
#            `lib bench --check` at ragged multi-tile, multi-split shapes; one that fails is
#            kept out of the timing passes (--skip) and named in the summary
#   losers   `lib bench --all` (every variant whose domain holds, timed) at the shapes where
#            the 2026-12-01 sweep lost most (its own shapes: what the best variant there is,
#            never tuned on)
#   tune     `lib bench --all` at bench/device/gemmx_tune_shapes.txt (tune_shapes.py gemm
#            6113 160: another seed than the sweep's, a third in the classes it loses)
#   peers    cuBLAS (torch.matmul, sweep.py peers: device events, the L2 flushed before each
#            run, as `lib bench` times) at every shape timed, in this call
#   check    the fastest variant of every timed shape through `lib bench --check --sample`
#            (the variant a table from these rows chooses there), losers first
#   sass     the smallest GEMM variants' SASS before their first TMA (the fixed cost)
#   select   the dispatch's cost with the fitted model (lib_fit.c): `lib select --repeat`
#            and `lib bench --overhead` with the committed table folded in
# GX_MODE=validate instead: the committed table's choices checked and timed beside cuBLAS (below).
# then the summary (printed last): per shape the best variant, its ms, cuBLAS ms, the ratio,
# the check. Every step has a timeout; honours $DEADLINE (default 120). Output under $OUT:
# gemmx_log.txt, checks.jsonl, losers_all.jsonl, tune_all.jsonl, peers.jsonl,
# best_checks.jsonl, sass.txt, summary.md.
#   usage (device machine, repo root): bash bench/device/run_gemmx.sh
set -u
DEADLINE=${DEADLINE:-120}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/gemmx_log.txt
: > "$LOG"

A=$(mktemp -d "${TMPDIR:-/tmp}/gemmx-art.XXXXXX")   # artifacts: not under $OUT
trap 'rm -rf "$A"' EXIT
LIB=.carry/python/cake/cake.cakelib
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    t 50 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $?"
fi
say "artifact: $LIB ($(stat -c %s "$LIB" 2>/dev/null || echo 0) bytes); gpu: $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>&1)"

BATCH_STARTS=4   # lib.sh's batch: restarts after a dying line

# GX_MODE=validate (the default since round 2; GX_MODE=tune: the passes below): the committed
# table folded in, then at the sweep's worst shapes
# and at held-out shapes (tune_shapes.py gemm 7717: neither tuned at nor the sweep's) the
# chosen variant checked and timed (`lib bench --check --sample`) beside cuBLAS; the candidate
# kernel gemm_splitk_ws checked and timed beside gemm_splitk_fused
if [ "${GX_MODE:-validate}" = validate ]; then
    TUNED=$A/tuned.cakelib
    if ! t 15 "$C" lib build "$LIB" --table bench/device/sweep_table_h200.json -o "$TUNED" >> "$LOG" 2>&1; then
        say "FAIL: lib build --table"
        TUNED=$LIB
    fi
    printf '%s\n' M=393,N=1184,K=14008 M=156,N=352,K=544 M=1343,N=272,K=2392 M=7,N=4272,K=528 \
        M=12073,N=600,K=824 M=163,N=64,K=16152 M=4079,N=144,K=7672 M=1193,N=176,K=1024 \
        M=5,N=824,K=9224 M=248,N=240,K=9728 M=49,N=368,K=1232 M=2,N=4264,K=11568 M=35,N=520,K=696 \
        M=5,N=9304,K=6952 M=19,N=976,K=1064 M=3609,N=2880,K=3432 M=128,N=4096,K=4096 \
        M=3072,N=3072,K=3072 M=16,N=8192,K=8192 | sed 's/^/gemm /' > "$A/val.txt"
    python3 bench/device/tune_shapes.py gemm 7717 24 >> "$A/val.txt"
    : > "$O/val.jsonl"
    LIB=$TUNED
    batch $(( $(left) - 30 )) "$A/val.txt" "$O/val.jsonl" --check --sample --runs 10 --timeout 5
    python3 -c 'import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        if r.get("bench"):
            print(r["op"], r["shape"])' "$O/val.jsonl" > "$A/val_timed.txt"
    t 14 python3 bench/device/sweep.py peers "$A/val_timed.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
    say "cuBLAS: exit $? at $(cnt . "$O/peers.jsonl") of $(cnt . "$A/val_timed.txt") shapes"
    for s in M=393,N=1184,K=14008 M=4096,N=4096,K=4096; do
        say "select $s: $(t 4 "$C" lib select "$TUNED" --op gemm --shape "$s" --repeat 100000 2>&1 | grep -E 'per call|why' | tr -s ' ' | tr '\n' ';')"
    done
    t 6 "$C" lib bench "$TUNED" --op gemm --shape M=4096,N=4096,K=4096 --overhead --json > "$O/overhead.json" 2>> "$LOG"
    say "overhead (4096^3, one kernel): $(grep -o '"dispatch":{[^}]*}' "$O/overhead.json" | head -c 300)"
    # the candidate gemm_splitk_ws (plain stores into a slice per split, no atomics) beside
    # gemm_splitk_fused: checked (sampled) and timed at the same bindings and shapes
    [ "$(left)" -gt 16 ] && for set in BM=128,BN=128,SPLIT=4; do
        for f in gemm_splitk_fused gemm_splitk_ws; do
            for sh in M=393,N=1184,K=14008 M=128,N=4096,K=4096; do
                ck=""
                [ "$sh" = M=393,N=1184,K=14008 ] && ck="--check --sample"
                r=$(t 6 "$C" run library/kernels/$f.tir --set "$set" --shape "$sh" $ck --bench --json 2>> "$LOG" |
                    tee -a "$O/cand.jsonl" | grep -oE '"(ok|median_ms)":[^,}]*' | tr '\n' ' ')
                say "candidate $f $set $sh: ${r:-no result}"
            done
        done
    done
    say "== gemmx validation (at $((SECONDS - T0)) s; ratio = cuBLAS ms / library ms, the committed table)"
    mkdir -p "$O/val"
    timeout 8 python3 bench/device/sweep.py table "$O/val.jsonl" "$O/peers.jsonl" "$O/val" 2>&1 | tee -a "$LOG"
    grep '^| gemm' "$O/val/sweep_table.md" 2>/dev/null | sort -t'|' -k9 -n | head -12
    exit 0
fi

# 1. the new variants checked at ragged shapes (multi-tile, multi-split, ragged M/N/K edges)
NEW="persistent_64x64_s2 persistent_128x64 persistent_256x128 splitk_64x128_s3 splitk_64x256_s2 splitk_64x256_s4 splitk_128x64_s4 splitk_128x128_s3"
: > "$A/check_new.txt"
for v in $NEW; do
    for s in "M=200,N=328,K=1032" "M=393,N=1184,K=3512" "M=77,N=520,K=4104"; do
        echo "gemm $s $v" >> "$A/check_new.txt"
    done
done
: > "$O/checks.jsonl"
s0=$SECONDS
batch 12 "$A/check_new.txt" "$O/checks.jsonl" --check --sample --runs 2 --timeout 5
SKIP=""
for v in $NEW; do
    ok=$(grep "\"variant\":\"$v\"" "$O/checks.jsonl" | grep -c '"check_ok":true')
    say "check $v: $ok of 3 shapes pass"
    [ "$ok" -lt 3 ] && SKIP="$SKIP${SKIP:+,}$v"
done
say "checks in $((SECONDS - s0)) s; kept out of the timing: ${SKIP:-none}"

# 2. every variant at the sweep's worst shapes (diagnosis only: not tuned on)
printf '%s\n' M=393,N=1184,K=14008 M=156,N=352,K=544 M=1343,N=272,K=2392 M=7,N=4272,K=528 \
    M=12073,N=600,K=824 M=163,N=64,K=16152 M=4079,N=144,K=7672 M=1193,N=176,K=1024 \
    M=5,N=824,K=9224 M=248,N=240,K=9728 M=49,N=368,K=1232 M=2,N=4264,K=11568 M=35,N=520,K=696 \
    M=5,N=9304,K=6952 M=19,N=976,K=1064 M=3609,N=2880,K=3432 M=9823,N=48,K=1536 \
    M=4227,N=8,K=896 M=6452,N=24,K=2232 M=10193,N=80,K=2184 M=128,N=4096,K=4096 \
    M=6232,N=80,K=520 M=380,N=2384,K=1040 M=6,N=1160,K=7840 M=3072,N=3072,K=3072 \
    M=16,N=8192,K=8192 M=50,N=680,K=352 M=18,N=408,K=88 M=287,N=848,K=256 | sed 's/^/gemm /' \
    > "$A/losers.txt"
: > "$O/losers_all.jsonl"
s0=$SECONDS
batch 12 "$A/losers.txt" "$O/losers_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "losers: $(cnt '"bench_all"' "$O/losers_all.jsonl") shapes timed in $((SECONDS - s0)) s"

# 3. every variant at the tuning shapes
: > "$O/tune_all.jsonl"
s0=$SECONDS
batch "${GX_T_TUNE:-36}" bench/device/gemmx_tune_shapes.txt "$O/tune_all.jsonl" --all --runs 5 --timeout 5 \
    ${SKIP:+--skip "$SKIP"}
say "tune: $(cnt '"bench_all"' "$O/tune_all.jsonl") shapes timed in $((SECONDS - s0)) s"

# 4. cuBLAS at every shape timed, in this call
python3 bench/device/gemmx.py timed "$O/losers_all.jsonl" "$O/tune_all.jsonl" > "$A/timed.txt" 2>> "$LOG"
s0=$SECONDS
t 18 python3 bench/device/sweep.py peers "$A/timed.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "cuBLAS: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") of $(cnt . "$A/timed.txt") shapes"

# 5. the fastest variant of every timed shape checked (the table's choice there)
python3 bench/device/gemmx.py best "$O/losers_all.jsonl" "$O/tune_all.jsonl" > "$A/best.txt" 2>> "$LOG"
: > "$O/best_checks.jsonl"
s0=$SECONDS
batch $(( $(left) - 20 )) "$A/best.txt" "$O/best_checks.jsonl" --check --sample --runs 1 --timeout 5
say "best-variant checks: $(cnt '"check_ok":true' "$O/best_checks.jsonl") ok of $(cnt '"op"' "$O/best_checks.jsonl") checked ($(cnt . "$A/best.txt") timed) in $((SECONDS - s0)) s"

# 6. the smallest variants' SASS up to their first TMA load (what a 5 us launch pays first)
: > "$O/sass.txt"
[ "$(left)" -gt 18 ] && for ks in "library/kernels/gemm_persistent.tir BM=64,BN=64" "library/kernels/gemm_gemv.tir MR=8,NC=1,LPC=32,WARPS=4,U=2"; do
    set -- $ks
    if t 5 "$C" "$1" --set "$2" --emit ptx -o "$A/k.ptx" > /dev/null 2>&1 &&
        t 5 ptxas -arch=sm_90a "$A/k.ptx" -o "$A/k.cubin" 2>> "$LOG" && command -v cuobjdump > /dev/null; then
        echo "== $1 $2" >> "$O/sass.txt"
        cuobjdump -sass "$A/k.cubin" 2>> "$LOG" | grep -E '^\s+/\*[0-9a-f]+\*/' | head -160 >> "$O/sass.txt"
    fi
done
say "sass: $(wc -l < "$O/sass.txt") lines"

# 7. the dispatch's cost with the fitted model: the committed table folded into the artifact
#    (the fits of its GEMM variants), `lib select --repeat` and `lib bench --overhead`
if [ "$(left)" -gt 14 ] && t 15 "$C" lib build "$LIB" --table bench/device/sweep_table_h200.json -o "$A/fit.cakelib" >> "$LOG" 2>&1; then
    for s in M=393,N=1184,K=14008 M=7,N=4272,K=528 M=4096,N=4096,K=4096; do
        say "select $s: $(t 5 "$C" lib select "$A/fit.cakelib" --op gemm --shape "$s" --repeat 100000 2>&1 | grep -E 'per call|why' | tr -s ' ' | tr '\n' ';')"
        say "select $s, untuned: $(t 5 "$C" lib select "$LIB" --op gemm --shape "$s" --repeat 100000 2>&1 | grep -E 'per call' | tr -s ' ')"
    done
    t 10 "$C" lib bench "$A/fit.cakelib" --op gemm --shape M=393,N=1184,K=14008 --overhead --json > "$O/overhead.json" 2>> "$LOG"
    say "overhead: $(grep -o '"dispatch":{[^}]*}' "$O/overhead.json" | head -c 400)"
fi

say "== gemmx summary (at $((SECONDS - T0)) s; ratio = cuBLAS ms / best variant ms)"
timeout 10 python3 bench/device/gemmx.py summary "$O/losers_all.jsonl" "$O/tune_all.jsonl" "$O/peers.jsonl" \
    "$O/best_checks.jsonl" "$O/summary.md" 2>&1 | tee -a "$LOG"
grep -A40 '^losers' "$O/summary.md" | head -34
echo "checks of the new variants: $(cnt '"check_ok":true' "$O/checks.jsonl") ok of $(cnt '"op"' "$O/checks.jsonl"); skipped: ${SKIP:-none}"
echo "best-variant checks: $(cnt '"check_ok":true' "$O/best_checks.jsonl") ok, $(cnt '"check_ok":false' "$O/best_checks.jsonl") FAIL"
