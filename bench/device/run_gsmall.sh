#!/bin/bash
# run_gsmall.sh — the library's tuned dispatch table and the GEMM at small and skinny
# shapes (issue 13), in one device call:
#   tune     every variant whose domain holds, timed at each shape of
#            bench/device/gsmall_tune_shapes.txt (tune_shapes.py, seed 4099: ~200 GEMM
#            shapes and some of every other op) by `cakec lib bench ART --shapes FILE --all`
#            in one process (the artifact opened and the device set up once; `lib tune`
#            starts a process per candidate or per shape, which for ~300 shapes does not
#            fit the call)
#   table    sweep.py tune of those rows, merged with the committed table's entries at
#            other shapes (tune_shapes.py merge) -> $OUT/tuned_table.json, the format of
#            `lib tune -o`; `lib build ART --table` folds it into the artifact
#   measure  the tuned artifact at the acceptance sweep's GEMM shapes (sweep.py shapes 2027,
#            shapes the table was not tuned at; the worst of the last sweep first):
#            `lib bench --shapes --check --sample` (the chosen variant checked and timed at
#            every shape), cuBLAS (torch.matmul) timed at the same shapes in this call
#            (sweep.py peers: device events, the L2 flushed before each run, as
#            `lib bench` times), the per-shape table and summary printed last
# Every step has a timeout; honours $DEADLINE (default 60). Output under $OUT (< 2 MB).
# Round 1 (110 s): GS_CHECK='splitk_...|gemv_...' GS_TUNE_FROM=1 GS_T_TUNE=40 GS_EVAL=1.
# Round 2 (the defaults, 60 s): the GEMV variants (kernel changed) checked, the tuning
# set from line GS_TUNE_FROM (124: where round 1's time ran out) tuned and merged with
# the committed table (round 1's), no measuring pass (the sweep measures the table).
#   usage (device machine, repo root): bash bench/device/run_gsmall.sh
set -u
DEADLINE=${DEADLINE:-60}
T_RESERVE=5
. bench/device/lib.sh   # C, O, PATH and the rest; say, cnt, left, t
LOG=$O/gsmall_log.txt
: > "$LOG"

A=$(mktemp -d "${TMPDIR:-/tmp}/gsmall-art.XXXXXX")   # artifacts: not under $OUT
trap 'rm -rf "$A"' EXIT
LIB=.carry/python/cake/cake.cakelib
if [ ! -f "$LIB" ]; then
    LIB=$A/lib.cakelib
    t 45 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $?"
fi
say "artifact: $LIB ($(stat -c %s "$LIB" 2>/dev/null || echo 0) bytes)"


# 0. every split-K and GEMV variant (this branch's kernels) checked at ragged multi-tile, multi-split
# shapes first: the tuning pass times without checking, and a variant that fails here is
# kept out of the table (DROP)
printf '%s\n' "gemm M=200,N=328,K=1032" "gemm M=77,N=1032,K=4096" "gemm M=3,N=200,K=2056" > "$A/check_shapes.txt"
printf '%s\n' "gemm M=1,N=1032,K=4104" "gemm M=1,N=72,K=200" "gemm M=1,N=8,K=64" > "$A/check_gemv.txt"
DROP=""
s0=$SECONDS
for v in $("$C" lib ops "$LIB" 2>/dev/null | grep -oE "${GS_CHECK:-gemv_m[0-9]+(_[lc][0-9]+)?}" | sort -u); do
    cs=$A/check_shapes.txt
    case $v in gemv_*) cs=$A/check_gemv.txt ;; esac
    t 8 "$C" lib bench "$LIB" --shapes "$cs" --variant "$v" --check --sample --runs 3 \
        --timeout 5 --json > "$A/check_$v.jsonl" 2>> "$LOG"
    rc=$?
    ok=$(cnt '"check_ok":true' "$A/check_$v.jsonl")
    say "check $v: $ok of 3 shapes pass (exit $rc)"
    [ "$ok" -lt 3 ] && DROP="$DROP,gemm/$v"
    cat "$A/check_$v.jsonl" >> "$O/checks.jsonl"
done
say "checks in $((SECONDS - s0)) s; kept out of the table: ${DROP:-none}"

# 1. tune: every variant at every tuning shape
TS=$A/tune_shapes.txt
# round 2 first the library's own tuning shapes (lib_tune_shapes.txt: the classes run_library.sh
# times, M=128,N=4096,K=4096 among them), then the rest of the seeded set
{ [ "${GS_TUNE_FROM:-124}" -gt 1 ] && grep -v '^#' bench/device/lib_tune_shapes.txt
  tail -n +"${GS_TUNE_FROM:-124}" bench/device/gsmall_tune_shapes.txt; } > "$TS"
: > "$O/tune_all.jsonl"
s0=$SECONDS
SKIP=$(echo "$DROP" | sed 's|,gemm/|,|g; s|^,||')
batch "${GS_T_TUNE:-30}" "$TS" "$O/tune_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "tune: $(cnt '"bench_all"' "$O/tune_all.jsonl") shapes timed in $((SECONDS - s0)) s"

# 2. the table: the new measurements, then the committed table's at other shapes
python3 bench/device/sweep.py tune "$O/tune_all.jsonl" "NVIDIA H200" > "$A/new.json" 2>> "$LOG"
python3 bench/device/tune_shapes.py merge "$A/new.json" bench/device/sweep_table_h200.json "$DROP" \
    > "$O/tuned_table.json" 2>> "$LOG" || cp "$A/new.json" "$O/tuned_table.json"
say "table: $(python3 -c "import json,collections,sys; t=json.load(open(sys.argv[1])); \
print(len(t['entries']), 'entries', dict(collections.Counter(e['op'] for e in t['entries'])))" \
    "$O/tuned_table.json" 2>&1)"
TUNED=$A/tuned.cakelib
if t 20 "$C" lib build "$LIB" --table "$O/tuned_table.json" -o "$TUNED" >> "$LOG" 2>&1; then
    say "artifact with the table: $TUNED"
else
    say "FAIL: lib build --table (measuring the untuned artifact)"
    TUNED=$LIB
fi

if [ "${GS_EVAL:-0}" != 1 ]; then
    say "== gsmall summary (at $((SECONDS - T0)) s): the fastest variant per tuned shape (checks above)"
    python3 -c 'import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
best = collections.Counter()
for r in rows:
    t = r.get("bench_all")
    if t:
        best[(r["op"], min(t, key=t.get))] += 1
for (op, v), n in sorted(best.items()):
    print(f"{op:18s} {v:24s} {n}")' "$O/tune_all.jsonl" 2>&1 | tee -a "$LOG"
    exit 0
fi

# 3. measure at the sweep's GEMM shapes: the chosen variant checked and timed, cuBLAS beside
{
    printf '%s\n' "gemm M=287,N=848,K=256" "gemm M=19,N=8,K=184" "gemm M=2018,N=80,K=688" \
        "gemm M=128,N=4096,K=4096" "gemm M=4079,N=144,K=7672" "gemm M=465,N=7432,K=88" \
        "gemm M=393,N=1184,K=14008" "gemm M=156,N=352,K=544" "gemm M=4227,N=8,K=896"
    python3 bench/device/sweep.py shapes 2027 | grep '^gemm '
} | awk '!seen[$0]++' > "$O/eval_shapes.txt"
: > "$O/eval.jsonl"
LIB=$TUNED
s0=$SECONDS
batch "${GS_T_EVAL:-20}" "$O/eval_shapes.txt" "$O/eval.jsonl" --check --sample --runs 10 --timeout 5
say "measure: $(cnt '"op"' "$O/eval.jsonl") shapes in $((SECONDS - s0)) s"
s0=$SECONDS
# cuBLAS at the measured sweep shapes, then at the tuning set's GEMM shapes (offline: the
# dispatch policies' ratios at shapes the table holds, leave-one-out)
{ head -n "$(cnt '"op"' "$O/eval.jsonl")" "$O/eval_shapes.txt"; grep '^gemm ' "$TS"; } > "$A/peer_shapes.txt"
t "${GS_T_PEERS:-20}" python3 bench/device/sweep.py peers "$A/peer_shapes.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "cuBLAS: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") shapes"

# the split-K kernel's SASS: its atomics, fences and branches in order (why its floor is ~7 us)
if t 10 "$C" library/kernels/gemm_splitk_fused.tir --set BN=128,SPLIT=4 --emit ptx -o "$A/sk.ptx" > /dev/null 2>&1 &&
    ptxas -arch=sm_90a "$A/sk.ptx" -o "$A/sk.cubin" 2>> "$LOG" && command -v cuobjdump > /dev/null; then
    cuobjdump -sass "$A/sk.cubin" > "$A/sk.sass" 2>> "$LOG"
    grep -nE 'RED|ATOM|MEMBAR|FENCE|CCTL|ERRBAR|BAR\.|EXIT|BRA' "$A/sk.sass" | head -400 > "$O/splitk_sass.txt"
    say "splitk SASS: $(wc -l < "$A/sk.sass") lines; $(grep -c 'RED' "$A/sk.sass") RED, $(grep -c 'ATOM' "$A/sk.sass") ATOM, $(grep -cE 'MEMBAR|FENCE' "$A/sk.sass") fences"
fi

mkdir -p "$O/eval"
say "== gsmall summary (at $((SECONDS - T0)) s; ratio = cuBLAS ms / library ms, tuned table)"
python3 -c 'import json, sys
rows = lambda p: [json.loads(l) for l in open(p) if l.startswith("{")]
keys = {(r.get("op"), r.get("shape")) for r in rows(sys.argv[1])}
for r in rows(sys.argv[2]):
    if (r["op"], r["shape"]) in keys:
        line = json.dumps(r) + "\n"
        print(line, end="")' "$O/eval.jsonl" "$O/peers.jsonl" > "$A/peers_eval.jsonl" 2>> "$LOG"
timeout 15 python3 bench/device/sweep.py table "$O/eval.jsonl" "$A/peers_eval.jsonl" "$O/eval" > "$A/sum.txt" 2>&1
grep '^| gemm' "$O/eval/sweep_table.md" 2>/dev/null | sort -t'|' -k9 -n | head -12 | tee -a "$LOG"
tee -a "$LOG" < "$A/sum.txt"
