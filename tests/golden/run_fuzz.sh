#!/bin/sh
# run_fuzz.sh FUZZER SECONDS WORKDIR SEED_DIR... — a bounded libFuzzer run.
#
# New inputs go to WORKDIR/corpus (the seed folders are only read); a crash,
# leak or timeout leaves its input in WORKDIR/ as crash-*, leak-*, timeout-*
# and fails the test. libFuzzer's own failure exit code (77) would read as a
# skip under ctest, so it is mapped to 1 here.
set -u
if [ $# -lt 4 ]; then
    echo "usage: $0 FUZZER SECONDS WORKDIR SEED_DIR..." >&2
    exit 2
fi
fuzzer=$1
seconds=$2
work=$3
shift 3
mkdir -p "$work/corpus"
seeds=""
for d in "$@"; do
    [ -d "$d" ] && seeds="$seeds $d"
done
echo "fuzzing for ${seconds}s from:$seeds"
# shellcheck disable=SC2086
"$fuzzer" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -max_len=16384 \
    -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
    -artifact_prefix="$work/" "$work/corpus" $seeds >"$work/log" 2>&1
rc=$?
grep -E '^(INFO: seed corpus|#[0-9]+ *DONE|stat::number_of_executed_units|stat::peak_rss)' "$work/log" || true
if [ $rc -ne 0 ]; then
    echo "fuzzer FAILED (exit $rc); the end of its log:"
    tail -60 "$work/log"
    for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
        [ -f "$a" ] || continue
        echo "the input ($a, $(wc -c <"$a") bytes; reproduce with: cakec check FILE):"
        od -An -c "$a" | head -40   # CI machines do not keep the file: print it
    done
    exit 1
fi
echo "fuzzer: no crash in ${seconds}s"
