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
#   spin      the same shapes' `lib bench` median again with CAKE_TIMING_SPIN_US=10 (a spin
#             kernel after the gate, as the peers' timer holds the stream)
#   probe     bench/device/launch_probe.c: an empty kernel under each hold (none, the gate,
#             the spin, both), parameter sizes, dynamic shared memory and the carve-out,
#             cuLaunchKernelEx, a tiny row copy
#   python    bench/device/dispatch_py.py: host us per call of each op through cake.ops (the
#             custom op), its eager function, the Kernel call, a bare launch, and torch's own
#             op; device us of our kernel and torch's by gated.py's timer; every op checked
# The summary table is printed last. Honours $DEADLINE (default 40); every step has a timeout.
# Output under $OUT: dispatch_log.txt, overhead.jsonl, spin.jsonl, probe.jsonl, dispatch_py.json.
#   usage (device machine, repo root): bash bench/device/run_dispatch.sh
set -u
DEADLINE=${DEADLINE:-40}
T_RESERVE=2
. bench/device/lib.sh
LOG=$O/dispatch_log.txt
: > "$LOG"
A=$(mktemp -d "${TMPDIR:-/tmp}/dispatch.XXXXXX")
trap 'rm -rf "$A"' EXIT
LIB=.carry/python/cake/cake.cakelib
[ -f "$LIB" ] || { say "run_dispatch.sh: no $LIB (bench/device/carry.sh)"; exit 1; }
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

# 1. the probe first (it needs no library): the floor
if t 10 cc -O2 bench/device/launch_probe.c -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs \
        -lcuda -o "$A/launch_probe" >> "$LOG" 2>&1; then
    t 8 "$A/launch_probe" 40 > "$O/probe.jsonl" 2>> "$LOG"
    say "probe: exit $? ($(cnt median_us "$O/probe.jsonl") cases)"
else
    say "probe: did not build"
fi

# 2. the library's launch overhead per op, checked and timed
: > "$O/overhead.jsonl"
: > "$O/spin.jsonl"
for s in $SHAPES; do
    op=${s%%:*} sh=${s#*:}
    t 5 "$C" lib run "$LIB" --op "$op" --shape "$sh" --check --sample --bench --overhead --json \
        > "$A/o.json" 2>> "$LOG"
    rc=$?
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['rc']=int(sys.argv[2]); d['op']=sys.argv[3]; d['shape']=sys.argv[4]; print(json.dumps(d))" \
        "$A/o.json" "$rc" "$op" "$sh" >> "$O/overhead.jsonl" 2>> "$LOG" ||
        printf '{"op":"%s","shape":"%s","rc":%d,"error":"no JSON"}\n' "$op" "$sh" "$rc" >> "$O/overhead.jsonl"
done
say "overhead: $(cnt '"dispatch"' "$O/overhead.jsonl") of $(echo "$SHAPES" | wc -l) shapes measured"

# 3. the Python call path
t 25 python3 bench/device/dispatch_py.py > "$O/python.txt" 2>> "$LOG"
say "python: exit $?"

# 4. our timer with the spin hold (CAKE_TIMING_SPIN_US=10) at the small shapes
for s in $(echo "$SHAPES" | head -8); do
    op=${s%%:*} sh=${s#*:}
    t 4 env CAKE_TIMING_SPIN_US=10 "$C" lib bench "$LIB" --op "$op" --shape "$sh" --json > "$A/s.json" 2>> "$LOG"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({'op':sys.argv[2],'shape':sys.argv[3],'median_ms':d['bench']['median_ms']}))" \
        "$A/s.json" "$op" "$sh" >> "$O/spin.jsonl" 2>> "$LOG"
done


# the summary, last
python3 - "$O" <<'EOF' | tee -a "$LOG"
import json, os, sys
o = sys.argv[1]
def rows(name):
    try:
        return [json.loads(l) for l in open(os.path.join(o, name)) if l.strip().startswith("{")]
    except OSError:
        return []
spin = {(r["op"], r["shape"]): r["median_ms"] for r in rows("spin.jsonl")}
def rb(n):   # a launch rebound to other buffers against the same launch on its own
    return "-" if n is None else "n/a" if n < 0 else "same" if n == 0 else f"{int(n)}B"
print("== launch through the library (C API), host us per launch; device us (median, cold L2)")
print(f"{'op':18} {'shape':22} {'check':5} {'sel ns':>6} {'lib':>6} {'raw':>6} {'added':>6} "
      f"{'no sel':>6} {'moved':>6} {'prep':>6} {'dev':>7} {'dev+spin':>8} {'rebind':>6}")
for r in rows("overhead.jsonl"):
    d = r.get("dispatch", {})
    chk = r.get("check") or [{}]
    ok = "ok" if chk and all(c.get("ok") for c in chk) else ("ERR" if r.get("rc") else "?")
    dev = r.get("bench", {}).get("median_ms")
    sp = spin.get((r["op"], r["shape"]))
    f = lambda k, w=6, p=2: f"{d[k]:{w}.{p}f}" if k in d else " " * (w - 1) + "-"
    print(f"{r['op']:18} {r['shape']:22} {ok:5} {f('select_ns', 6, 0)} {f('lib_launch_us')} "
          f"{f('raw_launch_us')} {f('added_us')} {f('launch_only_us')} {f('moved_us')} {f('first_us')} "
          f"{dev * 1e3 if dev else float('nan'):7.2f} {sp * 1e3 if sp else float('nan'):8.2f} "
          f"{rb(d.get('rebind_bytes_differ')):>6}  "
          f"{r.get('variant', r.get('error', ''))}")
print("== probe: an empty kernel and friends, device us (median)")
for r in rows("probe.jsonl"):
    extra = " ".join(f"{k}={r[k]}" for k in ("smem", "carveout", "rows") if k in r)
    print(f"  {r['case']:28} {r['hold']:10} flush={str(r['flush']).lower():5} {r['median_us']:7.2f}  {extra}")
EOF
sed -n '/^== Python/,$p' "$O/python.txt"
