"""dispatch_py.py — the host time of a call through `import cake`, per op, at a small shape
(the kernels take a few microseconds, so the host is what a loop of calls measures):

  torch      the peer's own eager call (a @ b.T, torch.rms_norm, ...), output allocated
  ops        cake.ops.NAME, the torch custom op (torch.ops.cake.NAME): what users call
  eager      cake.ops._NAME, the same Python without torch's custom-op layer
  moved      cake.ops.NAME on an input at one of ROT addresses in turn (more than a
             kernel's launch cache keeps: each call prepares its launch again)
  kernel     the library's Kernel called on preallocated tensors (the launch cache)
  bare       Kernel.time_launches: the kernel launched from C, arguments read once

Each: the least mean of 3 rounds of N calls, the queue drained before each round.
Beside them, device time by the peers' timer (gated.py: cold L2, the spin hold, median of
10): the library's kernel (ours_dev_us) and torch (torch_dev_us, stream or graph replay,
the faster), to set against `cakec lib bench` of the same shape (run_dispatch.sh).
Every op's output is checked against torch at the shape first (a wrong op reads 'bad').
Prints one JSON line per op, then a table; writes $OUT/dispatch_py.json.
$DISPATCH_PY_OPS (comma-separated op names): only those.
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

import cake
import cake.ops as ops

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gated import Timer, fastest   # noqa: E402

N = 300
ROT = 40
OUT = os.environ.get("OUT", "/tmp")
dev = "cuda"


def host_us(fn, n=N):
    best = None
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        us = (time.perf_counter() - t0) / n * 1e6
        best = us if best is None or us < best else best
    torch.cuda.synchronize()
    return best


def close(a, b, tol):
    a, b = a.float(), b.float()
    return bool(torch.isfinite(a).all()) and float((a - b).abs().max()) <= tol * (1 + float(b.abs().max()))


def cases():
    g = torch.Generator(device=dev).manual_seed(7)

    def rn(*s, dt=torch.bfloat16):
        return torch.randn(*s, device=dev, generator=g).to(dt)

    M, N_, K = 256, 256, 256
    a, b = rn(M, K), rn(N_, K)
    yield ("gemm", {"M": M, "N": N_, "K": K}, lambda: ops.gemm(a, b), lambda: ops._gemm(a, b),
           lambda: a @ b.T, lambda out: (a, b, out), lambda: a.new_empty((M, N_)), 2e-2,
           a, lambda t: ops.gemm(t, b))
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    one = torch.ones((), device=dev)
    yield ("gemm_fp8", {"M": M, "N": N_, "K": K}, lambda: ops.gemm_fp8(a8, b8, 1.0, 1.0),
           lambda: ops._gemm_fp8(a8, b8, 1.0, 1.0),
           lambda: torch._scaled_mm(a8, b8.T, scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
           lambda out: (a8, b8, 1.0, 1.0, out), lambda: torch.empty((M, N_), dtype=torch.bfloat16, device=dev),
           2e-2, a8, lambda t: ops.gemm_fp8(t, b8, 1.0, 1.0))
    R, C = 64, 1024
    x, w, bb = rn(R, C), rn(C), rn(C)
    yield ("rmsnorm", {"M": R, "N": C}, lambda: ops.rms_norm(x, w, 1e-6), lambda: ops._rms_norm(x, w, 1e-6),
           lambda: torch.rms_norm(x, (C,), w, 1e-6), lambda out: (x, w, out, 1e-6),
           lambda: torch.empty_like(x), 3e-2, x, lambda t: ops.rms_norm(t, w, 1e-6))
    yield ("layernorm", {"M": R, "N": C}, lambda: ops.layer_norm(x, w, bb, 1e-5),
           lambda: ops._layer_norm(x, w, bb, 1e-5), lambda: F.layer_norm(x, (C,), w, bb, 1e-5),
           lambda out: (x, w, bb, out, 1e-5), lambda: torch.empty_like(x), 3e-2,
           x, lambda t: ops.layer_norm(t, w, bb, 1e-5))
    xf = torch.randn(R, C, device=dev, generator=g)
    yield ("softmax", {"M": R, "N": C}, lambda: ops.softmax(xf), lambda: ops._softmax(xf),
           lambda: torch.softmax(xf, -1), lambda out: (xf, out), lambda: torch.empty_like(xf), 1e-4,
           xf, lambda t: ops.softmax(t))
    tg = torch.randint(0, C, (R,), device=dev, generator=g)
    t32 = tg.to(torch.int32)
    yield ("cross_entropy", {"B": R, "V": C}, lambda: ops.cross_entropy(xf, tg),
           lambda: ops._cross_entropy(xf, tg), lambda: F.cross_entropy(xf, tg, reduction="none"),
           lambda out: (xf, t32, out), lambda: xf.new_empty((R,)), 1e-3,
           xf, lambda t: ops.cross_entropy(t, tg))

    def q_ref():
        s = x.float().abs().amax(-1) / 448
        return (x.float() / s[:, None]).to(torch.float8_e4m3fn)

    B, H, S, D = 1, 8, 256, 128
    q, kk, vv = rn(B, H, S, D), rn(B, H, S, D), rn(B, H, S, D)
    q3, k3, v3 = (t.view(B * H, S, D) for t in (q, kk, vv))
    yield ("attention_fwd_gqa", {"BH": B * H, "BHK": B * H, "S": S}, lambda: ops.attention(q, kk, vv, False),
           lambda: ops._attention(q, kk, vv, False),
           lambda: F.scaled_dot_product_attention(q, kk, vv),
           lambda out: (q3, k3, v3, out[0], out[1], 1.0 / D ** 0.5),
           lambda: (torch.empty_like(q3), torch.empty((B * H, S), dtype=torch.float32, device=dev)), 3e-2,
           q, lambda t: ops.attention(t, kk, vv, False))
    yield ("fp8_row_quantize", {"M": R, "N": C}, lambda: ops.fp8_row_quantize(x)[0],
           lambda: ops._fp8_row_quantize(x)[0], q_ref,
           lambda out: (x, out[0], out[1]),
           lambda: (torch.empty((R, C), dtype=torch.float8_e4m3fn, device=dev),
                    torch.empty((R,), dtype=torch.float32, device=dev)), 0.13,
           x, lambda t: ops.fp8_row_quantize(t))


def main():
    timer = Timer(torch)
    timer.warm(0.3)
    rows = []
    only = [o for o in os.environ.get("DISPATCH_PY_OPS", "").split(",") if o]
    for name, dims, f_ops, f_eager, f_torch, kargs, alloc, tol, x0, f_on in cases():
        if only and name not in only:
            continue
        row = {"op": name, "dims": dims}
        try:
            got, ref = f_ops(), f_torch()
            torch.cuda.synchronize()
            row["check"] = "ok" if close(got, ref, tol) else "bad"
            row["pick"] = ops.last_pick[0]
            row["torch_us"] = host_us(f_torch)
            row["ops_us"] = host_us(f_ops)
            row["eager_us"] = host_us(f_eager)
            # the input at one of ROT addresses in turn: more than the kernel's launch cache keeps
            xs = [x0.clone() for _ in range(ROT)]
            it = [0]

            def moved():
                it[0] += 1
                return f_on(xs[it[0] % ROT])
            row["ops_moved_us"] = host_us(moved)
            del xs
            k = ops._chosen.get((name, tuple(sorted(dims.items())), torch.cuda.current_device()))
            if k is not None and "/minimal" not in k[1]:
                out = alloc()
                args = kargs(out)
                k[0](*args)
                row["kernel_us"] = host_us(lambda: k[0](*args))
                row["bare_us"] = min(k[0].time_launches(N, *args) for _ in range(3)) * 1e6
                torch.cuda.synchronize()
                row["ours_dev_us"] = timer.time(lambda: k[0](*args))["median_ms"] * 1e3
            mode, tm = fastest(timer.best(f_torch))
            row["torch_dev_us"] = tm["median_ms"] * 1e3
            row["torch_mode"] = mode
        except Exception as e:   # one op's failure is its row's
            torch.cuda.synchronize()
            row["error"] = f"{type(e).__name__}: {str(e)[:200]}"
        print(json.dumps(row), flush=True)
        rows.append(row)
    with open(os.path.join(OUT, "dispatch_py.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n== Python call path, host us per call (least mean of 3 x %d calls)" % N)
    print(f"{'op':18} {'check':5} {'torch':>7} {'ops':>7} {'eager':>7} {'moved':>7} {'kernel':>7} {'bare':>6} "
          f"{'dev ours':>8} {'dev torch':>9}  pick")
    for r in rows:
        def v(k):
            return f"{r[k]:7.2f}" if k in r else "      -"
        print(f"{r['op']:18} {r.get('check', 'ERR'):5} {v('torch_us')} {v('ops_us')} {v('eager_us')} {v('ops_moved_us')} "
              f"{v('kernel_us')} {v('bare_us')[1:]} {v('ours_dev_us'):>8} {v('torch_dev_us'):>9}  "
              f"{r.get('pick') or r.get('error', '')}")
    return 0 if all(r.get("check") == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
