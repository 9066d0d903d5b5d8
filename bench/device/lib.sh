# lib.sh — what every device script starts with, in one place. Source it from the
# repo root after setting (optionally) DEADLINE's default and LOG:
#
#     DEADLINE=${DEADLINE:-100}
#     . bench/device/lib.sh
#     LOG=$O/name_log.txt; : > "$LOG"
#
# It unpacks the carried plugin (carry.sh gzips it) where run_many.sh has not, puts
# .carry on LD_LIBRARY_PATH, CUDA's bin on PATH and .carry/python on PYTHONPATH, and sets
#   C         cakec ($CAKEC, else .carry/cakec)
#   O         the output folder ($OUT, else /tmp/cake-out), created
#   DEADLINE  seconds for the whole script (default 100), T0 its start ($SECONDS)
# and defines
#   say MSG...          MSG on stdout and appended to $LOG (where LOG is set)
#   cnt PATTERN FILE    the number of lines of FILE matching PATTERN (0 when none or no FILE)
#   left                the seconds left before DEADLINE
#   t LIMIT CMD...      CMD under a timeout of LIMIT seconds, or of what is left less
#                       $T_RESERVE (default 6) if less; "skip (out of time)" and 124 when
#                       under 3 seconds are left
#   batch LIMIT SHAPES OUT ARGS...
#                       `$C lib bench $LIB --shapes SHAPES ARGS --json` appending to OUT within
#                       LIMIT seconds; a process that dies on a line (a hang, a device fault)
#                       gets an error row for it and starts again after it, at most
#                       $BATCH_STARTS (default 5) starts; its scratch file lives in $A
#   warm_torch          imports torch and its compiler in the background (WARMPID; the
#                       caller's EXIT trap kills it), so the peers start warm
#   static_peers SECONDS SHAPES OUT
#                       sweep.py peers at SHAPES into OUT within SECONDS (skipped under 15):
#                       torch eager and torch.compile specialised to each shape (dynamic=False)
#                       while the time lasts, no dynamic-shape compile; waits for warm_torch
#   check_best LIMIT OUT ALL.jsonl...
#                       the fastest variant of each shape of `lib bench --all` rows
#                       (gemmx.py best) through `lib bench --check --sample` into OUT within
#                       LIMIT seconds, and a line of how many passed
#   retable ART         sets LIB: ART with bench/device/sweep_table_h200.json ($TABLE, if set)
#                       folded in (`lib build ART --table`, written to $A/tuned.cakelib), or ART
#                       itself, said so, when the fold fails
if [ -f .carry/libcake-llvm.so.gz ] && [ ! -f .carry/libcake-llvm.so ]; then
    gzip -dc .carry/libcake-llvm.so.gz > .carry/libcake-llvm.so
fi
export LD_LIBRARY_PATH=$PWD/.carry:${LD_LIBRARY_PATH:-}
export PYTHONPATH=$PWD/.carry/python${PYTHONPATH:+:$PYTHONPATH}
export PATH=$PATH:/usr/local/cuda/bin
C=${CAKEC:-.carry/cakec}
O=${OUT:-/tmp/cake-out}
DEADLINE=${DEADLINE:-100}
T_RESERVE=${T_RESERVE:-6}
T0=$SECONDS
LOG=${LOG:-}
mkdir -p "$O"

say() {
    if [ -n "$LOG" ]; then echo "$@" | tee -a "$LOG"; else echo "$@"; fi
}

cnt() {
    local n
    n=$(grep -c "$1" "$2" 2>/dev/null)
    echo "${n:-0}"
}

left() { echo $((DEADLINE - (SECONDS - T0))); }

t() {
    local lim=$1 l
    shift
    l=$(($(left) - T_RESERVE))
    [ "$l" -lt "$lim" ] && lim=$l
    [ "$lim" -lt 3 ] && { say "skip (out of time): $*"; return 124; }
    timeout -k 3 "$lim" "$@"
}

batch() {
    local end=$((SECONDS + $1)) shapes=$2 out=$3 rest=$A/rest.txt starts=0 total
    shift 3
    cp "$shapes" "$rest"
    total=$(cnt . "$shapes")
    while [ $starts -lt "${BATCH_STARTS:-5}" ] && [ -s "$rest" ] && [ $((end - SECONDS)) -ge 3 ]; do
        starts=$((starts + 1))
        local before n rc bad
        before=$(cnt '"op"' "$out")
        t $((end - SECONDS)) "$C" lib bench "$LIB" --shapes "$rest" "$@" --json >> "$out" 2>> "$LOG"
        rc=$?
        n=$(( $(cnt '"op"' "$out") - before ))
        [ $rc = 124 ] || [ $rc = 137 ] && { say "  out of time after $n shapes"; break; }
        [ "$n" -ge "$(cnt . "$rest")" ] && break
        bad=$(sed -n "$((n + 1))p" "$rest")   # the line after the last row: it hung or broke the device
        [ -z "$bad" ] && break
        printf '{"op": "%s", "shape": "%s", "error": "the batch died here (a hang or a device fault)"}\n' \
            "${bad%% *}" "${bad#* }" >> "$out"
        tail -n +$((n + 2)) "$rest" > "$rest.next" && mv "$rest.next" "$rest"
    done
    say "  $starts start(s), $(cnt '"op"' "$out") rows in $(basename "$out") of $total shapes"
}

retable() {
    local table=${TABLE:-bench/device/sweep_table_h200.json}
    LIB=$1
    if [ -f "$table" ] && t 20 "$C" lib build "$1" --table "$table" -o "$A/tuned.cakelib" >> "${LOG:-/dev/null}" 2>&1; then
        LIB=$A/tuned.cakelib
        say "artifact $1 tuned with $table"
    else
        say "FAIL: $1 could not be tuned with $table (its own dispatch below)"
    fi
}

warm_torch() {
    timeout 60 python3 -c "import torch, torch.nn.functional, torch._dynamo, torch._inductor" > /dev/null 2>&1 &
    WARMPID=$!
}

static_peers() {
    local secs=$1 shapes=$2 out=$3 p0=$SECONDS rc
    [ -n "${WARMPID:-}" ] && wait "$WARMPID" 2> /dev/null
    WARMPID=
    if [ "$secs" -lt 15 ]; then
        say "no time for the peers"
        return 124
    fi
    SWEEP_RUNS=10 SWEEP_PEERS_BUDGET=0 SWEEP_WARM_S=0.5 SWEEP_STATIC_UNTIL=$((secs - 4)) \
        timeout -k 3 "$secs" python3 bench/device/sweep.py peers "$shapes" "$out" >> "${LOG:-/dev/null}" 2>&1
    rc=$?
    say "peers: exit $rc in $((SECONDS - p0)) s, $(cnt torch_compile_static "$out") rows with the static compile"
    return $rc
}

check_best() {
    local lim=$1 out=$2 s0=$SECONDS
    shift 2
    python3 bench/device/gemmx.py best "$@" > "$A/best.txt" 2>> "${LOG:-/dev/null}"
    : > "$out"
    batch "$lim" "$A/best.txt" "$out" --check --sample --runs 1 --timeout 5
    say "best-variant checks: $(cnt '"check_ok":true' "$out") ok, $(cnt '"check_ok":false' "$out") FAIL of $(cnt . "$A/best.txt") in $((SECONDS - s0)) s"
}
