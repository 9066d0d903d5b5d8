#!/bin/bash
# run_dispatch.sh — what a launch through the library costs the host, and where a tiny
# kernel's device time goes (issue 13: "dispatch <= 1 us per call, <= 5 us of host time
# added to a launch"), in one device call:
#   overhead  `cakec lib bench --overhead` per op at a small shape (and gemm at 4096^3 and
#             a split-K sequence): select ns, host us per launch through the library (select
#             + cake_lib_launch, the launch cache hit), the prepared raw rt_launch of the same
#             kernel, the launch alone, on buffers that move every call (tensor maps encoded
#             again), and with the cache dropped before each call (the path before the cache);
#             and whether a launch rebound to a second set of buffers writes what the same
#             launch writes on its first set (rebind: "same", or the bytes that differ);
#             each shape is checked (--check --sample) and timed (median, cold L2) as it is
#   modes     the small shapes' `lib bench` medians again, one process each: plain, with
#             CAKE_TIMING_SPIN_US=10 (a spin kernel after the gate, as the peers' timer holds
#             the stream) and with CAKE_SMEM_CARVEOUT=100 (every kernel's preferred carve-out)
#   probe     bench/device/launch_probe.c: an empty kernel under each hold (none, the gate,
#             the spin, both), parameter sizes, dynamic shared memory and the carve-out,
#             cuLaunchKernelEx, a tiny row copy
#   python    bench/device/dispatch_py.py: host us per call of each op through cake.ops (the
#             custom op), its eager function, the Kernel call, a bare launch, and torch's own
#             op; device us of our kernel and torch's by gated.py's timer; every op checked
# The summary table is printed last. Honours $DEADLINE (default 40); every step has a timeout.
# Output under $OUT: dispatch_log.txt, overhead.jsonl, modes.jsonl, probe.jsonl, dispatch_py.json.
#   usage (device machine, repo root): bash bench/device/run_dispatch.sh
set -u
DEADLINE=${DEADLINE:-40}
T_RESERVE=2
. bench/device/lib.sh
LOG=$O/dispatch_log.txt
: > "$LOG"
A=$(mktemp -d "${TMPDIR:-/tmp}/dispatch.XXXXXX")
trap 'rm -rf "$A"' EXIT
LIB=${DISPATCH_LIB:-.carry/python/cake/cake.cakelib}   # DISPATCH_LIB: another artifact or folder
[ -e "$LIB" ] || { say "run_dispatch.sh: no $LIB (bench/device/carry.sh)"; exit 1; }
SHAPES="gemm:M=256,N=256,K=256
gemm_fp8:M=256,N=256,K=256
rmsnorm:M=64,N=1024
layernorm:M=64,N=1024
softmax:M=64,N=1024
cross_entropy:B=64,V=1024
fp8_row_quantize:M=64,N=1024
attention_fwd_gqa:BH=8,BHK=8,S=256
gemm:M=4096,N=4096,K=4096
gemm:M=393,N=1184,K=14008"
SMALL=$(echo "$SHAPES" | head -8)
PY_OPS=
PROBE_QUICK=
if [ "$DEADLINE" -lt 30 ]; then   # a short call: what the longer one left out or found open
    SHAPES="attention_fwd_gqa:BH=8,BHK=8,S=256
rmsnorm:M=64,N=1024
gemm:M=4096,N=4096,K=4096"
    SMALL="rmsnorm:M=64,N=1024
gemm:M=256,N=256,K=256
attention_fwd_gqa:BH=8,BHK=8,S=256"
    PY_OPS=attention_fwd_gqa,fp8_row_quantize
    PROBE_QUICK=1
fi
export PROBE_QUICK

# 1. the probe first (it needs no library): the floor
if t 10 cc -O2 bench/device/launch_probe.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs \
        -lcuda -o "$A/launch_probe" >> "$LOG" 2>&1; then
    t 8 "$A/launch_probe" 30 > "$O/probe.jsonl" 2>> "$LOG"
    say "probe: exit $? ($(cnt median_us "$O/probe.jsonl") cases)"
else
    say "probe: did not build"
fi

# 2. the library's launch overhead per op, checked and timed
: > "$O/overhead.jsonl"
: > "$O/modes.jsonl"
for s in $SHAPES; do
    op=${s%%:*} sh=${s#*:}
    lim=5
    [ "${op#attention}" != "$op" ] && lim=10   # its first launch lowers a large kernel
    t $lim "$C" lib run "$LIB" --op "$op" --shape "$sh" --check --sample --bench --overhead --json \
        > "$A/o.json" 2>> "$LOG"
    rc=$?
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['rc']=int(sys.argv[2]); d['op']=sys.argv[3]; d['shape']=sys.argv[4]; print(json.dumps(d))" \
        "$A/o.json" "$rc" "$op" "$sh" >> "$O/overhead.jsonl" 2>> "$LOG" ||
        printf '{"op":"%s","shape":"%s","rc":%d,"error":"no JSON"}\n' "$op" "$sh" "$rc" >> "$O/overhead.jsonl"
done
say "overhead: $(cnt '"dispatch"' "$O/overhead.jsonl") of $(echo "$SHAPES" | wc -l) shapes measured"

# 3. the small shapes timed again in one process each: with the spin hold after the gate
#    (CAKE_TIMING_SPIN_US=10), with every kernel's carve-out at 100% shared
#    (CAKE_SMEM_CARVEOUT=100), and plain (the same process shape as the other two)
echo "$SMALL" | sed 's/:/ /' > "$A/small.txt"
for mode in plain spin $([ -z "$PROBE_QUICK" ] && echo carve); do
    case $mode in
        plain) envs="CAKE_TIMING_SPIN_US=0" ;;
        spin) envs="CAKE_TIMING_SPIN_US=10" ;;
        carve) envs="CAKE_SMEM_CARVEOUT=100" ;;
    esac
    t 8 env $envs "$C" lib bench "$LIB" --shapes "$A/small.txt" --json 2>> "$LOG" |
        python3 -c "import json,sys
for l in sys.stdin:
    try: d = json.loads(l)
    except ValueError: continue
    print(json.dumps({'mode': sys.argv[1], 'op': d.get('op'), 'shape': d.get('shape'), 'median_ms': (d.get('bench') or {}).get('median_ms'), 'check_ok': d.get('check_ok')}))" "$mode" >> "$O/modes.jsonl"
done
say "modes: $(cnt median_ms "$O/modes.jsonl") rows"

# 4. the Python call path (DISPATCH_PY_OPS: only these ops)
t 25 env DISPATCH_PY_OPS="$PY_OPS" python3 bench/device/dispatch_py.py > "$O/python.txt" 2>> "$LOG"
say "python: exit $?"

# the summary, last
python3 - "$O" <<'EOF' | tee -a "$LOG"
import json, os, sys
o = sys.argv[1]
def rows(name):
    try:
        return [json.loads(l) for l in open(os.path.join(o, name)) if l.strip().startswith("{")]
    except OSError:
        return []
modes = {(r["mode"], r["op"], r["shape"]): r["median_ms"] for r in rows("modes.jsonl")}
def rb(n):   # a launch rebound to other buffers against the same launch on its own
    return "-" if n is None else "n/a" if n < 0 else "same" if n == 0 else f"{int(n)}B"
print("== launch through the library (C API), host us per launch; device us (median, cold L2)")
print(f"{'op':18} {'shape':22} {'check':5} {'sel ns':>6} {'lib':>6} {'raw':>6} {'added':>6} "
      f"{'no sel':>6} {'moved':>6} {'prep':>6} {'dev':>6} {'plain':>6} {'spin':>6} {'carve':>6} {'rebind':>6}")
for r in rows("overhead.jsonl"):
    d = r.get("dispatch", {})
    chk = r.get("check") or [{}]
    ok = "ok" if chk and all(c.get("ok") for c in chk) else ("ERR" if r.get("rc") else "?")
    dev = r.get("bench", {}).get("median_ms")
    m = lambda k: modes.get((k, r["op"], r["shape"]))
    g = lambda x: f"{x * 1e3:6.2f}" if x else "     -"
    f = lambda k, w=6, p=2: f"{d[k]:{w}.{p}f}" if k in d else " " * (w - 1) + "-"
    print(f"{r['op']:18} {r['shape']:22} {ok:5} {f('select_ns', 6, 0)} {f('lib_launch_us')} "
          f"{f('raw_launch_us')} {f('added_us')} {f('launch_only_us')} {f('moved_us')} {f('first_us')} "
          f"{g(dev)} {g(m('plain'))} {g(m('spin'))} {g(m('carve'))} "
          f"{rb(d.get('rebind_bytes_differ')):>6}  "
          f"{r.get('variant', r.get('error', ''))}")
print("== lib bench medians (us) per timer mode: plain (the gate), spin (gate + 10 us spin), carve (100% shared)")
for (op, shape) in dict.fromkeys((k[1], k[2]) for k in modes):
    print(f"  {op:18} {shape:22} " + " ".join(f"{m}={modes[(m, op, shape)] * 1e3:.2f}" for m in ("plain", "spin", "carve")
                                             if modes.get((m, op, shape))))
print("== probe: an empty kernel and friends, device us (median)")
for r in rows("probe.jsonl"):
    extra = " ".join(f"{k}={r[k]}" for k in ("smem", "carveout", "rows") if k in r)
    print(f"  {r['case']:28} {r['hold']:10} flush={str(r['flush']).lower():5} {r['median_us']:7.2f}  {extra}")
EOF
sed -n '/^== Python/,$p' "$O/python.txt"
