#!/bin/sh
# compile_speed.sh — milliseconds per compile of each SIMT example, whole
# process (parse, resolve, verify, passes, LLVM O3, PTX/code object emission).
#
#   bench/compile_speed.sh CAKEC [N] [TARGETS]
#
# N compiles per example and target (default 20); TARGETS defaults to
# "sm_90a gfx942" (gfx targets include the ld.lld link). Goal: <= 50 ms per
# PTX compile on the 2-core CI machine.
CAKEC=${1:?usage: compile_speed.sh CAKEC [N] [TARGETS]}
N=${2:-20}
TARGETS=${3:-"sm_90a gfx942"}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/cakebench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT INT TERM
now_ns() { date +%s%N; }
printf '%-12s %-8s %10s\n' example target ms/compile
for ex in vector_add copy rmsnorm softmax layernorm; do
    f=$ROOT/examples/$ex.tir
    for t in $TARGETS; do
        case $t in sm_*) emit=ptx ;; *) emit=hsaco ;; esac
        "$CAKEC" "$f" --target "$t" --emit $emit -o "$OUT/x" 2>/dev/null || { printf '%-12s %-8s %10s\n' $ex $t FAILED; continue; }
        a=$(now_ns)
        i=0
        while [ $i -lt "$N" ]; do
            "$CAKEC" "$f" --target "$t" --emit $emit -o "$OUT/x" 2>/dev/null
            i=$((i + 1))
        done
        b=$(now_ns)
        awk -v a="$a" -v b="$b" -v n="$N" -v e="$ex" -v t="$t" \
            'BEGIN { printf "%-12s %-8s %10.1f\n", e, t, (b - a) / n / 1e6 }'
    done
done
