#!/bin/bash
# run_fresh.sh — on the GPU, within $DEADLINE seconds (default 90), what session 6 changed in
# checking and launching, run as a user would; builds nothing there:
#   1. checks  `cakec run --check` of the kernels a fresh reader wrote from the docs alone
#              (tests/outside/kernels: fp8_quant_rowscale, add_rmsnorm_inplace, gemm_tn_ws,
#              gemm_tn_ws_tma) at the checker's shapes and at ragged larger ones; the bounds
#              proved by an `if N % 8 == 0` guard (tests/diag/bounds/guard_mod_bounds.tir);
#              examples/flash_attn_fwd_pp.tir, whose check the trip-count memo sped up; block
#              reductions inside roles (tests/gpu/tc/role_reduce.tir: tir.md now says they work)
#   2. python  the kernel ABI's 16-byte base: a bf16 view that starts 2 bytes into its
#              allocation is refused by a loaded kernel (ValueError naming the ABI), while
#              cake.ops.rms_norm / layer_norm / softmax on the same view copy it and match
#              torch; a 16-byte aligned view is taken as it is
#   3. benches the four fresh kernels at one large shape each (kernels/BENCH_FRESH.txt), then
#              their torch eager peers (tests/outside/peers.py; informational, not gated)
# Output under $OUT: fresh_log.txt, bench.tsv, raw/; the summary table last on stdout.
#   usage (device machine, repo root):  bash bench/device/run_fresh.sh
set -u
O=${OUT:-/tmp/cake-fresh}
mkdir -p "$O"
LOG=$O/fresh_log.txt
: > "$LOG"
T0=$SECONDS
LIMIT=${DEADLINE:-90}
CAKEC=${CAKEC:-.carry/cakec}
rows=""
left() { echo $((LIMIT - (SECONDS - T0))); }

check() {   # NAME FILE ARGS...
    local name=$1 file=$2
    shift 2
    local t=$(left)
    [ "$t" -lt 8 ] && { rows="$rows\n| $name | not run (time) |"; return; }
    [ "$t" -gt 40 ] && t=40
    echo "== $name: $CAKEC run --check $file $*" >> "$LOG"
    if timeout "$t" "$CAKEC" run --check "$file" "$@" >> "$LOG" 2>&1; then
        rows="$rows\n| $name | pass |"
    else
        rows="$rows\n| $name | FAIL (exit $?) |"
    fi
}

K=tests/outside/kernels
check fp8_quant_rowscale            $K/fp8_quant_rowscale.tir
check fp8_quant_rowscale_ragged     $K/fp8_quant_rowscale.tir --shape M=1000,N=4101
check fp8_quant_rowscale_vec        $K/fp8_quant_rowscale.tir --shape M=4096,N=8200
check add_rmsnorm_inplace           $K/add_rmsnorm_inplace.tir
check add_rmsnorm_inplace_ragged    $K/add_rmsnorm_inplace.tir --shape M=3001,N=6149
check gemm_tn_ws                    $K/gemm_tn_ws.tir
check gemm_tn_ws_ragged             $K/gemm_tn_ws.tir --shape M=1000,N=1032,K=2056
check gemm_tn_ws_tma                $K/gemm_tn_ws_tma.tir
check gemm_tn_ws_tma_ragged         $K/gemm_tn_ws_tma.tir --shape M=1000,N=1032,K=2056
check guard_mod_bounds              tests/diag/bounds/guard_mod_bounds.tir
check guard_mod_bounds_odd          tests/diag/bounds/guard_mod_bounds.tir --shape M=700,N=4099
check flash_attn_fwd_pp             examples/flash_attn_fwd_pp.tir
check role_reduce                   tests/gpu/tc/role_reduce.tir
check role_reduce_many              tests/gpu/tc/role_reduce.tir --shape B=1000

# ---- benches of the fresh kernels (BENCH_FRESH.txt), one at a time, then their torch peers
# (tests/outside/peers.py: eager, CUDA events around each run after an L2 flush)
R=$O/raw
mkdir -p "$R"
while read -r n shape; do
    case "$n" in ''|'#'*) continue ;; esac
    t=$(left)
    [ "$t" -lt 25 ] && break
    timeout 15 "$CAKEC" run "$K/$n.tir" --bench --runs 20 --shape "$shape" --json > "$R/bench_$n.json" 2> "$R/bench_$n.err"
done < $K/BENCH_FRESH.txt
t=$(left)
if [ "$t" -gt 20 ]; then
    timeout $((t - 15)) python3 tests/outside/peers.py "$R" $K/BENCH_FRESH.txt > "$O/bench.tsv" 2>> "$LOG"
    while IFS=$'\t' read -r n shape cake label peer ratio note; do
        rows="$rows\n| bench $n $shape | cake ${cake} ms, $label ${peer} ms | peer/cake ${ratio} ${note} |"
    done < "$O/bench.tsv"
fi

t=$(left)
if [ "$t" -gt 10 ]; then
    [ "$t" -gt 60 ] && t=60
    echo "== python: the ABI's 16-byte base" >> "$LOG"
    PYTHONPATH=.carry/python:${PYTHONPATH:-} timeout "$t" python3 - >> "$LOG" 2>&1 <<'EOF'
import torch, cake, cake.ops
ok = True
def say(name, good, detail=""):
    global ok
    ok = ok and good
    print("ROW | %s | %s | %s" % (name, "pass" if good else "FAIL", detail))
rms = cake.load("examples/rmsnorm.tir")
base = torch.randn(4097 * 1024 + 8, device="cuda", dtype=torch.bfloat16)
x_bad = base[1:1 + 4096 * 1024].view(4096, 1024)        # 2 bytes into the allocation
x_ok = base[8:8 + 4096 * 1024].view(4096, 1024)         # 16 bytes in: aligned
w = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
y = torch.empty(4096, 1024, device="cuda", dtype=torch.bfloat16)
try:
    rms(x_bad, w, y, 1e-6)
    say("kernel refuses a 2-byte-offset view", False, "it launched")
except ValueError as e:
    say("kernel refuses a 2-byte-offset view", "kernel ABI" in str(e), str(e)[:120])
try:
    rms(x_ok, w, y, 1e-6)
    torch.cuda.synchronize()
    ref = torch.nn.functional.rms_norm(x_ok.float(), (1024,), w.float(), 1e-6)
    say("kernel takes a 16-byte-offset view", (y.float() - ref).abs().max().item() < 0.05)
except Exception as e:
    say("kernel takes a 16-byte-offset view", False, repr(e)[:120])
b = torch.randn(1024, device="cuda", dtype=torch.bfloat16)
basef = torch.randn(2049 * 1000 + 4, device="cuda")
xf_bad = basef[1:1 + 2048 * 1000].view(2048, 1000)     # f32, 4 bytes into the allocation
cases = [("ops.rms_norm", lambda: cake.ops.rms_norm(x_bad, w, 1e-6),
          lambda: torch.nn.functional.rms_norm(x_bad.float(), (1024,), w.float(), 1e-6)),
         ("ops.layer_norm", lambda: cake.ops.layer_norm(x_bad, w, b, 1e-5),
          lambda: torch.nn.functional.layer_norm(x_bad.float(), (1024,), w.float(), b.float(), 1e-5)),
         ("ops.softmax (f32, 4 bytes in)", lambda: cake.ops.softmax(xf_bad),
          lambda: torch.softmax(xf_bad, -1))]
for name, ours, theirs in cases:
    try:
        got = ours()
        torch.cuda.synchronize()
        err = (got.float() - theirs()).abs().max().item()
        say(name + " on a 2-byte-offset view", err < 0.05, "max abs err %.3g" % err)
    except Exception as e:
        say(name + " on a 2-byte-offset view", False, repr(e)[:120])
print("PYTHON", "pass" if ok else "FAIL")
EOF
    grep "^ROW" "$LOG" | sed 's/^ROW //' > "$O/py_rows.txt"
    while IFS= read -r r; do rows="$rows\n$r"; done < "$O/py_rows.txt"
    grep -q "^PYTHON pass" "$LOG" || rows="$rows\n| python | FAIL or not finished (see fresh_log.txt) |"
else
    rows="$rows\n| python | not run (time) |"
fi

echo "run_fresh.sh: $((SECONDS - T0)) s"
echo "| check | verdict | detail |"
echo "|---|---|---|"
printf "%b\n" "$rows" | sed '/^$/d'
