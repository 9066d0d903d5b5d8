"""lib_peers.py — the peers of the library's ops, timed in the same call as
`cakec lib bench` (bench/device/run_library.sh).

argv[1]: a file of cases, one `OP SHAPE` per line (SHAPE as `M=128,N=4096,K=4096`).
Prints one JSON object {"OP SHAPE": {"peer": NAME, "ms": T, "all": {NAME: T}}}: the
fastest of the peers tried at that shape (cuBLAS through torch.matmul, torch._scaled_mm,
SDPA, torch eager, torch.compile where the time budget allows). Every timing is
triton.testing.do_bench's median (L2 flushed between runs), on random inputs.
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

T0 = time.time()
BUDGET = float(os.environ.get("LIB_PEERS_BUDGET", "40"))   # seconds for torch.compile
_compiled = {}


def bench(fn):
    return do_bench(fn, warmup=10, rep=60, return_mode="median")


def compiled(name, fn):
    if name not in _compiled:
        _compiled[name] = torch.compile(fn, dynamic=True)
    return _compiled[name]


def rms(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def ln(x, w, b, eps):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def peers(op, s):
    dev = "cuda"
    bf = torch.bfloat16
    out = {}
    if op in ("gemm", "gemm_bias_act"):
        a = torch.randn(s["M"], s["K"], device=dev, dtype=bf)
        b = torch.randn(s["N"], s["K"], device=dev, dtype=bf)
        if op == "gemm":
            out["cublas"] = bench(lambda: torch.matmul(a, b.t()))
        else:
            bias = torch.randn(s["N"], device=dev)
            out["torch_eager"] = bench(lambda: F.silu(torch.matmul(a, b.t()) + bias))
            if time.time() - T0 < BUDGET:
                f = compiled("gba", lambda a, b, bias: F.silu(torch.matmul(a, b.t()).float() + bias).to(bf))
                f(a, b, bias)
                out["torch_compile"] = bench(lambda: f(a, b, bias))
    elif op == "gemm_fp8":
        a = torch.randn(s["M"], s["K"], device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(s["N"], s["K"], device=dev).to(torch.float8_e4m3fn)
        one = torch.ones((), device=dev)
        out["scaled_mm"] = bench(lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=bf))
    elif op.startswith("attention_fwd"):
        d = 64 if op.endswith("d64") else 128
        q, k, v = (torch.randn(1, s["BH"], s["S"], d, device=dev, dtype=bf) for _ in range(3))
        out["sdpa"] = bench(lambda: F.scaled_dot_product_attention(q, k, v))
    elif op in ("rmsnorm", "layernorm"):
        x = torch.randn(s["M"], s["N"], device=dev, dtype=bf)
        w = torch.randn(s["N"], device=dev, dtype=bf)
        b = torch.randn(s["N"], device=dev, dtype=bf)
        fn = (lambda: rms(x, w, 1e-6)) if op == "rmsnorm" else (lambda: ln(x, w, b, 1e-6))
        out["torch_eager"] = bench(fn)
        if time.time() - T0 < BUDGET:
            f = compiled(op, rms if op == "rmsnorm" else ln)
            args = (x, w, 1e-6) if op == "rmsnorm" else (x, w, b, 1e-6)
            f(*args)
            out["torch_compile"] = bench(lambda: f(*args))
    elif op == "softmax":
        x = torch.randn(s["M"], s["N"], device=dev)
        out["torch_eager"] = bench(lambda: torch.softmax(x, -1))
        if time.time() - T0 < BUDGET:
            f = compiled("softmax", lambda x: torch.softmax(x, -1))
            f(x)
            out["torch_compile"] = bench(lambda: f(x))
    elif op == "swiglu":
        g = torch.randn(s["N"], device=dev, dtype=bf)
        u = torch.randn(s["N"], device=dev, dtype=bf)
        out["torch_eager"] = bench(lambda: F.silu(g) * u)
        if time.time() - T0 < BUDGET:
            f = compiled("swiglu", lambda g, u: F.silu(g) * u)
            f(g, u)
            out["torch_compile"] = bench(lambda: f(g, u))
    elif op == "fp8_row_quantize":
        x = torch.randn(s["M"], s["N"], device=dev, dtype=bf)

        def quant(x):
            sc = x.abs().amax(-1, keepdim=True).float().clamp(min=1e-12) / 448.0
            return (x.float() / sc).to(torch.float8_e4m3fn), sc
        out["torch_eager"] = bench(lambda: quant(x))
        if time.time() - T0 < BUDGET:
            f = compiled("fp8q", quant)
            f(x)
            out["torch_compile"] = bench(lambda: f(x))
    elif op == "cross_entropy":
        x = torch.randn(s["B"], s["V"], device=dev)
        t = torch.randint(0, s["V"], (s["B"],), device=dev)
        out["torch_eager"] = bench(lambda: F.cross_entropy(x, t, reduction="none"))
        if time.time() - T0 < BUDGET:
            f = compiled("ce", lambda x, t: F.cross_entropy(x, t, reduction="none"))
            f(x, t)
            out["torch_compile"] = bench(lambda: f(x, t))
    return out


def main():
    res = {}
    for line in open(sys.argv[1]):
        line = line.split("#")[0].strip()
        if not line:
            continue
        op, shape = line.split()
        s = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in shape.split(",")}
        try:
            all_ = peers(op, s)
            best = min(all_, key=all_.get)
            res[f"{op} {shape}"] = {"peer": best, "ms": all_[best], "all": all_}
        except Exception as e:  # a peer that fails is reported, the others go on
            res[f"{op} {shape}"] = {"peer": "error", "ms": None, "error": str(e)[:200]}
    print(json.dumps(res))


if __name__ == "__main__":
    main()
