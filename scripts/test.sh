#!/bin/sh
# test.sh — the second command: every test, in two builds.
#
#   1. build/       the normal build (cc, RelWithDebInfo), then ctest
#   2. build-asan/  everything with ASan + UBSan (clang-19; leak checking on),
#                   then ctest — the golden suites run the sanitized cakec, so a
#                   leak or UB anywhere in `cakec check` fails them
#   3. the libFuzzer targets (part of build-asan's ctest: fuzz.parser, fuzz.check)
#                   for CAKE_FUZZ_SECONDS seconds (default 60) from the seed corpus,
#                   the examples and every golden input
#
# Exits non-zero on any failure and ends with `N passed, N failed, N skipped`
# over both ctest runs. Environment: CAKE_FUZZ_SECONDS, JOBS (default nproc),
# BUILD and BUILD_ASAN (the two build folders, default build and build-asan).
set -u
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${CAKE_FUZZ_SECONDS:-60}
BUILD=${BUILD:-build}
BUILD_ASAN=${BUILD_ASAN:-build-asan}
status=0
passed=0
failed=0
skipped=0
t0=$(date +%s)

step() { printf '\n== %s (%ss)\n' "$1" $(($(date +%s) - t0)); }

# run_ctest DIR: runs ctest there and adds its counts to the totals
run_ctest() {
    ctest --test-dir "$1" -j "$JOBS" --output-on-failure --timeout 1200 >"$1/ctest.log" 2>&1
    rc=$?
    cat "$1/ctest.log"
    line=$(grep -E '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$1/ctest.log" | tail -1)
    if [ -z "$line" ]; then
        echo "test.sh: no ctest summary in $1"
        failed=$((failed + 1))
        status=1
        return
    fi
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
    n=$(echo "$line" | sed -E 's/.* out of ([0-9]+).*/\1/')
    s=$(grep -c '(Skipped)$' "$1/ctest.log")
    passed=$((passed + n - f - s))
    failed=$((failed + f))
    skipped=$((skipped + s))
    [ $rc -eq 0 ] || status=1
}

build() { # build DIR CONFIGURE-ARGS...
    dir=$1
    shift
    mkdir -p "$dir"
    if ! cmake -S . -B "$dir" "$@" >"$dir/configure.log" 2>&1; then
        cat "$dir/configure.log"
        echo "test.sh: configuring $dir FAILED"
        return 1
    fi
    if ! cmake --build "$dir" -j "$JOBS" >"$dir/build.log" 2>&1; then
        grep -E -B3 'error|Error' "$dir/build.log" | tail -60
        echo "test.sh: building $dir FAILED (log: $dir/build.log)"
        return 1
    fi
}

step "normal build"
if build "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAKE_SANITIZE=OFF -DCAKE_FUZZ=OFF; then
    step "ctest (normal build)"
    run_ctest "$BUILD"
else
    status=1
    failed=$((failed + 1))
fi

SAN_CC=$(command -v clang-19 || command -v clang || command -v cc)
FUZZ=OFF
case $(basename "$SAN_CC") in clang*) FUZZ=ON ;; esac
step "ASan+UBSan build with $SAN_CC (fuzzer: $FUZZ)"
# a cache made with another compiler cannot be reconfigured: start over
if [ -f "$BUILD_ASAN/CMakeCache.txt" ] &&
    ! grep -q "^CMAKE_C_COMPILER:[A-Z]*=$SAN_CC\$" "$BUILD_ASAN/CMakeCache.txt"; then
    rm -rf "$BUILD_ASAN"
fi
if CC=$SAN_CC build "$BUILD_ASAN" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAKE_SANITIZE=ON -DCAKE_FUZZ=$FUZZ \
        -DCAKE_FUZZ_SECONDS="$FUZZ_SECONDS"; then
    step "ctest (ASan+UBSan, leaks checked; fuzz ${FUZZ_SECONDS}s)"
    run_ctest "$BUILD_ASAN"
    for log in "$BUILD_ASAN"/tests/fuzz-*/log; do
        [ -f "$log" ] && echo "$log:" && grep -E 'stat::(number_of_executed_units|average_exec_per_sec)' "$log"
    done
else
    status=1
    failed=$((failed + 1))
fi

step "done"
[ $status -eq 0 ] && echo "ALL TESTS PASSED" || echo "SOME TESTS FAILED"
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
