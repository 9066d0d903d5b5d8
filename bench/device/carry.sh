#!/bin/sh
# carry.sh — fills .carry/ (ignored by git) with what the device scripts run, built
# here: cakec and its code-generator plugin libcake-llvm.so, the plugin linked with a
# static LLVM (the device machine has no LLVM), the select timer cake_lib_select_speed
# (bench/lib_select_speed.c: run_rowsel.sh),
# and libcjson.so.1 (nor cJSON); the compile-mode fuzzer cake_fuzz_compile (run_trustx.sh runs
# it on the device's cores; it finds the plugin beside it). Run from the repo root before the device call, and
# name .carry in the call's `carry` list.
#
#   bench/device/carry.sh [BUILD_DIR]      (default build-static)
set -eu
B=${1:-build-static}
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DCAKE_STATIC_LLVM=ON \
    -DPython3_EXECUTABLE="$(command -v python3)" > /dev/null
make -C "$B" -j2 cakec cake-llvm cake_fuzz_compile cake_lib_select_speed > /dev/null
# the Python module (run_python.sh): .carry/python/cake, found by PYTHONPATH=.carry/python
make -C "$B" -j2 cake_python cake_python_lib > /dev/null 2>&1 || echo "carry.sh: no Python module (python3-dev?)" >&2
rm -rf .carry && mkdir -p .carry
cp "$B/cakec" "$B/libcake-llvm.so" "$B/tests/cake_fuzz_compile" "$B/cake_lib_select_speed" .carry/
lib=$(ldconfig -p | awk '/libcjson\.so\.1 / { print $NF; exit }')
[ -n "$lib" ] || { echo "carry.sh: libcjson.so.1 not found (ldconfig -p)" >&2; exit 1; }
cp -L "$lib" .carry/libcjson.so.1
if [ -f "$B/python/cake/_cake.abi3.so" ]; then
    mkdir -p .carry/python
    cp -r "$B/python/cake" .carry/python/
    rm -rf .carry/python/cake/__pycache__ .carry/python/cake/library
    strip .carry/python/cake/_cake.abi3.so
fi
strip .carry/cakec .carry/libcake-llvm.so .carry/cake_fuzz_compile .carry/cake_lib_select_speed
# the plugin is most of the call's 64 MiB; run_many.sh unpacks it on the device
gzip -9 .carry/libcake-llvm.so
ls -l .carry
echo "$(du -sk .carry | cut -f1) KiB to carry (the call's limit: 64 MiB with the working tree)"
