#!/bin/bash
# run_library.sh — the kernel library on the device in one call (builds nothing heavy):
#   build     `cakec lib build library` there (cubins through the machine's nvJitLink)
#   tune      `lib tune` of the artifact at bench/device/lib_tune_shapes.txt (one task
#             per shape), the table folded into the artifact (`lib build FILE --table`)
#   cases     per case (op, shape): `lib select`, `lib run --check` (the oracle at that
#             shape), `lib bench` (same timer as `run --bench`), one with --overhead
#   peers     lib_peers.py (after the cases, not beside them: one GPU): cuBLAS (torch.matmul), torch._scaled_mm, SDPA, torch eager and
#             torch.compile for norms, softmax and cross-entropy, at the same shapes
# Prints the table last. Every command has a timeout; the whole script honours
# $DEADLINE (seconds, default 95).
#   usage (device machine, repo root): bash bench/device/run_library.sh
# Output under $OUT: lib_table.md, lib_log.txt, lib_raw/ (every JSON document; table.json
# is the tuned table).
set -u
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
R=$O/lib_raw
LOG=$O/lib_log.txt
DEADLINE=${DEADLINE:-95}
mkdir -p "$R"
: > "$LOG"
export LD_LIBRARY_PATH=.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
T0=$SECONDS
LIB=$R/cake.cakelib
say() { echo "$@" | tee -a "$LOG"; }
left() { echo $((DEADLINE - (SECONDS - T0))); }
# t LIMIT CMD...: CMD under a timeout of LIMIT seconds or what is left, if less
t() {
    local lim=$1 l
    shift
    l=$(left)
    [ "$l" -lt "$lim" ] && lim=$l
    [ "$lim" -lt 3 ] && { say "skip (out of time): $*"; return 124; }
    timeout -k 3 "$lim" "$@"
}

CASES=$R/cases.txt
cat > "$CASES" <<'CASES_EOF'
gemm M=128,N=4096,K=4096
gemm M=3072,N=3072,K=3072
gemm M=8192,N=8192,K=8192
gemm M=1000,N=1000,K=1000
gemm_bias_act M=4096,N=4096,K=4096
gemm_fp8 M=4096,N=4096,K=4096
attention_fwd BH=32,S=4096
rmsnorm M=16384,N=1024
rmsnorm M=4096,N=8192
rmsnorm M=1024,N=16384
layernorm M=16384,N=1024
layernorm M=4096,N=8192
softmax M=32768,N=1024
softmax M=4096,N=8192
softmax M=64,N=30000
cross_entropy B=4096,V=32000
cross_entropy B=1,V=262144
CASES_EOF

say "== build (at $((SECONDS - T0)) s)"
b0=$SECONDS
t 40 "$C" lib build library -o "$LIB" -v > "$R/build.txt" 2>&1
say "build: exit $? in $((SECONDS - b0)) s, $(stat -c %s "$LIB" 2>/dev/null || echo 0) bytes"
tail -3 "$R/build.txt" | tee -a "$LOG"

say "== tune (at $((SECONDS - T0)) s)"
t 20 "$C" lib tune "$LIB" --shapes bench/device/lib_tune_shapes.txt -o "$R/table.json" --runs 10 \
    --per-task shape > "$R/tune.txt" 2>&1
trc=$?
say "tune: exit $trc"
tail -3 "$R/tune.txt" | tee -a "$LOG"
if [ $trc = 0 ] && [ -s "$R/table.json" ] && t 10 "$C" lib build "$LIB" --table "$R/table.json" -o "$R/tuned.cakelib" 2>> "$LOG"; then
    say "the cases run on the tuned artifact"
    mv "$R/tuned.cakelib" "$LIB"
fi

say "== cases (at $((SECONDS - T0)) s)"
i=0
while read -r op shape; do
    [ -z "$op" ] && continue
    i=$((i + 1))
    if [ "$(left)" -lt 30 ]; then   # leave the peers their time
        say "cases: out of time before case $i ($op $shape)"
        break
    fi
    t 10 "$C" lib select "$LIB" --op "$op" --shape "$shape" --json > "$R/sel_$i.json" 2>> "$LOG"
    t 12 "$C" lib run "$LIB" --op "$op" --shape "$shape" --check --json > "$R/check_$i.json" 2>> "$LOG"
    echo "check $op $shape: exit $?" >> "$LOG"
    extra=""
    [ "$i" -eq 1 ] || [ "$op" = rmsnorm -a "$shape" = "M=16384,N=1024" ] && extra=--overhead
    t 10 "$C" lib bench "$LIB" --op "$op" --shape "$shape" --runs 20 --json $extra > "$R/bench_$i.json" 2>> "$LOG"
    echo "bench $op $shape: exit $?" >> "$LOG"
done < "$CASES"

say "== peers (at $((SECONDS - T0)) s)"
pl=$(left); pl=$((pl - 3)); [ "$pl" -gt 45 ] && pl=45
LIB_PEERS_BUDGET=$((pl - 15)) t "$pl" python3 bench/device/lib_peers.py "$CASES" > "$R/peers.json" 2> "$R/peers.err"
say "peers: exit $?"

rm -f "$R/cake.cakelib"

python3 - "$R" "$CASES" <<'PY' | tee "$O/lib_table.md"
import json, os, sys
r, cases = sys.argv[1], sys.argv[2]
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
peers = load(os.path.join(r, "peers.json")) or {}
print("| op | shape | variant | why | check | lib ms | peer | peer ms | ratio |")
print("|---|---|---|---|---|---|---|---|---|")
i = 0
over = []
for line in open(cases):
    if not line.strip():
        continue
    i += 1
    op, shape = line.split()
    sel = (load(os.path.join(r, f"sel_{i}.json")) or {}).get("select", {})
    chk = load(os.path.join(r, f"check_{i}.json")) or {}
    bn = load(os.path.join(r, f"bench_{i}.json")) or {}
    ok = [c.get("ok") for c in chk.get("check", [])]
    check = "pass" if ok and all(ok) else ("FAIL" if ok else "-")
    ms = (bn.get("bench") or {}).get("median_ms")
    p = peers.get(f"{op} {shape}", {})
    pm = p.get("ms")
    ratio = f"{pm / ms:.2f}x" if ms and pm else "-"
    print(f"| {op} | {shape} | {sel.get('variant', '-')} | {sel.get('why', '-')} | {check} | "
          f"{ms if ms else '-'} | {p.get('peer', '-')} | {pm if pm else '-'} | {ratio} |")
    if "dispatch" in bn:
        over.append((op, shape, bn["dispatch"]))
for op, shape, d in over:
    print(f"\ndispatch at {op} {shape}: select {d['select_ns']:.0f} ns, launch host time "
          f"{d['lib_launch_us']:.2f} us via the library vs {d['raw_launch_us']:.2f} us raw "
          f"({d['added_us']:.2f} us added)")
PY
say "done in $((SECONDS - T0)) s"
