"""attnfwd_peers.py — the attention forward kernels (examples/flash_attn_fwd_pp.tir,
examples/flash_attn_varlen_fwd.tir) beside torch SDPA with the cuDNN backend and with the
flash backend (torch.nn.attention.sdpa_kernel), in one process, on a sweep of shapes; and
split-KV decode (examples/attn_decode_partial.tir + attn_decode_merge.tir) beside the
fastest SDPA backend.

Dense shapes time every variant of VARIANTS[D] (each checked); `ours` is the default
variant (the first), `best` the fastest correct one: the variant table says which
parameter values to make the defaults. Every kernel is compiled first (threads: the
compile releases the GIL), beside the checks; the timings wait for the --go file.

Every timed shape is also checked: O against the cuDNN output (max |diff| <= 2e-2 after
bf16 rounding of both) and, where the scores fit in memory, O and the LSE against an f32
reference. Times: gated.py's method, the sweep's (bench/README.md): every run with the L2
flushed and the stream held by a spin kernel until the run is queued (the device's work
alone between the events, never the host's launch time), median of 10; the peers also as
a CUDA graph replay (below 1 ms), the faster kept; TRIALS trials A B A B (every variant of
ours, then the peers, then again), each side its best median (`spread`: the other
trial's distance from it). FLOPs 4·B·H·S²·D, halved when causal (varlen: Σ over sequences).
GQA peers get enable_gqa=True; a backend that refuses it gets K/V expanded to H heads
(marked `x` in the table: the peer then reads more memory than our kernel).

    python3 attnfwd_peers.py --out FILE.json [--deadline S] [--only PREFIX] [--go FILE]

Writes FILE.json after every shape (a run cut short keeps what it finished) and prints the
table last: per shape our ms, the peers' ms, peer/ours for both, TFLOP/s and the fraction
of the 989 TFLOP/s dense bf16 roofline; counts and geomeans.
"""
import argparse
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

import cake

ROOF = 989.0
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gated  # noqa: E402
EX = os.path.join(HERE, "..", "..", "examples")
T0 = time.time()


def shapes():
    """(name, B, H, Hkv, S or [lens], D, causal); the first ones matter most"""
    base = [(4, 32, 32, 1024), (2, 32, 32, 4096), (1, 32, 32, 8192), (1, 16, 16, 16384),
            (16, 16, 16, 512), (8, 32, 8, 2048), (2, 32, 4, 4096), (4, 8, 8, 3000),
            (2, 16, 2, 5000), (1, 8, 8, 1537), (8, 32, 32, 1000)]
    out = []
    for D in (128, 64):
        for c in (1, 0):
            for B, H, Hkv, S in base:
                out.append((f"d{D}_c{c}_b{B}h{H}k{Hkv}_s{S}", B, H, Hkv, S, D, c))
    for D in (128, 64):
        for c in (1, 0):
            lens = [512, 3000, 1111, 8192, 257, 4096, 2048, 700]
            out.append((f"varlen_d{D}_c{c}_h16_n{len(lens)}", 1, 16, 16, lens, D, c))
    return out


TRIALS = 2
_TIMER = []


def timer():
    """the one gated.Timer of the process, the GPU warmed to its steady clock first"""
    if not _TIMER:
        _TIMER.append(gated.Timer(torch))
        _TIMER[0].warm(0.5)
    return _TIMER[0]


def ours_ms(fn):
    """our kernel(s): the gated stream time (as `cakec lib bench`: no graph mode)"""
    return timer().time(fn)["median_ms"]


def peer_ms(fn, graph=True):
    """a peer: the faster of its gated stream time and its CUDA graph replay"""
    return gated.fastest(timer().best(fn, graph=graph))[1]["median_ms"]


def trials(fns, n=None):
    """fns: [(name, fn, side)], side "ours" or "peer" (peer_ms; "peer_nograph": no graph
    capture); n trials A B A B (the list in order, again); {name: {"ms": best median,
    "trials": [medians], "spread": max/min - 1}}"""
    got = {}
    for _ in range(n or TRIALS):
        for name, fn, side in fns:
            t = ours_ms(fn) if side == "ours" else peer_ms(fn, graph=side == "peer")
            got.setdefault(name, []).append(t)
    return {k: {"ms": min(v), "trials": v, "spread": max(v) / min(v) - 1} for k, v in got.items()}


def timed(fn):
    """one side alone (one trial): our kernels' method"""
    return ours_ms(fn)


# the dense kernel's variants per head dim: (tag, parameters); the first is the default
# ("x": flash_attn_fwd_ppx, the tiles chained on the tensor cores)
VARIANTS = {128: [("q2", {"QST": 2}), ("x", {"QST": 2, "FILE": "flash_attn_fwd_ppx"})],
            64: [("q2", {"QST": 2}), ("bn192", {"QST": 2, "BN": 192}), ("e1", {"QST": 2, "EMU": 1}),
                 ("x", {"QST": 2, "FILE": "flash_attn_fwd_ppx"})],
            256: [("bn64", {})]}
KFILE = {64: "flash_attn_fwd_pp", 128: "flash_attn_fwd_pp", 256: "flash_attn_fwd_pp_d256"}


def shapes_d256():
    """head dim 256 (examples/flash_attn_fwd_pp_d256.tir): not in the acceptance sweep"""
    return [(f"d256_c{c}_b{B}h{H}k{Hk}_s{S}", B, H, Hk, S, 256, c)
            for c in (1, 0) for B, H, Hk, S in ((2, 16, 16, 4096), (4, 8, 8, 1537))]


def flops_of(B, H, S, D, c):
    if isinstance(S, list):
        return sum(4 * H * s * s * D / (2 if c else 1) for s in S)
    return 4 * B * H * S * S * D / (2 if c else 1)


KERNELS = {}


def kernel(file, **params):
    key = (file, tuple(sorted(params.items())))
    if key not in KERNELS:
        KERNELS[key] = cake.load(os.path.join(EX, file + ".tir"), **params)
    return KERNELS[key]


def ref_f32(q, k, v, c, scale):
    """O, LSE of one [H, S, D] sequence in f32 (k, v already with H heads)"""
    s = torch.einsum("hid,hjd->hij", q.float(), k.float()) * scale
    if c:
        S = q.shape[1]
        s.masked_fill_(torch.ones(S, S, device=q.device, dtype=torch.bool).triu(1), -float("inf"))
    lse = torch.logsumexp(s, -1)
    return torch.einsum("hij,hjd->hid", torch.softmax(s, -1), v.float()), lse


def peer(backend, q, k, v, c, gqa):
    """fn, expanded: the SDPA call under one backend (GQA natively if it can)"""
    def call(kk, vv, g):
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, kk, vv, is_causal=bool(c), enable_gqa=g)
    if not gqa:
        return (lambda: call(k, v, False)), False
    try:
        call(k, v, True)
        torch.cuda.synchronize()
        return (lambda: call(k, v, True)), False
    except Exception:
        rep = q.shape[1] // k.shape[1]
        ke, ve = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        return (lambda: call(ke, ve, False)), True


def dense_case(name, B, H, Hkv, S, D, c):
    dev, bf = "cuda", torch.bfloat16
    scale = 1.0 / math.sqrt(D)
    q = torch.randn(B, H, S, D, device=dev, dtype=bf)
    k = torch.randn(B, Hkv, S, D, device=dev, dtype=bf)
    v = torch.randn(B, Hkv, S, D, device=dev, dtype=bf)
    o = torch.empty_like(q)
    lse = torch.empty(B * H, S, device=dev, dtype=torch.float32)
    q3, k3, v3, o3 = (t.view(-1, S, D) for t in (q, k, v, o))
    fc, xc = peer(SDPBackend.CUDNN_ATTENTION, q, k, v, c, Hkv != H)
    ff, xf = peer(SDPBackend.FLASH_ATTENTION, q, k, v, c, Hkv != H)
    want = fc()
    torch.cuda.synchronize()
    ref = None
    if B * H * S * S <= 1 << 28:
        rep = H // Hkv
        ref = ref_f32(q.view(B * H, S, D), k.repeat_interleave(rep, 1).view(B * H, S, D),
                      v.repeat_interleave(rep, 1).view(B * H, S, D), c, scale)
    doc = {"expanded": xc or xf, "variants": {}}
    fns = []
    for i, (tag, ps) in enumerate(VARIANTS[D]):
        ps = dict(ps)
        kern = kernel(ps.pop("FILE", KFILE[D]), **({} if D == 256 else {"D": D}), CAUSAL=c, **ps)
        ours = lambda kern=kern: kern(q3, k3, v3, o3, lse, scale)
        o.fill_(float("nan"))
        lse.fill_(float("nan"))
        ours()
        torch.cuda.synchronize()
        v_ = {"err_vs_cudnn": (o.float() - want.float()).abs().max().item()}
        if ref is not None:
            v_["err_o_f32"] = (o3.float() - ref[0]).abs().max().item()
            v_["err_lse_f32"] = (lse - ref[1]).abs().max().item()
        v_["ok"] = v_["err_vs_cudnn"] <= 2e-2 and v_.get("err_o_f32", 0) <= 2e-2 and v_.get("err_lse_f32", 0) <= 1e-3
        doc["variants"][tag] = v_
        fns.append((tag, ours, "ours"))
        if i == 0:
            doc.update({k: v_[k] for k in v_})
    fns += [("cudnn", fc, "peer"), ("flash", ff, "peer")]
    got = trials(fns)
    for tag, v_ in doc["variants"].items():
        v_["ms"], v_["spread"] = got[tag]["ms"], got[tag]["spread"]
    first = VARIANTS[D][0][0]
    doc["ours_ms"], doc["ours_spread"] = got[first]["ms"], got[first]["spread"]
    good = [(v_["ms"], t) for t, v_ in doc["variants"].items() if v_["ok"]]
    if good:
        doc["best_ms"], doc["best"] = min(good)
    doc["ok"] = doc.get("ok", False) and all(v_["ok"] for v_ in doc["variants"].values())
    doc["cudnn_ms"], doc["cudnn_spread"] = got["cudnn"]["ms"], got["cudnn"]["spread"]
    doc["flash_ms"] = got["flash"]["ms"]
    return doc


def varlen_case(name, B, H, Hkv, lens, D, c):
    dev, bf = "cuda", torch.bfloat16
    scale = 1.0 / math.sqrt(D)
    T = sum(lens)
    q = torch.randn(T, H, D, device=dev, dtype=bf)
    k = torch.randn(T, Hkv, D, device=dev, dtype=bf)
    v = torch.randn(T, Hkv, D, device=dev, dtype=bf)
    o = torch.empty_like(q)
    lse = torch.empty(H, T, device=dev, dtype=torch.float32)
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), device=dev, dtype=torch.int32)
    kern = kernel("flash_attn_varlen_fwd", D=D, CAUSAL=c)
    # the kernel's views: [H, T, D] with strides [D, H * D, 1] (the packed [T, H, D] tensor)
    qv, kv_, vv, ov = (t.permute(1, 0, 2) for t in (q, k, v, o))
    ours = lambda: kern(qv, kv_, vv, ov, lse, cu, scale)
    ours()
    # peers: torch's nested-jagged SDPA (the flash/cuDNN varlen kernels in one launch) and
    # one SDPA call per sequence; the faster of the two counts
    qs = [q[a:b].transpose(0, 1).unsqueeze(0) for a, b in zip(cu[:-1].tolist(), cu[1:].tolist())]
    ks = [k[a:b].transpose(0, 1).unsqueeze(0) for a, b in zip(cu[:-1].tolist(), cu[1:].tolist())]
    vs = [v[a:b].transpose(0, 1).unsqueeze(0) for a, b in zip(cu[:-1].tolist(), cu[1:].tolist())]
    torch.cuda.synchronize()
    err = 0.0
    for i, (a, b) in enumerate(zip(cu[:-1].tolist(), cu[1:].tolist())):
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            w = F.scaled_dot_product_attention(qs[i], ks[i], vs[i], is_causal=bool(c))
        err = max(err, (o[a:b].transpose(0, 1).float() - w[0].float()).abs().max().item())
    doc = {"err_vs_cudnn": err, "ok": err <= 2e-2}

    def nested(backend):
        def qkv(t):
            return torch.nested.nested_tensor_from_jagged(t, cu.long()).transpose(1, 2)
        nq, nk, nv = qkv(q), qkv(k), qkv(v)

        def f():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(nq, nk, nv, is_causal=bool(c))
        return f
    # each backend: the faster of its nested-jagged call (no graph capture) and one call per
    # sequence (also as a graph)
    fns = [("ours", ours, "ours")]
    for key, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
        def g(be=be):
            with sdpa_kernel(be):
                for i in range(len(qs)):
                    F.scaled_dot_product_attention(qs[i], ks[i], vs[i], is_causal=bool(c))
        fns.append((key + "_loop", g, "peer"))
        try:
            f = nested(be)
            f()
            torch.cuda.synchronize()
            fns.append((key + "_nested", f, "peer_nograph"))
        except Exception as e:   # the backend has no jagged path
            doc[key + "_ms_why"] = f"{type(e).__name__}: {str(e)[:120]}"
    got = trials(fns)
    doc["ours_ms"], doc["ours_spread"] = got["ours"]["ms"], got["ours"]["spread"]
    for key in ("cudnn", "flash"):
        for way in ("loop", "nested"):
            if f"{key}_{way}" in got:
                doc[f"{key}_{way}_ms"] = got[f"{key}_{way}"]["ms"]
        doc[key + "_ms"] = min(doc.get(key + "_nested_ms", 1e9), doc[key + "_loop_ms"])
    return doc


def gm(r):
    return math.exp(sum(map(math.log, r)) / len(r)) if r else float("nan")


def table(docs):
    lines = ["| shape | ours ms | best ms (variant) | cuDNN ms | flash ms | cuDNN/ours | cuDNN/best | flash/ours "
             "| TFLOP/s | roofline | check |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    rc, rb, rf = [], [], []
    per = {}
    for name, d in docs.items():
        if "ours_ms" not in d or "cudnn_ms" not in d or "flash_ms" not in d:
            lines.append(f"| {name} | {d.get('error', 'missing')[:80]} | | | | | | | | | |")
            continue
        a, b = d["cudnn_ms"] / d["ours_ms"], d["flash_ms"] / d["ours_ms"]
        bm = d.get("best_ms", d["ours_ms"])
        rc.append(a)
        rf.append(b)
        rb.append(d["cudnn_ms"] / bm)
        for tag, v in d.get("variants", {}).items():
            per.setdefault((name.split("_")[0], tag), []).append(d["cudnn_ms"] / v["ms"])
        tf = d["flops"] / d["ours_ms"] * 1e-9
        x = " x" if d.get("expanded") else ""
        lines.append(f"| {name} | {d['ours_ms']:.3f} | {bm:.3f} ({d.get('best', '-')}) | {d['cudnn_ms']:.3f}{x} | "
                     f"{d['flash_ms']:.3f} | {a:.2f} | {d['cudnn_ms'] / bm:.2f} | {b:.2f} | {tf:.0f} | "
                     f"{tf / ROOF:.2f} | {'ok' if d.get('ok') else 'FAIL'} |")
    nok = sum(1 for d in docs.values() if d.get("ok"))
    lines.append("")
    lines.append(f"shapes timed {len(rc)} of {len(docs)}; checks ok {nok}; "
                 f"cuDNN/ours >= 1.05 at {sum(r >= 1.05 for r in rc)}, geomean {gm(rc):.3f}, min {min(rc or [0]):.2f}; "
                 f"cuDNN/best >= 1.05 at {sum(r >= 1.05 for r in rb)}, geomean {gm(rb):.3f}, min {min(rb or [0]):.2f}; "
                 f"flash/ours >= 1.3 at {sum(r >= 1.3 for r in rf)}, geomean {gm(rf):.3f}, min {min(rf or [0]):.2f}")
    sp = [(d.get("ours_spread"), d.get("cudnn_spread")) for d in docs.values() if "ours_spread" in d]
    if sp:
        med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        lines.append(f"timing: gated (cold L2, the device's work alone), {TRIALS} trials A B A B, best median each; "
                     f"spread between trials: ours median {med([a for a, _ in sp]) * 100:.1f}% "
                     f"(max {max(a for a, _ in sp) * 100:.1f}%), cuDNN median {med([b or 0 for _, b in sp]) * 100:.1f}% "
                     f"(max {max(b or 0 for _, b in sp) * 100:.1f}%)")
    lines.append("variants (cuDNN / variant, geomean over the dense shapes of that head dim): " +
                 ", ".join(f"{k[0]} {k[1]} {gm(v):.3f} (n={len(v)})" for k, v in sorted(per.items())))
    return "\n".join(lines)


# ---- decode: 1 query row per head, GQA, split-KV ------------------------------------------
DECODE = [(4, 32, 4, 8192, 128), (4, 32, 4, 32768, 128), (4, 32, 4, 131072, 128), (1, 64, 8, 131072, 128),
          (8, 32, 4, 16384, 128), (1, 32, 4, 65536, 64), (2, 32, 4, 65536, 128), (1, 32, 4, 8192, 128)]
DEC_VARIANTS = [("s3", {}), ("s2", {"STAGES": 2})]


def decode_splits(BHK, S):
    """split counts to try: whole waves of 132 blocks (one block per SM), one block fewer
    per KV head than a wave, and splits of 32 and 64 tiles"""
    tiles = -(-S // 128)
    c = {k * 132 // BHK for k in (1, 2, 3)} | {132 // BHK - 1, -(-tiles // 32), -(-tiles // 64)}
    c |= {tiles // 4, tiles // 8, tiles // 16}
    return sorted({max(1, min(tiles, n)) for n in c})


def best_sdpa(q, k, v, kx, vx, ours=()):
    """(ms, name) of the fastest SDPA backend (GQA natively and with K/V expanded); with
    ours ([(name, fn)]: our candidates), those are timed in the same trials A B A B:
    (ms, name, {name: ms of ours})"""
    fns = []
    for name, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION),
                     ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
        for gqa in (True, False):
            if gqa:
                def fn(be=be):
                    with sdpa_kernel(be):
                        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            else:
                def fn(be=be):
                    with sdpa_kernel(be):
                        return F.scaled_dot_product_attention(q, kx, vx)
            try:
                fn()
                torch.cuda.synchronize()
            except Exception:
                continue
            fns.append((f"{name}{'+gqa' if gqa else '+expand'}", fn, "peer"))
    mine = [n for n, _ in ours]
    got = trials([(n, f, "ours") for n, f in ours] + fns)
    peers = [(v["ms"], k) for k, v in got.items() if k not in mine]
    best = min(peers) if peers else (None, "")
    return best if not ours else (best[0], best[1], {n: got[n]["ms"] for n in mine})


def decode_case(B, H, HKV, S, D):
    dev, bf = "cuda", torch.bfloat16
    G, BHK = H // HKV, B * HKV
    scale = 1.0 / math.sqrt(D)
    q = torch.randn(B, H, 1, D, device=dev, dtype=bf)
    k = torch.randn(B, HKV, S, D, device=dev, dtype=bf)
    v = torch.randn(B, HKV, S, D, device=dev, dtype=bf)
    km = kernel("attn_decode_merge", HD=D)
    q3, k3, v3 = q.reshape(BHK, G, D), k.reshape(BHK, S, D), v.reshape(BHK, S, D)
    o = torch.empty(BHK, G, D, device=dev, dtype=bf)
    kx, vx = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)
    qg = q.view(B, HKV, G, D).float()
    sc = torch.einsum("bkgd,bksd->bkgs", qg, k.float()) * scale
    ref = torch.einsum("bkgs,bksd->bkgd", torch.softmax(sc, -1), v.float()).reshape(B, H, D)
    del sc, qg
    tried, best = {}, None
    for tag, ps in DEC_VARIANTS:
        kp = kernel("attn_decode_partial", HD=D, **ps)
        for ns in decode_splits(BHK, S):
            if tag != "s3" and best is not None and ns != int(best[1].split("/")[1]):
                continue                  # the other stage count at the best split only
            op = torch.empty(ns, BHK, G, D, device=dev, dtype=torch.float32)
            lp = torch.empty(ns, BHK, G, 8, device=dev, dtype=torch.float32)

            def ours(op=op, lp=lp, kp=kp):
                kp(q3, k3, v3, op, lp, scale)
                km(op, lp, o)
            o.fill_(float("nan"))
            ours()
            torch.cuda.synchronize()
            e = ((o.view(B, H, D).float() - ref).norm() / ref.norm()).item()
            e = e if e == e else float("inf")   # NaN: an unwritten element
            t = timed(ours)
            tried[f"{tag}/{ns}"] = {"ms": t, "err": e}
            if e < 1e-2 and (best is None or t < best[0]):
                best = (t, f"{tag}/{ns}", e)
                part = (kp, op, lp)
    d_part = None
    if best:   # the partial kernel alone at the best split: what the merge and its launch cost
        kp, op, lp = part
        d_part = timed(lambda: kp(q3, k3, v3, op, lp, scale))
    tp, peer_name = best_sdpa(q, k, v, kx, vx)
    d = {"tried": tried, "peer": peer_name, "peer_ms": tp, "ok": best is not None, "partial_ms": d_part}
    if best:
        d.update({"ms": best[0], "splits": best[1], "err": best[2], "ratio": tp / best[0] if tp else None,
                  "gbps": 2 * BHK * S * D * 2 / best[0] * 1e-6})
    return d


def decode_table(docs):
    lines = ["| decode (1 row/head) | variant/splits | ours ms | best SDPA | SDPA ms | SDPA/ours | ours GB/s "
             "| of 4.8 TB/s | check |",
             "|---|---|---|---|---|---|---|---|---|"]
    rs = []
    for name, d in docs.items():
        if "ms" not in d:
            lines.append(f"| {name} | {d.get('error', 'missing')[:80]} | | | | | | | |")
            continue
        r = d.get("ratio")
        if r:
            rs.append(r)
        lines.append(f"| {name} | {d['splits']} | {d['ms']:.4f} | {d['peer']} | {d['peer_ms'] or 0:.4f} | "
                     f"{r or 0:.3f} | {d['gbps']:.0f} | {d['gbps'] / 4800:.2f} | {'ok' if d.get('ok') else 'FAIL'} |")
    lines.append("")
    lines.append(f"decode: {len(rs)} timed, >= 1.0 at {sum(r >= 1.0 for r in rs)}, geomean {gm(rs):.3f}, "
                 f"min {min(rs or [0]):.3f}")
    return "\n".join(lines)


def precompile():
    """every kernel the sweep launches, on threads (the compile releases the GIL)"""
    from concurrent.futures import ThreadPoolExecutor
    jobs = []
    jobs += [("flash_attn_fwd_pp_d256", dict(CAUSAL=c)) for c in (1, 0)]
    for D in (128, 64):
        for c in (1, 0):
            for _, ps in VARIANTS[D]:
                ps = dict(ps)
                jobs.append((ps.pop("FILE", "flash_attn_fwd_pp"), dict(D=D, CAUSAL=c, **ps)))
            jobs.append(("flash_attn_varlen_fwd", dict(D=D, CAUSAL=c)))
        jobs += [("attn_decode_partial", dict(HD=D, **ps)) for _, ps in DEC_VARIANTS]
        jobs.append(("attn_decode_merge", dict(HD=D)))
    t0 = time.time()
    with ThreadPoolExecutor(6) as ex:
        futs = [ex.submit(kernel, f, **ps) for f, ps in jobs]
        errs = [f.exception() for f in futs]
    bad = [f"{j[0]} {j[1]}: {e}"[:200] for j, e in zip(jobs, errs) if e]
    print(f"precompiled {len(jobs) - len(bad)} of {len(jobs)} kernels in {time.time() - t0:.1f} s", flush=True)
    for b in bad:
        print("precompile failed:", b, flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=60)
    ap.add_argument("--only", default="")
    ap.add_argument("--go", default="")
    ap.add_argument("--decode-share", type=float, default=0.2)
    a = ap.parse_args()
    try:
        precompile()
    except Exception as e:
        print("precompile:", repr(e)[:300], flush=True)
    while a.go and not os.path.exists(a.go) and time.time() - T0 < a.deadline / 2:
        time.sleep(0.2)
    print(f"timings start at {time.time() - T0:.1f} s", flush=True)
    docs, dec, d256 = {}, {}, {}
    fwd_end = a.deadline - (a.deadline - (time.time() - T0)) * a.decode_share
    for name, B, H, Hkv, S, D, c in shapes():
        if a.only and not name.startswith(a.only):
            continue
        if time.time() - T0 > fwd_end:
            docs[name] = {"error": "skipped: out of time"}
            continue
        try:
            fn = varlen_case if isinstance(S, list) else dense_case
            d = fn(name, B, H, Hkv, S, D, c)
        except Exception as e:
            d = {"error": f"{type(e).__name__}: {e}"[:300], "trace": traceback.format_exc()[-1500:]}
        d["flops"] = flops_of(B, H, S, D, c)
        docs[name] = d
        print(name, json.dumps({k: v for k, v in d.items() if k != "trace"}), flush=True)
        json.dump({"fwd": docs, "decode": dec, "d256": d256}, open(a.out, "w"), indent=1)
        torch.cuda.empty_cache()
    for B, H, Hkv, S, D in DECODE:
        name = f"B={B},H={H},Hkv={Hkv},S={S},D={D}"
        if a.only and a.only != "decode":
            continue
        if time.time() - T0 > a.deadline - 3:
            dec[name] = {"error": "skipped: out of time"}
            continue
        try:
            d = decode_case(B, H, Hkv, S, D)
        except Exception as e:
            d = {"error": f"{type(e).__name__}: {e}"[:300], "trace": traceback.format_exc()[-1500:]}
        dec[name] = d
        print(name, json.dumps({k: v for k, v in d.items() if k != "trace"}), flush=True)
        json.dump({"fwd": docs, "decode": dec, "d256": d256}, open(a.out, "w"), indent=1)
        torch.cuda.empty_cache()
    for name, B, H, Hkv, S, D, c in shapes_d256():
        if a.only and not name.startswith(a.only):
            continue
        if time.time() - T0 > a.deadline - 2:
            d256[name] = {"error": "skipped: out of time"}
            continue
        try:
            d = dense_case(name, B, H, Hkv, S, D, c)
        except Exception as e:
            d = {"error": f"{type(e).__name__}: {e}"[:300], "trace": traceback.format_exc()[-1500:]}
        d["flops"] = flops_of(B, H, S, D, c)
        d256[name] = d
        print(name, json.dumps({k: v for k, v in d.items() if k != "trace"}), flush=True)
        json.dump({"fwd": docs, "decode": dec, "d256": d256}, open(a.out, "w"), indent=1)
        torch.cuda.empty_cache()
    print(ops_check())
    print(decode_table(dec))
    print()
    print("head dim 256 (not part of the acceptance sweep):")
    print(table(d256))
    print()
    print(table(docs))


def ops_check():
    """cake.ops.attention / attention_lse / attention_varlen (the library's dispatch) at a few
    shapes against SDPA in f32: one line"""
    try:
        import cake.ops as ops
        dev, bf = "cuda", torch.bfloat16
        worst, n = 0.0, 0
        for B, H, Hkv, S, D, c in ((2, 8, 2, 333, 128, 1), (1, 4, 4, 700, 64, 0), (3, 8, 1, 129, 64, 1)):
            q = torch.randn(B, H, S, D, device=dev, dtype=bf)
            k, v = (torch.randn(B, Hkv, S, D, device=dev, dtype=bf) for _ in range(2))
            o, lse = ops.attention_lse(q, k, v, causal=bool(c))
            rep = H // Hkv
            ro, rl = ref_f32(q.view(B * H, S, D), k.repeat_interleave(rep, 1).view(B * H, S, D),
                             v.repeat_interleave(rep, 1).view(B * H, S, D), c, 1 / math.sqrt(D))
            worst = max(worst, (o.view(B * H, S, D).float() - ro).abs().max().item(),
                        50 * (lse.view(B * H, S) - rl).abs().max().item())
            n += 1
        lens = [300, 1, 129, 1000]
        cu = torch.tensor([0, 300, 301, 430, 1430], device=dev, dtype=torch.int32)
        q = torch.randn(1430, 8, 128, device=dev, dtype=bf)
        k, v = (torch.randn(1430, 2, 128, device=dev, dtype=bf) for _ in range(2))
        o, lse = ops.attention_varlen(q, k, v, cu, causal=True)
        for a, b in zip(cu[:-1].tolist(), cu[1:].tolist()):
            ro, rl = ref_f32(q[a:b].transpose(0, 1), k[a:b].transpose(0, 1).repeat_interleave(4, 0),
                             v[a:b].transpose(0, 1).repeat_interleave(4, 0), 1, 1 / math.sqrt(128))
            worst = max(worst, (o[a:b].transpose(0, 1).float() - ro).abs().max().item(),
                        50 * (lse[:, a:b] - rl).abs().max().item())
            n += 1
        return (f"cake.ops attention_lse / attention_varlen: {n} cases, worst error {worst:.4f} "
                f"({'ok' if worst <= 2e-2 else 'FAIL'}); picks {ops.stats}, errors {ops.errors[:3]}")
    except Exception as e:
        return f"cake.ops attention: FAIL {type(e).__name__}: {str(e)[:300]}"


if __name__ == "__main__":
    main()
