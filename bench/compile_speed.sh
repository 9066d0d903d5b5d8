#!/bin/sh
# compile_speed.sh — milliseconds per compile of the examples, whole process
# (parse, resolve, verify, passes, LLVM O3, PTX/code object emission).
#
#   bench/compile_speed.sh CAKEC [N] [TARGETS]
#       the SIMT examples on each target of TARGETS: mean of N compiles (default
#       20); TARGETS defaults to "sm_90a gfx942" (gfx targets include the ld.lld
#       link). Goal: <= 50 ms per PTX compile on the 2-core CI machine.
#
#   bench/compile_speed.sh --all CAKEC [N]
#       every examples/*.tir, SIMT and tile, `cakec FILE --emit ptx` for the
#       file's own target: the median of N compiles (default 11), each timed on
#       its own. Goals: <= 50 ms for a SIMT example, <= 100 ms for a tile example.
#       An example that code generation does not cover yet is reported as
#       "does not compile yet (E0902)", not as a failure. Exits 1 when an example
#       misses its goal or fails to compile for another reason.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ALL=0
if [ "${1:-}" = --all ]; then
    ALL=1
    shift
fi
CAKEC=${1:?usage: compile_speed.sh [--all] CAKEC [N] [TARGETS]}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cakebench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
now_ns() { date +%s%N; }
SIMT="vector_add copy rmsnorm softmax layernorm"

# ---- the SIMT examples on several targets (mean of N) ------------------------------
by_target() {
    N=${1:-20}
    TARGETS=${2:-"sm_90a gfx942"}
    printf '%-12s %-8s %10s\n' example target ms/compile
    for ex in $SIMT; do
        f=$ROOT/examples/$ex.tir
        for t in $TARGETS; do
            case $t in sm_*) emit=ptx ;; *) emit=hsaco ;; esac
            "$CAKEC" "$f" --target "$t" --emit $emit -o "$TMP/x" 2>/dev/null || { printf '%-12s %-8s %10s\n' "$ex" "$t" FAILED; continue; }
            a=$(now_ns)
            i=0
            while [ $i -lt "$N" ]; do
                "$CAKEC" "$f" --target "$t" --emit $emit -o "$TMP/x" 2>/dev/null
                i=$((i + 1))
            done
            b=$(now_ns)
            awk -v a="$a" -v b="$b" -v n="$N" -v e="$ex" -v t="$t" \
                'BEGIN { printf "%-12s %-8s %10.1f\n", e, t, (b - a) / n / 1e6 }'
        done
    done
}

# median_ms N CMD...: the median wall time of N runs of CMD, in ms (each run timed alone)
median_ms() {
    n=$1
    shift
    : > "$TMP/times"
    i=0
    while [ $i -lt "$n" ]; do
        a=$(now_ns)
        "$@" > /dev/null 2>&1
        b=$(now_ns)
        echo $((b - a)) >> "$TMP/times"
        i=$((i + 1))
    done
    sort -n "$TMP/times" | awk '{ t[NR] = $1 } END { printf "%.1f", t[int((NR + 1) / 2)] / 1e6 }'
}

# ---- every example, its own target, --emit ptx (median of N) -------------------------
all_examples() {
    N=${1:-11}
    status=0
    printf '%-22s %-5s %-7s %9s %6s  %s\n' example kind target "median ms" goal verdict
    for f in "$ROOT"/examples/*.tir; do
        ex=$(basename "$f" .tir)
        case " $SIMT " in *" $ex "*) kind=simt goal=50 ;; *) kind=tile goal=100 ;; esac
        if ! "$CAKEC" "$f" --emit ptx -o "$TMP/x.ptx" --json > "$TMP/diag.json" 2>&1; then
            code=$(grep -o '"code":"E[0-9]*"' "$TMP/diag.json" | head -1 | cut -d'"' -f4)
            if [ "$code" = E0902 ]; then
                verdict="does not compile yet (E0902)"
            else
                verdict="FAILS (${code:-no diagnostic})"
                status=1
            fi
            printf '%-22s %-5s %-7s %9s %6s  %s\n' "$ex" $kind - - $goal "$verdict"
            continue
        fi
        target=$(sed -n 's/^\.target[[:space:]]*\([a-z0-9_]*\).*/\1/p' "$TMP/x.ptx" | head -1)
        ms=$(median_ms "$N" "$CAKEC" "$f" --emit ptx -o "$TMP/x.ptx")
        verdict=$(awk -v m="$ms" -v g=$goal 'BEGIN { print (m <= g ? "ok" : "SLOW") }')
        [ "$verdict" = ok ] || status=1
        printf '%-22s %-5s %-7s %9s %6s  %s\n' "$ex" $kind "$target" "$ms" $goal "$verdict"
    done
    printf '%-22s %-5s %-7s %9s %6s  %s\n' "(/bin/true)" - - "$(median_ms "$N" /bin/true)" - \
        "process start-up and timer floor"
    echo "(median of $N compiles per example, whole process; goals: SIMT <= 50 ms, tile <= 100 ms)"
    return $status
}

if [ $ALL = 1 ]; then
    all_examples "${2:-}"
else
    by_target "${2:-}" "${3:-}"
fi
