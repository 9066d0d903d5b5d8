#!/bin/sh
# tune_wrapper.sh — fault and hang injection for `cakec lib tune` (test_workers.sh):
# used as CAKE_RUN_CMD, it runs the real cakec ($CAKEC), but a candidate for the
# variant `block256` of rmsnorm at M=16384 hangs (sleeps until the runner kills
# it) and one for `block64_short` there dies of SIGSEGV, as a candidate that
# faults the GPU would.
# It also records which CUDA_VISIBLE_DEVICES each candidate saw.
v=""
prev=""
for a in "$@"; do
    [ "$prev" = --variant ] && v=$a
    prev=$a
done
[ -n "${WRAPPER_LOG:-}" ] && echo "${CUDA_VISIBLE_DEVICES:-unset} $v" >> "$WRAPPER_LOG"
case "$*" in
*"--op rmsnorm --shape M=16384"*)
    case "$v" in
    block256) exec sleep 600 ;;
    block64_short) kill -SEGV $$ ;;
    esac ;;
esac
exec "$CAKEC" "$@"
