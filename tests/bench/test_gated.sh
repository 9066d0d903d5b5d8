#!/bin/sh
# test_gated.sh — bench/device/gated.py (the peers' timer) without a GPU, on a fake torch
# whose events read a simulated device clock: the hold keeps the host's queueing out of
# the timed window (a host slower than the hold gets its run done again with a longer
# hold, and the time stays the device's), the old method's time grows with the host's,
# a function that cannot be captured as a graph keeps its stream time, and graphs are
# tried only under GRAPH_UNDER_MS.
command -v python3 > /dev/null || exit 77
ROOT=${CAKE_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python3 - "$ROOT/bench/device" <<'PY' || { echo "FAIL: gated.py"; exit 1; }
import sys, time, types, contextlib
sys.path.insert(0, sys.argv[1])

class Dev:
    """a device clock (us): work queued runs after the host queued it and after what is
    before it; an event reads the time its stream reached it"""
    def __init__(self):
        self.free = 0.0
    def now(self):
        return time.perf_counter() * 1e6
    def run(self, us):
        self.free = max(self.free, self.now()) + us
    def sync(self):
        while self.now() < self.free:
            pass

dev = Dev()
KERNEL_US = 5.0

class Event:
    def __init__(self, enable_timing=False):
        self.t = 0.0
    def record(self):
        dev.free = max(dev.free, dev.now())
        self.t = dev.free
    def elapsed_time(self, other):
        return (other.t - self.t) / 1e3

class Flush:
    def fill_(self, v):
        dev.run(40.0)

class Graph:
    def replay(self):
        dev.run(KERNEL_US)

torch = types.ModuleType("torch")
torch.uint8 = torch.bfloat16 = "dt"
torch.empty = lambda *a, **k: Flush()
cuda = types.SimpleNamespace(
    Event=Event, CUDAGraph=Graph, synchronize=dev.sync,
    _sleep=lambda cycles: dev.run(cycles / 1000.0),          # 1000 cycles per us
    Stream=lambda: types.SimpleNamespace(wait_stream=lambda s: None),
    current_stream=lambda: types.SimpleNamespace(wait_stream=lambda s: None),
    stream=lambda s: contextlib.nullcontext(), graph=lambda g: contextlib.nullcontext())
torch.cuda = cuda
import gated

t = gated.Timer(torch)
assert 900 < t.cycles_per_us < 1100, t.cycles_per_us

def slow_host(us):
    """a launch whose host side takes `us` before the kernel is queued"""
    def fn():
        end = time.perf_counter() + us / 1e6
        while time.perf_counter() < end:
            pass
        dev.run(KERNEL_US)
    return fn

fast = t.time(slow_host(1), runs=10)
assert abs(fast["median_ms"] * 1e3 - KERNEL_US) < 1.0, fast
slow = t.time(slow_host(400), runs=10)
assert abs(slow["median_ms"] * 1e3 - KERNEL_US) < 1.0, slow      # the device's time only
assert slow["hold_us"] > 400, slow
old = t.old(slow_host(400), runs=10)
assert old * 1e3 > 300, old                                        # the old method timed the host

class Lurch:
    """fast while measured, then one run whose host is slow: the hold was too short"""
    def __init__(self):
        self.n = 0
    def __call__(self):
        self.n += 1
        slow_host(2000 if self.n == 12 else 1)()
lurch = t.time(Lurch(), runs=10)
assert lurch["redone"] >= 1, lurch
assert abs(lurch["median_ms"] * 1e3 - KERNEL_US) < 1.0, lurch

both = t.best(slow_host(50), runs=5)
assert "graph" in both and abs(both["graph"]["median_ms"] * 1e3 - KERNEL_US) < 1.0, both
assert gated.fastest(both)[0] in ("stream", "graph")

def no_capture():
    raise RuntimeError("operation not permitted when stream is capturing")
t.graph = lambda fn: no_capture()
kept = t.best(slow_host(1), runs=5)
assert "graph" not in kept and "graph_error" in kept and "stream" in kept, kept

KERNEL_US = 2000.0                                                 # 2 ms: no graph tried
long = t.best(slow_host(1), runs=3)
assert "graph" not in long and "graph_error" not in long, long
print("ok")
PY
