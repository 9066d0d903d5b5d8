"""gemm_bench.py — the library's GEMM variants beside cuBLAS (torch.matmul, bf16) on a
subset of the sweep's shape classes, in one process (bench/device/run_gemm.sh).

    python3 gemm_bench.py OUT_DIR [--go FILE] [--deadline SECONDS] [--only NAME,...]

1. compiles every variant (cake.load: the .tir files of library/, each parameter point
   once) while run_gemm.sh's `run --check`s use the GPU;
2. waits for the GO file (the checks are done), then for each shape: torch's result,
   every variant whose domain holds run once and compared with an f32 reference
   (|cake - ref| <= 2 |torch - ref| + 2^-7 |ref|max: a wrong variant is never timed
   or chosen), workspaces checked zero after the runs, then timed: L2 flushed before
   every run (a 256 MiB write), device events around the one launch, median of the
   runs; torch.matmul timed the same way in the same loop;
3. writes OUT_DIR/gemm.json (every variant's time per shape), OUT_DIR/gemm_tuned.json (the
   same as `cakec lib tune`'s table, variant names of library/manifest.json) and OUT_DIR/gemm_table.md
   (per shape: the fastest correct variant, its time, cuBLAS's, the ratio, TFLOP/s and
   the fraction of the H200's dense bf16 peak, 989 TFLOP/s), and prints the table and
   a summary per class: count >= 1.0, min, geomean of the ratios.
"""
import json
import math
import os
import statistics
import sys
import time

PEAK_TFLOPS = 989.0
KDIR = "library/kernels"

# "op/name" (name: the library manifest's variant name) -> (file, kernel, params, workspace?)
VARIANTS = {}
for bm, bn in ((128, 256), (128, 192), (128, 128), (64, 256), (64, 128), (64, 64)):
    VARIANTS[f"persistent_{bm}x{bn}"] = ("gemm_persistent.tir", None, {"BM": bm, "BN": bn}, False)
    VARIANTS[f"gemm_bias_act/persistent_{bm}x{bn}"] = ("gemm_bias_act_persistent.tir", None,
                                                      {"BM": bm, "BN": bn}, False)
    VARIANTS[f"gemm_fp8/persistent_{bm}x{bn}"] = ("gemm_fp8_persistent.tir", None, {"BM": bm, "BN": bn}, False)
VARIANTS["gemm_fp8/sm90_128x256"] = ("../../examples/gemm_fp8.tir", None, {}, False)
VARIANTS["gemm_fp8/sm90_128x128"] = ("../../examples/gemm_fp8.tir", None, {"BN": 128}, False)
VARIANTS["gemm_bias_act/sm90_128x256"] = ("../../examples/gemm_bias_act.tir", None, {}, False)
VARIANTS["gemm_bias_act/sm90_128x128"] = ("../../examples/gemm_bias_act.tir", None, {"BN": 128}, False)
for bn, splits in ((64, (2, 4, 8, 16)), (128, (2, 4, 8, 16)), (256, (2, 4))):
    for sp in splits:
        VARIANTS[f"splitk_64x{bn}_s{sp}"] = ("gemm_splitk_fused.tir", None, {"BN": bn, "SPLIT": sp}, True)
for bn in (128, 192, 256):
    VARIANTS[f"streamk_128x{bn}"] = ("gemm_streamk.tir", None, {"BN": bn}, True)
VARIANTS["streamk_128x256_rem"] = ("gemm_streamk.tir", None, {"BN": 256, "WAVE": 0}, True)
VARIANTS["streamk_128x192_rem"] = ("gemm_streamk.tir", None, {"BN": 192, "WAVE": 0}, True)
for g in (4, 16):   # the grouped rasterization's width (L2 reuse of the B panels), not in the manifest yet
    VARIANTS[f"persistent_128x256_g{g}"] = ("gemm_persistent.tir", None, {"BM": 128, "BN": 256, "GROUP_M": g}, False)
    VARIANTS[f"persistent_128x192_g{g}"] = ("gemm_persistent.tir", None, {"BM": 128, "BN": 192, "GROUP_M": g}, False)
for extra in os.environ.get("GEMM_EXTRA_VARIANTS", "").split(";"):
    # name=file:kernel:K=V,K=V:ws  (round 2's additions without editing this file)
    if "=" not in extra:
        continue
    name, spec = extra.split("=", 1)
    f, kern, ps, ws = (spec.split(":") + ["", "", "", ""])[:4]
    params = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in ps.split(",") if kv}
    VARIANTS[name] = (f, kern or None, params, ws == "ws")


def op_of(name):
    return name.split("/")[0] if "/" in name else "gemm"


def applies(op, name, M, N, K):
    """the variant's domain (its assumes) and the shapes worth timing it at"""
    if op_of(name) != op:
        return False
    f, _, p, _ = VARIANTS[name]
    if N % 8 or K % 8:
        return False
    if f == "gemm_splitk_fused.tir":
        sp, bn = p["SPLIT"], p["BN"]
        tiles = math.ceil(M / 64) * math.ceil(N / bn)
        # worth it where the tiles alone leave SMs idle; at most ~4 blocks per SM
        return K >= 64 * sp and tiles < 132 and tiles * sp <= 132 * 4
    if f.startswith("gemm_streamk"):
        return True
    return True


def shapes():
    """(class, M, N, K): the sweep's classes; sizes are multiples of 8 in N and K
    (the TMA kernels' assumes; odd N is the sm80 kernel's, not timed here)"""
    s = []
    for M, N, K in [(1, 4096, 4096), (1, 8192, 8192), (8, 16384, 4096), (16, 8192, 8192),
                    (16, 4096, 14336), (32, 1024, 8192), (48, 12288, 4096), (64, 8192, 8192),
                    (64, 2048, 2048), (7, 5000, 3000), (33, 1000, 16384), (100, 16384, 1024)]:
        s.append(("skinny", M, N, K))
    for M, N, K in [(128, 4096, 4096), (128, 8192, 8192), (256, 4096, 8192), (200, 3000, 5000)]:
        s.append(("skinny128", M, N, K))
    for M, N, K in [(3072, 3072, 3072), (1000, 1000, 1000), (2500, 2504, 2504), (3000, 3000, 3000),
                    (5000, 5000, 1024), (1536, 7000, 2048), (6000, 2000, 4000), (2304, 2304, 8192),
                    (3008, 3008, 3008), (3072, 3072, 3000)]:   # 3000's pitch (6000 B) vs 128-byte multiples
        s.append(("ragged", M, N, K))
    for M, N, K in [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048), (16384, 16384, 1024),
                    (512, 512, 512), (256, 256, 16384)]:
        s.append(("cube", M, N, K))
    for M, N, K in [(16384, 1024, 4096), (16384, 4096, 1024), (8192, 512, 8192), (12288, 768, 3072),
                    (16384, 8192, 512), (4096, 16384, 64), (1024, 16384, 4096), (16384, 128, 16384)]:
        s.append(("tall", M, N, K))
    s = [("gemm",) + x for x in s]
    for cls, M, N, K in [("skinny", 16, 8192, 8192), ("skinny128", 128, 4096, 4096),
                         ("ragged", 3072, 3072, 3072), ("ragged", 1000, 1000, 1000),
                         ("cube", 8192, 8192, 8192), ("tall", 16384, 1024, 4096)]:
        s.append(("gemm_bias_act", cls, M, N, K))
    for cls, M, N, K in [("skinny", 16, 8192, 8192), ("skinny128", 128, 4096, 4096),
                         ("ragged", 3072, 3072, 3072), ("ragged", 1008, 1008, 1008),
                         ("cube", 8192, 8192, 8192), ("tall", 16384, 1024, 4096)]:
        s.append(("gemm_fp8", cls, M, N, K))   # multiples of 16: torch._scaled_mm's rule
    return s


def main():
    out = sys.argv[1]
    if sys.argv[2:3] == ["--table"]:  # the table of a run cut short (gemm.json is written per shape)
        with open(os.path.join(out, "gemm.json")) as f:
            table(json.load(f)["results"], os.path.join(out, "gemm_table.md"))
        return
    go = None
    deadline = 60.0
    only = None
    a = sys.argv[2:]
    while a:
        if a[0] == "--go":
            go = a[1]
        elif a[0] == "--deadline":
            deadline = float(a[1])
        elif a[0] == "--only":
            only = set(a[1].split(","))
        a = a[2:]
    t0 = time.time()
    import torch
    sys.path.insert(0, os.path.join(os.getcwd(), ".carry", "python"))
    import cake
    torch.backends.cuda.matmul.allow_tf32 = False
    kernels, errors = {}, {}

    def build(name):
        f, kern, params, ws = VARIANTS[name]
        try:
            kernels[name] = cake.load(os.path.join(KDIR, f), kernel=kern, **params)
        except Exception as e:  # a variant that does not compile is reported, not timed
            errors[name] = str(e)[:300]

    names = [n for n in VARIANTS if not only or n in only]
    build(names[0])  # the code generator's first use, alone; then 8 at a time (compiles
    from concurrent.futures import ThreadPoolExecutor  # release the GIL)
    with ThreadPoolExecutor(int(os.environ.get("GEMM_COMPILE_THREADS", "8"))) as ex:
        list(ex.map(build, names[1:]))
    kernels = {n: kernels[n] for n in names if n in kernels}  # the declared order
    print(f"compiled {len(kernels)} variants in {time.time() - t0:.1f} s; "
          f"{len(errors)} failed: {sorted(errors)}", flush=True)
    while go and not os.path.exists(go) and time.time() - t0 < deadline * 0.6:
        time.sleep(0.2)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")

    def timed(fn, reps):
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(reps)]
        fn()
        for e0, e1 in ev:
            flush.zero_()
            e0.record()
            fn()
            e1.record()
        torch.cuda.synchronize()
        return statistics.median(e0.elapsed_time(e1) for e0, e1 in ev)

    results = []
    for op, cls, M, N, K in shapes():
        if time.time() - t0 > deadline - 4:
            print(f"out of time before {cls} {M}x{N}x{K}", flush=True)
            break
        g = torch.Generator(device="cuda").manual_seed(M * 131 + N * 7 + K)
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16, generator=g)
        B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16, generator=g)
        if op == "gemm_fp8":  # e4m3 operands, per-tensor scales
            A, B = A.to(torch.float8_e4m3fn), B.to(torch.float8_e4m3fn)
            sa, sb = 0.5, 0.25
            ta = torch.tensor(sa, device="cuda")
            tb = torch.tensor(sb, device="cuda")
        ref = A.float() @ B.float().t()
        if op == "gemm_fp8":
            ref = ref * (sa * sb)

            def peer():
                return torch._scaled_mm(A, B.t(), scale_a=ta, scale_b=tb, out_dtype=torch.bfloat16)
        elif op == "gemm":
            def peer():
                return torch.matmul(A, B.t())
        else:  # gemm_bias_act: SiLU(A B^T + bias); the peer is torch eager (addmm, silu)
            bias = torch.randn(N, device="cuda", dtype=torch.float32, generator=g)
            bias16 = bias.to(torch.bfloat16)
            ref = torch.nn.functional.silu(ref + bias)

            def peer():
                return torch.nn.functional.silu(torch.addmm(bias16, A, B.t()))
        scale = ref.abs().max().item() + 1e-30
        Ct = peer()
        terr = (Ct.float() - ref).abs().max().item()
        flops = 2.0 * M * N * K
        reps = 7 if flops > 5e11 else 15
        row = {"op": op, "class": cls, "M": M, "N": N, "K": K, "torch_err": terr / scale, "variants": {}}
        row["torch_ms"] = timed(peer, reps)
        C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        W = L = None
        for name, k in kernels.items():
            if not applies(op, name, M, N, K):
                continue
            ws = VARIANTS[name][3]
            if ws and W is None:
                W = torch.zeros(M, N, device="cuda", dtype=torch.float32)
                L = torch.zeros(M, N, device="cuda", dtype=torch.int32)
            args = ((A, B, C, W, L) if ws else (A, B, C) if op == "gemm" else
                    (A, B, sa, sb, C) if op == "gemm_fp8" else (A, B, bias, C))
            v = {}
            try:
                C.fill_(float("nan"))
                k(*args)
                torch.cuda.synchronize()
                err = (C.float() - ref).abs().max().item()
                v["err"] = err / scale
                ok = math.isfinite(err) and err <= 2 * terr + scale * 2 ** -7
                if ok:
                    v["ms"] = timed(lambda: k(*args), reps)
                if ws:
                    dirty = int(W.count_nonzero().item()) + int(L.count_nonzero().item())
                    v["ws_dirty"] = dirty
                    ok = ok and dirty == 0
                    if dirty:
                        W.zero_()
                        L.zero_()
                v["ok"] = bool(ok)
            except Exception as e:
                v = {"ok": False, "error": str(e)[:200]}
            row["variants"][name] = v
        best = [(v["ms"], n) for n, v in row["variants"].items() if v.get("ok") and "ms" in v]
        if best:
            ms, n = min(best)
            row["best"], row["best_ms"] = n, ms
            row["ratio"] = row["torch_ms"] / ms
            row["tflops"] = flops / ms / 1e9
            row["roofline"] = row["tflops"] / PEAK_TFLOPS
        results.append(row)
        with open(os.path.join(out, "gemm.json"), "w") as f:
            json.dump({"results": results, "compile_errors": errors}, f, indent=1)
        print(f"{op:13s} {cls:9s} {M:5d} {N:5d} {K:5d}  torch {row['torch_ms']:.4f} ms  "
              f"best {row.get('best', '-')} {row.get('best_ms', float('nan')):.4f} ms  "
              f"ratio {row.get('ratio', float('nan')):.3f}", flush=True)
    with open(os.path.join(out, "gemm.json"), "w") as f:
        json.dump({"results": results, "compile_errors": errors}, f, indent=1)
    tuned(results, os.path.join(out, "gemm_tuned.json"), torch.cuda.get_device_name())
    table(results, os.path.join(out, "gemm_table.md"))


def tuned(results, path, device):
    """the measurements as `cakec lib tune`'s table (docs/library.md, Tuning): the
    times of the correct variants per shape, the wrong or failed ones in `failed`"""
    entries = []
    for r in results:
        bare = lambda n: n.split("/")[-1]  # noqa: E731
        times = {bare(n): round(v["ms"], 5) for n, v in r["variants"].items() if v.get("ok") and "ms" in v}
        failed = {bare(n): (v.get("error") or f"wrong result (max error {v.get('err', float('nan')):.3g})")
                  for n, v in r["variants"].items() if not v.get("ok")}
        entries.append({"op": r.get("op", "gemm"), "shape": {"M": r["M"], "N": r["N"], "K": r["K"]},
                        "times_ms": times, "failed": failed})
    with open(path, "w") as f:
        json.dump({"device": device, "runner": "gemm_bench.py", "entries": entries}, f, indent=1)


def table(results, path):
    lines = ["| op | class | M | N | K | best variant | cake ms | peer ms | ratio | TFLOP/s | of peak |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        r.setdefault("op", "gemm")
        if "ratio" not in r:
            lines.append(f"| {r['op']} | {r['class']} | {r['M']} | {r['N']} | {r['K']} | (none correct) | - | "
                         f"{r['torch_ms']:.4f} | - | - | - |")
            continue
        lines.append(f"| {r['op']} | {r['class']} | {r['M']} | {r['N']} | {r['K']} | {r['best']} | "
                     f"{r['best_ms']:.4f} | {r['torch_ms']:.4f} | {r['ratio']:.3f} | "
                     f"{r['tflops']:.0f} | {r['roofline']:.2f} |")
    lines.append("")
    lines.append("| op | class | shapes | ratio >= 1.0 | min | geomean |")
    lines.append("|---|---|---|---|---|---|")
    for op in sorted({r["op"] for r in results}):
        for c in sorted({r["class"] for r in results if r["op"] == op}) + ["all"]:
            rs = [r["ratio"] if "ratio" in r else 0.0 for r in results
                  if r["op"] == op and (c == "all" or r["class"] == c)]
            if not rs:
                continue
            good = [x for x in rs if x > 0]
            gm = math.exp(sum(math.log(x) for x in good) / len(good)) if good else 0.0
            lines.append(f"| {op} | {c} | {len(rs)} | {sum(x >= 1.0 for x in rs)} | {min(rs):.3f} | {gm:.3f} |")
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
