#!/bin/sh
# test_slurm.sh — the Slurm runner of `cakec lib tune` and `cakec tune`, for real:
# writes a one-node slurm.conf in a temp folder (this machine as the node, auth/none,
# proctrack/linuxproc and task/none so that neither systemd nor cgroups are needed,
# no accounting), starts slurmctld and slurmd as background processes it owns (killed
# by pid at the end), and submits CPU-only tuning jobs as job arrays: each candidate
# is a child `cakec lib bench --fake-measure h200` (or `cakec cost` for `cakec tune`),
# the cost model's time standing in for a GPU's. The node declares two GPUs (GRES
# gpu:2 on two placeholder files: no NVIDIA device needed) and every task asks for one
# (`--gres=gpu:1`), so Slurm hands each task its own CUDA_VISIBLE_DEVICES, which the
# table's measured_on records. Checks that the table gathered from the array's files is
# the one the local runner gives, and that a library built with it dispatches from it.
# Skips (77) only when the Slurm binaries are absent.
set -u
for b in slurmctld slurmd sbatch squeue sinfo; do
    command -v "$b" > /dev/null 2>&1 || { echo "skip: $b not found (apt-get install slurm-wlm)"; exit 77; }
done
C=${CAKEC:?CAKEC not set}
SRC=${CAKE_SOURCE_DIR:-.}
D=$(mktemp -d "${TMPDIR:-/tmp}/cake-slurm-test.XXXXXX")
H=$(hostname -s)
PORT=$((20000 + $$ % 20000))
CTLD=""
SLURMD=""
fail=0
cleanup() {
    [ -n "$SLURMD" ] && kill "$SLURMD" 2> /dev/null
    [ -n "$CTLD" ] && kill "$CTLD" 2> /dev/null
    [ -n "$SLURMD" ] && wait "$SLURMD" 2> /dev/null
    [ -n "$CTLD" ] && wait "$CTLD" 2> /dev/null
    rm -rf "$D"
}
trap cleanup EXIT
mkdir -p "$D/state" "$D/spool"
: > "$D/gpu0"
: > "$D/gpu1"
printf 'NodeName=%s Name=gpu File=/dev/null\nNodeName=%s Name=gpu File=/dev/zero\n' "$H" "$H" > "$D/gres.conf"
cat > "$D/slurm.conf" << CONF
ClusterName=caketest
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
GresTypes=gpu
ReturnToService=2
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) Gres=gpu:2 State=UNKNOWN
PartitionName=cake Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$D/slurm.conf
slurmctld -D > "$D/slurmctld.out" 2>&1 &
CTLD=$!
slurmd -D > "$D/slurmd.out" 2>&1 &
SLURMD=$!
up=0
for _ in $(seq 1 60); do
    if sinfo -h -o %T 2> /dev/null | grep -q idle; then up=1; break; fi
    sleep 0.5
done
if [ $up = 0 ]; then
    echo "FAIL: the test cluster did not come up"
    tail -5 "$D/slurmctld.log" "$D/slurmd.log" "$D/slurmctld.out" "$D/slurmd.out" 2> /dev/null
    exit 1
fi

check() { # NAME COND...
    name=$1
    shift
    if "$@"; then echo "ok: $name"; else echo "FAIL: $name"; fail=1; fi
}

printf 'rmsnorm M=16384,N=1024   # two variants of tests/lib/small hold here\nsoftmax M=4096,N=2048\n' > "$D/shapes.txt"
"$C" lib tune "$SRC/tests/lib/small" --shapes "$D/shapes.txt" --fake-measure h200 -o "$D/local.json" \
    --slurm-dir "$D/local" > "$D/local.out" 2>&1
check "lib tune, local runner" [ $? = 0 ]
"$C" lib tune "$SRC/tests/lib/small" --shapes "$D/shapes.txt" --fake-measure h200 -o "$D/slurm.json" \
    --runner slurm --slurm-dir "$D/work" > "$D/slurm.out" 2>&1
rc=$?
check "lib tune, slurm runner" [ $rc = 0 ]
[ $rc = 0 ] || tail -5 "$D/slurm.out"
check "the array ran one task per candidate" [ "$(ls "$D/work" | grep -c '^rc_')" = 3 ]
check "the array's logs are there" [ -f "$D/work/slurm_0.log" ]
python3 - "$D/local.json" "$D/slurm.json" << 'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert b["runner"] == "slurm" and a["runner"] == "local", (a["runner"], b["runner"])
assert b["device"] == "fake:h200", b["device"]
strip = lambda t: [{k: v for k, v in e.items() if k != "measured_on"} for e in t["entries"]]
assert strip(a) == strip(b), "the tables differ"
n = sum(len(e["times_ms"]) for e in b["entries"])
assert n == 3 and not any(e["failed"] for e in b["entries"]), b["entries"]
vis = {m.get("visible_devices") for e in b["entries"] for m in e["measured_on"].values()}
assert vis and vis <= {"0", "1"}, vis   # Slurm bound each task to one of the two GPUs
print("ok: the gathered table is the local runner's (3 candidates timed, on GPUs %s)" % sorted(vis))
PY
check "tables agree" [ $? = 0 ]
"$C" lib tune "$D/work/tune.cakelib" --shapes "$D/shapes.txt" --fake-measure h200 -o "$D/batch.json" \
    --runner slurm --per-task shape --slurm-dir "$D/batch" > "$D/batch.out" 2>&1
check "lib tune, slurm runner, one task per shape" [ $? = 0 ]
check "that array ran 2 tasks" [ "$(ls "$D/batch" | grep -c '^rc_')" = 2 ]
check "and gathered the same table" python3 -c "
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
strip = lambda t: [{k: v for k, v in e.items() if k != 'measured_on'} for e in t['entries']]
sys.exit(strip(a) != strip(b))" "$D/slurm.json" "$D/batch.json"
"$C" lib tune "$D/work/tune.cakelib" --shapes "$D/shapes.txt" --fake-measure h200 -o "$D/nogres.json" \
    --runner slurm --gres none --slurm-dir "$D/nogres" > "$D/nogres.out" 2>&1
check "--gres none: tasks without a GPU of their own" python3 -c "
import json, sys
t = json.load(open(sys.argv[1]))
sys.exit(any('visible_devices' in m for e in t['entries'] for m in e['measured_on'].values()))" "$D/nogres.json"
"$C" lib build "$SRC/tests/lib/small" -o "$D/tuned.cakelib" --table "$D/slurm.json" --no-model > /dev/null 2>&1
check "lib build --table" [ $? = 0 ]
sel=$("$C" lib select "$D/tuned.cakelib" --op rmsnorm --shape M=16384,N=1024 --json)
best=$(python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['entries'][0]['times_ms']; print(min(t, key=t.get))" "$D/slurm.json")
check "select dispatches from the tuned table (measured at this shape)" sh -c "printf '%s' '$sel' | grep -q '\"why\":\"measured\"'"
check "select picks the fastest measured ($best)" sh -c "printf '%s' '$sel' | grep -q '\"variant\":\"$best\"'"

# cakec tune: the same runner, candidates as one array
"$C" tune "$SRC/examples/rmsnorm.tir" --space THREADS=64,128 --shape M=16384,N=1024 \
    --fake-measure h200 --runner slurm --slurm-dir "$D/tune" --json > "$D/tune.json" 2> "$D/tune.err"
check "cakec tune --runner slurm" [ $? = 0 ]
check "cakec tune's array ran 3 tasks" [ "$(ls "$D/tune" | grep -c '^rc_')" = 3 ]
"$C" tune "$SRC/examples/rmsnorm.tir" --space THREADS=64 --shape M=1,N=8 --runner nosuch > /dev/null 2>&1
check "an unknown runner is exit 1" [ $? = 1 ]
exit $fail
