#!/bin/sh
# test_sweep.sh — bench/device/sweep.py without a GPU: the seeded shapes (>= 300, the
# same for the same seed, every op's dims inside the issue's bounds and the memory cap),
# and the table of made-up library and peer rows (ratios, checks, a died row, the SVG
# with its 1.0 and 0.9 lines), more library passes (the best median, the spread of both
# sides per op), `sweep.py variance`, `order`, `subset`, and `sweep.py tune` (a table
# `lib build --table` reads).
command -v python3 > /dev/null || exit 77
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
C=${CAKEC:-$ROOT/build/cakec}
S=$ROOT/bench/device/sweep.py
T=$(mktemp -d "${TMPDIR:-/tmp}/sweep.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 "$S" shapes 7 > "$T/a.txt" || fail "shapes"
python3 "$S" shapes 7 > "$T/b.txt"
cmp -s "$T/a.txt" "$T/b.txt" || fail "the same seed gave other shapes"
python3 "$S" shapes 8 > "$T/c.txt"
cmp -s "$T/c.txt" "$T/a.txt" && fail "another seed gave the same shapes"
python3 - "$T/a.txt" <<'PY' || fail "shape bounds"
import sys
rows = [l.split() for l in open(sys.argv[1])]
assert len(rows) >= 300, len(rows)
ops = {}
for op, s in rows:
    d = {k: int(v) for k, v in (kv.split("=") for kv in s.split(","))}
    ops[op] = ops.get(op, 0) + 1
    if op.startswith("gemm"):
        assert 1 <= d["M"] <= 16384 and 8 <= d["N"] <= 16384 and 64 <= d["K"] <= 16384, s
    elif op == "cross_entropy":
        assert d["V"] <= 262144 and d["B"] * d["V"] <= 1 << 26, s
    else:
        assert d["M"] <= 1_000_000 and d["N"] <= 262144 and d["M"] * d["N"] <= 1 << 26, s
skinny = sum(1 for op, s in rows if op == "gemm" and int(s.split(",")[0][2:]) <= 64)
assert skinny >= 20, skinny
assert len(ops) == 7, ops
PY

cat > "$T/lib.jsonl" <<'EOF2'
{"line":1,"op":"rmsnorm","shape":"M=4,N=1024","variant":"warp_n1024","check":[{"ok":true}],"check_ok":true,"bench":{"median_ms":0.004},"exit":0}
{"line":2,"op":"softmax","shape":"M=1,N=262144","variant":"split_t256","check":[{"ok":false}],"check_ok":false,"bench":{"median_ms":0.01},"exit":1}
{"op": "gemm", "shape": "M=16,N=8192,K=8192", "error": "the batch died here (a hang or a device fault)"}
EOF2
cat > "$T/peers.jsonl" <<'EOF2'
{"op":"rmsnorm","shape":"M=4,N=1024","peer":"torch_compile","peer_ms":0.005}
{"op":"softmax","shape":"M=1,N=262144","peer":"torch_eager","peer_ms":0.008}
{"op":"gemm","shape":"M=16,N=8192,K=8192","peer":"cublas","peer_ms":0.04}
EOF2
python3 "$S" table "$T/lib.jsonl" "$T/peers.jsonl" "$T/out" > "$T/summary.txt" || fail "table"
grep -q "| rmsnorm | M=4,N=1024 | warp_n1024 | ok | 0.0040 | torch_compile | 0.0050 | 1.250 |" "$T/out/sweep_table.md" ||
    fail "the rmsnorm row: $(cat "$T/out/sweep_table.md")"
grep -q "| softmax | M=1,N=262144 | split_t256 | FAIL | 0.0100 | torch_eager | 0.0080 | 0.800 |" "$T/out/sweep_table.md" ||
    fail "the failed check"
grep -q "batch died here" "$T/out/sweep_table.md" || fail "the died row"
grep -q "^rmsnorm .* 1 .*100.0%  1.250 .*1/1" "$T/summary.txt" || fail "summary: $(cat "$T/summary.txt")"
grep -q "^softmax .*0/1" "$T/summary.txt" || fail "summary checks"
[ "$(grep -c 'stroke-dasharray' "$T/out/sweep.svg")" -ge 4 ] || fail "the 1.0 and 0.9 lines"
grep -q "<circle" "$T/out/sweep.svg" || fail "no points"

# more passes of the library: its time is the best median over them; the spread shows
printf '%s\n' '{"op":"rmsnorm","shape":"M=4,N=1024","bench":{"median_ms":0.0035,"min_ms":0.0033}}' > "$T/lib2.jsonl"
cat > "$T/peers2.jsonl" <<'EOF2'
{"op":"rmsnorm","shape":"M=4,N=1024","peer":"torch_compile","peer_ms":0.005,"peer_mode":"graph","peer_min_ms":0.0048,"peer_trials_ms":[0.0052,0.005],"trials_ms":{"torch_compile":[0.0052,0.005],"torch_eager":[0.009,0.0095]},"old_ms":{"torch_compile":[0.011,0.02],"torch_eager":[0.012,0.019]}}
EOF2
python3 "$S" table "$T/lib.jsonl" "$T/peers2.jsonl" "$T/out2" "$T/lib2.jsonl" > "$T/summary2.txt" || fail "table of two passes"
grep -q "| rmsnorm | M=4,N=1024 | warp_n1024 | ok | 0.0035 | torch_compile | 0.0050 | 1.429 | 0.0040 0.0035 (0.0033) | 0.0052 0.0050 (0.0048), graph |" \
    "$T/out2/sweep_table.md" || fail "the two-pass row: $(grep rmsnorm "$T/out2/sweep_table.md")"
grep -q "^rmsnorm .* 1/1 .* 2 .* 14.3% /   4.0%" "$T/summary2.txt" || fail "the spreads: $(cat "$T/summary2.txt")"
python3 "$S" variance "$T/peers2.jsonl" "$T/lib.jsonl" "$T/lib2.jsonl" > "$T/var.txt" || fail "variance"
grep -q "rmsnorm M=4,N=1024 .*0.0110 0.0190 .*72.7% | 0.0052 0.0050 .*4.0% | 0.0040 0.0035 .*14.3%" "$T/var.txt" ||
    fail "variance row: $(cat "$T/var.txt")"
python3 "$S" order "$T/lib.jsonl" > "$T/order.txt" || fail "order"
head -1 "$T/order.txt" | grep -qx "rmsnorm M=4,N=1024" || fail "order: the fastest first"
printf 'gemm M=1,N=8,K=64\n' > "$T/extra.txt"
python3 "$S" subset "$T/a.txt" 10 "$T/extra.txt" > "$T/sub.txt" || fail "subset"
head -1 "$T/sub.txt" | grep -qx "gemm M=1,N=8,K=64" || fail "subset: the extra shapes first"
[ "$(wc -l < "$T/sub.txt")" -ge 30 ] || fail "subset: every 10th shape"

printf '%s\n' '{"line":1,"op":"rmsnorm","shape":"M=4,N=1024","device":"NVIDIA H200","bench_all":{"block256":0.01,"block64_short":0.005},"failed_all":{}}' \
    > "$T/all.jsonl"
python3 "$S" tune "$T/all.jsonl" x > "$T/table.json" || fail "tune"
grep -q '"device": "NVIDIA H200"' "$T/table.json" || fail "the device of the rows"
if [ -x "$C" ]; then
    "$C" lib build "$ROOT/tests/lib/small" -o "$T/small.cakelib" --ptx --no-model > /dev/null 2>&1 || fail "lib build"
    "$C" lib build "$T/small.cakelib" --table "$T/table.json" -o "$T/tuned.cakelib" > /dev/null 2>&1 || fail "retable"
    "$C" lib select "$T/tuned.cakelib" --op rmsnorm --shape M=4,N=1024 | grep -q "block64_short.*" || fail "the tuned choice"
fi
echo "ok"
