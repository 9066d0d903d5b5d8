"""fp8_peers.py — the peers of examples/fp8_quant.tir, measured in the same call:
per-row e4m3 quantization of a bf16 [M, N] tensor (scale = amax / 448) in torch
eager and torch.compile, and the device copy of the same bytes (3 M N: what the
kernel reads plus what it writes). Median times through triton.testing.do_bench
(L2 flushed between runs). Prints one JSON object.

usage: python3 fp8_peers.py M N"""
import json
import sys

import torch
from triton.testing import do_bench


def bench(fn):
    return do_bench(fn, warmup=10, rep=100, return_mode="median")


def quant(x):
    s = x.abs().amax(dim=1, keepdim=True).float().clamp(min=1e-12) / 448.0
    return (x.float() / s).to(torch.float8_e4m3fn), s


def main():
    m, n = int(sys.argv[1]), int(sys.argv[2])
    torch.manual_seed(0)
    x = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    moved = 3 * m * n + 4 * m
    res = {"device": torch.cuda.get_device_name(0), "shape": f"M={m},N={n}", "bytes": moved}
    src = torch.empty(moved // 2, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    t = bench(lambda: dst.copy_(src))
    res["copy"] = {"ms": t, "gbps": 2 * src.numel() / t / 1e6}
    del src, dst
    t = bench(lambda: quant(x))
    res["torch_eager"] = {"ms": t, "gbps": moved / t / 1e6}
    try:
        qc = torch.compile(quant)
        y, s = qc(x)
        y0, s0 = quant(x)
        same = (y.view(torch.uint8) == y0.view(torch.uint8)).float().mean().item()
        t = bench(lambda: qc(x))
        res["torch_compile"] = {"ms": t, "gbps": moved / t / 1e6, "agrees_with_eager": same}
    except Exception as e:  # keep the other numbers
        res["torch_compile"] = {"error": str(e)[:300]}
    json.dump(res, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
