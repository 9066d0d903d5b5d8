#!/bin/bash
# run_gemm2.sh — the bf16 GEMM's losing shapes (issue 13), round 1: is each loss a
# selection problem (a variant in the library is close to cuBLAS but was not picked) or a
# missing variant (none is), is the small shapes' loss fixed cost, do the new variants
# (gemm_splitk_bulk.tir: split-K whose partials the TMA unit adds) close it, and data for the table.
#   checks    the new splitk_bulk_* variants through `lib bench --check --sample` at ragged
#             shapes (uneven splits, ragged M and N edges); one that fails is kept out of the timing
#   prefetch  the tensor maps' prefetch at the entry (codegen, prefetch.tensormap) on and
#             off (CAKE_NO_TMAP_PREFETCH=1) through `cakec run --bench` at four small shapes:
#             what it takes off the fixed cost of a TMA kernel
#   losers    `lib bench --all` (every variant whose domain holds; the row's `variant` is the
#             artifact's pick) at the 2026-12-02 sweep's worst GEMM shapes and a few of its
#             winners (diagnosis only: never put in the table)
#   peers     cuBLAS (torch.matmul; sweep.py peers: the gated method, as `lib bench`) at the
#             losers, in this call
#   tune      every variant at 48 new tuning shapes in the losers' classes (tall M with narrow
#             N, small M with long K, gemv-like, large ragged waves; seeded, none of the sweep's:
#             bench/device/gemm2_tune_shapes.txt), to be merged into
#             bench/device/gemm_table_h200.json (gemmx.py merge) for round 2
#   tune_new  the new variants alone (`--all --skip` every old one) at the table's GEMM shapes
#             with K >= 1200 and M >= 64 (bench/device/gemmx_tune2_shapes.txt), for their fit
#   check     the fastest variant of every timed shape through `lib bench --check --sample`
# Every step has a timeout; honours $DEADLINE (default 150). Output under $OUT: gemm2_log.txt,
# checks.jsonl, prefetch.txt, losers_all.jsonl, tune_new.jsonl, peers.jsonl, tune_all.jsonl, best_checks.jsonl, summary.md,
# diagnosis.md;
# the summary printed last.
# GEMM2_MODE=validate (session 7's round 2; GEMM2_MODE=diagnose: its round 1's passes above;
# GEMM2_MODE=narrow, the default: session 8's round 1, below):
# the picks of the artifact retabled with the committed table at the sweep's 93 GEMM shapes,
# checked and timed beside cuBLAS (val.jsonl, peers.jsonl, val/).
#   usage (device machine, repo root): [GEMM2_MODE=narrow|validate|diagnose] bash bench/device/run_gemm2.sh
set -u
DEADLINE=${DEADLINE:-150}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/gemm2_log.txt
: > "$LOG"

A=$(mktemp -d "${TMPDIR:-/tmp}/gemm2-art.XXXXXX")   # artifacts: not under $OUT
trap 'rm -rf "$A"' EXIT
LIB=${GEMM2_LIB:-.carry/python/cake/cake.cakelib}
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    t 50 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $?"
fi
# the sweep's artifact: the carried one retabled with bench/device/sweep_table_h200.json (as
# run_sweep.sh does), so each --all row's `variant` is the pick the acceptance sweep makes
retable "$LIB"
say "artifact: $LIB ($(stat -c %s "$LIB" 2>/dev/null || echo 0) bytes); gpu: $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>&1)"
BATCH_STARTS=4

# GEMM2_MODE=narrow (session 8, round 1: the default now): the narrow-N variants
# (kernels/gemm_narrow.tir, gemm_fp8_narrow.tir; split-K at 64 x 32 and 64 x 16 tiles,
# splitk_64x32_*, splitk_64x16_s4, splitk_bulk_64x32_*; and for skinny M with long K,
# splitk_64x256_s2, _s4, splitk_bulk_64x256_s3, splitk_bulk_128x256_s8) checked, then timed
#   checks    every new variant through `lib bench --check --sample` at ragged shapes with
#             several tiles per block (a variant that fails one is kept out of the timing)
#   losers    `lib bench --all` at the sweep's losing shapes of the classes they serve (tall M
#             with narrow N, small M x N, a few rows, skinny M with long K): diagnosis only,
#             never in the table
#   peers     cuBLAS / torch._scaled_mm at the losers, in this call
#   tune_new  the new variants alone (`--skip` every old one) at the GEMM and gemm_fp8
#             shapes of the tuned table (bench/device/sweep_table_h200.json) with N <= 512
#             or M N <= 2^22 (their classes): their fit
#   tune_all  every variant at bench/device/narrow_tune_shapes.txt (narrow_shapes.py; none
#             of the sweep's shapes)
#   check     the fastest variant of every timed shape through `lib bench --check --sample`
# Output: checks.jsonl, losers_all.jsonl, peers.jsonl, tune_new.jsonl, tune_all.jsonl,
# best_checks.jsonl, narrow.md (gemm2.py narrow) and the log.
if [ "${GEMM2_MODE:-narrow}" = narrow ]; then
    names() {   # names OP PATTERN: the op's variants whose name matches PATTERN (a regex)
        python3 -c 'import json, re, sys
m = json.load(open("library/manifest.json"))
print(",".join(v["name"] for o in m["ops"] if o["op"] == sys.argv[1] for v in o["variants"]
               if (re.match(sys.argv[2], v["name"]) is not None) == (sys.argv[3] == "new")))' "$1" "$2" "$3"
    }
    NEWRE='^(narrow_|splitk_bulk_64x32_|splitk_64x32_|splitk_64x16_|splitk_64x256_|splitk_bulk_64x256_s3|splitk_bulk_128x256_s8)'
    NEW=$(names gemm "$NEWRE" new); OLD=$(names gemm "$NEWRE" old)
    NEW8=$(names gemm_fp8 "$NEWRE" new); OLD8=$(names gemm_fp8 "$NEWRE" old)
    : > "$A/check_new.txt"
    for v in ${NEW//,/ }; do
        case $v in   # ragged M and N edges, uneven splits, several tiles per block (persistent)
        *x256_*) printf 'gemm %s %s\n' "M=300,N=520,K=3512" "$v" "M=16,N=1000,K=2056" "$v" >> "$A/check_new.txt" ;;
        *) printf 'gemm %s %s\n' "M=5000,N=56,K=776" "$v" "M=9000,N=120,K=136" "$v" >> "$A/check_new.txt" ;;
        esac
    done
    for v in ${NEW8//,/ }; do
        printf 'gemm_fp8 %s %s\n' "M=5000,N=56,K=1040" "$v" "M=9000,N=120,K=272" "$v" >> "$A/check_new.txt"
    done
    : > "$O/checks.jsonl"
    s0=$SECONDS
    batch 30 "$A/check_new.txt" "$O/checks.jsonl" --check --sample --runs 1 --timeout 5
    SKIP=""
    for v in ${NEW//,/ } ${NEW8//,/ }; do   # failed a check (either op): not timed
        bad=$(grep "\"variant\":\"$v\"" "$O/checks.jsonl" | grep -c '"check_ok":false')
        [ "$bad" -gt 0 ] && SKIP="$SKIP${SKIP:+,}$v"
    done
    say "checks: $(cnt '"check_ok":true' "$O/checks.jsonl") ok, $(cnt '"check_ok":false' "$O/checks.jsonl") FAIL of $(cnt . "$A/check_new.txt") in $((SECONDS - s0)) s; kept out: ${SKIP:-none}"

    printf 'gemm %s\n' M=6232,N=80,K=520 M=1664,N=16,K=848 M=6452,N=24,K=2232 M=4227,N=8,K=896 \
        M=11539,N=8,K=96 M=2018,N=80,K=688 M=10193,N=80,K=2184 M=2574,N=16,K=104 M=606,N=80,K=256 \
        M=9823,N=48,K=1536 M=356,N=56,K=2360 M=35,N=520,K=696 M=7,N=4272,K=528 M=38,N=456,K=128 \
        M=10,N=1152,K=144 M=156,N=352,K=544 M=50,N=680,K=352 M=38,N=2200,K=360 M=169,N=2568,K=256 \
        M=1193,N=176,K=1024 M=1343,N=272,K=2392 M=3281,N=5648,K=144 M=12073,N=600,K=824 M=14427,N=1800,K=688 \
        M=128,N=4096,K=4096 M=16,N=8192,K=8192 M=5,N=9304,K=6952 M=393,N=1184,K=14008 M=33,N=2824,K=8512 \
        M=2,N=4264,K=11568 > "$A/losers.txt"
    printf 'gemm_fp8 %s\n' M=730,N=16,K=2256 M=43,N=656,K=1856 M=90,N=416,K=4320 M=41,N=392,K=2432 M=14810,N=14048,K=352 \
        M=1723,N=224,K=14688 M=17,N=7248,K=7008 > "$A/losers8.txt"
    : > "$O/losers_all.jsonl"
    s0=$SECONDS
    batch 24 "$A/losers.txt" "$O/losers_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
    batch 8 "$A/losers8.txt" "$O/losers_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
    say "losers: $(cnt '"bench_all"' "$O/losers_all.jsonl") shapes timed in $((SECONDS - s0)) s"

    python3 bench/device/gemmx.py timed "$O/losers_all.jsonl" > "$A/timed.txt" 2>> "$LOG"
    s0=$SECONDS
    t 22 python3 bench/device/sweep.py peers "$A/timed.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
    say "peers: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") of $(cnt . "$A/timed.txt") shapes"

    python3 -c 'import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    d = e["shape"]
    if e["op"] in ("gemm", "gemm_fp8") and (d["N"] <= 512 or d["M"] * d["N"] <= 1 << 22):
        print(e["op"], ",".join("%s=%d" % kv for kv in d.items()))' bench/device/sweep_table_h200.json > "$A/table_shapes.txt"
    # the narrow classes first (N <= 128, then M <= 64): a pass cut short by its time loses the rest
    grep '^gemm ' "$A/table_shapes.txt" | awk -F'[=, ]' '{ print ($5 <= 128 ? 0 : $3 <= 64 ? 1 : 2), $0 }' | sort -s -n -k1,1 \
        | cut -d' ' -f2- > "$A/tn.txt"
    grep '^gemm_fp8 ' "$A/table_shapes.txt" > "$A/tn8.txt"
    : > "$O/tune_new.jsonl"
    s0=$SECONDS
    batch 30 "$A/tn.txt" "$O/tune_new.jsonl" --all --runs 3 --timeout 5 --skip "$OLD${SKIP:+,$SKIP}"
    batch 6 "$A/tn8.txt" "$O/tune_new.jsonl" --all --runs 3 --timeout 5 --skip "$OLD8${SKIP:+,$SKIP}"
    say "tune_new: $(cnt '"bench_all"' "$O/tune_new.jsonl") of $(cnt . "$A/table_shapes.txt") shapes in $((SECONDS - s0)) s"

    grep '^gemm ' bench/device/narrow_tune_shapes.txt > "$A/ta.txt"; grep '^gemm_fp8 ' bench/device/narrow_tune_shapes.txt > "$A/ta8.txt"
    : > "$O/tune_all.jsonl"
    s0=$SECONDS
    batch 16 "$A/ta.txt" "$O/tune_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
    batch 6 "$A/ta8.txt" "$O/tune_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
    say "tune_all: $(cnt '"bench_all"' "$O/tune_all.jsonl") of $(cnt . bench/device/narrow_tune_shapes.txt) shapes in $((SECONDS - s0)) s"

    check_best $(( $(left) - 6 )) "$O/best_checks.jsonl" "$O/losers_all.jsonl" "$O/tune_all.jsonl" "$O/tune_new.jsonl"
    say "== gemm2 narrow (at $((SECONDS - T0)) s; ratio = peer ms / ours)"
    timeout 5 python3 bench/device/gemm2.py narrow "$O/losers_all.jsonl" "$O/peers.jsonl" "$O/best_checks.jsonl" \
        "$NEWRE" "$O/narrow.md" 2>&1 | tee -a "$LOG"
    exit 0
fi

# GEMM2_MODE=validate (round 2): the committed table built into the artifact (above), its
# picks at every gemm and gemm_fp8 shape of the acceptance sweep (sweep.py shapes 2027)
# checked and timed (`lib bench --check --sample`); where the pick differs from the one the
# sweep of bench/results/2026-12-02-s7/sweep_static made, that earlier pick too (checked,
# timed: `before`); the peers (cuBLAS, torch._scaled_mm) in this call; the sweep table, then
# before -> after (gemm2.py before) last
if [ "${GEMM2_MODE:-validate}" = validate ]; then
    python3 bench/device/sweep.py shapes 2027 | grep -E '^gemm(_fp8)? ' > "$A/val.txt"
    : > "$O/val.jsonl"
    batch $(( $(left) * 45 / 100 )) "$A/val.txt" "$O/val.jsonl" --check --sample --runs 10 --timeout 5
    python3 bench/device/gemm2.py oldpicks bench/results/2026-12-02-s7/sweep_static/sweep.json "$O/val.jsonl" \
        > "$A/old.txt" 2>> "$LOG"
    : > "$O/old.jsonl"
    batch $(( $(left) * 25 / 100 )) "$A/old.txt" "$O/old.jsonl" --check --sample --runs 10 --timeout 5
    say "before: $(cnt . "$A/old.txt") shapes with another pick, $(cnt '"bench"' "$O/old.jsonl") timed"
    python3 -c 'import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        if r.get("bench"):
            print(r["op"], r["shape"])' "$O/val.jsonl" > "$A/val_timed.txt"
    t $(( $(left) - 10 )) python3 bench/device/sweep.py peers "$A/val_timed.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
    say "peers: exit $? at $(cnt . "$O/peers.jsonl") of $(cnt . "$A/val_timed.txt") shapes"
    say "== gemm2 validation (at $((SECONDS - T0)) s; ratio = peer ms / library ms)"
    mkdir -p "$O/val"
    timeout 8 python3 bench/device/sweep.py table "$O/val.jsonl" "$O/peers.jsonl" "$O/val" 2>&1 | tee -a "$LOG"
    echo "checks: $(cnt '"check_ok":true' "$O/val.jsonl") ok, $(cnt '"check_ok":false' "$O/val.jsonl") FAIL of $(cnt . "$A/val.txt") shapes; before: $(cnt '"check_ok":true' "$O/old.jsonl") ok, $(cnt '"check_ok":false' "$O/old.jsonl") FAIL"
    timeout 5 python3 bench/device/gemm2.py before "$O/val.jsonl" "$O/old.jsonl" "$O/peers.jsonl" "$O/before_after.md" 2>&1 | tee -a "$LOG"
    grep '^| gemm' "$O/before_after.md" 2>/dev/null | sort -t'|' -k10 -n | head -16
    exit 0
fi

NEW=$(python3 -c 'import json
m = json.load(open("library/manifest.json"))
print(" ".join(v["name"] for o in m["ops"] if o["op"] == "gemm" for v in o["variants"]
               if v["name"].startswith("splitk_bulk_")))')
# 0. the new variants checked: a ragged M and N, uneven splits (K = 3512: 55 k-tiles), N in the
#    variant's domain (`when` N <= 960 for BN = 160), and a second shape of another size
: > "$A/check_new.txt"
for v in $NEW; do
    case $v in *x160*) n=936 ;; *) n=1240 ;; esac
    printf 'gemm %s %s\n' "M=393,N=$n,K=3512" "$v" "M=200,N=152,K=1032" "$v" >> "$A/check_new.txt"
done
: > "$O/checks.jsonl"
s0=$SECONDS
batch 18 "$A/check_new.txt" "$O/checks.jsonl" --check --sample --runs 1 --timeout 5
SKIP=""
for v in $NEW; do   # a variant that failed a check is not timed (one not reached still is)
    bad=$(grep "\"variant\":\"$v\"" "$O/checks.jsonl" | grep -c '"check_ok":false')
    [ "$bad" -gt 0 ] && SKIP="$SKIP${SKIP:+,}$v"
done
say "checks: $(cnt '"check_ok":true' "$O/checks.jsonl") ok of $(cnt . "$A/check_new.txt") in $((SECONDS - s0)) s; kept out of the timing: ${SKIP:-none}"


# 1. the tensor maps' prefetch on and off, one kernel compiled each way (`cakec run` compiles
#    in the process, so the variable takes effect), median of 20 runs by the gated timer
: > "$O/prefetch.txt"
s0=$SECONDS
for c in "gemm_persistent.tir BM=64,BN=64 M=64,N=64,K=64" "gemm_persistent.tir BM=64,BN=64 M=1193,N=176,K=1024" \
         "gemm_splitk_fused.tir BN=64,SPLIT=4 M=49,N=368,K=1232"; do
    set -- $c
    for off in 0 1; do
        if [ $off = 1 ]; then env_=CAKE_NO_TMAP_PREFETCH=1; else env_=CAKE_TMAP_PREFETCH_ON=1; fi
        ms=$(env "$env_" timeout -k 2 4 "$C" run "library/kernels/$1" --set "$2" --shape "$3" --bench --runs 20 \
             --json 2>> "$LOG" | python3 -c 'import json, sys
try:
    d = json.load(sys.stdin)
except Exception:
    print("none"); sys.exit(0)
def find(o):
    if isinstance(o, dict):
        if "median_ms" in o:
            return o["median_ms"]
        for v in o.values():
            r = find(v)
            if r is not None:
                return r
    if isinstance(o, list):
        for v in o:
            r = find(v)
            if r is not None:
                return r
print("%.4f" % find(d) if find(d) is not None else "none")' 2>> "$LOG")
        echo "$1 $2 $3 prefetch_off=$off ms=$ms" >> "$O/prefetch.txt"
    done
    [ $((SECONDS - s0)) -gt 12 ] && break
done
say "prefetch: $(cnt . "$O/prefetch.txt") runs in $((SECONDS - s0)) s"

# 2. every variant at the sweep's worst shapes (and a few winners), M=N=K=64 first (each
#    variant's fixed cost)
printf '%s\n' M=64,N=64,K=64 M=4079,N=144,K=7672 M=393,N=1184,K=14008 M=248,N=240,K=9728 M=6232,N=80,K=520 \
    M=12073,N=600,K=824 M=35,N=520,K=696 M=49,N=368,K=1232 M=128,N=4096,K=4096 M=19,N=976,K=1064 \
    M=3281,N=5648,K=144 M=380,N=2384,K=1040 M=1343,N=272,K=2392 M=145,N=360,K=6096 M=10193,N=80,K=2184 \
    M=163,N=64,K=16152 M=3609,N=2880,K=3432 M=16,N=8192,K=8192 M=3072,N=3072,K=3072 M=9823,N=48,K=1536 \
    M=6452,N=24,K=2232 M=4096,N=4096,K=4096 M=2,N=12304,K=256 | sed 's/^/gemm /' > "$A/losers.txt"
: > "$O/losers_all.jsonl"
s0=$SECONDS
batch 30 "$A/losers.txt" "$O/losers_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "losers: $(cnt '"bench_all"' "$O/losers_all.jsonl") shapes timed in $((SECONDS - s0)) s"

# 3. cuBLAS at the losers, in this call
python3 bench/device/gemmx.py timed "$O/losers_all.jsonl" > "$A/timed.txt" 2>> "$LOG"
s0=$SECONDS
t 25 python3 bench/device/sweep.py peers "$A/timed.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "cuBLAS: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") of $(cnt . "$A/timed.txt") shapes"

# 4. every variant at the new tuning shapes (data for the table's fit in the losers' classes)
: > "$O/tune_all.jsonl"
s0=$SECONDS
batch 32 bench/device/gemm2_tune_shapes.txt "$O/tune_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "tune: $(cnt '"bench_all"' "$O/tune_all.jsonl") of $(cnt . bench/device/gemm2_tune_shapes.txt) shapes timed in $((SECONDS - s0)) s"

# 4b. the new variants alone at the table's long-K shapes (their fit needs 8 shapes or more)
SKIP_OLD=$(python3 -c 'import json, sys
m = json.load(open("library/manifest.json"))
new = sys.argv[1].split()
print(",".join(v["name"] for o in m["ops"] if o["op"] == "gemm" for v in o["variants"] if v["name"] not in new))' "$NEW")
awk -F'[=, ]' '$7 >= 1200 && $3 >= 64' bench/device/gemmx_tune2_shapes.txt > "$A/tune_new.txt"
: > "$O/tune_new.jsonl"
s0=$SECONDS
batch $(( $(left) - 22 )) "$A/tune_new.txt" "$O/tune_new.jsonl" --all --runs 5 --timeout 5 --skip "$SKIP_OLD${SKIP:+,$SKIP}"
say "tune (new variants): $(cnt '"bench_all"' "$O/tune_new.jsonl") of $(cnt . "$A/tune_new.txt") shapes timed in $((SECONDS - s0)) s"

# 5. the fastest variant of every timed shape checked: the losers first, then the tuning shapes
check_best $(( $(left) - 8 )) "$O/best_checks.jsonl" "$O/losers_all.jsonl" "$O/tune_all.jsonl" "$O/tune_new.jsonl"

say "== gemm2 summary (at $((SECONDS - T0)) s; ratio = cuBLAS ms / ours; verdict: gemm2.py)"
timeout 6 python3 bench/device/gemmx.py summary "$O/losers_all.jsonl" "$O/tune_all.jsonl" "$O/peers.jsonl" \
    "$O/best_checks.jsonl" "$O/summary.md" >> "$LOG" 2>&1
cat "$O/prefetch.txt"
echo "checks of the new variants: $(cnt '"check_ok":true' "$O/checks.jsonl") ok, $(cnt '"check_ok":false' "$O/checks.jsonl") FAIL; skipped: ${SKIP:-none}"
echo "best-variant checks: $(cnt '"check_ok":true' "$O/best_checks.jsonl") ok, $(cnt '"check_ok":false' "$O/best_checks.jsonl") FAIL; tune shapes timed: $(cnt '"bench_all"' "$O/tune_all.jsonl")"
timeout 6 python3 bench/device/gemm2.py diagnose "$O/losers_all.jsonl" "$O/peers.jsonl" "$O/best_checks.jsonl" \
    "$O/diagnosis.md" 2>&1
