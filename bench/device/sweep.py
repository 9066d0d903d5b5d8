"""sweep.py — the library's acceptance sweep (issue 13), run by run_sweep.sh.

    sweep.py shapes [SEED]            the seeded shapes, one `OP DIM=V,...` per line (stdout)
    sweep.py peers SHAPES [OUT.jsonl] [--trials N --sync DIR] [--old SHAPES2] [--ours LIB.jsonl]
                                      every shape's peers timed in this one process, a JSON
                                      line per shape and trial as soon as it is known (the
                                      last line of a shape sums up its trials); --sync: after
                                      trial k, DIR/peers_k.done, then wait for DIR/go_{k+1}
                                      (the shell times the library in between); --old: those
                                      shapes timed with the old method too (old_ms); --ours:
                                      the library's times, so the per-shape compiles go
                                      first where the library leads most
    sweep.py tune ALL.jsonl DEVICE > TABLE.json   (DEVICE: unless the rows name it)
                                      a tuned table (the format of `lib tune -o`) from the
                                      `lib bench --shapes --all` rows: every variant's time
    sweep.py analyze OUTDIR           where the rows ops lose: by op and class (N bucket, N % 8,
                                      M bucket), the chosen variant's ratio beside the best
                                      variant's (lib_all.jsonl: what a perfect table gives)
    sweep.py table LIB.jsonl PEERS.jsonl OUTDIR [LIB2.jsonl ...]
                                      the per-shape table (sweep_table.md, sweep.json), the
                                      picture (sweep.svg) and the per-op summary (stdout);
                                      LIB2...: more timing passes of the library
    sweep.py order LIB.jsonl          its shapes, fastest first (the order of a timing pass)
    sweep.py slim LIB.jsonl ...       the rows without their cost documents, in place
    sweep.py subset SHAPES K EXTRA    EXTRA's shapes and every K-th other shape of SHAPES
    sweep.py variance PEERS.jsonl LIB.jsonl [LIB2.jsonl ...]
                                      the --old shapes: old and new method and the library,
                                      per trial, with each one's spread

Shapes are log-uniform: GEMM M, N in 1..16384 (a third with M <= 64), K in 64..16384,
M ragged (N and K multiples of 8, 16 for K of gemm_fp8: the GEMMs' TMA row pitches); norms
M in 1..1e6, N in 64..65536; softmax and cross-entropy N up to 262144; each capped by
memory and time (CAP_ELEMS, CAP_FLOPS). The peers are cuBLAS (torch.matmul), for gemm_fp8
torch._scaled_mm where it takes the shape (N and K multiples of 16), cuBLAS bf16 on the
operands dequantized beforehand (`cublas_bf16_dequant`) and torch eager dequantizing in the
call (so every shape has a peer; `refused` says why _scaled_mm is missing), torch eager
(and F.rms_norm), torch.compile with dynamic shapes (one compilation per op, in the first
SWEEP_PEERS_BUDGET seconds) and then, while SWEEP_STATIC_UNTIL seconds last, torch.compile
specialised to each rows-op shape (dynamic=False, a compilation per shape); a shape's peer
is the fastest of those measured there (`all` lists them).

The method (one for both sides): every time is the median of RUNS runs, each with the L2
flushed before it and the device's work alone between the events (`cakec lib bench`:
runtime/timing.c's gate; the peers: gated.py's hold, as a launch and as a CUDA graph
replay, the faster kept), after the GPU was warmed to its steady clock. A side's time at a
shape is its best median over the trials of the call (the library's `lib bench` passes,
the peers' trials between them: A B A B), and the spread between trials is kept
(trials_ms, peer_trials_ms) so the table shows the noise. shapes and table need no torch.
"""
import json
import math
import os
import random
import sys
import time

START = time.time()          # SWEEP_STATIC_UNTIL counts from the process's start
CAP_ELEMS = 1 << 26          # an input of at most 64 Mi elements (the oracle fills it on the host)
CAP_FLOPS = 2e12             # a GEMM of at most 2 TFLOP (~3 ms on the H200)
RUNS = int(os.environ.get("SWEEP_RUNS", "10"))
AGAIN = 1.2                  # trials after the first time again the peers within 1.2x of the best
# the headline shapes, beside the drawn ones: one huge row, short rows, many rows
ANCHORS = ["softmax M=1,N=262144", "softmax M=4,N=65536", "cross_entropy B=1,V=262144",
           "cross_entropy B=2048,V=32000", "rmsnorm M=1,N=65536", "rmsnorm M=16384,N=1024",
           "layernorm M=4,N=65536", "layernorm M=16384,N=1024", "softmax M=32768,N=1024",
           "gemm M=128,N=4096,K=4096", "gemm M=3072,N=3072,K=3072", "gemm M=16,N=8192,K=8192"]
COUNTS = {"gemm": 90, "gemm_fp8": 24, "rmsnorm": 46, "layernorm": 40, "softmax": 46,
          "cross_entropy": 40, "fp8_row_quantize": 30}
NONGEMM = ("rmsnorm", "layernorm", "softmax", "cross_entropy", "fp8_row_quantize")


def logu(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def round_to(v, m, lo):
    return max(lo, (v // m) * m)


def gen_gemm(rng, op, i):
    kmul = 16 if op == "gemm_fp8" else 8
    for _ in range(1000):
        m = logu(rng, 1, 64) if i % 3 == 0 else logu(rng, 1, 16384)
        n = round_to(logu(rng, 8, 16384), 8, 8)   # the GEMMs' TMA pitches: N, K % 8 == 0; M is ragged
        k = round_to(logu(rng, 64 if op == "gemm" else 128, 16384), kmul, 64 if op == "gemm" else 128)
        if 2.0 * m * n * k <= CAP_FLOPS and max(m, n) * k <= CAP_ELEMS:
            return f"M={m},N={n},K={k}"
    return "M=64,N=4096,K=4096"


def gen_rows(rng, nmax, names=("M", "N"), mmax=1_000_000, nmin=64):
    for _ in range(1000):
        n = logu(rng, nmin, nmax)
        m = logu(rng, 1, mmax)
        if m * n <= CAP_ELEMS:
            return f"{names[0]}={m},{names[1]}={n}"
    return f"{names[0]}=1,{names[1]}={nmin}"


def shapes(seed=2026):
    rng = random.Random(seed)
    out = []
    for op, count in COUNTS.items():
        for i in range(count):
            if op.startswith("gemm"):
                s = gen_gemm(rng, op, i)
            elif op in ("softmax",):
                s = gen_rows(rng, 262144)
            elif op == "cross_entropy":
                s = gen_rows(rng, 262144, ("B", "V"), mmax=65536)
            else:
                s = gen_rows(rng, 65536)
            out.append(f"{op} {s}")
    rng.shuffle(out)   # the ops interleaved: a step cut short by its timeout cuts every op alike
    return ANCHORS + out


def parse_shape(text):
    return {kv.split("=")[0]: int(kv.split("=")[1]) for kv in text.split(",") if kv}


# ---- peers (torch) ---------------------------------------------------------------

def peer_fns(torch, F):
    """the rows ops as torch functions (what torch eager and torch.compile run)"""
    def rms(x, w, eps):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)

    def ln(x, w, b, eps):
        return F.layer_norm(x, (x.shape[-1],), w, b, eps)

    def quant(x):
        sc = x.abs().amax(-1, keepdim=True).float().clamp(min=1e-12) / 448.0
        return (x.float() / sc).to(torch.float8_e4m3fn), sc

    def ce(x, t):
        return F.cross_entropy(x, t, reduction="none")

    def sm(x):
        return torch.softmax(x, -1)
    return {"rmsnorm": rms, "layernorm": ln, "fp8_row_quantize": quant, "softmax": sm,
            "cross_entropy": ce}


def fresh(fn, tag):
    """fn with a code object of its own: torch.compile keeps its graphs per code object,
    so a shape-specialised compile never serves (or is served by) the dynamic one"""
    import types
    code = fn.__code__.replace(co_name=f"{fn.__name__}_{tag}")
    return types.FunctionType(code, fn.__globals__, code.co_name, fn.__defaults__, fn.__closure__)


class Peers:
    """every shape's peers, timed with gated.Timer (the device's work only, L2 flushed,
    as a launch and as a CUDA graph, the faster kept); trials spread over the call"""

    def __init__(self, torch, F, runs):
        import gated
        self.torch, self.F, self.runs = torch, F, runs
        self.timer = gated.Timer(torch)
        self.fns = peer_fns(torch, F)
        self.dynamic, self.static = {}, {}
        self.t0 = time.time()
        self.budget = float(os.environ.get("SWEEP_PEERS_BUDGET", "40"))   # s for the dynamic compiles

    def inputs(self, op, s, seed):
        torch, dev, bf = self.torch, "cuda", self.torch.bfloat16
        torch.manual_seed(seed)
        if op in ("gemm", "gemm_fp8"):
            a = torch.randn(s["M"], s["K"], device=dev, dtype=bf)
            b = torch.randn(s["N"], s["K"], device=dev, dtype=bf)
            if op == "gemm_fp8":
                a, b = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
            return a, b
        if op in ("rmsnorm", "layernorm", "fp8_row_quantize"):
            x = torch.randn(s["M"], s["N"], device=dev, dtype=bf)
            w = torch.randn(s["N"], device=dev, dtype=bf)
            b = torch.randn(s["N"], device=dev, dtype=bf)
            return {"rmsnorm": (x, w, 1e-6), "layernorm": (x, w, b, 1e-6), "fp8_row_quantize": (x,)}[op]
        if op == "softmax":
            return (torch.randn(s["M"], s["N"], device=dev),)
        return (torch.randn(s["B"], s["V"], device=dev), torch.randint(0, s["V"], (s["B"],), device=dev))

    def candidates(self, op, s, args, key, refused):
        """[(name, fn)]: every peer of op at this shape (refused: name -> why not)"""
        torch, F, bf = self.torch, self.F, self.torch.bfloat16
        if op == "gemm":
            a, b = args
            return [("cublas", lambda: torch.matmul(a, b.t()))]
        if op == "gemm_fp8":
            a, b = args
            one = torch.ones((), device="cuda")
            out = []
            try:   # refuses N or K not a multiple of 16: then the other peers stand in
                torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=bf)
                out.append(("scaled_mm", lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                                                   out_dtype=bf)))
            except RuntimeError as e:
                refused["scaled_mm"] = str(e)[:120]
            # cuBLAS bf16 on the operands dequantized beforehand (the conversion not timed),
            # and torch eager doing the whole op (dequantize, scale, matmul)
            a16, b16 = a.to(bf), b.to(bf)
            out.append(("cublas_bf16_dequant", lambda: torch.matmul(a16, b16.t())))
            out.append(("torch_eager", lambda: torch.matmul(a.to(bf) * 1.0, (b.to(bf) * 1.0).t())))
            return out
        fn = self.fns[op]
        out = [("torch_eager", lambda: fn(*args))]
        if op == "rmsnorm" and hasattr(F, "rms_norm"):
            x, w, _ = args
            out.append(("torch_rms_norm", lambda: F.rms_norm(x, (s["N"],), w, 1e-6)))
        if op in self.dynamic or time.time() - self.t0 < self.budget:
            if op not in self.dynamic:
                self.dynamic[op] = torch.compile(fresh(fn, "dynamic"), dynamic=True)
            f = self.dynamic[op]
            out.append(("torch_compile", lambda: f(*args)))
        if key in self.static:
            g = self.static[key]
            out.append(("torch_compile_static", lambda: g(*args)))
        return out

    def add_static(self, op, key):
        """torch.compile specialised to this shape (dynamic=False, a compilation per shape)"""
        self.static[key] = self.torch.compile(fresh(self.fns[op], f"s{len(self.static)}"), dynamic=False)

    def one(self, row, trial, only=None, old=False):
        """time row's shape (its peers named in `only`, or all) once more; fold into row"""
        op, s = row["op"], parse_shape(row["shape"])
        key = (op, row["shape"])
        refused = {}
        args = self.inputs(op, s, trial)
        for name, fn in self.candidates(op, s, args, key, refused):
            if only is not None and name not in only:
                continue
            try:
                timed = self.timer.best(fn, self.runs)
            except Exception as e:   # one peer failing leaves the others
                row.setdefault("peer_errors", {})[name] = f"{type(e).__name__}: {str(e)[:160]}"
                self.torch.cuda.synchronize()
                continue
            modes = row.setdefault("modes", {}).setdefault(name, {})
            for m in ("stream", "graph"):
                if m in timed:
                    modes.setdefault(m, []).append(round(timed[m]["median_ms"], 6))
                    mins = row.setdefault("min_ms", {})
                    mins[name] = min(mins.get(name, 1e9), timed[m]["min_ms"])
            if "graph_error" in timed:
                row.setdefault("graph_errors", {})[name] = timed["graph_error"]
            best_now = min(timed[m]["median_ms"] for m in ("stream", "graph") if m in timed)
            row.setdefault("trials_ms", {}).setdefault(name, []).append(round(best_now, 6))
            row.setdefault("hold_us", {})[name] = timed["stream"]["hold_us"]
            if old:
                row.setdefault("old_ms", {}).setdefault(name, []).append(round(self.timer.old(fn, self.runs), 6))
        if refused:
            row["refused"] = refused
        del args
        summarize_peer(row, trial)

    def again(self, row):
        """the peers worth timing again: within AGAIN of the best so far"""
        best = row.get("peer_ms")
        return None if not best else {n for n, ms in row["all"].items() if ms <= AGAIN * best}


def summarize_peer(row, trial):
    """row's peer, peer_ms and all (each peer's best median over trials and modes)"""
    row["trials"] = trial
    tms = row.get("trials_ms", {})
    row["all"] = {n: min(v) for n, v in tms.items() if v}
    if row["all"]:
        best = min(row["all"], key=row["all"].get)
        modes = row["modes"][best]
        mode = min((m for m in modes if modes[m]), key=lambda m: min(modes[m]))
        row.update(peer=best, peer_ms=row["all"][best], peer_mode=mode,
                   peer_min_ms=row["min_ms"][best], peer_trials_ms=tms[best])
    else:
        row.update(peer="error", peer_ms=None, error=row.get("error") or
                   "; ".join(f"{k}: {v}" for k, v in row.get("peer_errors", {}).items())[:300] or "no peer")


def wait_for(path, stop, seconds):
    """until path (the shell's go) or stop exists, or `seconds` passed; whether go came"""
    end = time.time() + seconds
    while time.time() < end and not os.path.exists(stop):
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def static_order(rows, ours_path):
    """the rows ops' shapes in the order their per-shape compiles run (each ~0.7 s: the
    time may not last for all): where the library leads its best peer so far by most
    first, so the strongest peer meets every claim of a win before the losses"""
    ours = {k: (r.get("bench") or {}).get("median_ms") for k, r in jsonl(ours_path).items()}

    def lead(row):
        ms = ours.get((row["op"], row["shape"]))
        return row["peer_ms"] / ms if ms and row.get("peer_ms") else float("inf")
    return sorted((r for r in rows if r["op"] in NONGEMM and r.get("all")), key=lead, reverse=True)


def peers_main(path, out_path, trials=1, sync=None, old_path=None, ours_path=None):
    """sweep.py peers SHAPES [OUT] [--trials N --sync DIR] [--old SHAPES2]: trial 1 times
    every peer of every shape, then (SWEEP_STATIC_UNTIL) torch.compile per shape; with
    --sync, after trial k it writes DIR/peers_k.done and waits for DIR/go_{k+1} (the shell
    times the library meanwhile) or DIR/stop; trials 2.. time again the peers within 1.5x
    of a shape's best. A row per shape and trial, the last one of a shape the summary."""
    import warnings
    import torch
    import torch.nn.functional as F
    warnings.filterwarnings("ignore")
    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 1 << 20)
    p = Peers(torch, F, RUNS)
    r0 = p.timer.cycles_per_us
    p.timer.warm(float(os.environ.get("SWEEP_WARM_S", "0.5")))
    print(f"peers: the spin's clock {r0:.0f} MHz before the warm-up, {p.timer.cycles_per_us:.0f} after",
          file=sys.stderr)
    old_keys = set()
    if old_path:
        old_keys = {tuple(l.split("#")[0].split()) for l in open(old_path) if l.split("#")[0].strip()}
    out = open(out_path, "w") if out_path else sys.stdout
    rows = []
    for line in open(path):
        line = line.split("#")[0].strip()
        if line:
            op, shape = line.split()
            rows.append({"op": op, "shape": shape})

    def emit(row):
        row["at_s"] = round(time.time() - p.t0, 2)
        out.write(json.dumps(row) + "\n")
        out.flush()

    def time_row(row, trial, only=None):
        try:
            p.one(row, trial, only, old=(row["op"], row["shape"]) in old_keys)
        except Exception as e:   # a shape whose peers fail is reported, the next one runs
            row.update(peer=row.get("peer", "error"), error=f"{type(e).__name__}: {str(e)[:200]}")
            row.setdefault("peer_ms", None)
        torch.cuda.empty_cache()
        emit(row)

    for row in rows:
        time_row(row, 1)
    until = START + float(os.environ.get("SWEEP_STATIC_UNTIL", "0"))
    for row in static_order(rows, ours_path):
        if time.time() > until:
            break
        try:
            p.add_static(row["op"], (row["op"], row["shape"]))
        except Exception as e:
            row["static_error"] = f"{type(e).__name__}: {str(e)[:200]}"
            continue
        time_row(row, 1, {"torch_compile_static"})
    for trial in range(2, trials + 1):
        if sync:
            open(os.path.join(sync, f"peers_{trial - 1}.done"), "w").close()
            if not wait_for(os.path.join(sync, f"go_{trial}"), os.path.join(sync, "stop"), 300):
                break
        p.timer.warm(0.3)
        for row in rows:
            if os.path.exists(os.path.join(sync or "/nonexistent", "stop")):
                break
            time_row(row, trial, p.again(row))
    if sync:
        open(os.path.join(sync, "peers.done"), "w").close()


# ---- the table and the picture -----------------------------------------------------

def size_of(op, s):
    """the problem size on the picture's x axis: flops for GEMM, elements otherwise"""
    if op.startswith("gemm"):
        return 2.0 * s["M"] * s["N"] * s["K"]
    return float(s.get("M", s.get("B", 1)) * s.get("N", s.get("V", 1)))


def trial_ratios(r):
    """peer / library trial by trial (the trials both sides had)"""
    pt, ot = r.get("peer_trials_ms") or [], r.get("trials_ms") or []
    return [p / o for p, o in zip(pt, ot) if p and o]


def svg(rows, path):
    ops = [op for op in COUNTS if any(r["op"] == op for r in rows)]
    W, H, PAD, GAP = 360, 220, 44, 16
    cols = 3
    nrow = (len(ops) + cols - 1) // cols
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * (W + GAP) + GAP}" '
             f'height="{nrow * (H + GAP) + GAP + 34}" font-family="sans-serif" font-size="10">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{GAP}" y="14" font-size="12">CAKE library / best peer (ratio &gt; 1: the '
             'library is faster) against problem size; lines at 1.0 and 0.9</text>']
    for i, op in enumerate(ops):
        ox, oy = GAP + (i % cols) * (W + GAP), 24 + GAP + (i // cols) * (H + GAP)
        pts = [(size_of(r["op"], parse_shape(r["shape"])), r["ratio"], r["check"], trial_ratios(r)) for r in rows
               if r["op"] == op and r["ratio"]]
        if not pts:
            continue
        xs = [math.log10(p[0]) for p in pts]
        x0, x1 = min(xs), max(xs) + 1e-9
        y0, y1 = 0.0, max(2.0, max(p[1] for p in pts) * 1.05)

        def X(v):
            return ox + PAD + (math.log10(v) - x0) / (x1 - x0) * (W - PAD - 8)

        def Y(v):
            return oy + H - 20 - (min(v, y1) - y0) / (y1 - y0) * (H - 36)
        parts.append(f'<rect x="{ox}" y="{oy}" width="{W}" height="{H}" fill="none" stroke="#999"/>')
        parts.append(f'<text x="{ox + PAD}" y="{oy + 12}" font-size="11">{op} ({len(pts)} shapes)</text>')
        for level, color in ((1.0, "#2a2"), (0.9, "#c22")):
            parts.append(f'<line x1="{ox + PAD}" x2="{ox + W - 8}" y1="{Y(level):.1f}" y2="{Y(level):.1f}" '
                         f'stroke="{color}" stroke-dasharray="4,3"/>')
            parts.append(f'<text x="{ox + 4}" y="{Y(level) + 3:.1f}">{level:.1f}</text>')
        for t in range(int(math.floor(y1)) + 1):
            if t not in (1,):
                parts.append(f'<text x="{ox + 4}" y="{Y(t) + 3:.1f}">{t}</text>')
        for e in range(int(math.ceil(x0)), int(math.floor(x1)) + 1):
            parts.append(f'<text x="{X(10 ** e) - 8:.1f}" y="{oy + H - 6}">1e{e}</text>')
        for v, r, ok, tr in pts:
            if len(tr) > 1:   # the ratio trial by trial: its range is the noise
                parts.append(f'<line x1="{X(v):.1f}" x2="{X(v):.1f}" y1="{Y(min(tr)):.1f}" '
                             f'y2="{Y(max(tr)):.1f}" stroke="#888" stroke-width="1"/>')
            fill = "#1f5fbf" if ok else "#e08000"
            parts.append(f'<circle cx="{X(v):.1f}" cy="{Y(r):.1f}" r="2.5" fill="{fill}" fill-opacity="0.75"/>')
    parts.append(f'<text x="{GAP}" y="{nrow * (H + GAP) + GAP + 14}">x: flops (GEMM) or elements; '
                 'blue: lib run --check passed, orange: not checked or failed</text>')
    parts.append(f'<text x="{GAP}" y="{nrow * (H + GAP) + GAP + 28}">a point: each side\'s best median '
                 'over the trials; its grey bar: the range of the trial-by-trial ratios (the noise)</text>')
    parts.append("</svg>")
    open(path, "w").write("\n".join(parts) + "\n")


def jsonl(path):
    """{(op, shape): the last row of that shape} of a JSON-lines file (none if missing)"""
    out = {}
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                r = json.loads(line)
                if "op" in r:
                    out[(r["op"], r.get("shape", ""))] = r
    return out


def spread(v):
    """max / min - 1 of a list of times (0 for one time)"""
    v = [x for x in v if x]
    return max(v) / min(v) - 1 if len(v) > 1 else 0.0


def table_main(lib_path, peers_path, outdir, more=()):
    """more: further `lib bench --shapes` passes of the library (timing only): the
    library's time at a shape is its best median over the passes, as the peer's is
    over its trials"""
    lib, peers = jsonl(lib_path), jsonl(peers_path)
    passes = [jsonl(p) for p in more]
    rows = []
    for key in list(dict.fromkeys(list(lib) + list(peers))):
        li, pe = lib.get(key, {}), peers.get(key, {})
        trials = [((p.get(key) or {}).get("bench") or {}) for p in [lib] + passes]
        ours = [b.get("median_ms") for b in trials if b.get("median_ms")]
        ms = min(ours) if ours else None
        mins = [b.get("min_ms") for b in trials if b.get("min_ms")]
        pms = pe.get("peer_ms")
        checks = li.get("check") or []
        rows.append({"op": key[0], "shape": key[1], "variant": li.get("variant", "-"),
                     "check": bool(li.get("check_ok")) and bool(checks) and all(c.get("ok") for c in checks),
                     "ms": ms, "min_ms": min(mins) if mins else None, "trials_ms": ours,
                     "peer": pe.get("peer", "-"), "peer_ms": pms, "peer_mode": pe.get("peer_mode"),
                     "peer_min_ms": pe.get("peer_min_ms"), "peer_trials_ms": pe.get("peer_trials_ms", []),
                     "ratio": pms / ms if ms and pms else None, "all": li.get("bench_all"),
                     "roofline_fraction": (li.get("bench") or {}).get("roofline_fraction"),
                     "peers_all": pe.get("all"), "error": li.get("error") or pe.get("error")})
    for r in rows:   # each side's noise: its trials' max / min - 1, and the median trial
        for side, key in (("ours", "trials_ms"), ("peer", "peer_trials_ms")):
            v = sorted(x for x in r[key] if x)
            r[f"{side}_spread"] = round(spread(v), 4)
            r[f"{side}_median_trial_ms"] = v[len(v) // 2] if v else None
    os.makedirs(outdir, exist_ok=True)
    json.dump(rows, open(os.path.join(outdir, "sweep.json"), "w"), indent=0)
    with open(os.path.join(outdir, "sweep_table.md"), "w") as f:
        f.write("| op | shape | variant | check | ms | peer | peer ms | ratio | ours: trials ms (min run) "
                "| peer: trials ms (min run), mode |\n|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            err = " " + r["error"][:120].replace("|", "/") if r["error"] else ""
            ot = " ".join(num(x, 4) for x in r["trials_ms"]) + f" ({num(r['min_ms'], 4)})"
            pt = " ".join(num(x, 4) for x in r["peer_trials_ms"]) + \
                f" ({num(r['peer_min_ms'], 4)}), {r['peer_mode'] or '-'}"
            f.write(f"| {r['op']} | {r['shape']} | {r['variant']} | {'ok' if r['check'] else 'FAIL'} | "
                    f"{num(r['ms'], 4)} | {r['peer']} | {num(r['peer_ms'], 4)} | {num(r['ratio'], 3)} | "
                    f"{ot} | {pt} |{err}\n")
    svg(rows, os.path.join(outdir, "sweep.svg"))
    print(summary(rows))


def num(v, digits):
    return "-" if v is None else f"{v:.{digits}f}"


def summary(rows):
    """per op: the share >= 1.0, min, geomean, checks, and the noise: the median over
    shapes of each side's spread between its trials (max / min - 1)"""
    lines = ["op                 shapes timed  >=1.0   min    geomean  checks   trials  spread ours/peer",
             "-" * 92]
    for op in COUNTS:
        rs = [r for r in rows if r["op"] == op]
        if not rs:
            continue
        rat = [r["ratio"] for r in rs if r["ratio"]]
        share = sum(1 for x in rat if x >= 1.0) / len(rat) if rat else 0
        gm = math.exp(sum(math.log(x) for x in rat) / len(rat)) if rat else 0
        so = sorted(spread(r.get("trials_ms", [])) for r in rs)
        sp = sorted(spread(r.get("peer_trials_ms", [])) for r in rs)
        tr = sorted(min(len(r.get("trials_ms", [])), len(r.get("peer_trials_ms", []))) for r in rs)
        lines.append(f"{op:18s} {len(rs):6d} {len(rat):5d}  {100 * share:5.1f}%  "
                     f"{min(rat) if rat else 0:5.3f}  {gm:7.3f}  {sum(r['check'] for r in rs):3d}/{len(rs):<3d}"
                     f"  {tr[len(tr) // 2]:4d}   {100 * so[len(so) // 2]:5.1f}% / {100 * sp[len(sp) // 2]:5.1f}%")
    reached = [f"{op} {sum(1 for r in rows if r['op'] == op and 'torch_compile_static' in (r.get('peers_all') or {}))}"
               f"/{sum(1 for r in rows if r['op'] == op)}" for op in NONGEMM if any(r["op"] == op for r in rows)]
    lines.append("torch.compile per shape timed (the rest: dynamic shapes): " + ", ".join(reached))
    return "\n".join(lines)


def variance_main(peers_path, lib_paths):
    """the shapes timed with the old method too (sweep.py peers --old): per shape the old
    and the new method's peer time and the library's, per trial, and each one's spread"""
    peers = jsonl(peers_path)
    libs = [jsonl(p) for p in lib_paths]
    lines = ["shape                              old method ms (trials)     spread | new method ms (trials)"
             "     spread | ours ms (trials)           spread"]
    agg = {"old": [], "new": [], "ours": []}
    for key, r in peers.items():
        if not r.get("old_ms"):
            continue
        n = max(len(v) for v in r["old_ms"].values())
        old = [min(v[t] for v in r["old_ms"].values() if len(v) > t) for t in range(n)]
        new = [min(v[t] for v in r["trials_ms"].values() if len(v) > t) for t in range(n)]
        ours = [((lb.get(key) or {}).get("bench") or {}).get("median_ms") for lb in libs]
        ours = [x for x in ours if x]
        for name, v in (("old", old), ("new", new), ("ours", ours)):
            agg[name].append(spread(v))

        def fmt(v):
            return f"{' '.join(num(x, 4) for x in v):26s} {100 * spread(v):5.1f}%"
        lines.append(f"{key[0] + ' ' + key[1]:34s} {fmt(old)} | {fmt(new)} | {fmt(ours)}")
    for name, v in agg.items():
        if v:
            v.sort()
            lines.append(f"{name:5s} spread over {len(v)} shapes: median {100 * v[len(v) // 2]:.1f}%, "
                         f"max {100 * v[-1]:.1f}%")
    print("\n".join(lines))


def tune_main(path, device):
    entries = []
    for line in open(path):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        times = r.get("bench_all")
        if r.get("device"):
            device = r["device"]   # the name the device reported: the artifact's launch compares it
        if r.get("op") and times:
            entries.append({"op": r["op"], "shape": parse_shape(r["shape"]), "times_ms": times,
                            "failed": r.get("failed_all", {})})
    print(json.dumps({"device": device, "runner": "local", "entries": entries}, indent=1))


def analyze_main(outdir):
    rows = json.load(open(os.path.join(outdir, "sweep.json")))
    best = {}
    path = os.path.join(outdir, "lib_all.jsonl")
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("bench_all"):
                    v = min(r["bench_all"], key=r["bench_all"].get)
                    best[(r["op"], r["shape"])] = (v, r["bench_all"][v], r["bench_all"])
    classes = {}
    for r in rows:
        if r["op"] not in NONGEMM or not r["ratio"]:
            continue
        s = parse_shape(r["shape"])
        m, n = list(s.values())
        b = best.get((r["op"], r["shape"]))
        bratio = r["peer_ms"] / b[1] if b else None
        key = (r["op"], n.bit_length(), n % 8 == 0, m.bit_length())
        classes.setdefault(key, []).append((r["ratio"], bratio, r["variant"], b[0] if b else "-", r["shape"],
                                            r["peer"]))
    print("op               Nbits N%8 Mbits  n  ratio(chosen)  ratio(best variant)  chosen -> best   peer")
    for key in sorted(classes):
        for ratio, bratio, ch, bv, shape, peer in classes[key]:
            flag = "LOSE" if ratio < 1.0 else "    "
            print(f"{flag} {key[0]:14s} {key[1]:4d} {'ok' if key[2] else 'rag':4s} {key[3]:4d}  {shape:22s} "
                  f"{ratio:6.3f}  {bratio if bratio is None else round(bratio, 3)!s:>7s}  {ch} -> {bv}  {peer}")


def order_main(lib_path):
    """the shapes of a `lib bench --shapes` pass, fastest first (another pass cut short by
    its time limit still times the small shapes, where the noise is)"""
    rows = [(((r.get("bench") or {}).get("median_ms") or 1e9), k) for k, r in jsonl(lib_path).items()
            if (r.get("bench") or {}).get("median_ms")]
    print("\n".join(f"{op} {shape}" for _, (op, shape) in sorted(rows)))


def subset_main(path, every, extra):
    """the shapes of `extra`, then every `every`-th other shape of `path` (a quick call)"""
    keep = [l.strip() for l in open(extra) if l.split("#")[0].strip()]
    rest = [l.strip() for l in open(path) if l.strip() and l.strip() not in keep]
    print("\n".join(keep + rest[::every]))


def slim_main(paths):
    """the library's rows without their cost-model documents (most of each row; the
    files come back from the device under a size limit), in place"""
    for path in paths:
        rows = [json.loads(l) for l in open(path) if l.startswith("{")]
        with open(path, "w") as f:
            for r in rows:
                r.pop("cost", None)
                f.write(json.dumps(r) + "\n")


def peers_args(argv):
    """SHAPES [OUT] [--trials N] [--sync DIR] [--old SHAPES2] [--ours LIB.jsonl] -> peers_main's
    arguments"""
    pos, opt = [], {"--trials": "1", "--sync": None, "--old": None, "--ours": None}
    it = iter(argv)
    for a in it:
        if a in opt:
            opt[a] = next(it)
        else:
            pos.append(a)
    return (pos[0], pos[1] if len(pos) > 1 else None, int(opt["--trials"]), opt["--sync"], opt["--old"],
            opt["--ours"])


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "shapes"
    if cmd == "shapes":
        print("\n".join(shapes(int(sys.argv[2]) if len(sys.argv) > 2 else 2026)))
    elif cmd == "peers":
        peers_main(*peers_args(sys.argv[2:]))
    elif cmd == "tune":
        tune_main(sys.argv[2], sys.argv[3])
    elif cmd == "analyze":
        analyze_main(sys.argv[2])
    elif cmd == "table":
        table_main(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    elif cmd == "slim":
        slim_main(sys.argv[2:])
    elif cmd == "order":
        order_main(sys.argv[2])
    elif cmd == "subset":
        subset_main(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif cmd == "variance":
        variance_main(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
