#!/bin/bash
# run_afwd4.sh — session 10's attention forward probe at short sequences (issue 15): the
# SKIP forms of flash_attn_fwd_pp3.tir and flash_attn_fwd_pp.tir (causal: a consumer
# warpgroup whose 64 rows see none of a tile's last KV blocks skips their softmax and P V,
# SKIP = 2 also their Q K^T; an empty turn keeps the ring in step) and a few existing
# parameter forms (PAIR, QST = 1, ppx; D = 128 non-causal BN = 160 with QST = 1, FA3's wider
# KV block where shared memory allows) beside the library's variants, in one call within
# $DEADLINE seconds (default 130); builds one small artifact (afwd4.py manifest: the four
# GQA forward ops, every variant of afwd4.py's VARIANTS, no `when`):
#   0. build   `lib build` of the afwd4 manifest (seconds)
#   1. checks  `cakec run --check` of each new form at a ragged shape with more tiles than
#              SMs (sm.count=7 and 132, GQA); compute-sanitizer
#              racecheck, synccheck and memcheck of each new form at a tiny shape (2 blocks)
#   2. timings `lib bench --all` at afwd4.py's LINES (the losers of 2026-12-04-s10 call 1 and
#              2026-12-03-s9 attnx, and neighbours), then cuDNN and flash SDPA (afwd4.py
#              peers: attn_r2.py's method)
#   3. tables  afwd4_table.md: per line every variant's ms, cuDNN ms, cuDNN/ours, the best
#   usage (device machine, repo root): bash bench/device/run_afwd4.sh
#   expects .carry/ from bench/device/carry.sh; output under $OUT: afwd4_table.md,
#   afwd4_checks.tsv, afwd4_log.txt, afwd4_all.jsonl, afwd4_peers.jsonl, afwd4_raw.tar.gz
set -u
DEADLINE=${DEADLINE:-130}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/afwd4_log.txt
: > "$LOG"
D=bench/device
R=$O/afwd4_raw
mkdir -p "$R"
A=$(mktemp -d "${TMPDIR:-/tmp}/afwd4.XXXXXX")
WARMPID=
trap '[ -n "$WARMPID" ] && kill "$WARMPID" 2> /dev/null; rm -rf "$A"' EXIT
export PYTHONUNBUFFERED=1
say "gpu: $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader 2>&1)"
timeout 60 python3 -c "import torch, torch.nn.functional" > /dev/null 2>&1 &
WARMPID=$!

# ---- 0. the artifact -------------------------------------------------------------------
NJ=$(nproc 2> /dev/null || echo 4)
python3 $D/afwd4.py manifest "$A/m" >> "$LOG" 2>&1
t 45 "$C" lib build "$A/m" -o "$A/afwd4.cakelib" -j "$NJ" > "$R/build.txt" 2>&1
say "lib build: exit $? at $((SECONDS - T0)) s"
LIB=$A/afwd4.cakelib
python3 $D/afwd4.py lines "$A/lines.txt"

# ---- 1. checks and sanitizer: TAG|COMMAND ----------------------------------------------
P3=examples/flash_attn_fwd_pp3.tir
PP=examples/flash_attn_fwd_pp.tir
JOBS=$R/jobs.txt
: > "$JOBS"
j() { echo "$1|$2" >> "$JOBS"; }
CS="compute-sanitizer --error-exitcode 9"
NEW="p3s1:$P3:CAUSAL=1,SKIP=1 p3s2:$P3:CAUSAL=1,SKIP=2 p3b64:$P3:CAUSAL=1,BN=64,SKIP=1
     pps2:$PP:D=64,CAUSAL=1,BN=64,SKIP=2 pp128s2:$PP:D=128,CAUSAL=1,BN=64,SKIP=2
     pp128s2p:$PP:D=128,CAUSAL=1,BN=64,SKIP=2,PAIR=1 ppx160:examples/flash_attn_fwd_ppx.tir:D=128,CAUSAL=0,BN=160,QST=1"
for v in $NEW; do
    tag=${v%%:*}; rest=${v#*:}; f=${rest%%:*}; set=${rest#*:}
    j ex_${tag}_ragged "$C run $f --set $set --shape BH=20,BHK=5,S=1000,sm.count=7 --check"
    j ex_${tag}_many "$C run $f --set $set --shape BH=64,BHK=64,S=385,sm.count=132 --check --sample"
done
for v in $NEW; do   # GQA 3:1, ragged, two waves of 132 SMs
    tag=${v%%:*}; rest=${v#*:}; f=${rest%%:*}; set=${rest#*:}
    j ex_${tag}_gqa "$C run $f --set $set --shape BH=24,BHK=8,S=2049,sm.count=132 --check --sample"
done
for tl in racecheck synccheck memcheck; do
    for v in $NEW; do
        tag=${v%%:*}; rest=${v#*:}; f=${rest%%:*}; set=${rest#*:}
        j cs_${tl}_$tag "$CS --tool $tl $C run $f --set $set --shape BH=4,BHK=2,S=400,sm.count=2 --check --timeout 25"
    done
done
say "== checks: $(wc -l < "$JOBS") runs in the background (at $((SECONDS - T0)) s)"
runjob() {
    local tag=${1%%|*} cmd=${1#*|} t0=$SECONDS
    timeout -k 2 45 bash -c "$cmd --json" > "$R/$tag.json" 2> "$R/$tag.err" < /dev/null
    echo "$tag $? $((SECONDS - t0))" >> "$R/rc.txt"
}
export -f runjob
export C R
: > "$R/rc.txt"
t $(( $(left) * 40 / 100 )) xargs -P 8 -d '\n' -n 1 bash -c 'runjob "$1"' _ < "$JOBS"
say "== checks done at $((SECONDS - T0)) s: $(awk '$2 == 0' "$R/rc.txt" | wc -l) exit 0 of $(wc -l < "$JOBS")"
python3 $D/checks_tsv.py "$R" "$JOBS" > "$O/afwd4_checks.tsv" 2>> "$LOG"

# ---- 2. timings ------------------------------------------------------------------------
wait "$WARMPID" 2> /dev/null
WARMPID=
: > "$O/afwd4_all.jsonl"
s0=$SECONDS
batch $(( $(left) * 62 / 100 )) "$A/lines.txt" "$O/afwd4_all.jsonl" --all --runs 10
say "batch --all: $((SECONDS - s0)) s (at $((SECONDS - T0)) s)"
p0=$SECONDS
PEER_S=$(( $(left) - 8 ))
if [ "$PEER_S" -ge 12 ]; then
    timeout -k 3 "$PEER_S" python3 $D/afwd4.py peers "$O/afwd4_peers.jsonl" --deadline $((PEER_S - 5)) \
        > "$R/peers.txt" 2>&1
    say "peers: exit $? in $((SECONDS - p0)) s, $(cnt cudnn_ms "$O/afwd4_peers.jsonl") rows"
else
    say "no time for the peers"
fi

# ---- 3. tables -------------------------------------------------------------------------
timeout 10 python3 $D/afwd4.py table "$O/afwd4_all.jsonl" "$O/afwd4_peers.jsonl" "$O/afwd4_table.md" \
    > /dev/null 2>> "$LOG"
tar -czf "$O/afwd4_raw.tar.gz" -C "$O" afwd4_raw && rm -rf "$R"
say "== done in $((SECONDS - T0)) s"
echo "checks (exit 0 = every shape passed; sanitizer: exit 0 and its summary):"
cut -f1-5 "$O/afwd4_checks.tsv"
cat "$O/afwd4_table.md" 2> /dev/null
