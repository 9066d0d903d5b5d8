"""llama_mlp.py — a Llama-style MLP block from cake ops, timed beside the same
block in plain torch and under torch.compile:

    y = x + W_down · (silu(W_gate · rmsnorm(x)) * (W_up · rmsnorm(x)))

    python3 examples/python/llama_mlp.py          # Llama-3-8B sizes: d 4096, hidden 14336
    python3 examples/python/llama_mlp.py --quick  # 2048 tokens only

Correct to bf16 tolerance against the float32 block; times are medians of CUDA
events around one block.
"""
import statistics
import sys

import torch
import torch.nn.functional as F

import cake
import cake.ops as ops


def cake_mlp(x, w_norm, w_gate, w_up, w_down, eps=1e-5):
    h = ops.rms_norm(x, w_norm, eps)
    a = ops.swiglu(ops.gemm(h, w_gate), ops.gemm(h, w_up))
    return x + ops.gemm(a, w_down)


def torch_mlp(x, w_norm, w_gate, w_up, w_down, eps=1e-5):
    h = F.rms_norm(x, (x.shape[-1],), w_norm, eps)
    return x + F.linear(F.silu(F.linear(h, w_gate)) * F.linear(h, w_up), w_down)


def ref_mlp(x, w_norm, w_gate, w_up, w_down, eps=1e-5):
    f = [t.float() for t in (x, w_norm, w_gate, w_up, w_down)]
    return torch_mlp(*f, eps)


def time_ms(fn, *args, runs=20):
    for _ in range(3):
        fn(*args)
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn(*args)
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main(quick=False, d=4096, hidden=14336):
    """quick: one token count (2048) instead of three"""
    torch.manual_seed(0)
    dev, bf = "cuda", torch.bfloat16
    w_norm = 1 + 0.1 * torch.randn(d, device=dev, dtype=bf)
    w_gate = torch.randn(hidden, d, device=dev, dtype=bf) * d ** -0.5
    w_up = torch.randn(hidden, d, device=dev, dtype=bf) * d ** -0.5
    w_down = torch.randn(d, hidden, device=dev, dtype=bf) * hidden ** -0.5
    weights = (w_norm, w_gate, w_up, w_down)
    compiled = torch.compile(torch_mlp)
    results = []
    for tokens in ((2048,) if quick else (128, 1024, 4096)):
        x = torch.randn(tokens, d, device=dev, dtype=bf)
        ref = ref_mlp(x, *weights)
        got = cake_mlp(x, *weights)
        err = ((got.float() - ref).abs().max() / ref.abs().max()).item()
        r = {"tokens": tokens, "d": d, "hidden": hidden, "err": err, "ok": err < 2e-2,
             "cake_ms": time_ms(cake_mlp, x, *weights),
             "torch_ms": time_ms(torch_mlp, x, *weights),
             "compile_ms": time_ms(compiled, x, *weights)}
        results.append(r)
    print(f"Llama MLP block, d {d}, hidden {hidden}, bf16 ({cake.target_of()})")
    print(f"{'tokens':>7} {'cake ms':>9} {'torch ms':>9} {'compile ms':>11} {'rel err':>9}")
    for r in results:
        print(f"{r['tokens']:>7} {r['cake_ms']:>9.3f} {r['torch_ms']:>9.3f} "
              f"{r['compile_ms']:>11.3f} {r['err']:>9.1e}{'' if r['ok'] else '  WRONG'}")
    return results


if __name__ == "__main__":
    sys.exit(0 if all(r["ok"] for r in main("--quick" in sys.argv)) else 1)
