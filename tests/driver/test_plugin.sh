#!/bin/sh
# test_plugin.sh — cakec carries no LLVM: it links no LLVM library, `check`
# and `print` never open the code generator plugin, and compiling opens
# libcake-llvm.so from cakec's own folder (no CAKE_LLVM_PLUGIN needed) in the
# same process: one cakec process, no second executable. Prints
# `N passed, N failed`.
: "${CAKEC:?CAKEC must name the cakec binary}"
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
EX=$ROOT/examples/copy.tir
unset CAKE_LLVM_PLUGIN
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

if command -v readelf > /dev/null; then
    if readelf -d "$CAKEC" | grep NEEDED | grep -qi llvm; then
        bad "cakec links LLVM: $(readelf -d "$CAKEC" | grep NEEDED | grep -i llvm)"
    else
        ok
    fi
fi

# the files the dynamic loader opens, and the processes started, per command
opened() { LD_DEBUG=files "$@" 2>&1 >/dev/null | grep -c 'file=.*libcake-llvm\.so.*generating link map'; }

for cmd in check print; do
    n=$(opened "$CAKEC" $cmd "$EX")
    [ "$n" -eq 0 ] && ok || bad "cakec $cmd opened the plugin"
done

n=$(opened "$CAKEC" "$EX" --target sm_80 --emit ptx)
[ "$n" -eq 1 ] && ok || bad "cakec FILE opened the plugin $n times (want 1)"
if command -v strace > /dev/null; then
    # cakec itself runs once (ptxas, for the resource report, is a child of its own)
    n=$(strace -f -e trace=execve "$CAKEC" "$EX" --target sm_80 --emit ptx 2>&1 >/dev/null |
        grep 'execve(' | grep -vc 'ptxas\|"/bin/sh"')
    [ "$n" -eq 1 ] && ok || bad "cakec FILE ran $n execve (want 1: no re-execution)"
fi
out=$("$CAKEC" "$EX" --target sm_80 --emit ptx)
case $out in *".entry copy"*) ok ;; *) bad "no PTX for copy.tir" ;; esac

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
