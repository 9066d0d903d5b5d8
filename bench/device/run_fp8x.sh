#!/bin/bash
# run_fp8x.sh — the gemm_fp8 op of the library at small M, long K and small N (issue 13), in one
# device call. Round 1 (no bench/device/fp8_table_h200.json committed yet, or FP8X_MODE=tune):
#   check    every split-K and GEMV variant of gemm_fp8 (kernels/gemm_fp8_splitk_fused.tir,
#            kernels/gemm_fp8_gemv.tir) through the oracle at ragged shapes, multi-tile and
#            multi-split (`lib bench --shapes F --check --sample`, one `OP SHAPE VARIANT` line
#            per check, one process); a variant that fails is kept out of the table
#   eval     the acceptance sweep's 24 gemm_fp8 shapes (sweep.py shapes 2027: measured, never
#            tuned at), every variant whose domain holds timed (`--all`)
#   tune     the same at the tuning shapes (bench/device/fp8_tune_shapes.txt, fp8_shapes.py,
#            seed 5167) -> $OUT/fp8_table.json (sweep.py tune: the `lib tune -o` format)
#   peers    torch._scaled_mm / cuBLAS bf16 on dequantized operands / torch eager at the sweep's
#            shapes, then the tuning shapes, in this call (sweep.py peers: device events, the
#            L2 flushed before each run, as `lib bench` times)
#   winners  the fastest variant at every timed shape checked there (`--check --sample`)
# Round 2 (bench/device/fp8_table_h200.json committed, or FP8X_MODE=measure): the artifact with
#   the sweep's table whose gemm_fp8 entries are replaced by that file's (fp8_shapes.py
#   merge-op), the sweep's gemm_fp8 shapes checked and timed through dispatch (`--check
#   --sample`), the peers beside them.
# The summary (fp8x_table.py: per shape the chosen and the fastest variant against the peer)
# is printed last. Every step has a timeout; honours $DEADLINE (default 80). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_fp8x.sh
set -u
DEADLINE=${DEADLINE:-80}
T_RESERVE=5
. bench/device/lib.sh
LOG=$O/fp8x_log.txt
: > "$LOG"
MODE=${FP8X_MODE:-tune}
[ -z "${FP8X_MODE:-}" ] && [ -f bench/device/fp8_table_h200.json ] && MODE=measure
say "mode $MODE; gpu: $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>&1 | head -1)"

A=$(mktemp -d "${TMPDIR:-/tmp}/fp8x.XXXXXX")   # artifacts: not under $OUT
trap 'rm -rf "$A"' EXIT
LIB=.carry/python/cake/cake.cakelib
if [ ! -f "$LIB" ] || ! "$C" lib ops "$LIB" 2>/dev/null | grep -q 'gemm_fp8_gemv'; then
    LIB=$A/lib.cakelib
    t 45 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $?"
fi
TABLE=bench/device/sweep_table_h200.json
if [ "$MODE" = measure ]; then
    python3 bench/device/fp8_shapes.py merge-op gemm_fp8 bench/device/fp8_table_h200.json "$TABLE" \
        > "$A/table.json" 2>> "$LOG" && TABLE=$A/table.json || say "FAIL: merge-op (see the log): the sweep's table as it is"
fi
if t 20 "$C" lib build "$LIB" --table "$TABLE" -o "$A/tuned.cakelib" >> "$LOG" 2>&1; then
    LIB=$A/tuned.cakelib
    say "artifact with $TABLE"
fi


python3 bench/device/sweep.py shapes 2027 | grep '^gemm_fp8 ' > "$O/sweep_shapes.txt"
: > "$O/eval.jsonl"
: > "$O/peers.jsonl"

if [ "$MODE" = measure ]; then
    while read -r op shape; do   # why dispatch chose each (tuned, tuned-near, cost-model)
        printf '%s %s ' "$op" "$shape"
        "$C" lib select "$LIB" --op "$op" --shape "$shape" 2>&1 | head -2 | tr -s "\n " "  "; echo
    done < "$O/sweep_shapes.txt" > "$O/select.txt"
    s0=$SECONDS
    batch "${FP8X_T_EVAL:-11}" "$O/sweep_shapes.txt" "$O/eval.jsonl" --check --sample --runs 10 --timeout 5
    say "measure: $(cnt '"op"' "$O/eval.jsonl") shapes in $((SECONDS - s0)) s"
    s0=$SECONDS
    t "${FP8X_T_PEERS:-12}" python3 bench/device/sweep.py peers "$O/sweep_shapes.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
    say "peers: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") shapes"
    # with the time left: every variant at the tuning shapes the committed table has not measured
    # (more entries for the table; not what was measured above)
    python3 -c 'import json, sys
have = {(e["op"], ",".join(f"{k}={v}" for k, v in e["shape"].items()))
        for e in json.load(open(sys.argv[1]))["entries"]}
for l in open(sys.argv[2]):
    op, shape = l.split()[:2]
    if (op, shape) not in have:
        print(op, shape)' bench/device/fp8_table_h200.json bench/device/fp8_tune_shapes.txt > "$A/tune_rest.txt" 2>> "$LOG"
    : > "$O/tune_all.jsonl"
    s0=$SECONDS
    [ "$(left)" -gt 12 ] && batch "$(( $(left) - 8 ))" "$A/tune_rest.txt" "$O/tune_all.jsonl" --all --runs 5 --timeout 5
    python3 bench/device/sweep.py tune "$O/tune_all.jsonl" "NVIDIA H200" > "$O/fp8_table_more.json" 2>> "$LOG"
    say "tune: $(cnt '"bench_all"' "$O/tune_all.jsonl") more tuning shapes in $((SECONDS - s0)) s"
    say "== fp8x summary (at $((SECONDS - T0)) s; ratio = peer ms / library ms; the sweep's shapes)"
    timeout 5 python3 bench/device/fp8x_table.py "$O/eval.jsonl" "$O/peers.jsonl" | tee "$O/fp8x_table.md" | tee -a "$LOG"
    exit 0
fi

# 1. every split-K and GEMV variant at ragged shapes (the 128-row split-K at M past one tile)
V=$("$C" lib ops "$LIB" 2>/dev/null | awk '/^gemm_fp8\(/ { on = 1; next } /^[a-z]/ { on = 0 }
    on && $1 ~ /^(splitk|gemv)_/ && $1 !~ /:/ { print $1 }')
for v in $V; do
    case $v in
        gemv_*_narrow) printf 'gemm_fp8 %s %s\n' "M=200,N=24,K=2064" "$v" "M=13,N=8,K=128" "$v" "M=1,N=56,K=208" "$v" ;;
        gemv_*) case $v in gemv_m1*) m=1 ;; gemv_m2*) m=2 ;; gemv_m4|gemv_m4_l*) m=3 ;; gemv_m4*) m=7 ;; *) m=13 ;; esac
                printf 'gemm_fp8 %s %s\n' "M=1,N=72,K=208" "$v" "M=$m,N=1032,K=4112" "$v" "M=$m,N=8,K=128" "$v" ;;
        splitk_64*) printf 'gemm_fp8 %s %s\n' "M=77,N=328,K=2064" "$v" "M=3,N=200,K=4112" "$v" ;;
        splitk_128*) printf 'gemm_fp8 %s %s\n' "M=300,N=328,K=2064" "$v" "M=130,N=24,K=4112" "$v" ;;
    esac
done | awk '!seen[$0]++' > "$A/checks.txt"
: > "$O/checks.jsonl"
s0=$SECONDS
batch "${FP8X_T_CHECK:-14}" "$A/checks.txt" "$O/checks.jsonl" --check --sample --runs 3 --timeout 5
# DROP: the variants that failed a check; NOTRUN: those whose checks were not reached
eval "$(python3 -c 'import json, sys
want = {l.split()[2] for l in open(sys.argv[2]) if l.strip()}
bad, seen, ok = set(), set(), 0
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        v = r.get("variant")
        seen.add(v)
        ok += bool(r.get("check_ok"))
        if v and not r.get("check_ok"):
            bad.add(v)
print("DROP=" + ",".join(sorted(bad)))
print("NOTRUN=" + ",".join(sorted(want - seen)))
print("PASSED=%d" % ok)' "$O/checks.jsonl" "$A/checks.txt" 2>> "$LOG")"
say "checks: ${PASSED:-0} of $(cnt . "$A/checks.txt") pass in $((SECONDS - s0)) s; failed: ${DROP:-none}"
[ -n "${NOTRUN:-}" ] && say "checks not reached (kept out of the table too): $NOTRUN"
SKIP=$(echo "${DROP:-},${NOTRUN:-}" | tr -s ',' | sed 's/^,//; s/,$//')

# 2. every variant at the sweep's shapes (measured, not tuned at), then 3. at the tuning shapes
s0=$SECONDS
batch "${FP8X_T_EVAL:-12}" "$O/sweep_shapes.txt" "$O/eval.jsonl" --all --runs 10 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "eval: $(cnt '"bench_all"' "$O/eval.jsonl") shapes in $((SECONDS - s0)) s"
: > "$O/tune_all.jsonl"
s0=$SECONDS
batch "${FP8X_T_TUNE:-24}" bench/device/fp8_tune_shapes.txt "$O/tune_all.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "tune: $(cnt '"bench_all"' "$O/tune_all.jsonl") shapes in $((SECONDS - s0)) s"
python3 bench/device/sweep.py tune "$O/tune_all.jsonl" "NVIDIA H200" > "$O/fp8_table.json" 2>> "$LOG"
say "table: $(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["entries"]))' "$O/fp8_table.json" 2>&1) entries"

# 4. the peers: the sweep's shapes first, then the tuning shapes
s0=$SECONDS
cat "$O/sweep_shapes.txt" bench/device/fp8_tune_shapes.txt > "$A/peer_shapes.txt"
t "${FP8X_T_PEERS:-18}" python3 bench/device/sweep.py peers "$A/peer_shapes.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "peers: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") shapes"

# 5. the fastest variant at every timed shape, checked there
python3 -c 'import json, sys
for p in sys.argv[1:]:
    for l in open(p):
        if l.startswith("{"):
            r = json.loads(l)
            t = r.get("bench_all")
            if t:
                print(r["op"], r["shape"], min(t, key=t.get))' "$O/eval.jsonl" "$O/tune_all.jsonl" > "$A/winners.txt" 2>> "$LOG"
: > "$O/winners.jsonl"
s0=$SECONDS
batch "$(( $(left) - 8 ))" "$A/winners.txt" "$O/winners.jsonl" --check --sample --runs 1 --timeout 5
say "winners checked: $(cnt '"check_ok": *true' "$O/winners.jsonl") of $(cnt . "$A/winners.txt") pass in $((SECONDS - s0)) s"

FP8X_ALL_ROWS=1 timeout 10 python3 bench/device/fp8x_table.py "$O/eval.jsonl" "$O/peers.jsonl" \
    "$O/tune_all.jsonl" "$O/winners.jsonl" > "$O/fp8x_table.md" 2>> "$LOG"
say "== fp8x summary (at $((SECONDS - T0)) s; ratio = peer ms / library ms; check: the fastest variant's)"
timeout 10 python3 bench/device/fp8x_table.py "$O/eval.jsonl" "$O/peers.jsonl" "$O/tune_all.jsonl" \
    "$O/winners.jsonl" | tee -a "$LOG"
