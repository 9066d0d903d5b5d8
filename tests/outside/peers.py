#!/usr/bin/env python3
"""peers.py — the torch peers of the outside kernels (tests/outside/kernels), timed on the GPU.

usage: python3 tests/outside/peers.py [--wait FLAG] RAWDIR BENCH.txt
(--wait: import torch and start CUDA first, then wait until the file FLAG exists: the device
script starts this process while its checks run and creates FLAG after the last cake bench)
For each kernel of BENCH.txt (NAME SHAPE) whose cake bench document RAWDIR/bench_NAME.json
exists, times its torch peer at the same shape (eager: torch.compile's first compile does not
fit the device budget) with CUDA events: 3 warm-up runs, then the median of 20, a 256 MiB
write between runs to flush the L2 (as `cakec run --bench` does). Prints one TSV row per kernel:
kernel, shape, cake_ms, peer, peer_ms, ratio (peer_ms / cake_ms: > 1 means cake is faster),
note. Correctness of cake at the timed shape is `run --check --shape` in run_outside.sh.
"""
import json, os, statistics, sys, time

import torch

DEV = "cuda"


def shape_of(text):
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


def bf(*s):
    return torch.rand(*s, device=DEV, dtype=torch.float32).mul_(2).sub_(1).to(torch.bfloat16)


def f32(*s):
    return torch.rand(*s, device=DEV, dtype=torch.float32).mul_(2).sub_(1)


def peer(name, d):
    """(peer label, a thunk running the peer once)."""
    if name == "add_rmsnorm":
        M, N = d["M"], d["N"]
        x, r, w = bf(M, N), bf(M, N), bf(N)

        def run():
            h = x + r
            return h, torch.nn.functional.rms_norm(h, (N,), w, 1e-6)
        return "torch eager (add, F.rms_norm)", run
    if name == "add_rmsnorm_inplace":
        M, N = d["M"], d["N"]
        x, r, w = bf(M, N), bf(M, N), bf(N)

        def run():
            r.add_(x)
            return torch.nn.functional.rms_norm(r, (N,), w, 1e-6)
        return "torch eager (add_, F.rms_norm)", run
    if name == "fp8_quant_rowscale":
        M, N = d["M"], d["N"]
        x = bf(M, N)

        def run():
            s = x.abs().amax(1).float() / 448.0
            return (x.float() / s.clamp_min(1e-30)[:, None]).to(torch.float8_e4m3fn), s
        return "torch eager (amax, divide, to e4m3)", run
    if name in ("gemm_tn_ws", "gemm_tn_ws_tma"):
        M, N, K = d["M"], d["N"], d["K"]
        a, b = bf(M, K), bf(N, K)
        return "cuBLAS a @ b.T (bf16 out)", lambda: a @ b.t()
    if name == "layernorm_stats":
        M, N = d["M"], d["N"]
        x, w, b = bf(M, N), bf(N), bf(N)
        return "torch.native_layer_norm", lambda: torch.native_layer_norm(x, (N,), w, b, 1e-5)
    if name == "topk_rows":
        M, N = d["M"], d["N"]
        x = f32(M, N)
        return "torch.topk", lambda: torch.topk(x, 4, dim=1)
    if name == "colsum_atomic":
        M, N = d["M"], d["N"]
        x, y = f32(M, N), torch.zeros(N, device=DEV)
        return "torch y += x.sum(0)", lambda: y.add_(x.sum(0))
    if name == "gemm_rowscale":
        M, N, K = d["M"], d["N"], d["K"]
        a, b, s = bf(M, K), bf(N, K), f32(M)
        return "cuBLAS a @ b.T, then * s[:, None]", lambda: (a @ b.t()) * s[:, None]
    if name in ("gemm_splitk_tma_add", "gemm_splitk_persistent"):
        M, N, K = d["M"], d["N"], d["K"]
        a, b = bf(M, K), bf(N, K)
        return "cuBLAS a @ b.T (bf16 out)", lambda: a @ b.t()
    return None, None


def timed(fn):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=DEV)
    for _ in range(3):
        fn()
    times = []
    for _ in range(20):
        flush.fill_(1)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    return statistics.median(times)


def main():
    args = sys.argv[1:]
    if args[0] == "--wait":
        flag = args[1]
        args = args[2:]
        torch.zeros(1, device=DEV)
        torch.cuda.synchronize()
        while not os.path.exists(flag):
            time.sleep(0.05)
    raw, bench = args[0], args[1]
    for line in open(bench):
        if line.startswith("#") or not line.strip():
            continue
        name, shape = line.split()[:2]
        path = os.path.join(raw, "bench_%s.json" % name)
        if not os.path.exists(path):
            continue
        try:
            cake = json.load(open(path)).get("bench", {}).get("median_ms")
        except ValueError:
            cake = None
        label, fn = peer(name, shape_of(shape))
        if fn is None:
            print("\t".join([name, shape, "%s" % cake, "-", "-", "-", "no peer"]), flush=True)
            continue
        try:
            ms = timed(fn)
        except Exception as ex:  # a peer that fails is reported, not fatal
            print("\t".join([name, shape, "%s" % cake, label, "-", "-", "peer failed: %s" % ex]), flush=True)
            continue
        ratio = "%.2f" % (ms / cake) if cake else "-"
        print("\t".join([name, shape, "%.4f" % cake if cake else "-", label, "%.4f" % ms, ratio,
                         "" if cake else "cake bench missing"]), flush=True)


if __name__ == "__main__":
    main()
