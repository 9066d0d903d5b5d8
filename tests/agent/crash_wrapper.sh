#!/bin/sh
# crash_wrapper.sh — fault injection for a device tune run (docs/agent.md):
# used as CAKE_RUN_CMD, it runs the real cakec ($CAKEC) for every command, but
# a `run` whose --set names SPIN=1 runs with SPIN=20000 instead (about a
# second a launch) and is killed with SIGSEGV 1.5 s in, while its kernel is on
# the GPU: what a crash of the evaluating process looks like to the runner.
# (A kernel that `cakec check` accepts cannot be made to fault on purpose: the
# verifier proves every access in bounds.)
crash=0
prev=""
n=0
for a in "$@"; do
    n=$((n + 1))
    if [ "$prev" = "--set" ]; then
        case ",$a," in *,SPIN=1,*) crash=1 ;; esac
    fi
    prev=$a
done
if [ "$1" != run ] || [ $crash = 0 ]; then
    exec "$CAKEC" "$@"
fi
# the same arguments with SPIN=1 -> SPIN=20000
i=0
for a in "$@"; do
    i=$((i + 1))
    [ $i = 1 ] && set --
    case ",$a," in *,SPIN=1,*) a=$(printf '%s' "$a" | sed 's/\(^\|,\)SPIN=1\(,\|$\)/\1SPIN=20000\2/') ;; esac
    set -- "$@" "$a"
done
"$CAKEC" "$@" &
pid=$!
sleep 1.5
kill -SEGV $pid 2>/dev/null
wait $pid
