#!/bin/bash
# run_sweep.sh — the kernel library's acceptance sweep (issue 13) in one call:
#   shapes   bench/device/sweep.py shapes: 328 seeded log-uniform shapes of gemm,
#            gemm_fp8, rmsnorm, layernorm, softmax, cross_entropy, fp8_row_quantize
#   library  `cakec lib bench ARTIFACT --shapes FILE --check --json` in one process per
#            group (the artifact opened once): per shape the chosen variant, its
#            `lib run --check` verdict and its time; then, with the time left after the
#            peers, `--all` for the non-GEMM ops (every variant whose domain holds,
#            timed: the data of the tuned table, lib_all.jsonl)
#   peers    sweep.py peers: cuBLAS / torch._scaled_mm / torch eager / torch.compile at
#            every shape in one process, the fastest kept
#   table    sweep_table.md, sweep.json, sweep.svg and the per-op summary, printed last
# The artifact is the one carry.sh built here (.carry/python/cake/cake.cakelib, cubins
# through nvJitLink); without it the library is built on the device. Every step has a
# timeout; the script honours $DEADLINE (seconds, default 150). Output under $OUT.
#   usage (device machine, repo root): bash bench/device/run_sweep.sh
#   step limits (seconds): SWEEP_T_ROWS (35), SWEEP_T_GEMM (25), SWEEP_T_PEERS (60),
#   SWEEP_T_ALL (40; 0 skips the every-variant pass) — the whole sweep: raise them
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
DEADLINE=${DEADLINE:-150}
LOG=$O/sweep_log.txt
mkdir -p "$O"
: > "$LOG"
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
T0=$SECONDS
say() { echo "$@" | tee -a "$LOG"; }
cnt() { local n; n=$(grep -c "$1" "$2" 2>/dev/null); echo "${n:-0}"; }   # cnt PATTERN FILE
left() { echo $((DEADLINE - (SECONDS - T0))); }
t() {   # t LIMIT CMD...: CMD under LIMIT seconds, or what is left less a reserve of 6
    local lim=$1 l
    shift
    l=$(($(left) - 6))
    [ "$l" -lt "$lim" ] && lim=$l
    [ "$lim" -lt 3 ] && { say "skip (out of time): $*"; return 124; }
    timeout -k 3 "$lim" "$@"
}

A=$(mktemp -d "${TMPDIR:-/tmp}/sweep-art.XXXXXX")   # artifacts: not under $OUT (2 MB each)
trap 'rm -rf "$A"' EXIT
LIB=${SWEEP_LIB:-.carry/python/cake/cake.cakelib}
[ -f .carry/sweep.cakelib ] && LIB=.carry/sweep.cakelib
if [ ! -f "$LIB" ]; then
    LIB=$A/sweep.cakelib
    b0=$SECONDS
    t 45 "$C" lib build library -o "$LIB" -j "$(nproc 2>/dev/null || echo 4)" > "$O/build.txt" 2>&1
    say "build on the device: exit $? in $((SECONDS - b0)) s"
fi
# a tuned table measured here before (sweep.py tune of an earlier lib_all.jsonl): the
# artifact again with it (no compiling)
TABLE=${SWEEP_TABLE:-bench/device/sweep_table_h200.json}
if [ -f "$TABLE" ] && t 20 "$C" lib build "$LIB" --table "$TABLE" -o "$A/tuned.cakelib" >> "$LOG" 2>&1; then
    say "tuned with $TABLE"
    LIB=$A/tuned.cakelib
fi
say "artifact: $LIB ($(stat -c %s "$LIB" 2>/dev/null || echo 0) bytes)"

python3 bench/device/sweep.py shapes "${SWEEP_SEED:-2027}" > "$O/shapes.txt"
grep -E '^gemm' "$O/shapes.txt" > "$O/shapes_gemm.txt"
grep -vE '^gemm' "$O/shapes.txt" > "$O/shapes_rows.txt"
say "shapes: $(wc -l < "$O/shapes.txt") ($(wc -l < "$O/shapes_gemm.txt") GEMM)"

# batch LIMIT SHAPES OUT ARGS...: `lib bench --shapes` over SHAPES, appending to OUT; a
# batch that ends early (a device fault ends the process, or its timeout) starts again
# after the line it died on, which gets an "error" row; at most 6 starts in LIMIT seconds
batch() {
    local lim=$1 shapes=$2 out=$3 end=$((SECONDS + $1)) rest=$O/rest.txt done_n total starts=0
    shift 3
    cp "$shapes" "$rest"
    total=$(cnt . "$shapes")
    while [ $starts -lt 6 ] && [ -s "$rest" ] && [ $((end - SECONDS)) -ge 3 ]; do
        starts=$((starts + 1))
        local before n
        before=$(cnt '"op"' "$out")
        t $((end - SECONDS)) "$C" lib bench "$LIB" --shapes "$rest" "$@" --json >> "$out" 2>> "$LOG"
        local rc=$?
        n=$(( $(cnt '"op"' "$out") - before ))
        [ $rc = 124 ] || [ $rc = 137 ] && { say "  out of time after $n shapes"; break; }
        [ "$n" -ge "$(cnt . "$rest")" ] && break
        # the line after the last row: it hung or broke the device
        local bad
        bad=$(sed -n "$((n + 1))p" "$rest")
        [ -z "$bad" ] && break
        printf '{"op": "%s", "shape": "%s", "error": "the batch died here (a hang or a device fault)"}\n' \
            "${bad%% *}" "${bad#* }" >> "$out"
        tail -n +$((n + 2)) "$rest" > "$rest.next" && mv "$rest.next" "$rest"
    done
    done_n=$(cnt '"op"' "$out")
    say "  $starts start(s), $done_n rows in $out of $total shapes"
}

: > "$O/lib.jsonl"
l0=$SECONDS
batch "${SWEEP_T_ROWS:-35}" "$O/shapes_rows.txt" "$O/lib.jsonl" --check --sample --runs 10 --timeout 5
say "library, rows ops: exit $? in $((SECONDS - l0)) s, $(cnt '"op"' "$O/lib.jsonl") shapes"
l0=$SECONDS
batch "${SWEEP_T_GEMM:-25}" "$O/shapes_gemm.txt" "$O/lib.jsonl" --check --sample --runs 10 --timeout 5
say "library, GEMM: exit $? in $((SECONDS - l0)) s, $(cnt '"op"' "$O/lib.jsonl") shapes in all"

p0=$SECONDS
SWEEP_STATIC_UNTIL=$((DEADLINE - (SECONDS - T0) - 30)) t "${SWEEP_T_PEERS:-60}" python3 bench/device/sweep.py peers "$O/shapes.txt" "$O/peers.jsonl" \
    >> "$LOG" 2>&1
say "peers: exit $? in $((SECONDS - p0)) s, $(cnt . "$O/peers.jsonl") shapes"

# every variant of the rows ops timed at each shape (no check): the tuned table's data
l0=$SECONDS
: > "$O/lib_all.jsonl"
[ "${SWEEP_T_ALL:-40}" -gt 0 ] && batch "${SWEEP_T_ALL:-40}" "$O/shapes_rows.txt" "$O/lib_all.jsonl" --all --runs 5 --timeout 5
say "library, every variant of the rows ops: exit $? in $((SECONDS - l0)) s, $(cnt '"op"' "$O/lib_all.jsonl") shapes"

say "== sweep summary (at $((SECONDS - T0)) s; ratio = peer ms / library ms)"
timeout 20 python3 bench/device/sweep.py table "$O/lib.jsonl" "$O/peers.jsonl" "$O" | tee -a "$LOG"
