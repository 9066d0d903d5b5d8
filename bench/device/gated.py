"""gated.py — the peers' timer, the same method as `cakec lib bench` (runtime/timing.c).

Each run: the L2 flushed (a 128 MiB fill), then the stream held by a spin kernel
(torch.cuda._sleep) while the host queues the start event, the launches and the stop
event, then a synchronize. The hold plays the part of the runtime's gate
(cuStreamWaitValue32): the GPU reaches the start event only after the whole run is
queued, so the events time the device's work and never the host's launch overhead
(Python, torch's dispatch, torch.compile's guards). A run whose queueing took longer
than the hold is done again with a hold twice as long. The same function is also
timed as a CUDA graph replay (one launch for all its kernels), and the faster of the
two is the peer's time: the best time the peer honestly has.

Before the gate, torch's events around a Python loop of launches measured the host
whenever it was slower than the flush in front of each run: peers at 5 us shapes
came out 2-4x slower in a call whose host was slower (bench/RESULTS.md, 2026-12-01).
`old()` is that method, kept to measure the difference.

    t = Timer(torch)            one per process (the flush buffer, the spin's clock)
    t.warm(seconds)             GPU work until the SM clock is steady
    t.time(fn, runs)            {"median_ms", "min_ms", "runs", "hold_us", "redone"}
    t.best(fn, runs)            {"stream": ..., "graph": ... or "graph_error"}
    t.old(fn, runs)             the previous method's median (ms)
"""
import time

WARMUP = 5                   # launches before the timed runs, as lib bench (lib_seq.c)
FLUSH_BYTES = 128 << 20      # at least twice the H200's L2 (runtime/timing.c: 2x L2)
HOLD_MIN_US = 30.0
HOLD_MAX_US = 20000.0
GRAPH_UNDER_MS = 1.0


class Timer:
    def __init__(self, torch):
        self.torch = torch
        self.flush = torch.empty(FLUSH_BYTES, dtype=torch.uint8, device="cuda")
        self.ev = [torch.cuda.Event(enable_timing=True) for _ in range(2)]
        self.cycles_per_us = self._spin_rate()

    def _spin_rate(self):
        """SM cycles per microsecond of torch.cuda._sleep at the clock it runs at now"""
        torch, (e0, e1) = self.torch, self.ev
        torch.cuda._sleep(100000)
        n = 2_000_000
        e0.record()
        torch.cuda._sleep(n)
        e1.record()
        torch.cuda.synchronize()
        return n / max(1e-3, e0.elapsed_time(e1) * 1e3)

    def warm(self, seconds=0.5):
        """bf16 GEMMs until `seconds` passed: the SM clock ramps up from idle first"""
        torch = self.torch
        a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
        end = time.time() + seconds
        while time.time() < end:
            for _ in range(8):
                a @ a
            torch.cuda.synchronize()
        self.cycles_per_us = max(self.cycles_per_us, self._spin_rate())

    def _queue_us(self, fn):
        """the host's time to queue one run (events and fn), in microseconds"""
        s, e = self.ev
        t0 = time.perf_counter()
        s.record()
        fn()
        e.record()
        us = (time.perf_counter() - t0) * 1e6
        self.torch.cuda.synchronize()
        return us

    def time(self, fn, runs=10):
        torch, (s, e) = self.torch, self.ev
        for _ in range(WARMUP):
            fn()
            torch.cuda.synchronize()
        host = max(self._queue_us(fn) for _ in range(3))
        hold = min(HOLD_MAX_US, max(HOLD_MIN_US, 3 * host + 20))
        ts, redone = [], 0
        while len(ts) < runs:
            self.flush.fill_(len(ts) & 0xFF)
            t0 = time.perf_counter()
            torch.cuda._sleep(int(hold * self.cycles_per_us))
            s.record()
            fn()
            e.record()
            queued = (time.perf_counter() - t0) * 1e6
            torch.cuda.synchronize()
            if queued > hold and hold < HOLD_MAX_US and redone < 2 * runs:
                hold, redone = min(HOLD_MAX_US, 2 * hold), redone + 1   # the gate opened early
                continue
            ts.append(s.elapsed_time(e))
        ts.sort()
        return {"median_ms": ts[len(ts) // 2], "min_ms": ts[0], "runs": runs,
                "hold_us": round(hold, 1), "redone": redone}

    def graph(self, fn):
        """fn captured as a CUDA graph (warmed up on a side stream first); its replay"""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            fn()
        torch.cuda.synchronize()
        return g

    def best(self, fn, runs=10, graph=True):
        """fn timed as launched and, below GRAPH_UNDER_MS, as a graph replay (above it the
        gaps between its kernels are under 1% of its time)"""
        out = {"stream": self.time(fn, runs)}
        if graph and out["stream"]["median_ms"] < GRAPH_UNDER_MS:
            try:
                g = self.graph(fn)
                out["graph"] = self.time(g.replay, runs)
                del g
            except Exception as ex:   # a peer that cannot be captured keeps its stream time
                self.torch.cuda.synchronize()
                out["graph_error"] = f"{type(ex).__name__}: {str(ex)[:100]}"
        return out

    def old(self, fn, runs=10):
        """the sweep's method until 2026-12-01: events around a Python loop, no gate"""
        torch = self.torch
        fn()
        torch.cuda.synchronize()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(runs)]
        for s, e in ev:
            self.flush.fill_(1)
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        ts = sorted(s.elapsed_time(e) for s, e in ev)
        return ts[len(ts) // 2]


def fastest(timed):
    """(mode, timing) of the faster of a best() result's stream and graph timings"""
    modes = [(m, timed[m]) for m in ("stream", "graph") if m in timed]
    return min(modes, key=lambda mt: mt[1]["median_ms"])
