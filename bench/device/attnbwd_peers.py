"""attnbwd_peers.py — the attention backward and split-KV decode examples from Python
(`import cake`) beside their peers, in one process (run_attnbwd.sh runs it):

  backward  two ways, each timed whole: fused = attn_bwd_prep_zero (Di, dQacc zeroed) +
            attn_bwd (dK, dV, dQ by TMA adds) + attn_bwd_dq_convert, the library's fa3_lsm /
            fa3_tma_add sequences; two-pass = attn_bwd_prep +
            attn_bwd_dq + attn_bwd_dkdv; the faster correct one is the ratio's,
            against cuDNN SDPA backward through torch autograd (only the backward is
            timed: torch.autograd.grad of a kept graph), and the flash backend for
            context. Gradients are checked against the cuDNN ones and against an f32
            math reference (small shapes), with the forward's real O and LSE.
  decode    attn_decode_partial + attn_decode_merge against the fastest SDPA backend
            (cuDNN, flash, efficient; enable_gqa and expanded K/V both tried),
            1 query row, GQA 8; the split count is tuned among three candidates.
Times: gated.py's method through attnfwd_peers (cold L2, the stream held until the run is
queued, median of 10, trials A B A B, each side its best median); the backward peers are
not captured as CUDA graphs (autograd's engine), the decode peers are (the faster kept).
attnx_peers.py imports this file for the backward of run_attnx.sh.

Prints one JSON line per case to $OUT/attnbwd_results.jsonl and the table on stdout.
Environment: OUT, DEADLINE (seconds for this process)."""
import json
import math
import os
import sys
import time

T0 = time.time()
DEADLINE = float(os.environ.get("DEADLINE", "40"))
OUT = os.environ.get("OUT", "/tmp/cake-out")
os.makedirs(OUT, exist_ok=True)
RES = os.path.join(OUT, "attnbwd_results.jsonl")
SKIP_FUSED = False   # set after the go file: the shell found attn_bwd's own check hung or failed
sys.path.insert(0, os.path.join(os.getcwd(), ".carry", "python"))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
import cake  # noqa: E402

dev = "cuda"
bf = torch.bfloat16
rows = []


def left():
    return DEADLINE - (time.time() - T0)


def emit(d):
    rows.append(d)
    with open(RES, "a") as f:
        f.write(json.dumps(d) + "\n")


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnfwd_peers as af  # noqa: E402   (gated.py's timing: af.ours_ms, af.trials)


def timeit(fn, iters=10, warm=2):
    """one side alone, one trial (gated.py's method: cold L2, the stream held until queued)"""
    return af.ours_ms(fn)


def relerr(x, ref):
    x, ref = x.float(), ref.float()
    return ((x - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def fwd_lse(q, k, v, causal, scale):
    """O and LSE (natural log, f32 [B, H, S]) of the forward, from the flash backend"""
    r = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False, scale=scale)
    return r[0], r[1]


def math_grads(q, k, v, do, causal, scale):
    qf, kf, vf = (t.detach().float().requires_grad_() for t in (q, k, v))
    with sdpa_kernel(SDPBackend.MATH):
        o = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal, scale=scale)
    return torch.autograd.grad(o, (qf, kf, vf), do.float())


KERNELS = {}
# other points of attn_bwd, timed beside the default (BM = 64, DKRS = 1, XWG = 1, LSM = 1:
# round 1 measured these the fastest at every shape): LSM = 0 (the column vectors loaded
# from global memory: what serves S % 4 != 0). An entry is (name, attn_bwd's parameters) or
# (name, attn_bwd's, attn_bwd_prep_zero's): run_abwd2.sh's abwd2_peers.py sets its own.
ALT = {128: [("fused_lsm0", {"LSM": 0})], 64: [("fused_lsm0", {"LSM": 0})]}


FILE_OF = {"attn_bwd_prep_zero": ("examples/attn_bwd_prep.tir", "attn_bwd_prep_zero")}


def kern(name, **params):
    key = (name, tuple(sorted(params.items())))
    if key not in KERNELS:
        # a kernel that is not its file's first lives in a file of another name
        path, kernel = FILE_OF.get(name, (f"examples/{name}.tir", None))
        KERNELS[key] = cake.load(path, kernel=kernel, **params)
    return KERNELS[key]


def precompile(cases):
    """compiles every kernel the cases launch (before the go file: beside the checks)"""
    for kind, c, flags in cases:
        if kind == "decode":
            kern("attn_decode_partial", HD=c[4])
            kern("attn_decode_partial", HD=c[4], STAGES=2)
            kern("attn_decode_merge", HD=c[4])
            continue
        D, causal = c[3], int(c[4])
        kern("attn_bwd_prep", HD=D)
        kern("attn_bwd_prep_zero", HD=D)
        kern("attn_bwd", HD=D, CAUSAL=causal)
        kern("attn_bwd_dq_convert", HD=D)
        if flags.get("alt"):
            for alt in ALT[D]:
                try:
                    kern("attn_bwd", HD=D, CAUSAL=causal, **alt[1])
                    if len(alt) > 2:
                        kern("attn_bwd_prep_zero", HD=D, **alt[2])
                except Exception as e:  # noqa: BLE001
                    print("precompile:", repr(e)[:300], file=sys.stderr)
        if flags.get("twopass"):
            kern("attn_bwd_dq", HD=D, CAUSAL=causal)
            kern("attn_bwd_dkdv", HD=D, CAUSAL=causal)


def backward_case(B, H, S, D, causal, check_math, twopass_too, alt=False):
    scale = 1.0 / math.sqrt(D)
    BH = B * H
    g = torch.Generator(device=dev).manual_seed(S * 131 + D + causal)
    q, k, v, do = (torch.randn(B, H, S, D, device=dev, dtype=bf, generator=g) for _ in range(4))
    o, lse = fwd_lse(q, k, v, causal, scale)
    q3, k3, v3, o3, do3 = (t.reshape(BH, S, D) for t in (q, k, v, o.contiguous(), do))
    lse2 = lse.reshape(BH, S).contiguous().float()
    Di = torch.empty(BH, S, device=dev, dtype=torch.float32)
    prep = kern("attn_bwd_prep", HD=D)
    prepz = kern("attn_bwd_prep_zero", HD=D)
    ways = {}   # name -> (run, (dq, dk, dv), parts)
    if not SKIP_FUSED:
        kconv = kern("attn_bwd_dq_convert", HD=D)
        dqacc = torch.empty(BH, D, (S + 3) // 4 * 4, device=dev, dtype=torch.float32)
        for alt in [("fused", {})] + (ALT[D] if alt else []):
            wname, extra, pzx = alt[0], alt[1], (alt[2] if len(alt) > 2 else None)
            if S % 4 and extra.get("LSM", 1):   # LSM = 1 needs S % 4 == 0: the LSM = 0 points only
                continue
            try:   # a point that does not compile costs its own column only
                kmain = kern("attn_bwd", HD=D, CAUSAL=int(causal), **extra)
                pz = kern("attn_bwd_prep_zero", HD=D, **pzx) if pzx else prepz
            except Exception as e:  # noqa: BLE001
                print(f"attn_bwd {wname} HD={D}: {e!r}"[:300], file=sys.stderr)
                continue
            g1 = tuple(torch.empty(BH, S, D, device=dev, dtype=bf) for _ in range(3))

            def fused(kmain=kmain, g1=g1, pz=pz):   # Di and zeroed dQacc, the main kernel (dK, dV, dQ by TMA adds), dQ to bf16
                pz(o3, do3, Di, dqacc)      # Di, and dQacc zeroed (one launch)
                kmain(q3, k3, v3, do3, lse2, Di, g1[1], g1[2], dqacc, scale)
                kconv(dqacc, g1[0], scale)
            ways[wname] = (fused, g1, {
                "main": lambda kmain=kmain, g1=g1: kmain(q3, k3, v3, do3, lse2, Di, g1[1], g1[2], dqacc, scale)})
            if pzx:
                ways[wname][2]["prep_zero"] = lambda pz=pz: pz(o3, do3, Di, dqacc)
        if "fused" in ways:   # the small launches once per shape
            ways["fused"][2]["prep_zero"] = lambda: prepz(o3, do3, Di, dqacc)
            ways["fused"][2]["convert"] = lambda: kconv(dqacc, ways["fused"][1][0], scale)
    if twopass_too or SKIP_FUSED:
        kdq = kern("attn_bwd_dq", HD=D, CAUSAL=int(causal))
        kkv = kern("attn_bwd_dkdv", HD=D, CAUSAL=int(causal))
        g2 = tuple(torch.empty(BH, S, D, device=dev, dtype=bf) for _ in range(3))

        def twopass():   # Di, dQ by a second pass, dK and dV
            prep(o3, do3, Di)
            kdq(q3, k3, v3, do3, lse2, Di, g2[0], scale)
            kkv(q3, k3, v3, do3, lse2, Di, g2[1], g2[2], scale)
        ways["twopass"] = (twopass, g2, {
            "dq": lambda: kdq(q3, k3, v3, do3, lse2, Di, g2[0], scale),
            "dkdv": lambda: kkv(q3, k3, v3, do3, lse2, Di, g2[1], g2[2], scale)})
    for run, _, _ in ways.values():
        run()
    torch.cuda.synchronize()
    # cuDNN SDPA backward through autograd: the graph is kept, only the backward timed
    qr, kr, vr = (t.detach().clone().requires_grad_() for t in (q, k, v))
    peer = "cudnn"
    try:
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            out = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal, scale=scale)
        ref = torch.autograd.grad(out, (qr, kr, vr), do, retain_graph=True)
    except Exception:  # noqa: BLE001   (a shape cuDNN refuses: the flash backend instead)
        peer = "flash"
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            out = F.scaled_dot_product_attention(qr, kr, vr, is_causal=causal, scale=scale)
        ref = torch.autograd.grad(out, (qr, kr, vr), do, retain_graph=True)
    mg = math_grads(q, k, v, do, causal, scale) if check_math else None

    def errs(got, want):
        return max(relerr(a.reshape(BH, S, D), b.reshape(BH, S, D)) for a, b in zip(got, want))
    rec = {"kind": "bwd", "shape": f"B={B},H={H},S={S},D={D},causal={int(causal)}",
           "cudnn_err_vs_math": errs(ref, mg) if mg else None}
    best = None
    oks = {}
    for name, (run, grads, parts) in ways.items():
        e = errs(grads, ref)
        em = errs(grads, mg) if mg else None
        oks[name] = e < 3e-2 and (em is None or em < 2e-2)
        rec[name] = {"ok": oks[name], "err_vs_cudnn": e, "err_vs_math": em,
                     "parts_ms": {k: timeit(f) for k, f in parts.items()}}
    rec["prep_ms"] = timeit(lambda: prep(o3, do3, Di))
    fns = [(name, run, "ours") for name, (run, _, _) in ways.items()]
    # the peers' backward through autograd (not captured as a graph: the engine's streams)
    fns.append(("cudnn", lambda: torch.autograd.grad(out, (qr, kr, vr), do, retain_graph=True), "peer_nograph"))
    try:
        qf, kf, vf = (t.detach().clone().requires_grad_() for t in (q, k, v))
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            outf = F.scaled_dot_product_attention(qf, kf, vf, is_causal=causal, scale=scale)
        fns.append(("flash", lambda: torch.autograd.grad(outf, (qf, kf, vf), do, retain_graph=True), "peer_nograph"))
    except Exception:  # noqa: BLE001
        pass
    got = af.trials(fns)
    for name in ways:
        rec[name]["ms"], rec[name]["spread"] = got[name]["ms"], got[name]["spread"]
        if oks[name] and (best is None or got[name]["ms"] < best[0]):
            best = (got[name]["ms"], name)
    t_cudnn = got["cudnn"]["ms"]
    rec["cudnn_spread"] = got["cudnn"]["spread"]
    t_flash = got["flash"]["ms"] if "flash" in got else None
    flops = 2.5 * 4 * BH * S * S * D * (0.5 if causal else 1.0)
    if best is None:   # nothing correct: report the first, not ok
        name = next(iter(ways))
        best = (rec[name]["ms"], name)
    rec.update({"ok": rec[best[1]]["ok"], "way": best[1], "ms": best[0], "peer": peer, "cudnn_ms": t_cudnn,
                "flash_ms": t_flash, "ratio": t_cudnn / best[0], "tflops": flops / best[0] / 1e9,
                "cudnn_tflops": flops / t_cudnn / 1e9})
    emit(rec)


def best_sdpa(q, k, v, kx, vx):
    """the fastest SDPA backend (attnfwd_peers.best_sdpa: the same trials and timer)"""
    return af.best_sdpa(q, k, v, kx, vx)


def decode_case(B, H, HKV, S, D):
    G = H // HKV
    BHK = B * HKV
    R = G                      # one query row per head
    scale = 1.0 / math.sqrt(D)
    g = torch.Generator(device=dev).manual_seed(S + B)
    q = torch.randn(B, H, 1, D, device=dev, dtype=bf, generator=g)
    k = torch.randn(B, HKV, S, D, device=dev, dtype=bf, generator=g)
    v = torch.randn(B, HKV, S, D, device=dev, dtype=bf, generator=g)
    kps = {"s3": kern("attn_decode_partial", HD=D), "s2": kern("attn_decode_partial", HD=D, STAGES=2)}
    km = kern("attn_decode_merge", HD=D)
    q3, k3, v3 = q.reshape(BHK, R, D), k.reshape(BHK, S, D), v.reshape(BHK, S, D)
    o = torch.empty(BHK, R, D, device=dev, dtype=bf)
    kx = k.repeat_interleave(G, dim=1)
    vx = v.repeat_interleave(G, dim=1)
    with sdpa_kernel(SDPBackend.MATH):
        ref = F.scaled_dot_product_attention(q.float(), kx.float(), vx.float())
    tiles = -(-S // 128)
    # split counts filling whole waves of 132 blocks (one block per SM), and the round-ups
    cands = sorted({max(1, min(tiles, k * 132 // BHK)) for k in (1, 2, 3, 4)} |
                   {max(1, min(tiles, -(-n // BHK))) for n in (132, 264)})
    best = None
    tried = {}
    for cfg, ns in [(c, n) for c in kps for n in cands]:   # each checked against fp32 math, then timed
        kp = kps[cfg]
        op = torch.empty(ns, BHK, R, D, device=dev, dtype=torch.float32)
        lp = torch.empty(ns, BHK, R, 8, device=dev, dtype=torch.float32)

        def ours(op=op, lp=lp, kp=kp):
            kp(q3, k3, v3, op, lp, scale)
            km(op, lp, o)
        o.fill_(float("nan"))
        ours()
        torch.cuda.synchronize()
        e = relerr(o.reshape(B, H, 1, D), ref)
        t = timeit(ours)
        tried[f"{cfg}/{ns}"] = {"ms": t, "err": e}
        if e < 1e-2 and (best is None or t < best[0]):
            best = (t, f"{cfg}/{ns}", e)
    if best is None:   # none correct: report the first
        k0 = next(iter(tried))
        best = (tried[k0]["ms"], k0, tried[k0]["err"])
    err = best[2]
    tp, peer = best_sdpa(q, k, v, kx, vx)
    del kx, vx
    gbytes = 2 * BHK * S * D * 2 / 1e9
    emit({"kind": "decode", "shape": f"B={B},H={H},Hkv={HKV},S={S},D={D}", "ok": err < 1e-2,
          "err_vs_math": err, "ms": best[0], "splits": best[1], "tried": tried, "peer": peer, "peer_ms": tp,
          "ratio": (tp / best[0]) if tp else None, "gbps": gbytes / best[0] * 1e3})


BWD = [(2, 16, 4096, 128, False), (2, 16, 4096, 128, True), (2, 16, 4096, 64, False), (2, 16, 4096, 64, True),
       (1, 16, 8192, 128, False), (1, 16, 8192, 128, True), (1, 16, 8192, 64, False), (1, 16, 8192, 64, True),
       (4, 16, 2048, 128, False), (4, 16, 2048, 128, True), (4, 16, 2048, 64, False), (4, 16, 2048, 64, True),
       (8, 16, 1024, 128, True), (8, 16, 1024, 64, False), (8, 16, 1024, 128, False), (8, 16, 1024, 64, True),
       (2, 32, 2048, 128, True), (16, 16, 1024, 64, True)]
SMALL = [(1, 2, 300, 128, False), (1, 2, 300, 128, True), (1, 2, 333, 64, True), (2, 3, 257, 64, False)]
DEC = [(4, 32, 4, 8192, 128), (4, 32, 4, 32768, 128), (4, 32, 4, 131072, 128), (1, 64, 8, 131072, 128),
       (8, 32, 4, 16384, 128), (1, 32, 4, 65536, 64)]


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    go = sys.argv[2] if len(sys.argv) > 2 else None
    cases = []
    if what in ("all", "decode"):
        cases += [("decode", c, {}) for c in DEC]
    if what in ("all", "bwd"):
        cases += [("bwd", c, {"math": True, "twopass": True}) for c in SMALL]
        cases += [("bwd", c, {"twopass": i < 4, "alt": True}) for i, c in enumerate(BWD)]
    try:
        precompile(cases)
    except Exception as e:  # noqa: BLE001
        print("precompile:", repr(e)[:300], file=sys.stderr)
    # the timings wait for the checks (the go file), or for the deadline's last third
    while go and not os.path.exists(go) and left() > DEADLINE / 3:
        time.sleep(0.2)
    global SKIP_FUSED
    SKIP_FUSED = bool(go) and os.path.exists(go + ".skip_fused")
    for kind, c, flags in cases:
        if left() < 4:
            emit({"kind": kind, "shape": str(c), "skipped": "deadline"})
            continue
        try:
            if kind == "bwd":
                backward_case(*c, check_math=flags.get("math", False), twopass_too=flags.get("twopass", False),
                              alt=flags.get("alt", False))
            else:
                decode_case(*c)
        except Exception as e:  # noqa: BLE001
            emit({"kind": kind, "shape": str(c), "ok": False, "error": repr(e)[:300]})
        torch.cuda.empty_cache()
    table()


def geo(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table():
    print("| kind | shape | ok | err | cake ms | peer | peer ms | ratio | TFLOP/s or GB/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        try:
            row(r)
        except Exception as e:  # noqa: BLE001
            print(f"| {r.get('kind')} | {r.get('shape')} | table error {e!r} |||||||")
    summary()


def row(r):
    if "ms" not in r:
        print(f"| {r['kind']} | {r['shape']} | {r.get('ok', '-')} | {r.get('error', r.get('skipped', ''))} |||||")
        return
    if r["kind"] == "bwd":
        ways = []
        for name in [k for k, v in r.items() if isinstance(v, dict) and "parts_ms" in v]:
            w = r.get(name)
            if w:
                parts = " + ".join(f"{k} {v:.3f}" for k, v in w["parts_ms"].items())
                ways.append(f"{name} {w['ms']:.3f} ({parts}; err {w['err_vs_cudnn']:.1e}, "
                            f"ok {w['ok']}, x{r['cudnn_ms'] / w['ms']:.3f})")
        print(f"| bwd | {r['shape']} | {r['ok']} | {r[r['way']]['err_vs_cudnn']:.1e} | {r['ms']:.3f} "
              f"{r['way']} [{'; '.join(ways)}; prep {r['prep_ms']:.3f}] | {r['peer']} | {r['cudnn_ms']:.3f} | "
              f"{r['ratio']:.3f} | {r['tflops']:.0f} vs {r['cudnn_tflops']:.0f} |")
    else:
        print(f"| decode | {r['shape']} NS={r['splits']} | {r['ok']} | {r['err_vs_math']:.2e} | "
              f"{r['ms']:.4f} | {r['peer']} | {r['peer_ms'] or 0:.4f} | {r['ratio'] or 0:.3f} | "
              f"{r['gbps']:.0f} GB/s |")


def summary():
    for kind in ("bwd", "decode"):
        rs = [r for r in rows if r["kind"] == kind and "ratio" in r and r.get("ratio") and r.get("peer", "") != "flash"]
        big = [r for r in rs if not (kind == "bwd" and r["shape"].startswith("B=1,H=2,")) and
               not (kind == "bwd" and r["shape"].startswith("B=2,H=3,"))]
        n1 = sum(1 for r in big if r["ratio"] >= 1.0)
        print(f"{kind}: {len(big)} timed, {sum(1 for r in rs if r['ok'])}/{len(rs)} ok, "
              f"{n1} >= 1.0x, geomean ratio {geo([r['ratio'] for r in big]):.3f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["table"]:   # the table of a results file (a run cut short)
        rows.extend(json.loads(line) for line in open(sys.argv[2]) if line.strip())
        table()
    else:
        main()
