#!/bin/sh
# test_resources.sh — `cakec FILE` reports each kernel's registers, spills and
# local memory from the PTX assembler (ptxas, else nvJitLink; no GPU needed), in
# the JSON document ("kernels") and as a line per kernel on stderr, and warns:
#   W0901 at a kernel that spills, W0902 at a role whose `regs` budget is not
#   what the kernel got (a fake ptxas, fake_ptxas.sh, plays an assembly that
#   spilled and ignored .maxnreg).
# Skipped (77) when neither ptxas nor nvJitLink is here.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_res.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
has() { if grep -q -- "$2" "$1"; then ok; else bad "$3: no /$2/ in $(head -c 600 "$1")"; fi; }
hasnt() { if grep -q -- "$2" "$1"; then bad "$3: unexpected /$2/"; else ok; fi; }

"$CAKEC" "$ROOT/examples/fp8_quant.tir" -o "$tmp/q.ptx" --json > "$tmp/q.json" 2> "$tmp/q.err"
if grep -q '"resources_from":"none' "$tmp/q.json"; then
    echo "no ptxas or nvJitLink here: skipped"
    exit 77
fi
has "$tmp/q.json" '"kernels":\[{"name":"fp8_quant","target":"sm_90a","registers":[1-9]' "fp8_quant json"
has "$tmp/q.json" '"spill_store_bytes":0' "fp8_quant no spill"
hasnt "$tmp/q.json" 'W090' "fp8_quant no warning"
"$CAKEC" "$ROOT/examples/fp8_quant.tir" -o "$tmp/q.ptx" 2> "$tmp/q.txt"
has "$tmp/q.txt" 'fp8_quant: [0-9]* registers, 0 bytes spill stores, 0 bytes spill loads, [0-9]* bytes local memory' "text line"
"$CAKEC" "$ROOT/examples/fp8_quant.tir" -o "$tmp/q.ptx" --no-report 2> "$tmp/n.txt"
hasnt "$tmp/n.txt" 'registers' "--no-report"

# a kernel with roles, assembled by a ptxas that spilled and capped it at 128 registers
CAKE_PTXAS="$ROOT/tests/codegen/fake_ptxas.sh" "$CAKEC" "$ROOT/examples/gemm_sm90.tir" -o "$tmp/g.ptx" \
    --json > "$tmp/g.json" 2> "$tmp/g.err"
has "$tmp/g.json" '"code":"W0901"' "W0901"
has "$tmp/g.json" 'spills to local memory on sm_90a: 228 bytes of spill stores' "W0901 message"
has "$tmp/g.json" '"code":"W0902"' "W0902"
has "$tmp/g.json" 'role register budget 232: the kernel got 128 registers at entry, not the 168' "W0902 message"
has "$tmp/g.json" '"line":60,' "W0902 at the consumer role"
has "$tmp/g.json" '"spill_store_bytes":228' "spills in kernels[]"

# ptxas honoured .maxnreg (168 at 384 threads) and the kernel still spills: the spill form,
# which says the role's code was allocated within its own budget (test_setmaxnreg_budget.sh)
FAKE_REGS=168 CAKE_PTXAS="$ROOT/tests/codegen/fake_ptxas.sh" "$CAKEC" "$ROOT/examples/gemm_sm90.tir" \
    -o "$tmp/h.ptx" --json > "$tmp/h.json" 2> "$tmp/h.err"
has "$tmp/h.json" 'role budget of 232 registers, and kernel `gemm_sm90` still spills 228 bytes: ptxas allocated the role' "W0902 spill form"
hasnt "$tmp/h.json" 'not the 168' "no cap form at 168"
# an assembler that ignored setmaxnreg (nvJitLink's C7504): allocated within the entry count
FAKE_REGS=168 FAKE_C7504=1 CAKE_PTXAS="$ROOT/tests/codegen/fake_ptxas.sh" "$CAKEC" "$ROOT/examples/gemm_sm90.tir" \
    -o "$tmp/j.ptx" --json > "$tmp/j.json" 2> "$tmp/j.err"
has "$tmp/j.json" 'the assembler ignored setmaxnreg (a separate unit), so its code was allocated within 168' "W0902 separate form"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
