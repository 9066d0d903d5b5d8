"""tc_peers.py — the peers of CAKE's tensor-core kernels, measured in the same run.

Cases (FLOPs: 2·M·N·K for a GEMM, 4·B·H·S²·D for attention, halved when causal):
  cublas_bf16_N       torch `A @ B.T` (cuBLAS), A [N, N], B [N, N] bf16, f32 accumulate
  triton_bf16_N       matmul_tn below: a tiled, grouped-order, autotuned Triton GEMM
  torch_bias_silu_4096  F.silu(F.linear(a, w, bias)): cuBLAS, then separate kernel(s)
  scaled_mm_fp8_8192  torch._scaled_mm, e4m3 inputs, per-tensor f32 scales, bf16 out
                      (`_fast` beside it: use_fast_accum=True)
  sdpa_flash_dD_cC    F.scaled_dot_product_attention, flash backend forced, bf16,
                      B=4, H=32, S=4096, head dim D, causal C (sdpa_cudnn_*: the cuDNN
                      backend forced, shown beside it for information)
  roofline            the best (minimum-time) cuBLAS 8192³ rate of this run: the measured
                      dense bf16 ceiling, beside the 989 TFLOP/s datasheet figure

Each case: median ms over triton.testing.do_bench (device events, L2 cleared before
every run), TFLOP/s, the FLOP count and, where it is cheap, the relative error
‖out − ref‖ / ‖ref‖ against an f32 reference. Inputs are random (never zeros). A case
that raises is reported with its error; the others still run.

    python3 bench/device/tc_peers.py [--out FILE] [--only PREFIX,...]

Prints one JSON object on stdout; with --out, also rewrites FILE after every case,
so a run killed by its time limit still leaves the cases it finished.
"""
import argparse
import json
import sys
import time
import traceback

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from triton.testing import do_bench

DATASHEET_BF16_TFLOPS = 989.0  # H100/H200 SXM dense bf16, vendor datasheet
GEMM_SIZES = (2048, 4096, 8192)


def timed(fn, rep=200):
    """median and minimum ms of fn, one do_bench run (L2 cleared before each call)"""
    try:
        times = sorted(float(t) for t in do_bench(fn, warmup=25, rep=rep, return_mode="all"))
        return times[len(times) // 2], times[0]
    except (TypeError, ValueError):  # a do_bench without return_mode="all"
        med = do_bench(fn, warmup=25, rep=rep, return_mode="median")
        return med, med


def rel_err(out, ref):
    out, ref = out.float(), ref.float()
    return (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref)).item()


def record(ms, flops, best_ms=None, **extra):
    doc = {"ms": ms, "tflops": flops / ms * 1e-9, "flops": flops}
    if best_ms is not None:
        doc["best_ms"] = best_ms
        doc["best_tflops"] = flops / best_ms * 1e-9
    doc.update(extra)
    return doc


# ---- the Triton GEMM: C[M, N] = A[M, K] · B[N, K]ᵀ, bf16 in, f32 accumulate ------------

def hopper_configs():
    # (BLOCK_M, BLOCK_N, BLOCK_K, stages, warps): the usual Hopper shapes; the largest
    # (128 x 256 x 64, 4 stages) needs 192 KiB of shared memory, under the 227 KiB limit
    shapes = [(128, 256, 64, 3, 8), (128, 256, 64, 4, 8), (256, 128, 64, 3, 8),
              (128, 128, 64, 4, 8), (128, 128, 64, 4, 4), (64, 256, 64, 4, 4)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8},
                          num_stages=s, num_warps=w) for m, n, k, s, w in shapes]


@triton.autotune(configs=hopper_configs(), key=["M", "N", "K"])
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def matmul_tn(a_ptr, b_ptr, c_ptr, M, N, K,
              stride_am, stride_ak, stride_bn, stride_bk, stride_cm, stride_cn,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
              GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    # program order: bands of GROUP_M row tiles; inside a band, the row index moves
    # fastest, so the programs running together share one B panel (and GROUP_M A panels)
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    band_size = GROUP_M * tiles_n
    band = pid // band_size
    band_m0 = band * GROUP_M
    band_rows = tl.minimum(tiles_m - band_m0, GROUP_M)
    in_band = pid % band_size
    tile_m = band_m0 + in_band % band_rows
    tile_n = in_band // band_rows

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # rows/cols past the edge read row 0.. again (in bounds) and are masked on the store
    a_tile = a_ptr + (rows % M)[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + (cols % N)[None, :] * stride_bn  # Bᵀ block

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            a = tl.load(a_tile)
            b = tl.load(b_tile)
        else:
            left = K - kt * BLOCK_K
            a = tl.load(a_tile, mask=ks[None, :] < left, other=0.0)
            b = tl.load(b_tile, mask=ks[:, None] < left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    out = c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn
    tl.store(out, acc.to(tl.bfloat16), mask=(rows[:, None] < M) & (cols[None, :] < N))


def triton_gemm(a, b, c):
    m, k = a.shape
    n = b.shape[0]

    def grid(meta):
        return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)

    matmul_tn[grid](a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                    c.stride(0), c.stride(1))


# ---- the cases ------------------------------------------------------------------------

def gemm_inputs(n):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    return a, b, torch.empty(n, n, device="cuda", dtype=torch.bfloat16)


def case_cublas(res, n):
    a, b, c = gemm_inputs(n)
    torch.mm(a, b.t(), out=c)
    ms, best = timed(lambda: torch.mm(a, b.t(), out=c))
    res[f"cublas_bf16_{n}"] = record(ms, 2 * n ** 3, best)
    if n == max(GEMM_SIZES):
        rate = 2 * n ** 3 / best * 1e-9
        res["roofline"] = {"measured_bf16_tflops": rate, "datasheet_bf16_tflops": DATASHEET_BF16_TFLOPS,
                           "label": f"best of cuBLAS bf16 {n}^3 in this run (proxy for the dense bf16 rate)"}


def case_triton(res, n):
    a, b, c = gemm_inputs(n)
    t0 = time.time()
    triton_gemm(a, b, c)  # autotunes once per shape
    torch.cuda.synchronize()
    tune_s = time.time() - t0
    err = rel_err(c, a.float() @ b.float().t()) if n <= 4096 else None
    ms, best = timed(lambda: triton_gemm(a, b, c))
    cfg = matmul_tn.best_config
    res[f"triton_bf16_{n}"] = record(ms, 2 * n ** 3, best, rel_err=err, autotune_s=tune_s,
                                     config=str(cfg) if cfg is not None else None)


def case_bias_silu(res, n=4096):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    out = F.silu(F.linear(a, w, bias))
    ref = F.silu(a.float() @ w.float().t() + bias.float())
    ms, best = timed(lambda: F.silu(F.linear(a, w, bias)))
    res[f"torch_bias_silu_{n}"] = record(ms, 2 * n ** 3, best, rel_err=rel_err(out, ref))


def scaled_mm(a8, b8_colmajor, sa, sb, fast):
    if hasattr(torch, "_scaled_mm"):
        return torch._scaled_mm(a8, b8_colmajor, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                use_fast_accum=fast)
    from torch.nn.functional import ScalingType  # the public API of newer releases
    tw = getattr(ScalingType, "TensorWise", None) or getattr(ScalingType, "Tensorwise")
    return F.scaled_mm(a8, b8_colmajor, sa.reshape(1, 1), tw, sb.reshape(1, 1), tw,
                       output_dtype=torch.bfloat16, use_fast_accum=fast)


def case_fp8(res, n=8192):
    e4m3 = torch.float8_e4m3fn
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    # per-tensor scales: amax maps to e4m3's largest finite value, 448
    sa = (a.abs().max() / 448.0).float()
    sb = (b.abs().max() / 448.0).float()
    a8 = (a / sa).to(e4m3)
    b8 = (b / sb).to(e4m3)
    del a, b
    bt = b8.t()  # [K, N], column-major: what _scaled_mm wants for its second operand
    for fast, key in ((False, f"scaled_mm_fp8_{n}"), (True, f"scaled_mm_fp8_fast_{n}")):
        try:
            out = scaled_mm(a8, bt, sa, sb, fast)
            rows = slice(0, 256)  # the reference on a band of rows keeps it cheap
            ref = (a8[rows].float() @ b8.float().t()) * (sa * sb)
            ms, best = timed(lambda: scaled_mm(a8, bt, sa, sb, fast))
            res[key] = record(ms, 2 * n ** 3, best, rel_err=rel_err(out[rows], ref),
                              use_fast_accum=fast)
        except Exception as e:  # noqa: BLE001 — report and go on
            res[key] = failure(e)


def case_sdpa(res, d, causal, backend="flash", batch=4, heads=32, seq=4096):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q, k, v = (torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    flops = 4 * batch * heads * seq * seq * d // (2 if causal else 1)
    forced = SDPBackend.FLASH_ATTENTION if backend == "flash" else SDPBackend.CUDNN_ATTENTION
    with sdpa_kernel(forced):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        ms, best = timed(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    # reference: one (batch, head) in f32, written out (the flash backend takes no f32)
    qs, ks_, vs = (t[0, 0].float() for t in (q, k, v))
    s = (qs @ ks_.t()) / d ** 0.5
    if causal:
        s = s.masked_fill(torch.ones(seq, seq, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    ref = torch.softmax(s, dim=-1) @ vs
    res[f"sdpa_{backend}_d{d}_c{int(causal)}"] = record(ms, flops, best, rel_err=rel_err(out[0, 0], ref),
                                                    shape=f"B={batch},H={heads},S={seq},D={d}")


def failure(e):
    traceback.print_exc(file=sys.stderr)
    return {"error": f"{type(e).__name__}: {e}"}


def cases():
    out = [(f"cublas_bf16_{n}", case_cublas, (n,)) for n in GEMM_SIZES]
    out += [(f"sdpa_{b}_d{d}_c{c}", case_sdpa, (d, bool(c), b))
            for b in ("flash", "cudnn") for d in (128, 64) for c in (0, 1)]
    out.append(("torch_bias_silu_4096", case_bias_silu, ()))
    out.append(("scaled_mm_fp8_8192", case_fp8, ()))
    # Triton last: it compiles and autotunes, the slowest part
    out += [(f"triton_bf16_{n}", case_triton, (n,)) for n in GEMM_SIZES]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="rewrite this JSON file after every case")
    ap.add_argument("--only", help="comma-separated prefixes of the cases to run")
    args = ap.parse_args()
    torch.manual_seed(0)
    # f32 accumulation all the way: no reduced-precision split-K reductions in cuBLAS
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "triton": triton.__version__, "cuda": torch.version.cuda,
           "method": "triton.testing.do_bench: median (and min) ms, L2 cleared before each run"}
    only = [p for p in (args.only or "").split(",") if p]
    for name, fn, fargs in cases():
        if only and not any(name.startswith(p) for p in only):
            continue
        t0 = time.time()
        try:
            fn(res, *fargs)
        except Exception as e:  # noqa: BLE001 — one failing case must not stop the others
            res[name] = failure(e)
        print(f"tc_peers: {name} done in {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
        torch.cuda.empty_cache()
        if args.out:
            with open(args.out, "w") as f:
                json.dump(res, f, indent=1)
    json.dump(res, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
