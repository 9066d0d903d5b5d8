"""peers.py — the peers CAKE's kernels are compared with, measured in the same run.

Prints one JSON object: for each case, the peer's median time (ms) and the bytes
it moves, so the caller can form ratios. Every timing uses CUDA events through
triton.testing.do_bench (median, L2 flushed between runs by do_bench's cache
clearing), on random inputs (never zeros).
"""
import json
import sys

import torch
import triton
import triton.language as tl
from triton.testing import do_bench


def bench(fn):
    return do_bench(fn, warmup=25, rep=200, return_mode="median")


@triton.jit
def softmax_rows(out_ptr, in_ptr, in_stride, out_stride, n_rows, n_cols,
                 BLOCK: tl.constexpr, STAGES: tl.constexpr):
    # one program per row, rows strided over the grid: the fused softmax of
    # Triton's tutorial (row held in registers, max, exp, sum, divide)
    start = tl.program_id(0)
    step = tl.num_programs(0)
    for row in tl.range(start, n_rows, step, num_stages=STAGES):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(in_ptr + row * in_stride + cols, mask=mask, other=-float("inf"))
        x = x - tl.max(x, axis=0)
        e = tl.exp(x)
        y = e / tl.sum(e, axis=0)
        tl.store(out_ptr + row * out_stride + cols, y, mask=mask)


def triton_softmax(x, y):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    warps = 8 if block < 4096 else 16 if block >= 8192 else 8
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    grid = (min(rows, sms * 4),)
    softmax_rows[grid](y, x, x.stride(0), y.stride(0), rows, cols,
                       BLOCK=block, STAGES=4, num_warps=warps)


def main():
    torch.manual_seed(0)
    dev = "cuda"
    res = {"device": torch.cuda.get_device_name(0)}
    # device-to-device copy: 1 GiB read + 1 GiB written
    n = 1 << 28
    a = torch.rand(n, device=dev, dtype=torch.float32) + 0.5
    b = torch.empty_like(a)
    t = bench(lambda: b.copy_(a))
    res["copy"] = {"ms": t, "bytes": 2 * a.numel() * 4, "gbps": 2 * a.numel() * 4 / t / 1e6}
    del a, b
    # softmax fp32 32768 x 8192
    x = torch.randn(32768, 8192, device=dev, dtype=torch.float32)
    y = torch.empty_like(x)
    triton_softmax(x, y)
    torch.testing.assert_close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)
    t = bench(lambda: triton_softmax(x, y))
    res["softmax_triton"] = {"ms": t, "bytes": 2 * x.numel() * 4}
    t = bench(lambda: torch.softmax(x, dim=1))
    res["softmax_torch"] = {"ms": t, "bytes": 2 * x.numel() * 4}
    del x, y
    # rmsnorm / layernorm bf16 (torch) for reference
    for n_cols in (4096, 8192):
        x = torch.randn(32768, n_cols, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n_cols, device=dev, dtype=torch.bfloat16)
        bias = torch.randn(n_cols, device=dev, dtype=torch.bfloat16)
        nbytes = 2 * x.numel() * 2
        t = bench(lambda: torch.nn.functional.rms_norm(x, (n_cols,), w, 1e-6))
        res[f"rmsnorm_torch_{n_cols}"] = {"ms": t, "bytes": nbytes}
        t = bench(lambda: torch.nn.functional.layer_norm(x, (n_cols,), w, bias, 1e-5))
        res[f"layernorm_torch_{n_cols}"] = {"ms": t, "bytes": nbytes}
        del x
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
