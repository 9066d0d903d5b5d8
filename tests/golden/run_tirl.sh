#!/bin/sh
# run_tirl.sh CAKEC [--update] — the golden per-pass TIR-L dumps (docs/tirl.md §10).
#
# For every tile kernel of KERNELS (examples/NAME.tir or tests/gpu/tc/NAME.tir)
# and every pass of PASSES:
#   CAKE_LCHECK=1 CAKEC FILE --emit tirl --dump-after PASS -o /dev/null
# exits 0, and what it prints on stderr (`# IR after PASS`, then the kernel)
# equals tests/golden/tirl/NAME.PASS.tirl; a difference prints a unified diff
# (first lines). A .tirl file in that folder that no (kernel, pass) produces
# fails too, so that a dropped kernel or pass drops its golden.
# --update rewrites every golden file from CAKEC instead (new ones created,
# stale ones deleted): run it after an intentional change to a pass, the
# printer or a kernel, and review `git diff tests/golden/tirl` like code.
# Prints `N passed, N failed`; exits 1 when anything failed, 2 on bad usage.
set -u
if [ $# -lt 1 ] || [ $# -gt 2 ] || { [ $# -eq 2 ] && [ "$2" != "--update" ]; }; then
    echo "usage: $0 CAKEC [--update]" >&2
    exit 2
fi
CAKEC=$1
UPDATE=${2:-}
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
GOLD=$ROOT/tests/golden/tirl
KERNELS="gemm_sm80 gemm_sm90 gemm_sm90_persistent gemm_bias_act gemm_fp8 flash_attn_fwd flash_attn_fwd_d64
         tma_copy wgmma_kmajor wgmma_mnmajor wgmma_areg role_reduce"
PASSES="pipes async distribute roles abi"
export CAKE_LCHECK=1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cake_tirl.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$GOLD"
passed=0
failed=0
: >"$tmp/expected"

for name in $KERNELS; do
    src=$ROOT/examples/$name.tir
    [ -f "$src" ] || src=$ROOT/tests/gpu/tc/$name.tir
    for pass in $PASSES; do
        gold=$GOLD/$name.$pass.tirl
        echo "$name.$pass.tirl" >>"$tmp/expected"
        if [ ! -f "$src" ]; then
            echo "FAIL $name: no examples/$name.tir or tests/gpu/tc/$name.tir"
            failed=$((failed + 1))
            continue
        fi
        "$CAKEC" "$src" --emit tirl --dump-after "$pass" -o /dev/null 2>"$tmp/out"
        rc=$?
        if [ $rc -ne 0 ]; then
            echo "FAIL $name.$pass: cakec exit $rc"
            head -20 "$tmp/out" | sed 's/^/    /'
            failed=$((failed + 1))
        elif [ -n "$UPDATE" ]; then
            if [ -f "$gold" ] && cmp -s "$tmp/out" "$gold"; then :; else
                cp "$tmp/out" "$gold"
                echo "updated $name.$pass.tirl"
            fi
            passed=$((passed + 1))
        elif [ ! -f "$gold" ]; then
            echo "FAIL $name.$pass: no golden file $name.$pass.tirl (run with --update)"
            failed=$((failed + 1))
        elif ! cmp -s "$tmp/out" "$gold"; then
            echo "FAIL $name.$pass: the dump differs from $name.$pass.tirl:"
            diff -u --label "golden $name.$pass.tirl" --label "cakec $name --dump-after $pass" "$gold" "$tmp/out" |
                head -60 | sed 's/^/    /'
            failed=$((failed + 1))
        else
            passed=$((passed + 1))
        fi
    done
done

# golden files nothing produces any more
for f in "$GOLD"/*.tirl; do
    [ -f "$f" ] || continue
    base=$(basename "$f")
    grep -qxF "$base" "$tmp/expected" && continue
    if [ -n "$UPDATE" ]; then
        rm -f "$f"
        echo "deleted $base"
    else
        echo "FAIL $base: no kernel and pass of run_tirl.sh produce it (run with --update)"
        failed=$((failed + 1))
    fi
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
