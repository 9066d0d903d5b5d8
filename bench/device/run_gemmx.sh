#!/bin/bash
# run_gemmx.sh — the bf16 GEMM's dispatch data (issue 13) in one device call.
# GX_MODE=tune (GX_MODE=validate is the default since round 2):
#   checks   the variants new in session 5 (persistent 64/128 x 80/144/208: the narrow
#            tiles of gemm_persistent_narrow.tir; split-K 128 x 128 over 3; gemv_m2_l8,
#            gemv_m8_c2_l8) through `lib bench --check --sample` at ragged shapes with several tiles per block and
#            uneven splits; one that fails is kept out of the timing passes (--skip)
#   losers   `lib bench --all` (every variant whose domain holds, timed) at 24 of the
#            sweep's worst shapes (diagnosis: never in the table)
#   tune     the new variants (and four old ones as references) with `lib bench --all
#            --skip OLD` at the committed table's 189 GEMM shapes
#            (bench/device/gemmx_tune2_shapes.txt, N <= 1300 first), to be merged into
#            the table's entries there (gemmx.py merge)
#   peers    cuBLAS (torch.matmul, sweep.py peers: the gated method, as `lib bench`) at
#            the losers, in this call
#   check    the fastest variant of every timed shape through `lib bench --check --sample`
# GX_MODE=validate (the default): the table (sweep_table_h200.json with gemm_table_h200.json folded
# in) built into the artifact, its choices checked and timed beside cuBLAS at the sweep's
# worst shapes and at held-out shapes, and gemm_persistent_narrow's tiles timed beside three
# 64-multiple ones at tuning shapes with N <= 1248 (narrow_all.jsonl; below).
# Every step has a timeout; honours $DEADLINE (default 120). Output under $OUT:
# gemmx_log.txt, checks.jsonl, losers_all.jsonl, tune_new.jsonl, peers.jsonl,
# best_checks.jsonl, summary.md; the summary printed last.
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

# GX_MODE=validate (the default; GX_MODE=tune: the passes below): the table folded in, then
# at 24 of the sweep's worst shapes and at held-out shapes (tune_shapes.py gemm 7717: neither
# tuned at nor the sweep's) the chosen variant checked and timed (`lib bench --check
# --sample`) beside cuBLAS
if [ "${GX_MODE:-validate}" = validate ]; then
    # the table: the committed sweep table with this op's part folded in (table_merge.py:
    # the same table where the part is merged already)
    TAB=$A/table.json
    python3 bench/device/table_merge.py bench/device/sweep_table_h200.json bench/device/gemm_table_h200.json \
        -o "$TAB" >> "$LOG" 2>&1 || { say "FAIL: table_merge"; TAB=bench/device/sweep_table_h200.json; }
    TUNED=$A/tuned.cakelib
    if ! t 15 "$C" lib build "$LIB" --table "$TAB" -o "$TUNED" >> "$LOG" 2>&1; then
        say "FAIL: lib build --table"
        TUNED=$LIB
    fi
    printf '%s\n' M=4079,N=144,K=7672 M=393,N=1184,K=14008 M=6232,N=80,K=520 M=12073,N=600,K=824 \
        M=2,N=12304,K=256 M=35,N=520,K=696 M=145,N=360,K=6096 M=49,N=368,K=1232 M=128,N=4096,K=4096 \
        M=19,N=976,K=1064 M=248,N=240,K=9728 M=11539,N=8,K=96 M=10295,N=256,K=624 M=356,N=56,K=2360 \
        M=2018,N=80,K=688 M=1343,N=272,K=2392 M=163,N=64,K=16152 M=1193,N=176,K=1024 \
        M=3609,N=2880,K=3432 M=9823,N=48,K=1536 M=10193,N=80,K=2184 M=2449,N=360,K=720 \
        M=6912,N=224,K=752 M=3072,N=3072,K=3072 | sed 's/^/gemm /' > "$A/val.txt"
    python3 bench/device/tune_shapes.py gemm 7717 24 >> "$A/val.txt"
    : > "$O/val.jsonl"
    LIB=$TUNED
    batch $(( $(left) - 40 )) "$A/val.txt" "$O/val.jsonl" --check --sample --runs 10 --timeout 5
    # gemm_persistent_narrow (the TMA-stored last 16 columns, new since round 1's timing of
    # these names) beside three 64-multiple tiles at tuning shapes with N <= 1248: data
    # for the next table, checked where it is fastest by the sweep (every shape it serves)
    KEEP="persistent_64x80 persistent_128x80 persistent_64x144 persistent_128x144 persistent_64x208"
    KEEP="$KEEP persistent_128x208 persistent_128x128 persistent_128x64 persistent_64x64"
    SKIPN=$(python3 -c 'import json, sys
m = json.load(open("library/manifest.json"))
keep = sys.argv[1].split()
print(",".join(v["name"] for o in m["ops"] if o["op"] == "gemm" for v in o["variants"] if v["name"] not in keep))' "$KEEP")
    awk -F'[=,]' '$4 <= 1248 && $2 > 256' bench/device/gemmx_tune2_shapes.txt | head -40 > "$A/narrow.txt"
    : > "$O/narrow_checks.jsonl"   # each narrow tile checked at a ragged shape, several tiles per block
    for v in $(echo $KEEP | cut -d' ' -f1-6); do
        case $v in *x80*) n=472 ;; *x144*) n=856 ;; *) n=1240 ;; esac
        echo "gemm M=4100,N=$n,K=136 $v"
    done > "$A/narrow_checks.txt"
    batch 6 "$A/narrow_checks.txt" "$O/narrow_checks.jsonl" --check --sample --runs 1 --timeout 5
    say "narrow checks: $(cnt '"check_ok":true' "$O/narrow_checks.jsonl") ok, $(cnt '"check_ok":false' "$O/narrow_checks.jsonl") FAIL of 6"
    : > "$O/narrow_all.jsonl"
    batch 8 "$A/narrow.txt" "$O/narrow_all.jsonl" --all --runs 5 --timeout 5 --skip "$SKIPN"
    say "narrow: $(cnt '"bench_all"' "$O/narrow_all.jsonl") shapes timed; fastest: $(python3 bench/device/gemmx.py best "$O/narrow_all.jsonl" | awk '{print $3}' | sort | uniq -c | sort -rn | tr -s ' ' | tr '\n' ';')"
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
    say "== gemmx validation (at $((SECONDS - T0)) s; ratio = cuBLAS ms / library ms, the table with bench/device/gemm_table_h200.json)"
    mkdir -p "$O/val"
    timeout 8 python3 bench/device/sweep.py table "$O/val.jsonl" "$O/peers.jsonl" "$O/val" 2>&1 | tee -a "$LOG"
    grep '^| gemm' "$O/val/sweep_table.md" 2>/dev/null | sort -t'|' -k9 -n | head -12
    echo "narrow tiles: checks $(cnt '"check_ok":true' "$O/narrow_checks.jsonl") ok, $(cnt '"check_ok":false' "$O/narrow_checks.jsonl") FAIL; $(cnt '"bench_all"' "$O/narrow_all.jsonl") shapes timed"
    exit 0
fi

# 1. the new variants checked (`lib bench --check --sample`) at ragged shapes: several tiles
#    per block on 132 SMs (M=4100,N=472..1240,K=136: 198 to 1690 tiles), ragged M, N and K
#    edges, uneven splits (K=3512: 55 k-tiles); one that fails is kept out of the timing
NEWP="persistent_64x80 persistent_128x80 persistent_64x144 persistent_128x144 persistent_64x208 persistent_128x208"
NEWS="splitk_128x128_s3"
NEWG="gemv_m2_l8 gemv_m8_c2_l8"
NEW="$NEWP $NEWS $NEWG"
: > "$A/check_new.txt"
for v in $NEWP $NEWS; do   # N in the variant's domain (its `when`: N <= 480, 864, 1248 by BN)
    case $v in *x80*) n=472 ;; *x144*) n=856 ;; *) n=1240 ;; esac
    case $v in persistent*) big=M=4100,N=$n,K=136 ;; *) big=M=393,N=$n,K=3512 ;; esac
    printf 'gemm %s %s\n' "$big" "$v" M=200,N=328,K=1032 "$v" >> "$A/check_new.txt"
done
printf 'gemm %s %s\n' M=2,N=12304,K=256 gemv_m2_l8 M=1,N=1000,K=1032 gemv_m2_l8 \
    M=35,N=520,K=696 gemv_m8_c2_l8 M=50,N=680,K=360 gemv_m8_c2_l8 >> "$A/check_new.txt"
: > "$O/checks.jsonl"
s0=$SECONDS
batch 16 "$A/check_new.txt" "$O/checks.jsonl" --check --sample --runs 1 --timeout 5
SKIP=""
for v in $NEW; do   # a variant that failed a check is not timed (one not reached still is)
    bad=$(grep "\"variant\":\"$v\"" "$O/checks.jsonl" | grep -c '"check_ok":false')
    [ "$bad" -gt 0 ] && SKIP="$SKIP${SKIP:+,}$v"
done
say "checks: $(cnt '"check_ok":true' "$O/checks.jsonl") ok of $(cnt . "$A/check_new.txt") in $((SECONDS - s0)) s; kept out of the timing: ${SKIP:-none}"

# 2. every variant at the sweep's worst shapes (diagnosis only: never in the table), after
#    M=N=K=64 (each variant's fixed cost beside cuBLAS's)
printf '%s\n' M=64,N=64,K=64 M=4079,N=144,K=7672 M=393,N=1184,K=14008 M=6232,N=80,K=520 M=12073,N=600,K=824 \
    M=2,N=12304,K=256 M=35,N=520,K=696 M=145,N=360,K=6096 M=49,N=368,K=1232 M=128,N=4096,K=4096 \
    M=19,N=976,K=1064 M=248,N=240,K=9728 M=11539,N=8,K=96 M=10295,N=256,K=624 M=356,N=56,K=2360 \
    M=2018,N=80,K=688 M=1343,N=272,K=2392 M=163,N=64,K=16152 M=1193,N=176,K=1024 \
    M=3609,N=2880,K=3432 M=9823,N=48,K=1536 M=10193,N=80,K=2184 M=2449,N=360,K=720 \
    M=6912,N=224,K=752 M=3072,N=3072,K=3072 | sed 's/^/gemm /' > "$A/losers.txt"
: > "$O/losers_all.jsonl"
s0=$SECONDS
batch 28 "$A/losers.txt" "$O/losers_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "losers: $(cnt '"bench_all"' "$O/losers_all.jsonl") shapes timed in $((SECONDS - s0)) s"

# 3. the new variants (and three old ones: the same variant in two calls, the table's
#    and this, compared; persistent_128x64 too) at the committed table's GEMM shapes (bench/device/gemmx_tune2_shapes.txt:
#    its 189 shapes, N <= 1300 first), to be merged into the table's entries there
OLD="persistent_128x256 persistent_128x192 persistent_64x256 persistent_64x128 persistent_64x64_s2"
OLD="$OLD splitk_64x64_s2 splitk_64x64_s8 splitk_64x64_s16 splitk_64x128_s2 splitk_64x128_s4"
OLD="$OLD splitk_64x128_s3 splitk_128x64_s4 splitk_128x64_s2 gemv_m1 gemv_m2 gemv_m4 gemv_m4_l8 gemv_m8"
OLD="$OLD gemv_m2_c4 gemv_m4_c4 gemv_m8_c4 sm90_128x256 sm90_128x128 sm80_64x64"
SKIP_OLD=$(echo $OLD | tr ' ' ',')${SKIP:+,$SKIP}
: > "$O/tune_new.jsonl"
s0=$SECONDS
batch "${GX_T_TUNE:-40}" bench/device/gemmx_tune2_shapes.txt "$O/tune_new.jsonl" --all --runs 5 --timeout 5 \
    --skip "$SKIP_OLD"
say "tune (new variants; persistent_128x128, persistent_128x64, persistent_64x64, splitk_64x64_s4 as references): $(cnt '"bench_all"' "$O/tune_new.jsonl") shapes timed in $((SECONDS - s0)) s"

# 4. cuBLAS at the losers, in this call
python3 bench/device/gemmx.py timed "$O/losers_all.jsonl" > "$A/timed.txt" 2>> "$LOG"
s0=$SECONDS
t 10 python3 bench/device/sweep.py peers "$A/timed.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "cuBLAS: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") of $(cnt . "$A/timed.txt") shapes"

# 5. the fastest variant of every timed shape checked (the one a table from these rows
#    chooses there): the losers first, then the tuning shapes
check_best $(( $(left) - 8 )) "$O/best_checks.jsonl" "$O/losers_all.jsonl" "$O/tune_new.jsonl"

say "== gemmx summary (at $((SECONDS - T0)) s; ratio = cuBLAS ms / best variant ms)"
timeout 6 python3 bench/device/gemmx.py summary "$O/losers_all.jsonl" "$O/tune_new.jsonl" "$O/peers.jsonl" \
    "$O/best_checks.jsonl" "$O/summary.md" 2>&1 | tee -a "$LOG"
grep -A32 '^losers' "$O/summary.md" | head -30
echo "checks of the new variants: $(cnt '"check_ok":true' "$O/checks.jsonl") ok of $(cnt '"op"' "$O/checks.jsonl"); skipped: ${SKIP:-none}"
echo "best-variant checks: $(cnt '"check_ok":true' "$O/best_checks.jsonl") ok, $(cnt '"check_ok":false' "$O/best_checks.jsonl") FAIL"
