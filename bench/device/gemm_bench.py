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

# name (the library manifest's variant name) -> (file, kernel, params, workspace?)
VARIANTS = {}
for bm, bn in ((128, 256), (128, 192), (128, 128), (64, 256), (64, 128), (64, 64)):
    VARIANTS[f"persistent_{bm}x{bn}"] = ("gemm_persistent.tir", None, {"BM": bm, "BN": bn}, False)
for bn, splits in ((64, (2, 4, 8, 16)), (128, (2, 4, 8, 16)), (256, (2, 4))):
    for sp in splits:
        VARIANTS[f"splitk_64x{bn}_s{sp}"] = ("gemm_splitk_fused.tir", None, {"BN": bn, "SPLIT": sp}, True)
for bn in (128, 192, 256):
    VARIANTS[f"streamk_128x{bn}"] = ("gemm_streamk.tir", None, {"BN": bn}, True)
for extra in os.environ.get("GEMM_EXTRA_VARIANTS", "").split(";"):
    # name=file:kernel:K=V,K=V:ws  (round 2's additions without editing this file)
    if "=" not in extra:
        continue
    name, spec = extra.split("=", 1)
    f, kern, ps, ws = (spec.split(":") + ["", "", "", ""])[:4]
    params = {kv.split("=")[0]: int(kv.split("=")[1]) for kv in ps.split(",") if kv}
    VARIANTS[name] = (f, kern or None, params, ws == "ws")


def applies(name, M, N, K):
    """the variant's domain (its assumes) and the shapes worth timing it at"""
    f, _, p, _ = VARIANTS[name]
    if N % 8 or K % 8:
        return False
    if f == "gemm_splitk_fused.tir":
        sp, bn = p["SPLIT"], p["BN"]
        tiles = math.ceil(M / 64) * math.ceil(N / bn)
        # worth it where the tiles alone leave SMs idle; at most ~4 blocks per SM
        return K >= 64 * sp and tiles < 132 and tiles * sp <= 132 * 4 and M <= 512
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
    for M, N, K in [(3072, 3072, 3072), (1000, 1000, 1000), (2500, 2500, 2504), (3000, 3000, 3000),
                    (5000, 5000, 1024), (1536, 7000, 2048), (6000, 2000, 4000), (2304, 2304, 8192)]:
        s.append(("ragged", M, N, K))
    for M, N, K in [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 2048), (16384, 16384, 1024),
                    (512, 512, 512), (256, 256, 16384)]:
        s.append(("cube", M, N, K))
    for M, N, K in [(16384, 1024, 4096), (16384, 4096, 1024), (8192, 512, 8192), (12288, 768, 3072),
                    (16384, 8192, 512), (4096, 16384, 64), (1024, 16384, 4096), (16384, 128, 16384)]:
        s.append(("tall", M, N, K))
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
    for cls, M, N, K in shapes():
        if time.time() - t0 > deadline - 4:
            print(f"out of time before {cls} {M}x{N}x{K}", flush=True)
            break
        g = torch.Generator(device="cuda").manual_seed(M * 131 + N * 7 + K)
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16, generator=g)
        B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16, generator=g)
        ref = A.float() @ B.float().t()
        scale = ref.abs().max().item() + 1e-30
        Ct = torch.matmul(A, B.t())
        terr = (Ct.float() - ref).abs().max().item()
        flops = 2.0 * M * N * K
        reps = 7 if flops > 5e11 else 15
        row = {"class": cls, "M": M, "N": N, "K": K, "torch_err": terr / scale, "variants": {}}
        row["torch_ms"] = timed(lambda: torch.matmul(A, B.t()), reps)
        C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        W = L = None
        for name, k in kernels.items():
            if not applies(name, M, N, K):
                continue
            ws = VARIANTS[name][3]
            if ws and W is None:
                W = torch.zeros(M, N, device="cuda", dtype=torch.float32)
                L = torch.zeros(M, N, device="cuda", dtype=torch.int32)
            args = (A, B, C, W, L) if ws else (A, B, C)
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
        print(f"{cls:9s} {M:5d} {N:5d} {K:5d}  torch {row['torch_ms']:.4f} ms  "
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
        times = {n: round(v["ms"], 5) for n, v in r["variants"].items() if v.get("ok") and "ms" in v}
        failed = {n: (v.get("error") or f"wrong result (max error {v.get('err', float('nan')):.3g})")
                  for n, v in r["variants"].items() if not v.get("ok")}
        entries.append({"op": "gemm", "shape": {"M": r["M"], "N": r["N"], "K": r["K"]},
                        "times_ms": times, "failed": failed})
    with open(path, "w") as f:
        json.dump({"device": device, "runner": "gemm_bench.py", "entries": entries}, f, indent=1)


def table(results, path):
    lines = ["| class | M | N | K | best variant | cake ms | cuBLAS ms | ratio | TFLOP/s | of peak |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if "ratio" not in r:
            lines.append(f"| {r['class']} | {r['M']} | {r['N']} | {r['K']} | (none correct) | - | "
                         f"{r['torch_ms']:.4f} | - | - | - |")
            continue
        lines.append(f"| {r['class']} | {r['M']} | {r['N']} | {r['K']} | {r['best']} | "
                     f"{r['best_ms']:.4f} | {r['torch_ms']:.4f} | {r['ratio']:.3f} | "
                     f"{r['tflops']:.0f} | {r['roofline']:.2f} |")
    lines.append("")
    lines.append("| class | shapes | ratio >= 1.0 | min | geomean |")
    lines.append("|---|---|---|---|---|")
    classes = sorted({r["class"] for r in results}) + ["all"]
    for c in classes:
        rs = [r["ratio"] if "ratio" in r else 0.0 for r in results if c == "all" or r["class"] == c]
        if not rs:
            continue
        good = [x for x in rs if x > 0]
        gm = math.exp(sum(math.log(x) for x in good) / len(good)) if good else 0.0
        lines.append(f"| {c} | {len(rs)} | {sum(x >= 1.0 for x in rs)} | {min(rs):.3f} | {gm:.3f} |")
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
