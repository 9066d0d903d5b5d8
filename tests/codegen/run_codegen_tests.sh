#!/bin/sh
# run_codegen_tests.sh — code generation tests that need no GPU.
#
#   tests/codegen/run_codegen_tests.sh CAKEC [REPO_ROOT]
#
# For every SIMT example (and tests/codegen/cases/*.tir):
#   - NVPTX: `cakec F --target sm_80|sm_90a --emit ptx` succeeds, the PTX
#     assembles with `ptxas -arch=...` (skipped, with a message, when ptxas is
#     missing) and matches golden/NAME.ptx.pat;
#   - AMDGPU: `cakec F --target gfx90a|gfx942 --emit hsaco` succeeds, the code
#     object disassembles with llvm-objdump --mcpu=... and matches
#     golden/NAME.gcn.pat, and llvm-readelf --notes shows the AMDHSA metadata
#     of every kernel (.name, .group_segment_fixed_size, .max_flat_workgroup_size);
#   - the AMD tile examples (gemm_gfx942 for gfx942 and gfx90a): the code object's
#     disassembly has the MFMAs, LDS reads and writes, global loads and barriers
#     the schedule in the file's header implies, counted (golden/NAME.gcn.pat);
#   - the tile examples (gemm_sm80, gemm_sm90, flash_attn_fwd) and the GPU test
#     kernels of tests/gpu/tc go through the lowering passes with the
#     lowered-level checker on (CAKE_LCHECK=1), and their PTX assembles and
#     matches golden/NAME.ptx.pat (wgmma, TMA, mbarriers, setmaxnreg, ldmatrix,
#     mma.sync, no local memory);
#   - for the SIMT files, the IR after the passes (--emit ir) checks clean and
#     compiles to the same LLVM IR as the source (legalize's casts change nothing
#     they make explicit; TIR-L of the tile kernels is print-only);
#   - kernels with constructs that have no lowering yet (tests/codegen/unsupported)
#     fail with E0902 (exit 1), never a crash;
#   - --emit llvm prints textual LLVM IR.
# A pattern file holds one extended regex per line that must match the output;
# a line `!re` must not match; `=N re` must match exactly N lines (the
# instruction counts a schedule implies); `#` lines are comments.
# Prints "N passed, M failed (K skipped)"; exits 1 when anything failed.
CAKEC=${1:?usage: run_codegen_tests.sh CAKEC [REPO_ROOT]}
ROOT=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
HERE=$ROOT/tests/codegen
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cakecg.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
pass=0 fail=0 skip=0

ok()   { pass=$((pass + 1)); }
bad()  { fail=$((fail + 1)); echo "FAIL: $*"; }
skipped() { skip=$((skip + 1)); }

find_tool() { # first of the names that runs
    for t in "$@"; do
        if command -v "$t" >/dev/null 2>&1; then command -v "$t"; return 0; fi
        if [ -x "$t" ]; then echo "$t"; return 0; fi
    done
    return 1
}
PTXAS=$(find_tool ptxas /usr/local/cuda/bin/ptxas) || PTXAS=
LLVM_BIN=$(llvm-config-19 --bindir 2>/dev/null || echo /usr/lib/llvm-19/bin)
OBJDUMP=$(find_tool llvm-objdump-19 "$LLVM_BIN/llvm-objdump" llvm-objdump) || OBJDUMP=
READELF=$(find_tool llvm-readelf-19 "$LLVM_BIN/llvm-readelf" llvm-readelf) || READELF=
[ -n "$PTXAS" ] || echo "note: ptxas not found: PTX is generated and pattern-checked but not assembled"
[ -n "$OBJDUMP" ] || echo "note: llvm-objdump not found: code objects are not disassembled"

check_patterns() { # $1 output file, $2 pattern file, $3 label
    [ -f "$2" ] || return 0
    while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in
        ''|'#'*) continue ;;
        '='*) want=${line%% *}; want=${want#=}; re=${line#* }
              got=$(grep -Ec -- "$re" "$1")
              if [ "$got" -eq "$want" ]; then ok; else bad "$3: $got lines match /$re/, want $want"; fi ;;
        '!'*) re=${line#!}
              if grep -Eq -- "$re" "$1"; then bad "$3: unexpected /$re/"; else ok; fi ;;
        *)    if grep -Eq -- "$line" "$1"; then ok; else bad "$3: no /$line/"; fi ;;
        esac
    done < "$2"
}

targets_of() { # the targets a .tir file lists (any kernel)
    sed -n 's/^[[:space:]]*target[[:space:]]\{1,\}\(.*\)$/\1/p' "$1" | tr ',' ' ' | tr -s ' ' '\n' |
        sed 's/#.*//' | grep -E '^(sm_80|sm_90a|gfx90a|gfx942)$' | sort -u
}

kernels_for() { # kernel names of $1 that list target $2
    awk -v t="$2" '
        /^kernel[ \t]/ { name = $2; sub(/[<{].*/, "", name) }
        /^[ \t]*target[ \t]/ { if (index($0, t) && name != "") print name }' "$1"
}

simt="vector_add copy rmsnorm softmax layernorm"
tiles="gemm_sm80 gemm_sm90 gemm_sm90_persistent flash_attn_fwd flash_attn_fwd_d64 gemm_bias_act gemm_fp8 gemm_gfx942"
files="" simt_files=""
for n in $simt; do simt_files="$simt_files $ROOT/examples/$n.tir"; done
for f in "$HERE"/cases/*.tir; do [ -f "$f" ] && simt_files="$simt_files $f"; done
for n in $simt $tiles; do files="$files $ROOT/examples/$n.tir"; done
for f in "$HERE"/cases/*.tir "$ROOT"/tests/gpu/tc/*.tir; do [ -f "$f" ] && files="$files $f"; done
export CAKE_LCHECK=1

for f in $files; do
    name=$(basename "$f" .tir)
    if [ ! -f "$f" ]; then bad "$name: missing $f"; continue; fi
    for t in $(targets_of "$f"); do
        case $t in
        sm_*)
            out=$TMP/$name.$t.ptx
            if "$CAKEC" "$f" --target "$t" --emit ptx -o "$out" 2>"$TMP/err"; then ok; else
                bad "$name $t: cakec exit $? ($(head -c 400 "$TMP/err"))"; continue; fi
            if [ -n "$PTXAS" ]; then
                if "$PTXAS" -arch="$t" "$out" -o "$TMP/x.cubin" 2>"$TMP/err"; then ok; else
                    bad "$name $t: ptxas: $(head -c 400 "$TMP/err")"; fi
            else skipped; fi
            check_patterns "$out" "$HERE/golden/$name.ptx.pat" "$name $t"
            ;;
        gfx*)
            out=$TMP/$name.$t.hsaco
            if "$CAKEC" "$f" --target "$t" --emit hsaco -o "$out" 2>"$TMP/err"; then ok; else
                bad "$name $t: cakec exit $? ($(head -c 400 "$TMP/err"))"; continue; fi
            if [ -n "$OBJDUMP" ]; then
                if "$OBJDUMP" -d --mcpu="$t" "$out" >"$TMP/dis" 2>"$TMP/err"; then ok; else
                    bad "$name $t: llvm-objdump: $(head -c 400 "$TMP/err")"; continue; fi
                check_patterns "$TMP/dis" "$HERE/golden/$name.gcn.pat" "$name $t"
            else skipped; fi
            if [ -n "$READELF" ]; then
                "$READELF" --notes "$out" >"$TMP/notes" 2>&1
                for k in $(kernels_for "$f" "$t"); do
                    for key in "\.name: +$k\$" "\.symbol: +$k\.kd" '\.group_segment_fixed_size:' \
                               '\.max_flat_workgroup_size: +[0-9]+' "amdhsa\.target: +amdgcn-amd-amdhsa--$t"; do
                        if grep -Eq -- "$key" "$TMP/notes"; then ok; else bad "$name $t: notes lack /$key/"; fi
                    done
                done
            else skipped; fi
            ;;
        esac
    done
done

# --emit llvm: textual IR with the kernel
if "$CAKEC" "$ROOT/examples/vector_add.tir" --target sm_90a --emit llvm -o "$TMP/v.ll" 2>"$TMP/err" &&
   grep -q 'define .*void @vector_add(' "$TMP/v.ll" && grep -q 'nvptx64-nvidia-cuda' "$TMP/v.ll"; then ok
else bad "--emit llvm: $(head -c 400 "$TMP/err")"; fi
if "$CAKEC" "$ROOT/examples/rmsnorm.tir" --target gfx942 --emit llvm -o "$TMP/r.ll" 2>"$TMP/err" &&
   grep -q 'amdgpu_kernel void @rmsnorm(' "$TMP/r.ll" && grep -q 'amdgpu-flat-work-group-size"="256,256"' "$TMP/r.ll"; then ok
else bad "--emit llvm gfx942: $(head -c 400 "$TMP/err")"; fi

# the IR after the passes (--emit ir: legalize's casts written out) checks clean and
# compiles to the same LLVM IR: legalize makes the implicit conversions explicit
# without changing what they mean
for f in $simt_files; do
    name=$(basename "$f" .tir)
    t=$(targets_of "$f" | head -n 1)
    if ! { "$CAKEC" "$f" --target "$t" --emit ir -o "$TMP/$name.ir.tir" &&
           "$CAKEC" check "$TMP/$name.ir.tir" &&
           "$CAKEC" "$f" --target "$t" --emit llvm -o "$TMP/$name.a.ll" &&
           "$CAKEC" "$TMP/$name.ir.tir" --target "$t" --emit llvm -o "$TMP/$name.b.ll"; } 2>"$TMP/err"; then
        bad "$name $t: --emit ir: $(head -c 300 "$TMP/err")"
    elif [ "$(grep -v -e source_filename -e ModuleID "$TMP/$name.a.ll")" != \
           "$(grep -v -e source_filename -e ModuleID "$TMP/$name.b.ll")" ]; then
        bad "$name $t: the IR of --emit ir does not compile to the same LLVM IR"
    else ok; fi
done

# constructs with no lowering yet: E0902 at the op, exit 1, never 2
for f in "$HERE"/unsupported/*.tir; do
    [ -f "$f" ] || continue
    t=$(targets_of "$f" | head -1)
    "$CAKEC" "$f" --target "$t" --emit obj -o "$TMP/x.o" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q 'E0902' "$TMP/err"; then ok
    else bad "$(basename "$f"): expected exit 1 with E0902, got $rc: $(head -c 300 "$TMP/err")"; fi
done

# code a parameter value makes dead is not lowered (cases/dead_branch.tir compiles
# above); the value that makes it live gets E0902 at the op
"$CAKEC" "$HERE/cases/dead_branch.tir" --target sm_90a --set MODE=1 -o "$TMP/x.ptx" 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'dead_branch.tir:16:.*E0902' "$TMP/err"; then ok
else bad "dead_branch MODE=1: expected E0902 at line 16, got $rc: $(head -c 300 "$TMP/err")"; fi

echo "$pass passed, $fail failed ($skip skipped)"
[ $fail -eq 0 ]
