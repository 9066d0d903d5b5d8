#!/bin/sh
# check_speed.sh — milliseconds per `cakec check` of each example, whole
# process (exec, read, parse, resolve, verify, exit), as an agent loop sees it.
#
#   bench/check_speed.sh [CAKEC] [N]
#
# CAKEC defaults to build/cakec; N (runs per example, default 200) is split
# into 5 batches and the fastest batch's mean is reported, which filters out
# other load on the machine; the mean over all N runs is shown beside it. The
# same is measured for /bin/true: the floor that process start-up alone costs.
# Goal: < 5 ms per check on the 2-core dev/CI machine. Exits 1 when an example
# fails to check or misses the goal.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CAKEC=${1:-$ROOT/build/cakec}
N=${2:-200}
GOAL_MS=5
BATCHES=5
if [ ! -x "$CAKEC" ]; then
    echo "check_speed.sh: $CAKEC not built (cmake -S . -B build && make -C build cakec)" >&2
    exit 2
fi
PER=$(( (N + BATCHES - 1) / BATCHES ))

# time_cmd CMD...: prints "best_ms mean_ms" over BATCHES batches of PER runs
time_cmd() {
    best=""
    total=0
    j=0
    while [ $j -lt $BATCHES ]; do
        a=$(date +%s%N)
        i=0
        while [ $i -lt $PER ]; do
            "$@" >/dev/null 2>&1
            i=$((i + 1))
        done
        b=$(date +%s%N)
        d=$((b - a))
        total=$((total + d))
        if [ -z "$best" ] || [ $d -lt "$best" ]; then best=$d; fi
        j=$((j + 1))
    done
    awk -v best="$best" -v total="$total" -v per=$PER -v nb=$BATCHES \
        'BEGIN { printf "%.3f %.3f", best / per / 1e6, total / (per * nb) / 1e6 }'
}

floor=$(time_cmd /bin/true)
printf '%-16s %6s %10s %10s  %s\n' example lines "best ms" "mean ms" verdict
status=0
for f in "$ROOT"/examples/*.tir; do
    name=$(basename "$f" .tir)
    lines=$(wc -l <"$f" | tr -d ' ')
    if ! "$CAKEC" check "$f" >/dev/null 2>&1; then
        printf '%-16s %6s %10s %10s  %s\n' "$name" "$lines" - - "FAILS CHECK"
        status=1
        continue
    fi
    set -- $(time_cmd "$CAKEC" check "$f")
    verdict=$(awk -v b="$1" -v g=$GOAL_MS 'BEGIN { print (b < g ? "ok" : "SLOW") }')
    [ "$verdict" = ok ] || status=1
    printf '%-16s %6s %10s %10s  %s\n' "$name" "$lines" "$1" "$2" "$verdict"
done
set -- $floor
printf '%-16s %6s %10s %10s  %s\n' "(/bin/true)" - "$1" "$2" "process start-up floor"
echo "($BATCHES batches of $PER runs per row; goal: best < $GOAL_MS ms per check)"
exit $status
