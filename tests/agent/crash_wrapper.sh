#!/bin/sh
# crash_wrapper.sh — fault injection for a device tune run (docs/agent.md):
# used as CAKE_RUN_CMD, it runs the real cakec ($CAKEC) for every command, but
# a `run` whose --set names SPIN=1 is killed with SIGSEGV half a second in,
# while it is on the GPU — what a crash of the evaluating process looks like.
# (A kernel that `cakec check` accepts cannot be made to fault on purpose:
# the verifier proves every access in bounds.)
prev=""
crash=0
for a in "$@"; do
    if [ "$prev" = "--set" ]; then
        case ",$a," in *,SPIN=1,*) crash=1 ;; esac
    fi
    prev=$a
done
if [ "$1" = run ] && [ $crash = 1 ]; then
    "$CAKEC" "$@" &
    pid=$!
    sleep 0.5
    kill -SEGV $pid 2>/dev/null
    wait $pid
    exit $?
fi
exec "$CAKEC" "$@"
