#!/bin/bash
# run_fp8x.sh — the fp8 ops of the library, gemm_fp8 and fp8_row_quantize (issue 13), in one
# device call. Round 1 (FP8X_MODE=tune, the default while bench/device/fp8_table_h200.json has
# no fp8_row_quantize entries):
#   checks   the quantizer's variants (the division changed: Markstein's, examples/fp8_quant.tir)
#            at rows with masked lanes, ragged N (odd, even, % 4, % 8) and several rows per
#            block, and the variants new to gemm_fp8 (split-K points; the narrow-N GEMV,
#            kernels/gemm_fp8_gemv_t.tir) at ragged, multi-tile, multi-split shapes
#            (`lib bench --shapes F --check --sample`, one `OP SHAPE VARIANT` line per check);
#            a variant that fails is kept out of the table
#   qtune    every quantizer variant at its tuning shapes (fp8_quant_tune_shapes.txt,
#            `fp8_shapes.py quant`, seed 6173; `--all`)
#   gtune    gemm_fp8: the variants new since the committed table at its shapes (`--all --skip`
#            the old ones: their times there are kept), then every variant at the tuning shapes
#            (fp8_tune_shapes.txt) the table has not measured
#   eval     the acceptance sweep's shapes of both ops (sweep.py shapes 2027: measured, never
#            tuned at), every variant (`--all`); gemm_fp8's worst of the last sweep first
#   peers    gemm_fp8's peers (torch._scaled_mm, cuBLAS bf16 on dequantized operands) at the
#            sweep's shapes (sweep.py peers: the gated method); the quantizer's peer
#            (torch.compile) is the last sweep's (bench/results/2026-12-01-sweep-round2), not
#            timed here (its compiles do not fit the call)
#   winners  the fastest variant at every timed sweep shape, checked there (`--check --sample`)
#   table    $OUT/fp8_table.json: the new entries of both ops plus the committed gemm_fp8 ones
#            (their rows completed by gtune's)
# Round 2 (FP8X_MODE=measure, the default once the table has quantizer entries): the artifact
#   with bench/device/sweep_table_h200.json's other ops and this table, the sweep's shapes of
#   both ops checked and timed through dispatch (`--check --sample`), gemm_fp8's peers beside,
#   then more tuning shapes with the time left.
# The summary (fp8x_table.py: per shape the chosen and the fastest variant against the peer, per
# op) is printed last. Every step has a timeout; honours $DEADLINE (default 70). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_fp8x.sh
set -u
DEADLINE=${DEADLINE:-70}
T_RESERVE=4
. bench/device/lib.sh
LOG=$O/fp8x_log.txt
: > "$LOG"
OWN=bench/device/fp8_table_h200.json
MODE=${FP8X_MODE:-}
if [ -z "$MODE" ]; then
    MODE=tune
    grep -q '"fp8_row_quantize"' "$OWN" && MODE=measure
fi
say "mode $MODE; gpu: $(nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader 2>&1 | head -1)"

A=$(mktemp -d "${TMPDIR:-/tmp}/fp8x.XXXXXX")   # artifacts: not under $OUT
trap 'rm -rf "$A"' EXIT
LIB=.carry/python/cake/cake.cakelib
if [ ! -f "$LIB" ] || ! "$C" lib ops "$LIB" 2>/dev/null | grep -q 'splitk_64x64_s8_st4'; then
    LIB=$A/lib.cakelib
    t 40 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $?"
fi
# the table: the sweep's, with every part's ops in place of its own (as the sweep's table is
# rebuilt: table_merge.py; fp8_row_quantize takes this file's entries and rows_table's)
PARTS=$(ls bench/device/*_table_h200.json | grep -v sweep_table_h200.json)
python3 bench/device/table_merge.py bench/device/sweep_table_h200.json $PARTS -o "$A/table.json" \
    >> "$LOG" 2>&1 || cp bench/device/sweep_table_h200.json "$A/table.json"
if t 15 "$C" lib build "$LIB" --table "$A/table.json" -o "$A/tuned.cakelib" >> "$LOG" 2>&1; then
    LIB=$A/tuned.cakelib
    say "artifact with the sweep's table and the parts ($(echo $PARTS | tr '\n' ' '))"
fi
WORST="M=1723,N=224,K=14688 M=90,N=416,K=4320 M=114,N=6880,K=1808 M=4,N=12688,K=1840
M=730,N=16,K=2256 M=43,N=656,K=1856 M=17,N=7248,K=7008 M=3,N=752,K=816"
python3 bench/device/sweep.py shapes 2027 > "$A/sweep.txt"
{ for s in $WORST; do echo "gemm_fp8 $s"; done
  grep '^gemm_fp8 ' "$A/sweep.txt" | grep -v -x -F -f <(for s in $WORST; do echo "gemm_fp8 $s"; done)
} > "$O/sweep_gemm.txt"
grep '^fp8_row_quantize ' "$A/sweep.txt" > "$O/sweep_quant.txt"
# the last sweep's peers (sweep.py peers' format): the quantizer's, and gemm_fp8's where this
# call's are missing (fp8x_table.py takes this call's first)
python3 -c 'import json, sys
for r in json.load(open(sys.argv[1])):
    if r.get("op") in ("fp8_row_quantize", "gemm_fp8") and r.get("peer_ms"):
        print(json.dumps({"op": r["op"], "shape": r["shape"], "peer": r["peer"] + " (sweep 2026-12-01)",
                          "peer_ms": r["peer_ms"]}))' bench/results/2026-12-01-sweep-round2/sweep.json \
    > "$O/quant_peers_recorded.jsonl" 2>> "$LOG"
: > "$O/peers.jsonl"

if [ "$MODE" = measure ]; then
    cat "$O/sweep_quant.txt" "$O/sweep_gemm.txt" > "$A/shapes.txt"
    while read -r op shape; do   # why dispatch chose each (tuned-fit, tuned, tuned-near, cost-model)
        printf '%s %s ' "$op" "$shape"
        "$C" lib select "$LIB" --op "$op" --shape "$shape" 2>&1 | head -2 | tr -s "\n " "  "; echo
    done < "$A/shapes.txt" > "$O/select.txt"
    : > "$O/eval.jsonl"
    s0=$SECONDS
    batch "${FP8X_T_EVAL:-16}" "$A/shapes.txt" "$O/eval.jsonl" --check --sample --runs 10 --timeout 5
    say "measure: $(cnt '"op"' "$O/eval.jsonl") shapes in $((SECONDS - s0)) s"
    s0=$SECONDS
    t "${FP8X_T_PEERS:-14}" python3 bench/device/sweep.py peers "$O/sweep_gemm.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
    say "peers: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") shapes"
    # with the time left: every variant at the tuning shapes the table has not measured
    python3 -c 'import json, sys
have = {(e["op"], ",".join(f"{k}={v}" for k, v in e["shape"].items()))
        for e in json.load(open(sys.argv[1]))["entries"]}
for p in sys.argv[2:]:
    for l in open(p):
        op, shape = l.split()[:2]
        if (op, shape) not in have:
            print(op, shape)' "$OWN" bench/device/fp8_quant_tune_shapes.txt bench/device/fp8_tune_shapes.txt \
        > "$A/tune_rest.txt" 2>> "$LOG"
    : > "$O/tune_all.jsonl"
    s0=$SECONDS
    [ "$(left)" -gt 10 ] && batch "$(( $(left) - 6 ))" "$A/tune_rest.txt" "$O/tune_all.jsonl" --all --runs 5 --timeout 5
    python3 bench/device/sweep.py tune "$O/tune_all.jsonl" "NVIDIA H200" > "$O/fp8_table_more.json" 2>> "$LOG"
    say "tune: $(cnt '"bench_all"' "$O/tune_all.jsonl") more tuning shapes in $((SECONDS - s0)) s"
    say "== fp8x summary (at $((SECONDS - T0)) s; ratio = peer ms / library ms; the sweep's shapes)"
    timeout 5 python3 bench/device/fp8x_table.py "$O/eval.jsonl" "$O/peers.jsonl" \
        --peers "$O/quant_peers_recorded.jsonl" | tee "$O/fp8x_table.md" | tee -a "$LOG"
    exit 0
fi

# 1. checks: every quantizer variant, and the split-K variants new to gemm_fp8
"$C" lib ops "$LIB" 2>/dev/null | awk '/^[a-z_0-9]+\(/ { op = $1; sub(/\(.*/, "", op); next }
    /^[a-z]/ { op = "" } op != "" && $1 !~ /:/ { print op, $1 }' > "$A/variants.txt"
python3 -c 'import json, sys
old = set()
for e in json.load(open(sys.argv[1]))["entries"]:
    old |= set(e.get("times_ms", {})) | set(e.get("failed", {}))
print(",".join(sorted(old)))' "$OWN" > "$A/old_gemm.txt" 2>> "$LOG"
OLDG=$(cat "$A/old_gemm.txt")
while read -r op v; do
    case $op in
        fp8_row_quantize)   # masked lanes, odd / even / % 8 rows, a ragged last block
            case $v in
                warp_n*) c=${v#warp_n}; c=${c%_w8}
                         shapes="M=37,N=$((c - 5)) M=37,N=$((c / 2 + 2)) M=37,N=$((c - 8))" ;;
                *) shapes="M=3,N=72 M=5,N=2712 M=4,N=508 M=6,N=1030 M=33,N=141" ;;
            esac
            for s in $shapes; do echo "$op $s $v"; done ;;
        gemm_fp8)
            case ",$OLDG," in *",$v,"*) continue ;; esac
            case $v in
                gemv_t_*) shapes="M=77,N=24,K=2064 M=300,N=8,K=4112 M=1000,N=64,K=208" ;;
                *) shapes="M=77,N=328,K=2064 M=3,N=200,K=4112 M=200,N=24,K=6160" ;;
            esac
            for s in $shapes; do echo "$op $s $v"; done ;;
    esac
done < "$A/variants.txt" > "$A/checks.txt"
: > "$O/checks.jsonl"
s0=$SECONDS
batch "${FP8X_T_CHECK:-11}" "$A/checks.txt" "$O/checks.jsonl" --check --sample --runs 1 --timeout 5
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

# 2. the quantizer at its tuning shapes, every variant
: > "$O/qtune.jsonl"
s0=$SECONDS
batch "${FP8X_T_QTUNE:-9}" bench/device/fp8_quant_tune_shapes.txt "$O/qtune.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "qtune: $(cnt '"bench_all"' "$O/qtune.jsonl") shapes in $((SECONDS - s0)) s"

# 3. gemm_fp8: the new variants at the committed table's shapes, then new tuning shapes
python3 -c 'import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    print(e["op"], ",".join(f"{k}={v}" for k, v in e["shape"].items()))' "$OWN" > "$A/gold.txt" 2>> "$LOG"
: > "$O/gtune_new.jsonl"
s0=$SECONDS
NEWSKIP=$(echo "$OLDG,$SKIP" | tr -s ',' | sed 's/^,//; s/,$//')
batch "${FP8X_T_GNEW:-8}" "$A/gold.txt" "$O/gtune_new.jsonl" --all --runs 5 --timeout 5 --skip "$NEWSKIP"
say "gtune (new variants at the table's shapes): $(cnt '"bench_all"' "$O/gtune_new.jsonl") shapes in $((SECONDS - s0)) s"
grep -v -x -F -f "$A/gold.txt" bench/device/fp8_tune_shapes.txt > "$A/gtune.txt"
: > "$O/gtune.jsonl"
s0=$SECONDS
batch "${FP8X_T_GTUNE:-8}" "$A/gtune.txt" "$O/gtune.jsonl" --all --runs 5 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "gtune (every variant, new shapes): $(cnt '"bench_all"' "$O/gtune.jsonl") shapes in $((SECONDS - s0)) s"

# 4. the sweep's shapes, every variant (measured, not tuned at)
: > "$O/eval.jsonl"
s0=$SECONDS
batch "${FP8X_T_QEVAL:-6}" "$O/sweep_quant.txt" "$O/eval.jsonl" --all --runs 10 --timeout 5 ${SKIP:+--skip "$SKIP"}
batch "${FP8X_T_GEVAL:-8}" "$O/sweep_gemm.txt" "$O/eval.jsonl" --all --runs 10 --timeout 5 ${SKIP:+--skip "$SKIP"}
say "eval: $(cnt '"bench_all"' "$O/eval.jsonl") shapes in $((SECONDS - s0)) s"

# 5. gemm_fp8's peers at the sweep's shapes timed above
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        if r.get("op") == "gemm_fp8" and r.get("bench_all"):
            print(r["op"], r["shape"])' "$O/eval.jsonl" > "$A/peer_shapes.txt"
s0=$SECONDS
[ -s "$A/peer_shapes.txt" ] &&
    t "${FP8X_T_PEERS:-9}" python3 bench/device/sweep.py peers "$A/peer_shapes.txt" "$O/peers.jsonl" >> "$LOG" 2>&1
say "peers: exit $? in $((SECONDS - s0)) s, $(cnt . "$O/peers.jsonl") shapes"

# 6. the table part: both ops' new entries, the committed gemm_fp8 entries completed by gtune_new
python3 - "$OWN" "$O/qtune.jsonl" "$O/gtune_new.jsonl" "$O/gtune.jsonl" > "$O/fp8_table.json" 2>> "$LOG" <<'EOF'
import json, sys
old = json.load(open(sys.argv[1]))
def rows(p):
    return [json.loads(l) for l in open(p) if l.startswith("{")]
def text(shape):
    return ",".join(f"{k}={v}" for k, v in shape.items())
def entry(r):
    return {"op": r["op"], "shape": dict((k, int(v)) for k, v in (kv.split("=") for kv in r["shape"].split(","))),
            "times_ms": r["bench_all"], "failed": r.get("failed_all", {})}
more = {(r["op"], r["shape"]): r for r in rows(sys.argv[3]) if r.get("bench_all")}
entries = []
for e in old["entries"]:
    if e["op"] != "gemm_fp8":
        continue                      # the quantizer's old entries: its kernels changed
    r = more.get((e["op"], text(e["shape"])))
    if r:
        e["times_ms"].update(r["bench_all"])
        e.setdefault("failed", {}).update(r.get("failed_all", {}))
    entries.append(e)
entries += [entry(r) for p in (sys.argv[2], sys.argv[4]) for r in rows(p) if r.get("bench_all")]
print(json.dumps({"device": old["device"], "runner": "local", "entries": entries}, indent=1))
EOF
say "table: $(python3 -c 'import json, sys
from collections import Counter
print(dict(Counter(e["op"] for e in json.load(open(sys.argv[1]))["entries"])))' "$O/fp8_table.json" 2>&1) entries"

# 7. the fastest variant at every timed sweep shape, checked there
python3 -c 'import json, sys
for l in open(sys.argv[1]):
    if l.startswith("{"):
        r = json.loads(l)
        t = r.get("bench_all")
        if t:
            print(r["op"], r["shape"], min(t, key=t.get))' "$O/eval.jsonl" > "$A/winners.txt" 2>> "$LOG"
: > "$O/winners.jsonl"
s0=$SECONDS
batch "$(( $(left) - 3 ))" "$A/winners.txt" "$O/winners.jsonl" --check --sample --runs 1 --timeout 5
say "winners checked: $(cnt '"check_ok": *true' "$O/winners.jsonl") of $(cnt . "$A/winners.txt") pass in $((SECONDS - s0)) s"

say "== fp8x summary (at $((SECONDS - T0)) s; ratio = peer ms / library ms; check: the fastest variant's)"
timeout 5 python3 bench/device/fp8x_table.py "$O/eval.jsonl" "$O/peers.jsonl" "$O/winners.jsonl" \
    --peers "$O/quant_peers_recorded.jsonl" | tee "$O/fp8x_table.md" | tee -a "$LOG"
