"""glarge_bench.py — the bf16 GEMM at medium and large shapes and gemm_fp8 everywhere:
every candidate variant beside cuBLAS (torch.matmul) / torch._scaled_mm in one process
(bench/device/run_glarge.sh).

    python3 glarge_bench.py OUT_DIR [--go FILE] [--deadline SECONDS]

1. compiles every candidate (cake.load, the .tir files of library/) while the script's
   `run --check`s use the GPU; then waits for the GO file;
2. per shape: the f32 reference, the peer's result and time, every candidate whose domain
   holds run once and compared with the reference (|cake - ref| <= 2 |peer - ref| + 2^-7
   |ref|max; a wrong one is never timed), workspaces checked zero after the runs, then
   timed: L2 flushed before every run (a 256 MiB write), device events around the one
   launch, median; the peer timed the same way in the same loop. gemm_fp8's peer is
   torch._scaled_mm where it takes the shape (N, K multiples of 16), else the faster of
   cuBLAS bf16 on the dequantized operands (conversion not timed) and torch eager;
3. at a K whose row pitch is not a multiple of 128 bytes (K % 64 != 0), the three fastest
   persistent variants again on A and B stored with the pitch rounded up to 64 elements
   (strided views: the same K, TMA zero-fills past it): is the pitch what costs?
4. writes OUT_DIR/glarge.json, glarge_tuned.json (`lib tune`'s table format) and
   glarge_table.md, and prints the table.
"""
import json
import math
import os
import statistics
import sys
import time

PEAK = {"gemm": 989.0, "gemm_fp8": 1979.0}
KDIR = "library/kernels"

V = {}   # name -> (op, file, params, workspace?)
for bm, bn in ((128, 256), (128, 192), (128, 128), (128, 64), (64, 256), (64, 128), (64, 64)):
    V[f"persistent_{bm}x{bn}"] = ("gemm", "gemm_persistent.tir", {"BM": bm, "BN": bn}, False)
    V[f"fp8/persistent_{bm}x{bn}"] = ("gemm_fp8", "gemm_fp8_persistent.tir", {"BM": bm, "BN": bn}, False)
for bn, g in ((256, 16), (192, 16), (128, 16), (192, 4), (128, 4)):
    V[f"persistent_128x{bn}_g{g}"] = ("gemm", "gemm_persistent.tir", {"BM": 128, "BN": bn, "GROUP_M": g}, False)
for bn in (256, 192, 128):   # cp.async loads: the ragged-pitch candidate
    V[f"cpa_128x{bn}"] = ("gemm", "gemm_persistent_cpa.tir", {"BM": 128, "BN": bn}, False)
    V[f"cpa3_128x{bn}"] = ("gemm", "gemm_persistent_cpa.tir:gemm_persistent_cpa3", {"BM": 128, "BN": bn}, False)
for bn, w in ((128, 1), (128, 0), (192, 0), (256, 0)):
    V[f"streamk_128x{bn}" + ("_rem" if w == 0 else "")] = ("gemm", "gemm_streamk.tir", {"BN": bn, "WAVE": w}, True)
V["fp8/sm90_128x256"] = ("gemm_fp8", "../../examples/gemm_fp8.tir", {}, False)
V["fp8/sm90_128x128"] = ("gemm_fp8", "../../examples/gemm_fp8.tir", {"BN": 128}, False)
for bn, sps in ((64, (2, 4, 8, 16)), (128, (2, 4, 8)), (256, (2,))):
    for sp in sps:
        V[f"fp8/splitk_64x{bn}_s{sp}"] = ("gemm_fp8", "gemm_fp8_splitk_fused.tir", {"BN": bn, "SPLIT": sp}, True)


def applies(op, name, M, N, K):
    vop, f, p, _ = V[name]
    if vop != op or N % 8 or K % (16 if op == "gemm_fp8" else 8):
        return False
    if "splitk" in f:
        tiles = math.ceil(M / 64) * math.ceil(N / p["BN"])
        return K >= 128 * p["SPLIT"] and tiles < 132 and tiles * p["SPLIT"] <= 132 * 4
    if "cpa3" in name and K <= 64:
        return False
    if "streamk" in f:   # where the tile count leaves a ragged last wave, or too few tiles
        tiles = math.ceil(M / 128) * math.ceil(N / p["BN"])
        return tiles % 132 != 0 and M >= 256
    return True


def shapes():
    g = [(3072, 3072, 3072), (3000, 3000, 3000), (3008, 3008, 3008), (3072, 3072, 3000),
         (3609, 2880, 3432), (12073, 600, 824), (14427, 1800, 688), (10295, 256, 624),
         (2449, 360, 720), (3281, 5648, 144), (8262, 368, 192), (4079, 144, 7672),
         (6912, 224, 752), (1000, 1000, 1000), (2500, 2504, 2504), (5000, 5000, 1024),
         (2304, 2304, 8192), (6000, 2000, 4000), (4096, 4096, 4096), (16384, 1024, 4096),
         (8192, 8192, 8192)]
    f = [(1723, 224, 14688), (90, 416, 4320), (42, 352, 7184), (1, 336, 2240), (4, 12688, 1840),
         (114, 6880, 1808), (730, 16, 2256), (43, 656, 1856), (6, 632, 6688), (3369, 1544, 6176),
         (14810, 14048, 352), (3072, 3072, 3072), (8192, 8192, 8192)]
    return [("gemm",) + s for s in g] + [("gemm_fp8",) + s for s in f]


def main():
    out = sys.argv[1]
    go, deadline = None, 55.0
    a = sys.argv[2:]
    while a:
        if a[0] == "--go":
            go = a[1]
        elif a[0] == "--deadline":
            deadline = float(a[1])
        a = a[2:]
    t0 = time.time()
    import torch
    sys.path.insert(0, os.path.join(os.getcwd(), ".carry", "python"))
    import cake
    torch.backends.cuda.matmul.allow_tf32 = False
    kernels, errors = {}, {}

    def build(name):
        _, f, params, _ = V[name]
        f, _, kern = f.partition(":")   # FILE or FILE:KERNEL
        try:
            kernels[name] = cake.load(os.path.join(KDIR, f), kernel=kern or None, **params)
        except Exception as e:
            errors[name] = str(e)[:300]

    names = list(V)
    build(names[0])
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(8) as ex:
        list(ex.map(build, names[1:]))
    kernels = {n: kernels[n] for n in names if n in kernels}
    print(f"compiled {len(kernels)} variants in {time.time() - t0:.1f} s; {len(errors)} failed: "
          f"{json.dumps(errors)[:600]}", flush=True)
    while go and not os.path.exists(go) and time.time() - t0 < deadline * 0.5:
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
    bf = torch.bfloat16
    for op, M, N, K in shapes():
        if time.time() - t0 > deadline - 3:
            print(f"out of time before {op} {M}x{N}x{K}", flush=True)
            break
        try:
            g = torch.Generator(device="cuda").manual_seed(M * 131 + N * 7 + K)
            A = torch.randn(M, K, device="cuda", dtype=bf, generator=g)
            B = torch.randn(N, K, device="cuda", dtype=bf, generator=g)
            flops = 2.0 * M * N * K
            reps = 7 if flops > 5e11 else 15
            row = {"op": op, "M": M, "N": N, "K": K, "variants": {}, "peers": {}}
            sa, sb = 0.5, 0.25
            if op == "gemm_fp8":
                A, B = A.to(torch.float8_e4m3fn), B.to(torch.float8_e4m3fn)
                ref = (A.float() @ B.float().t()) * (sa * sb)
                ta = torch.tensor(sa, device="cuda")
                tb = torch.tensor(sb, device="cuda")
                A16, B16 = (A.to(bf) * sa), (B.to(bf) * sb)
                peers = {"cublas_bf16_dequant": lambda: torch.matmul(A16, B16.t()),
                         "torch_eager": lambda: torch.matmul(A.to(bf) * sa, (B.to(bf) * sb).t())}
                if N % 16 == 0 and K % 16 == 0:
                    peers["scaled_mm"] = lambda: torch._scaled_mm(A, B.t(), scale_a=ta, scale_b=tb, out_dtype=bf)
                else:
                    row["refused"] = "scaled_mm: N or K not a multiple of 16"
            else:
                ref = A.float() @ B.float().t()
                peers = {"cublas": lambda: torch.matmul(A, B.t())}
            scale = ref.abs().max().item() + 1e-30
            terr = 0.0
            for pn, fn in peers.items():
                try:
                    e = (fn().float() - ref).abs().max().item()
                    terr = max(terr, e)
                    row["peers"][pn] = timed(fn, reps)
                except Exception as ex:
                    row["peers"][pn] = None
                    row.setdefault("peer_errors", {})[pn] = str(ex)[:160]
            okp = {k: v for k, v in row["peers"].items() if v}
            if okp:
                row["peer"] = min(okp, key=okp.get)
                row["peer_ms"] = okp[row["peer"]]
            C = torch.empty(M, N, device="cuda", dtype=bf)
            W = L = None

            def args_of(name, A_, B_):
                nonlocal W, L
                ws = V[name][3]
                if ws and W is None:
                    W = torch.zeros(M, N, device="cuda", dtype=torch.float32)
                    L = torch.zeros(M, N, device="cuda", dtype=torch.int32)
                if op == "gemm_fp8":
                    return (A_, B_, sa, sb, C, W, L) if ws else (A_, B_, sa, sb, C)
                return (A_, B_, C, W, L) if ws else (A_, B_, C)

            def run_one(name, A_, B_):
                k = kernels[name]
                args = args_of(name, A_, B_)
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
                    if V[name][3]:
                        dirty = int(W.count_nonzero().item()) + int(L.count_nonzero().item())
                        v["ws_dirty"] = dirty
                        ok = ok and dirty == 0
                        if dirty:
                            W.zero_()
                            L.zero_()
                    v["ok"] = bool(ok)
                except Exception as e:
                    v = {"ok": False, "error": str(e)[:200]}
                return v

            for name in kernels:
                if applies(op, name, M, N, K):
                    row["variants"][name] = run_one(name, A, B)
            best = sorted((v["ms"], n) for n, v in row["variants"].items() if v.get("ok") and "ms" in v)
            if best:
                row["best_ms"], row["best"] = best[0]
                if "peer_ms" in row:
                    row["ratio"] = row["peer_ms"] / row["best_ms"]
                row["tflops"] = flops / row["best_ms"] / 1e9
                row["roofline"] = row["tflops"] / PEAK[op]
            pitch = K * (1 if op == "gemm_fp8" else 2)
            if pitch % 128 and best and time.time() - t0 < deadline - 8:
                kp = (pitch + 127) // 128 * 128 // (1 if op == "gemm_fp8" else 2)
                try:
                    Ap = torch.empty(M, kp, device="cuda", dtype=A.dtype)
                    Bp = torch.empty(N, kp, device="cuda", dtype=B.dtype)
                    Ap[:, :K].copy_(A)
                    Bp[:, :K].copy_(B)
                    pad = {}
                    for _, n in [x for x in best if "persistent" in x[1] or "cpa" in x[1]][:3]:
                        pad[n] = run_one(n, Ap[:, :K], Bp[:, :K])
                    row["padded_pitch"] = {"pitch_elems": kp, "variants": pad}
                    pb = [v["ms"] for v in pad.values() if v.get("ok") and "ms" in v]
                    if pb:
                        row["padded_best_ms"] = min(pb)
                    del Ap, Bp
                except Exception as e:
                    row["padded_pitch"] = {"error": str(e)[:200]}
            results.append(row)
            with open(os.path.join(out, "glarge.json"), "w") as f:
                json.dump({"results": results, "compile_errors": errors}, f, indent=1)
            print(f"{op:8s} {M:5d} {N:5d} {K:5d} peer {row.get('peer', '-')} {row.get('peer_ms', float('nan')):.4f}"
                  f" best {row.get('best', '-')} {row.get('best_ms', float('nan')):.4f} "
                  f"ratio {row.get('ratio', float('nan')):.3f} pad {row.get('padded_best_ms', float('nan')):.4f}",
                  flush=True)
            torch.cuda.empty_cache()
        except Exception as e:   # a shape that breaks is reported; the next one runs
            print(f"{op} {M}x{N}x{K}: {type(e).__name__}: {str(e)[:200]}", flush=True)
            torch.cuda.empty_cache()
    with open(os.path.join(out, "glarge.json"), "w") as f:
        json.dump({"results": results, "compile_errors": errors}, f, indent=1)
    tuned(results, os.path.join(out, "glarge_tuned.json"), torch.cuda.get_device_name())
    table(results, os.path.join(out, "glarge_table.md"))


def tuned(results, path, device):
    """the measurements as `cakec lib tune`'s table (docs/library.md, Tuning), the
    variant names those of library/manifest.json where it has them"""
    entries = []
    bare = lambda n: n.split("/")[-1]  # noqa: E731
    for r in results:
        times = {bare(n): round(v["ms"], 5) for n, v in r["variants"].items() if v.get("ok") and "ms" in v}
        failed = {bare(n): (v.get("error") or f"wrong result (max error {v.get('err', float('nan')):.3g})")
                  for n, v in r["variants"].items() if not v.get("ok")}
        entries.append({"op": r["op"], "shape": {"M": r["M"], "N": r["N"], "K": r["K"]},
                        "times_ms": times, "failed": failed})
    with open(path, "w") as f:
        json.dump({"device": device, "runner": "glarge_bench.py", "entries": entries}, f, indent=1)


def table(results, path):
    lines = ["| op | M | N | K | best variant | ms | peer | peer ms | ratio | TFLOP/s | of peak | padded-pitch ms | 2nd best |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        vs = sorted((v["ms"], n) for n, v in r["variants"].items() if v.get("ok") and "ms" in v)
        second = f"{vs[1][1]} {vs[1][0]:.4f}" if len(vs) > 1 else "-"
        bad = [n for n, v in r["variants"].items() if not v.get("ok")]
        if bad:
            second += " WRONG: " + ",".join(bad)
        pad = f"{r['padded_best_ms']:.4f}" if "padded_best_ms" in r else "-"
        if "best" not in r:
            lines.append(f"| {r['op']} | {r['M']} | {r['N']} | {r['K']} | (none correct) | - | "
                         f"{r.get('peer', '-')} | {r.get('peer_ms', 0):.4f} | - | - | - | {pad} | {second} |")
            continue
        ratio = f"{r['ratio']:.3f}" if "ratio" in r else "-"
        lines.append(f"| {r['op']} | {r['M']} | {r['N']} | {r['K']} | {r['best']} | {r['best_ms']:.4f} | "
                     f"{r.get('peer', '-')} | {r.get('peer_ms', 0):.4f} | {ratio} | {r['tflops']:.0f} | "
                     f"{r['roofline']:.2f} | {pad} | {second} |")
    lines += ["", "| op | shapes | ratio >= 1.0 | min | geomean |", "|---|---|---|---|---|"]
    for op in ("gemm", "gemm_fp8"):
        rs = [r.get("ratio", 0.0) for r in results if r["op"] == op]
        if not rs:
            continue
        good = [x for x in rs if x > 0]
        gm = math.exp(sum(math.log(x) for x in good) / len(good)) if good else 0.0
        lines.append(f"| {op} | {len(rs)} | {sum(x >= 1.0 for x in rs)} | {min(rs):.3f} | {gm:.3f} |")
    text = "\n".join(lines) + "\n"
    with open(path, "w") as f:
        f.write(text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
