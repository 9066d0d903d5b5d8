#!/bin/sh
# mixed_wrapper.sh — a host with two kinds of GPU for `cakec lib tune` (test_workers.sh):
# used as CAKE_RUN_CMD, it runs the real cakec ($CAKEC), but a candidate given
# CUDA_VISIBLE_DEVICES=5 measures as an A100 (`--fake-measure a100`) instead of the
# H200 the others are. The H200's candidates wait 0.3 s first, so that the other worker
# surely takes some of the tasks (a worker that started late on a loaded machine could
# otherwise find the queue empty: one kind of GPU, no E1213, a flaky test).
if [ "${CUDA_VISIBLE_DEVICES:-}" = 5 ]; then
    n=$#
    i=0
    prev=""
    for a in "$@"; do
        i=$((i + 1))
        if [ "$prev" = --fake-measure ]; then set -- "$@" a100; else set -- "$@" "$a"; fi
        prev=$a
    done
    shift "$n"
else
    sleep 0.3
fi
exec "$CAKEC" "$@"
