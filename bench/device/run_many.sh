#!/bin/bash
# run_many.sh — runs several device scripts in one device call, one after the other, each with
# its own time limit and its own output folder, and packs everything into one archive (the call
# brings back a few files only).
#
#   usage (on the device machine, from the repo root):
#       bash bench/device/run_many.sh NAME[:SECONDS] ...     runs bench/device/run_NAME.sh
#   expects .carry/ from bench/device/carry.sh. Output: $OUT/many.tgz holding NAME/stdout.txt and
#   the files each script wrote under its own $OUT (NAME/), re-packed after each script; a
#   summary on stdout.
set -u
# carry.sh packs the code-generator plugin (gzip); unpack it once
if [ -f .carry/libcake-llvm.so.gz ] && [ ! -f .carry/libcake-llvm.so ]; then
    gzip -dc .carry/libcake-llvm.so.gz > .carry/libcake-llvm.so
fi
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PATH=$PATH:/usr/local/cuda/bin
O=${OUT:-/tmp/cake-out}
W=$O/w
mkdir -p "$W"
T0=$SECONDS
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader > "$W/gpu.txt" 2>&1
summary=""
for spec in "$@"; do
    name=${spec%%:*}
    limit=100
    [ "$spec" != "$name" ] && limit=${spec#*:}
    mkdir -p "$W/$name"
    s=$SECONDS
    if [ -f "bench/device/run_$name.sh" ]; then
        OUT=$W/$name DEADLINE=$limit timeout -k 5 $((limit + 10)) bash "bench/device/run_$name.sh" \
            > "$W/$name/stdout.txt" 2>&1
        rc=$?
    else
        echo "no bench/device/run_$name.sh" > "$W/$name/stdout.txt"
        rc=127
    fi
    line="$name: exit $rc in $((SECONDS - s)) s"
    echo "== $line (at $((s - T0)) s)"
    tail -n 15 "$W/$name/stdout.txt"
    summary="$summary$line
"
    tar czf "$O/many.tgz" -C "$W" .   # after each script: a call cut short still brings the rest back
done
rm -rf "$W"
echo "== summary"
printf '%s' "$summary"
