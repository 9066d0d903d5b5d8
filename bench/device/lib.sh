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
