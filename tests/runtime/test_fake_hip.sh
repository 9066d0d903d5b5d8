#!/bin/sh
# test_fake_hip.sh — the HIP path without an AMD GPU: `cakec run` on gfx942 through
# runtime/hip.c, with tests/runtime/fake_hip.c standing in for libamdhip64
# ($CAKE_LIBHIP). The fake records every call; this checks the launch plan and the
# argument packing against the code object's own metadata (llvm-readelf --notes):
#   - hipModuleLoadData gets the AMDGPU ELF (e_machine 224) cakec writes for gfx942,
#     of the same size;
#   - hipModuleLaunchKernel gets the kernel, grid [cdiv(N, 128), cdiv(M, 128)] (gemm)
#     or [cdiv(S, 128), BH] (attention), 256 threads, no dynamic LDS;
#   - kernelParams holds one value per explicit argument of the metadata's .args, of
#     its .size: a tensor is the address of an allocation of exactly its bytes, a dim
#     its value, a scalar its bits;
#   - `run --check` reports the untouched output (the fake runs nothing): E0958.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
FAKE=${CAKE_FAKE_HIP:-}
LLVM_BIN=$(llvm-config-19 --bindir 2>/dev/null || echo /usr/lib/llvm-19/bin)
READELF=$LLVM_BIN/llvm-readelf
[ -n "$FAKE" ] && [ -f "$FAKE" ] || { echo "skip: the fake HIP library is not built (CAKE_FAKE_HIP)"; exit 77; }
[ -x "$READELF" ] || { echo "skip: no llvm-readelf of LLVM 19"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cakehip.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# the explicit arguments of kernel $2 in code object $1: "name size kind" per line
args_of() {
    "$READELF" --notes "$1" | awk -v k="$2" '
        /^ *\.args:/ { inargs = 1; next }
        inargs && /^ *- / { if (n) print name, size, kind; n++; name = ""; size = ""; kind = "" }
        inargs && /\.name:/ { name = $NF }
        inargs && /\.size:/ { size = $NF }
        inargs && /\.value_kind:/ { kind = $NF }
        inargs && /^    \.[a-z_]+:/ && !/^ *- / && !/^      / { if (n) print name, size, kind; inargs = 0; n = 0 }
        END { if (inargs && n) print name, size, kind }' | grep -v ' hidden_'
}

# check FILE KERNEL SHAPE GX GY VALUES...: VALUES names each argument's expected value
# in order: bN (a buffer of N bytes), iN (the integer N), s (a scalar the run picks)
check() {
    f=$1 kern=$2 shape=$3 gx=$4 gy=$5
    shift 5
    "$CAKEC" "$ROOT/$f" --target gfx942 -o "$TMP/k.hsaco" 2>"$TMP/err" || { bad "$f: cakec: $(head -c 300 "$TMP/err")"; return; }
    args_of "$TMP/k.hsaco" "$kern" > "$TMP/args"
    sizes=$(awk '{ printf "%s%s", (NR > 1 ? "," : ""), $2 }' "$TMP/args")
    nargs=$(wc -l < "$TMP/args")
    [ "$nargs" -eq $# ] && ok || bad "$f: $nargs explicit arguments in the metadata, want $#"
    rm -f "$TMP/log"
    CAKE_LIBHIP=$FAKE FAKE_HIP_LOG=$TMP/log FAKE_HIP_ARG_SIZES=$sizes \
        "$CAKEC" run "$ROOT/$f" --shape "$shape" --bench --runs 1 >"$TMP/out" 2>"$TMP/err" ||
        { bad "$f $shape: run --bench exit $?: $(head -c 300 "$TMP/err")"; return; }
    bytes=$(wc -c < "$TMP/k.hsaco")
    grep -q "^module $bytes 224\$" "$TMP/log" && ok || bad "$f: no module of $bytes bytes, EM_AMDGPU: $(grep module "$TMP/log")"
    grep -q "^function $kern\$" "$TMP/log" && ok || bad "$f: hipModuleGetFunction($kern) not called"
    want="launch $kern $gx $gy 1 256 1 1 0 $nargs"
    first=$(grep -m1 '^launch' "$TMP/log")
    [ "$first" = "$want" ] && ok || bad "$f $shape: got '$first', want '$want'"
    i=0
    for v in "$@"; do
        line=$(grep '^param ' "$TMP/log" | sed -n "$((i + 1))p")
        case $v in
        b*) id=$(echo "$line" | awk '$3 == "buf" && $5 == 0 { print $4 }')
            n=$(awk -v id="$id" '$1 == "malloc" && $2 == id { print $3 }' "$TMP/log")
            [ -n "$id" ] && [ "$n" = "${v#b}" ] && ok || bad "$f: param $i is '$line' (malloc $id: $n bytes), want a buffer of ${v#b} bytes" ;;
        i*) [ "$line" = "param $i int ${v#i}" ] && ok || bad "$f: param $i is '$line', want the integer ${v#i}" ;;
        s)  echo "$line" | grep -Eq "^param $i int [0-9]+\$" && ok || bad "$f: param $i is '$line', want a 4-byte scalar" ;;
        esac
        i=$((i + 1))
    done
}

# gemm_gfx942: A [M, K], B [N, K], C [M, N] bf16, then the dims M, K, N (i32)
check examples/gemm_gfx942.tir gemm_gfx942 M=200,N=136,K=72 2 2 b28800 b19584 b54400 i200 i72 i136
check examples/gemm_gfx942.tir gemm_gfx942 M=128,N=384,K=32 3 1 b8192 b24576 b98304 i128 i32 i384
# flash_attn_fwd_gfx942: Q, K, V, O [BH, S, 64] bf16, sm_scale (f32), BH, S
check examples/flash_attn_fwd_gfx942.tir flash_attn_fwd_gfx942 BH=3,S=200 2 3 b76800 b76800 b76800 b76800 s i3 i200

# the fake runs nothing: the oracle finds the output unwritten
CAKE_LIBHIP=$FAKE "$CAKEC" run "$ROOT/examples/gemm_gfx942.tir" --shape M=64,N=64,K=32 --check >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q 'E0958' "$TMP/err" && ok || bad "run --check on the fake: exit $rc, $(head -c 300 "$TMP/err")"

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
