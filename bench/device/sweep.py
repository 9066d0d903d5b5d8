"""sweep.py — the library's acceptance sweep (issue 13), run by run_sweep.sh.

    sweep.py shapes [SEED]            the seeded shapes, one `OP DIM=V,...` per line (stdout)
    sweep.py peers SHAPES [OUT.jsonl] every shape's peers timed in this one process, one
                                      JSON line per shape as soon as it is known
    sweep.py tune ALL.jsonl DEVICE > TABLE.json   (DEVICE: unless the rows name it)
                                      a tuned table (the format of `lib tune -o`) from the
                                      `lib bench --shapes --all` rows: every variant's time
    sweep.py analyze OUTDIR           where the rows ops lose: by op and class (N bucket, N % 8,
                                      M bucket), the chosen variant's ratio beside the best
                                      variant's (lib_all.jsonl: what a perfect table gives)
    sweep.py table LIB.jsonl PEERS.jsonl OUTDIR
                                      the per-shape table (sweep_table.md, sweep.json), the
                                      picture (sweep.svg) and the per-op summary (stdout)

Shapes are log-uniform: GEMM M, N in 1..16384 (a third with M <= 64), K in 64..16384,
M ragged (N and K multiples of 8, 16 for K of gemm_fp8: the GEMMs' TMA row pitches); norms M in 1..1e6, N in 64..65536; softmax and cross-entropy N up to
262144; each capped by memory and time (CAP_ELEMS, CAP_FLOPS). The peers are cuBLAS
(torch.matmul), for gemm_fp8 torch._scaled_mm where it takes the shape (N and K multiples of
16), cuBLAS bf16 on the operands dequantized beforehand (`cublas_bf16_dequant`) and torch
eager dequantizing in the call (so every shape has a peer; `refused` says why _scaled_mm
is missing), torch eager (and F.rms_norm), torch.compile
with dynamic shapes (one compilation per op) and then, while SWEEP_STATIC_UNTIL seconds
last, torch.compile specialised to each rows-op shape (dynamic=False, one compilation per
shape); a shape's peer is the fastest of those measured there (`all` lists them). Every time
is the median of RUNS device-event timings with the L2 flushed before each run, as
`cakec lib bench` times (runtime/timing.c). shapes and table need no torch.
"""
import json
import math
import os
import random
import sys
import time

CAP_ELEMS = 1 << 26          # an input of at most 64 Mi elements (the oracle fills it on the host)
CAP_FLOPS = 2e12             # a GEMM of at most 2 TFLOP (~3 ms on the H200)
RUNS = int(os.environ.get("SWEEP_RUNS", "10"))
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

def peers_main(path, out_path):
    import torch
    import torch.nn.functional as F
    dev, bf = "cuda", torch.bfloat16
    flush = torch.empty(2 * 64 << 20, dtype=torch.uint8, device=dev)   # twice the L2 (60 MB)
    compiled = {}
    t0 = time.time()
    budget = float(os.environ.get("SWEEP_PEERS_BUDGET", "40"))   # seconds for the dynamic compiles

    def timeit(fn):
        fn()
        torch.cuda.synchronize()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(RUNS)]
        for s, e in ev:
            flush.fill_(1)
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        ts = sorted(s.elapsed_time(e) for s, e in ev)
        return ts[len(ts) // 2]

    def comp(name, fn):
        if name not in compiled:
            compiled[name] = torch.compile(fn, dynamic=True)
        return compiled[name]

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

    res_err = {}   # a peer that refused the shape, and why (one(): the last shape's)

    def one(op, s):
        res = {}
        res_err.clear()
        with_compile = time.time() - t0 < budget
        if op == "gemm":
            a = torch.randn(s["M"], s["K"], device=dev, dtype=bf)
            b = torch.randn(s["N"], s["K"], device=dev, dtype=bf)
            res["cublas"] = timeit(lambda: torch.matmul(a, b.t()))
            return res
        if op == "gemm_fp8":
            a = torch.randn(s["M"], s["K"], device=dev).to(torch.float8_e4m3fn)
            b = torch.randn(s["N"], s["K"], device=dev).to(torch.float8_e4m3fn)
            one_ = torch.ones((), device=dev)
            try:   # refuses N or K not a multiple of 16: then the other peers stand in
                res["scaled_mm"] = timeit(lambda: torch._scaled_mm(a, b.t(), scale_a=one_, scale_b=one_,
                                                                    out_dtype=bf))
            except RuntimeError as e:
                res_err["scaled_mm"] = str(e)[:120]
            # cuBLAS bf16 on the operands dequantized beforehand (the conversion not timed),
            # and torch eager doing the whole op (dequantize, scale, matmul)
            a16, b16 = a.to(bf), b.to(bf)
            res["cublas_bf16_dequant"] = timeit(lambda: torch.matmul(a16, b16.t()))
            res["torch_eager"] = timeit(lambda: torch.matmul(a.to(bf) * 1.0, (b.to(bf) * 1.0).t()))
            return res
        if op in ("rmsnorm", "layernorm", "fp8_row_quantize"):
            x = torch.randn(s["M"], s["N"], device=dev, dtype=bf)
            w = torch.randn(s["N"], device=dev, dtype=bf)
            b = torch.randn(s["N"], device=dev, dtype=bf)
            fn, args = {"rmsnorm": (rms, (x, w, 1e-6)), "layernorm": (ln, (x, w, b, 1e-6)),
                        "fp8_row_quantize": (quant, (x,))}[op]
        elif op == "softmax":
            fn, args = sm, (torch.randn(s["M"], s["N"], device=dev),)
        else:
            x = torch.randn(s["B"], s["V"], device=dev)
            fn, args = ce, (x, torch.randint(0, s["V"], (s["B"],), device=dev))
        res["torch_eager"] = timeit(lambda: fn(*args))
        if op == "rmsnorm" and hasattr(F, "rms_norm"):
            res["torch_rms_norm"] = timeit(lambda: F.rms_norm(x, (s["N"],), w, 1e-6))
        if with_compile:
            f = comp(op, fn)
            res["torch_compile"] = timeit(lambda: f(*args))
        return res

    def static(op, s, res):
        """torch.compile specialised to this shape (dynamic=False, a compilation per shape)"""
        fn, args = {"rmsnorm": (rms, None), "layernorm": (ln, None), "fp8_row_quantize": (quant, None),
                    "softmax": (sm, None), "cross_entropy": (ce, None)}[op]
        if op in ("rmsnorm", "layernorm", "fp8_row_quantize"):
            x = torch.randn(s["M"], s["N"], device=dev, dtype=bf)
            w = torch.randn(s["N"], device=dev, dtype=bf)
            b = torch.randn(s["N"], device=dev, dtype=bf)
            args = {"rmsnorm": (x, w, 1e-6), "layernorm": (x, w, b, 1e-6), "fp8_row_quantize": (x,)}[op]
        elif op == "softmax":
            args = (torch.randn(s["M"], s["N"], device=dev),)
        else:
            args = (torch.randn(s["B"], s["V"], device=dev), torch.randint(0, s["V"], (s["B"],), device=dev))
        f = torch.compile(fn, dynamic=False)
        res["torch_compile_static"] = timeit(lambda: f(*args))

    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 1 << 20)
    out = open(out_path, "w") if out_path else sys.stdout
    done = []
    for line in open(path):
        line = line.split("#")[0].strip()
        if not line:
            continue
        op, shape = line.split()
        row = {"op": op, "shape": shape}
        try:
            res = one(op, parse_shape(shape))
            best = min(res, key=res.get)
            row.update(peer=best, peer_ms=res[best], all=res)
            if res_err:
                row["refused"] = dict(res_err)
        except Exception as e:   # a peer that fails is reported, the next shape runs
            row.update(peer="error", peer_ms=None, error=f"{type(e).__name__}: {str(e)[:200]}")
        torch.cuda.empty_cache()
        out.write(json.dumps(row) + "\n")
        out.flush()
        done.append(row)
    # then, while the time lasts, torch.compile specialised to each rows-op shape (a row
    # again for the shape, with every peer: the table keeps the last row of a shape)
    until = t0 + float(os.environ.get("SWEEP_STATIC_UNTIL", "0"))
    torch._dynamo.reset()   # the dynamic-shape graphs of the pass above would serve these shapes
    torch._dynamo.config.automatic_dynamic_shapes = False
    for row in done:
        if time.time() > until:
            break
        if row["op"] not in NONGEMM or not row.get("all"):
            continue
        try:
            static(row["op"], parse_shape(row["shape"]), row["all"])
        except Exception as e:
            row["static_error"] = f"{type(e).__name__}: {str(e)[:200]}"
        best = min(row["all"], key=row["all"].get)
        row.update(peer=best, peer_ms=row["all"][best])
        torch.cuda.empty_cache()
        out.write(json.dumps(row) + "\n")
        out.flush()


# ---- the table and the picture -----------------------------------------------------

def size_of(op, s):
    """the problem size on the picture's x axis: flops for GEMM, elements otherwise"""
    if op.startswith("gemm"):
        return 2.0 * s["M"] * s["N"] * s["K"]
    return float(s.get("M", s.get("B", 1)) * s.get("N", s.get("V", 1)))


def svg(rows, path):
    ops = [op for op in COUNTS if any(r["op"] == op for r in rows)]
    W, H, PAD, GAP = 360, 220, 44, 16
    cols = 3
    nrow = (len(ops) + cols - 1) // cols
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * (W + GAP) + GAP}" '
             f'height="{nrow * (H + GAP) + GAP + 20}" font-family="sans-serif" font-size="10">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<text x="{GAP}" y="14" font-size="12">CAKE library / best peer (ratio &gt; 1: the '
             'library is faster) against problem size; lines at 1.0 and 0.9</text>']
    for i, op in enumerate(ops):
        ox, oy = GAP + (i % cols) * (W + GAP), 24 + GAP + (i // cols) * (H + GAP)
        pts = [(size_of(r["op"], parse_shape(r["shape"])), r["ratio"], r["check"]) for r in rows
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
        for v, r, ok in pts:
            fill = "#1f5fbf" if ok else "#e08000"
            parts.append(f'<circle cx="{X(v):.1f}" cy="{Y(r):.1f}" r="2.5" fill="{fill}" fill-opacity="0.75"/>')
    parts.append(f'<text x="{GAP}" y="{nrow * (H + GAP) + GAP + 14}">x: flops (GEMM) or elements; '
                 'blue: lib run --check passed, orange: not checked or failed</text>')
    parts.append("</svg>")
    open(path, "w").write("\n".join(parts) + "\n")


def table_main(lib_path, peers_path, outdir):
    lib = {}
    for line in open(lib_path):
        line = line.strip()
        if line.startswith("{"):
            r = json.loads(line)
            if "op" in r:
                lib[(r["op"], r.get("shape", ""))] = r
    peers = {}
    if os.path.exists(peers_path):
        for line in open(peers_path):
            if line.startswith("{"):
                r = json.loads(line)
                peers[(r["op"], r["shape"])] = r
    rows = []
    for key in list(dict.fromkeys(list(lib) + list(peers))):
        li, pe = lib.get(key, {}), peers.get(key, {})
        ms = (li.get("bench") or {}).get("median_ms")
        pms = pe.get("peer_ms")
        checks = li.get("check") or []
        rows.append({"op": key[0], "shape": key[1], "variant": li.get("variant", "-"),
                     "check": bool(li.get("check_ok")) and bool(checks) and all(c.get("ok") for c in checks),
                     "ms": ms, "peer": pe.get("peer", "-"), "peer_ms": pms,
                     "ratio": pms / ms if ms and pms else None, "all": li.get("bench_all"),
                     "error": li.get("error") or pe.get("error")})
    os.makedirs(outdir, exist_ok=True)
    json.dump(rows, open(os.path.join(outdir, "sweep.json"), "w"), indent=0)
    with open(os.path.join(outdir, "sweep_table.md"), "w") as f:
        f.write("| op | shape | variant | check | ms | peer | peer ms | ratio |\n|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            err = " " + r["error"][:120].replace("|", "/") if r["error"] else ""
            f.write(f"| {r['op']} | {r['shape']} | {r['variant']} | {'ok' if r['check'] else 'FAIL'} | "
                    f"{num(r['ms'], 4)} | {r['peer']} | {num(r['peer_ms'], 4)} | {num(r['ratio'], 3)} |{err}\n")
    svg(rows, os.path.join(outdir, "sweep.svg"))
    print(summary(rows))


def num(v, digits):
    return "-" if v is None else f"{v:.{digits}f}"


def summary(rows):
    lines = ["op                 shapes timed  >=1.0   min    geomean  checks",
             "-" * 66]
    for op in COUNTS:
        rs = [r for r in rows if r["op"] == op]
        if not rs:
            continue
        rat = [r["ratio"] for r in rs if r["ratio"]]
        share = sum(1 for x in rat if x >= 1.0) / len(rat) if rat else 0
        gm = math.exp(sum(math.log(x) for x in rat) / len(rat)) if rat else 0
        lines.append(f"{op:18s} {len(rs):6d} {len(rat):5d}  {100 * share:5.1f}%  "
                     f"{min(rat) if rat else 0:5.3f}  {gm:7.3f}  {sum(r['check'] for r in rs)}/{len(rs)}")
    return "\n".join(lines)


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


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "shapes"
    if cmd == "shapes":
        print("\n".join(shapes(int(sys.argv[2]) if len(sys.argv) > 2 else 2026)))
    elif cmd == "peers":
        peers_main(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    elif cmd == "tune":
        tune_main(sys.argv[2], sys.argv[3])
    elif cmd == "analyze":
        analyze_main(sys.argv[2])
    elif cmd == "table":
        table_main(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
