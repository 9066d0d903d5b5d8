#!/bin/bash
# run_attn.sh — session 9's round 2 of attention forward at head dim 64 (issue 15):
# flash_attn_fwd_pp3 (its consumer loop `fresh`) as the library's attention_fwd_gqa_d64 pick
# where BH * cdiv(S, 192) >= 512 (causal: and S >= 2048), in one call within $DEADLINE
# seconds (default 160); builds nothing but three small artifacts of the two ops:
#   0. build   attn_r2.py manifest: NEW (library/manifest.json's two ops), OLD (their
#              session-8 variants and `when`), ALL (every kernel of them, no `when`);
#              `lib build` of each (seconds)
#   1. checks  `lib run NEW --check --sample` at shapes that hit pp3 (ragged S, more tiles than
#              SMs, GQA, MQA; both CAUSAL values) and at two that do not; `cakec run --check`
#              of the example at its declared values; compute-sanitizer racecheck, synccheck
#              and memcheck on the example (both CAUSAL values, 2 blocks for 12+ tiles)
#   2. timings `lib bench --shapes` at the 22 D = 64 dense shapes of run_afwd3.sh: NEW's picks,
#              ALL --all at those and at attn_r2.py's PROBES (the cut's neighbourhood), OLD's
#              picks; then cuDNN and flash SDPA (attn_r2.py peers: attnfwd_peers.py's method,
#              gated.py). The picks are checked in 1 (the oracle's sampled reference of a
#              shape past S = 4096 alone takes 10+ s: it ran out of its 2^32 iterations)
#   3. tables  attn_table.md (per shape: pick, ms, peers, cuDNN/ours, flash/ours, check, old
#              pick, new/old; geomeans), attn_probes.md (every variant at every line)
#   usage (device machine, repo root): bash bench/device/run_attn.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: attn_table.md,
#   attn_probes.md, attn_checks.tsv, attn_log.txt, attn_raw.tar.gz
set -u
DEADLINE=${DEADLINE:-170}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/attn_log.txt
: > "$LOG"
D=bench/device
R=$O/attn_raw
mkdir -p "$R"
A=$(mktemp -d "${TMPDIR:-/tmp}/attn.XXXXXX")
WARMPID=
trap '[ -n "$WARMPID" ] && kill "$WARMPID" 2> /dev/null; rm -rf "$A"' EXIT
export PYTHONUNBUFFERED=1
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"
timeout 60 python3 -c "import torch, torch.nn.functional" > /dev/null 2>&1 &
WARMPID=$!

# ---- 0. the three artifacts -----------------------------------------------------------------
NJ=$(nproc 2> /dev/null || echo 4)
for x in new old all; do
    python3 $D/attn_r2.py manifest "$A/$x" $x >> "$LOG" 2>&1
    t 40 "$C" lib build "$A/$x" -o "$A/$x.cakelib" -j "$NJ" > "$R/build_$x.txt" 2>&1
    say "lib build $x: exit $? at $((SECONDS - T0)) s"
done
NEW=$A/new.cakelib
python3 $D/attn_r2.py lines "$A/lines.txt"
python3 $D/attn_r2.py probes "$A/probes.txt"

# ---- 1. checks and sanitizer: TAG|COMMAND ----------------------------------------------------
P3=examples/flash_attn_fwd_pp3.tir
JOBS=$R/jobs.txt
: > "$JOBS"
j() { echo "$1|$2" >> "$JOBS"; }
CS="compute-sanitizer --error-exitcode 9"
for tl in racecheck synccheck memcheck; do
    for c in 0 1; do
        j cs_${tl}_pp3_c$c "$CS --tool $tl $C run $P3 --set CAUSAL=$c --shape BH=4,BHK=2,S=400,sm.count=2 --check --timeout 25"
    done
done
for c in 0 1; do
    j ex_c${c}_default "$C run $P3 --set CAUSAL=$c --check"
    j ex_c${c}_ragged "$C run $P3 --set CAUSAL=$c --shape BH=20,BHK=5,S=385,sm.count=7 --check"
done
L0="$C lib run $NEW --op attention_fwd_gqa_d64"
L1="$C lib run $NEW --op attention_fwd_gqa_d64_causal"
j lib_c0_gqa8_ragged "$L0 --shape BH=64,BHK=8,S=1537 --check --sample"     # 576 tiles
j lib_c0_ragged_many "$L0 --shape BH=256,BHK=256,S=385 --check --sample"   # 768 tiles, 3 a block
j lib_c0_mqa "$L0 --shape BH=48,BHK=1,S=2000 --check --sample"             # 528 tiles
j lib_c0_cut "$L0 --shape BH=32,BHK=2,S=2881 --check --sample"             # 512 tiles: the cut
j lib_c1_gqa8_ragged "$L1 --shape BH=64,BHK=8,S=2049 --check --sample"     # 704 tiles
j lib_c1_gqa16 "$L1 --shape BH=32,BHK=2,S=3001 --check --sample"           # 512 tiles
j lib_c1_many "$L1 --shape BH=256,BHK=128,S=2048 --check --sample"         # 2816 tiles
j lib_c0_q2 "$L0 --shape BH=8,BHK=8,S=1537 --check --sample"               # 72 tiles: pp 128x128
j lib_c1_few "$L1 --shape BH=16,BHK=4,S=4000 --check --sample"             # 336 tiles: pp 128x128 _few
say "== checks: $(wc -l < "$JOBS") runs in the background (at $((SECONDS - T0)) s)"
runjob() {
    local tag=${1%%|*} cmd=${1#*|} t0=$SECONDS
    timeout -k 2 60 bash -c "$cmd --json" > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    echo "$tag $? $((SECONDS - t0))" >> "$R/rc.txt"
}
export -f runjob
export C R
: > "$R/rc.txt"
t $(( $(left) * 35 / 100 )) xargs -P 8 -d '\n' -n 1 bash -c 'runjob "$1"' _ < "$JOBS"
say "== checks done at $((SECONDS - T0)) s: $(awk '$2 == 0' "$R/rc.txt" | wc -l) exit 0 of $(wc -l < "$JOBS")"
python3 $D/checks_tsv.py "$R" "$JOBS" > "$O/attn_checks.tsv" 2>> "$LOG"
for f in "$R"/lib_*.json; do   # the variant each library check ran
    printf '%s %s\n' "$(basename "$f" .json)" "$(grep -o '"variant":"[^"]*"' "$f" | head -1)" >> "$LOG"
done

# ---- 2. timings --------------------------------------------------------------------------
# (round 2 of 2026-12-03: every batch below ran out of its time without a row, with --check
# --sample in the first one, CAKE_TIMING_SPIN_US=10 in all: both gone; one single bench first,
# its exit and time logged, says whether lib bench itself works here)
wait "$WARMPID" 2> /dev/null
WARMPID=
s0=$SECONDS
t 25 "$C" lib bench "$NEW" --op attention_fwd_gqa_d64 --shape BH=128,BHK=128,S=1024 --runs 10 --json \
    > "$R/single_bench.json" 2>&1
say "single lib bench: exit $? in $((SECONDS - s0)) s: $(grep -o '"median_ms":[0-9.e-]*' "$R/single_bench.json" | head -1)"
for x in new all old; do
    LIB=$A/$x.cakelib
    : > "$O/attn_$x.jsonl"
    s0=$SECONDS
    case $x in
        new) batch $(( $(left) * 25 / 100 )) "$A/lines.txt" "$O/attn_$x.jsonl" --runs 10 ;;
        all) batch $(( $(left) * 45 / 100 )) "$A/probes.txt" "$O/attn_$x.jsonl" --all --runs 10 ;;
        old) batch $(( $(left) * 25 / 100 )) "$A/lines.txt" "$O/attn_$x.jsonl" --runs 10 ;;
    esac
    say "batch $x: $((SECONDS - s0)) s (at $((SECONDS - T0)) s)"
done
p0=$SECONDS
PEER_S=$(( $(left) - 10 ))
if [ "$PEER_S" -ge 15 ]; then
    timeout -k 3 "$PEER_S" python3 $D/attn_r2.py peers "$O/attn_peers.jsonl" --deadline $((PEER_S - 5)) \
        > "$R/peers.txt" 2>&1
    say "peers: exit $? in $((SECONDS - p0)) s, $(cnt cudnn_ms "$O/attn_peers.jsonl") rows"
else
    say "no time for the peers"
fi

# ---- 3. tables ---------------------------------------------------------------------------
timeout 10 python3 $D/attn_r2.py table "$O/attn_new.jsonl" "$O/attn_peers.jsonl" "$O/attn_table.md" \
    "$O/attn_old.jsonl" >> "$LOG" 2>&1
timeout 10 python3 $D/attn_r2.py probe_table "$O/attn_all.jsonl" "$O/attn_probes.md" >> "$LOG" 2>&1
tar -czf "$O/attn_raw.tar.gz" -C "$O" attn_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks (exit 0 = every shape passed; sanitizer: exit 0 and its summary):"
cut -f1-5 "$O/attn_checks.tsv"
cat "$O/attn_table.md" "$O/attn_probes.md" 2> /dev/null
