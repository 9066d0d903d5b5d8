"""python_device.py — `import cake` on the GPU (run_python.sh runs it): every
cake.ops op against torch on >= 50 shapes, two streams overlapping, ordering with
torch's kernels on one stream, a CUDA graph of gemm + rms_norm, torch.compile
(fullgraph) of an MLP of torch.ops.cake.*, the call overhead of a cached kernel,
and the llama_mlp example.

Each section is stopped when it runs past its time (faulthandler: the traceback
of where it hung, then the process exits): a kernel that hangs costs its
section only, because run_python.sh starts the script again for the sections
that have no result yet. Each result is appended to RESULTS (JSON lines) as
soon as it is known; PROGRESS names the section and case running.

    python_device.py               run the sections of $PY_SECTIONS (default: all)
    python_device.py --list        the sections' keys
    python_device.py --todo        the keys without a result in $RESULTS
    python_device.py --killed RC   record the section PROGRESS names as hung (exit RC)
    python_device.py --table       the summary table of $RESULTS (and python_device.json)
Environment: OUT (results folder), DEADLINE (seconds for this process)."""
import faulthandler
import json
import math
import os
import random
import sys
import time
import traceback

T0 = time.time()
DEADLINE = float(os.environ.get("DEADLINE", "95"))
OUT = os.environ.get("OUT", "/tmp/cake-out")
RESULTS = os.environ.get("RESULTS", os.path.join(OUT, "results.jsonl"))
PROGRESS = os.environ.get("PROGRESS", os.path.join(OUT, "progress.txt"))
os.makedirs(OUT, exist_ok=True)
SECTIONS = []   # (key, title, budget seconds, fn) in order
details = {}
torch = F = cake = ops = None
dev = "cuda"
bf = None


def left():
    return DEADLINE - (time.time() - T0)


CURRENT = [""]   # the key of the section running
CASE_LIMIT = 12  # seconds one case of an op's check may take (a new variant compiles in it)


def watchdog(seconds):
    """(re)arms the stop: past `seconds` (or the deadline) the tracebacks go to the log and the
    process exits; run_python.sh records the section as hung and goes on"""
    faulthandler.dump_traceback_later(max(2.0, min(seconds, left() - 2)), exit=True)


def progress(text):
    """PROGRESS: the running section's key and where it is"""
    with open(PROGRESS, "w") as f:
        f.write(f"{CURRENT[0]}\t{text}\n" if CURRENT[0] else "")


def record(key, title, result, detail):
    """appends the section's result, with the details gathered since the last one"""
    with open(RESULTS, "a") as f:
        f.write(json.dumps({"key": key, "title": title, "result": result, "detail": detail,
                            "details": dict(details)}, default=str) + "\n")
    details.clear()
    print(f"-- {title}: {result} {detail}", flush=True)


def section(key, title, budget=5):
    """registers a section: fn() -> (ok, detail)"""
    def wrap(fn):
        SECTIONS.append((key, title, budget, fn))
        return fn
    return wrap


def run_section(key, title, budget, fn):
    if left() < min(budget, 5):
        record(key, title, "skip", f"out of time ({left():.0f} s left)")
        return
    CURRENT[0] = key
    progress("its start")
    t = time.time()
    watchdog(budget + 10)
    try:
        if os.environ.get("PY_TEST_HANG") == key:   # tests the hang path: run_python.sh goes on
            time.sleep(3600)
        ok, detail = fn()
        record(key, title, "ok" if ok else "FAIL", f"{detail} [{time.time() - t:.1f} s]")
    except Exception as e:  # a failure of one section is reported, the next runs
        traceback.print_exc()
        record(key, title, "FAIL", f"{type(e).__name__}: {str(e)[:300]} [{time.time() - t:.1f} s]")
    finally:
        faulthandler.cancel_dump_traceback_later()
        CURRENT[0] = ""


@section("import", "import cake", 10)
def _():
    global torch, F, cake, ops, bf
    import torch as torch_
    import torch.nn.functional as F_
    torch, F, bf = torch_, F_, torch_.bfloat16
    random.seed(1)
    torch.manual_seed(1)
    import cake as cake_
    import cake.ops as ops_
    cake, ops = cake_, ops_
    return True, (f"version {cake.version}, target {cake.target_of(0)}, "
                  f"{torch.cuda.get_device_name(0)}, python {sys.version.split()[0]}, "
                  f"torch {torch.__version__}, avoid {ops.avoid}")


def close(got, want, tol):
    """max relative error (to max |want|) and whether it is within tol"""
    got, want = got.float(), want.float()
    if not torch.isfinite(got).all():
        return float("inf"), False
    err = (got - want).abs().max().item() / max(want.abs().max().item(), 1e-6)
    return err, err <= tol


def check_op(name, cases, run, tol):
    """run(case) -> (got, want); all cases must be within tol"""
    worst, bad, n = 0.0, [], 0
    for i, c in enumerate(cases):
        if left() < 8:
            break
        progress(f"case {i}: {c}")
        watchdog(CASE_LIMIT)
        got, want = run(c)
        progress(f"case {i}: {c}, variant {ops.last_pick[0]}")   # a hang shows in the sync
        err, ok = close(got, want, tol)
        n += 1
        worst = max(worst, err)
        if not ok:
            bad.append((c, err))
        torch.cuda.synchronize()
    details[name] = {"shapes": n, "worst_rel_err": worst, "failed": [str(b) for b in bad[:5]]}
    return n >= 50 and not bad, f"{n} shapes, {len(bad)} wrong, worst rel err {worst:.2e}" + (
        f", first bad {bad[0]}" if bad else "")


@section("ops_gemm_vs_torch", "ops.gemm vs torch", 20)
def _():
    cases = [(random.randint(1, 700), 8 * random.randint(1, 96), 8 * random.randint(1, 96))
             for _ in range(56)] + [(4096, 4096, 4096), (8192, 1024, 4096)]

    def run(c):
        M, N, K = c
        a = torch.randn(M, K, device=dev, dtype=bf)
        b = torch.randn(N, K, device=dev, dtype=bf)
        return ops.gemm(a, b), (a.float() @ b.float().T)
    return check_op("gemm", cases, run, 2e-2)

@section("ops_gemm_bias_silu_vs_to", "ops.gemm_bias_silu vs torch", 10)
def _():
    cases = [(random.randint(1, 600), 8 * random.randint(1, 64), 8 * random.randint(8, 64))
             for _ in range(52)]

    def run(c):
        M, N, K = c
        a = torch.randn(M, K, device=dev, dtype=bf)
        b = torch.randn(N, K, device=dev, dtype=bf) * K ** -0.5
        bias = torch.randn(N, device=dev)
        return ops.gemm_bias_silu(a, b, bias), F.silu(a.float() @ b.float().T + bias)
    return check_op("gemm_bias_silu", cases, run, 2e-2)

@section("ops_gemm_fp8_vs_torch", "ops.gemm_fp8 vs torch", 10)
def _():
    cases = [(random.randint(1, 600), 8 * random.randint(1, 64), 16 * random.randint(8, 32))
             for _ in range(52)]
    e4m3 = torch.float8_e4m3fn

    def run(c):
        M, N, K = c
        a = torch.randn(M, K, device=dev).to(e4m3)
        b = torch.randn(N, K, device=dev).to(e4m3)
        want = 0.5 * 0.25 * (a.float() @ b.float().T)
        return ops.gemm_fp8(a, b, 0.5, 0.25), want
    return check_op("gemm_fp8", cases, run, 2e-2)

@section("ops_rms_norm_vs_torch", "ops.rms_norm vs torch", 10)
def _():
    cases = [(random.randint(1, 300), 8 * random.randint(1, 2048)) for _ in range(55)]

    def run(c):
        M, N = c
        x = torch.randn(M, N, device=dev, dtype=bf)
        w = torch.randn(N, device=dev, dtype=bf)
        want = F.rms_norm(x.float(), (N,), w.float(), 1e-6)
        return ops.rms_norm(x, w, 1e-6), want
    return check_op("rms_norm", cases, run, 2e-2)

@section("ops_layer_norm_vs_torch", "ops.layer_norm vs torch", 10)
def _():
    cases = [(random.randint(1, 300), 8 * random.randint(1, 1024)) for _ in range(52)]

    def run(c):
        M, N = c
        x = torch.randn(M, N, device=dev, dtype=bf)
        w = torch.randn(N, device=dev, dtype=bf)
        b = torch.randn(N, device=dev, dtype=bf)
        want = F.layer_norm(x.float(), (N,), w.float(), b.float(), 1e-5)
        return ops.layer_norm(x, w, b, 1e-5), want
    return check_op("layer_norm", cases, run, 2e-2)

@section("ops_softmax_vs_torch", "ops.softmax vs torch", 10)
def _():
    cases = [(random.randint(1, 500), 4 * random.randint(1, 2048)) for _ in range(55)]

    def run(c):
        M, N = c
        x = torch.randn(M, N, device=dev) * 4
        return ops.softmax(x), torch.softmax(x, -1)
    return check_op("softmax", cases, run, 1e-5)

@section("ops_cross_entropy_vs_tor", "ops.cross_entropy vs torch", 10)
def _():
    cases = [(random.randint(1, 300), random.randint(1, 40000)) for _ in range(52)]

    def run(c):
        B, V = c
        x = torch.randn(B, V, device=dev) * 3
        t = torch.randint(0, V, (B,), device=dev)
        return ops.cross_entropy(x, t), F.cross_entropy(x, t, reduction="none")
    return check_op("cross_entropy", cases, run, 1e-4)

@section("ops_swiglu_vs_torch", "ops.swiglu vs torch", 5)
def _():
    cases = [(random.randint(1, 300), 8 * random.randint(1, 1500)) for _ in range(55)]

    def run(c):
        g = torch.randn(*c, device=dev, dtype=bf)
        u = torch.randn(*c, device=dev, dtype=bf)
        return ops.swiglu(g, u), F.silu(g.float()) * u.float()
    return check_op("swiglu", cases, run, 2e-2)

def e4m3_step(q):
    """one e4m3 ulp at each (f32) e4m3 value q: 2^(e-3) for a normal of exponent e, 2^-9
    below 2^-6 (the subnormals)"""
    return torch.exp2(torch.floor(torch.log2(q.abs().clamp_min(2.0 ** -6))) - 3)


@section("ops_fp8_row_quantize_vs", "ops.fp8_row_quantize vs torch", 10)
def _():
    """against torch's `(x.float() / (amax / 448)).to(float8_e4m3fn)`, compared in f32 after
    dequantization, each element within one e4m3 ulp (of the larger of the two codes) times
    the scale, the scales within 1e-6; the details count the codes that differ, by row path
    (vector rows that fit in registers, longer vector rows, rows of any N)"""
    cases = [(random.randint(1, 400), random.randint(1, 12000)) for _ in range(40)]
    cases += [(random.randint(1, 300), 8 * random.randint(1, 1024)) for _ in range(8)]
    cases += [(random.randint(1, 64), 8 * random.randint(1025, 8192)) for _ in range(4)]
    cases += [(1, 1), (3, 7), (1000, 64), (17, 65536)]
    worst_ulps, worst_scale, n, bad, paths = 0.0, 0.0, 0, [], {}
    for i, (M, N) in enumerate(cases):
        if left() < 8:
            break
        progress(f"case {i}: {(M, N)}")
        watchdog(CASE_LIMIT)
        x = torch.randn(M, N, device=dev, dtype=bf) * 3
        y, s = ops.fp8_row_quantize(x)
        amax = x.float().abs().amax(-1).clamp_min(1e-12)
        sw = amax / 448.0
        yw = (x.float() / sw[:, None]).to(torch.float8_e4m3fn)
        yr = (x.float() * (448.0 / amax)[:, None]).to(torch.float8_e4m3fn)   # the kernel's formula
        got, want = y.float() * s[:, None], yw.float() * sw[:, None]
        step = torch.maximum(e4m3_step(y.float()), e4m3_step(yw.float())) * torch.maximum(s, sw)[:, None]
        ulps = ((got - want).abs() / step).max().item() if got.numel() else 0.0
        sdiff = ((s - sw).abs() / sw).max().item()
        ok = bool(torch.isfinite(got).all()) and ulps <= 1.0 + 1e-6 and sdiff <= 1e-6
        path = "fits" if N % 8 == 0 and N <= 8192 else "vector" if N % 8 == 0 else "any_n"
        pc = paths.setdefault(path, {"shapes": 0, "codes_differ": 0, "differ_from_reciprocal": 0,
                                     "elements": 0, "failed": 0, "variants": []})
        pc["shapes"] += 1
        pc["elements"] += M * N
        pc["codes_differ"] += int((y.view(torch.uint8) != yw.view(torch.uint8)).sum())
        pc["differ_from_reciprocal"] += int((y.view(torch.uint8) != yr.view(torch.uint8)).sum())
        pc["failed"] += not ok
        pc["worst_scale_rel"] = max(pc.get("worst_scale_rel", 0.0), sdiff)
        pc["worst_ulps"] = max(pc.get("worst_ulps", 0.0), ulps)
        if not ok and len(pc.setdefault("examples", [])) < 3:   # where it differs: the evidence
            r = int(((got - want).abs().amax(-1)).argmax())
            pc["examples"].append({"shape": [M, N], "row": r, "scale": float(s[r]), "torch_scale": float(sw[r]),
                                   "amax": float(amax[r]), "codes_differ_in_row":
                                   int((y[r].view(torch.uint8) != yw[r].view(torch.uint8)).sum())})
        if ops.last_pick[0] not in pc["variants"]:
            pc["variants"].append(ops.last_pick[0])
        n += 1
        worst_ulps, worst_scale = max(worst_ulps, ulps), max(worst_scale, sdiff)
        if not ok:
            bad.append(f"{(M, N)}: {ulps:.2f} ulp, scale {sdiff:.2e}, {ops.last_pick[0]}")
        torch.cuda.synchronize()
    details["fp8_row_quantize"] = {"shapes": n, "worst_e4m3_ulps": worst_ulps, "worst_scale_rel": worst_scale,
                                   "paths": paths, "failed": bad[:6]}
    return (n >= 50 and not bad,
            f"{n} shapes, {len(bad)} wrong; worst {worst_ulps:.2f} e4m3 ulp, scale {worst_scale:.1e}; "
            + ", ".join(f"{k}: {v['codes_differ']}/{v['elements']} codes differ "
                        f"({v['differ_from_reciprocal']} from x*448/amax)" for k, v in paths.items()))


@section("ops_attention_vs_torch_s", "ops.attention vs torch SDPA", 20)
def _():
    cases = [(random.randint(1, 4), random.randint(1, 8), random.randint(1, 600),
              random.choice((64, 128)), random.random() < 0.5) for _ in range(52)]

    def run(c):
        B, H, S, D, causal = c
        q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=bf) for _ in range(3))
        want = F.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                              is_causal=causal)
        return ops.attention(q, k, v, causal=causal), want
    return check_op("attention", cases, run, 2e-2)

@section("dispatch_library_vs_mini", "dispatch: library vs minimal selection", 1)
def _():
    lib = ops.library()
    picks = {}
    for op, dims in (("gemm", {"M": 4096, "N": 4096, "K": 4096}), ("gemm", {"M": 64, "N": 4096, "K": 4096}),
                     ("rmsnorm", {"M": 4096, "N": 8192}), ("softmax", {"M": 4096, "N": 512}),
                     ("attention_fwd", {"BH": 32, "S": 4096})):
        try:
            c = lib.select(op, dims)
            picks[f"{op}{tuple(dims.values())}"] = f"{c['name']} ({c['why']})"
        except Exception as e:
            picks[op] = f"{type(e).__name__}"
    details["dispatch"] = {"stats": dict(ops.stats), "picks": picks, "errors": ops.errors[:10],
                           "tuned_device": lib.tuned_device}
    return lib is not None and not ops.errors, (
        f"new shapes through the library {ops.stats['library']}, through the minimal selection "
        f"{ops.stats['minimal']}, library errors {len(ops.errors)}; " +
                             ", ".join(f"{k}: {v}" for k, v in picks.items()))

@section("two_streams_overlap", "two streams overlap", 5)
def _():
    k = cake.load(os.path.join(cake.EXAMPLES, "cross_entropy.tir"))
    B, V = 60, 1 << 21          # 60 blocks each: both fit on the SMs at once
    xs = [torch.randn(B, V, device=dev) for _ in range(2)]
    ts = [torch.randint(0, V, (B,), device=dev, dtype=torch.int32) for _ in range(2)]
    ls = [torch.empty(B, device=dev) for _ in range(2)]
    ss = [torch.cuda.Stream() for _ in range(2)]
    for i in range(2):
        k(xs[i], ts[i], ls[i])
    torch.cuda.synchronize()
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(2)] for _ in range(2)]
    t_one = None
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    k(xs[0], ts[0], ls[0])
    e1.record()
    torch.cuda.synchronize()
    t_one = e0.elapsed_time(e1)
    start = torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda.synchronize()
    for i in range(2):
        with torch.cuda.stream(ss[i]):
            ev[i][0].record()
            k(xs[i], ts[i], ls[i])
            ev[i][1].record()
    torch.cuda.synchronize()
    iv = [(start.elapsed_time(ev[i][0]), start.elapsed_time(ev[i][1])) for i in range(2)]
    overlap = min(iv[0][1], iv[1][1]) - max(iv[0][0], iv[1][0])
    both = max(iv[0][1], iv[1][1]) - min(iv[0][0], iv[1][0])
    ok = overlap > 0.3 * t_one
    want = F.cross_entropy(xs[1], ts[1].long(), reduction="none")
    err, good = close(ls[1], want, 1e-4)
    details["streams"] = {"one_ms": t_one, "intervals_ms": iv, "overlap_ms": overlap}
    return ok and good, (f"one kernel {t_one:.3f} ms; on two streams {iv[0][0]:.3f}-"
                         f"{iv[0][1]:.3f} and {iv[1][0]:.3f}-{iv[1][1]:.3f} ms: overlap "
                         f"{overlap:.3f} ms, both done in {both:.3f} ms")

@section("ordering_with_torch_on_o", "ordering with torch on one stream", 5)
def _():
    k = cake.load(os.path.join(cake.KERNELS, "swiglu.tir"))
    n = 1 << 24
    s = torch.cuda.Stream()
    bad = 0
    with torch.cuda.stream(s):
        for r in range(20):
            src = torch.full((n,), float(r % 7 + 1), device=dev, dtype=bf)
            g = torch.empty(n, device=dev, dtype=bf)
            u = torch.ones(n, device=dev, dtype=bf)
            h = torch.empty(n, device=dev, dtype=bf)
            g.copy_(src)            # torch writes g, cake reads it, torch reads h
            k(g, u, h)
            out = h * 2
            want = F.silu(src.float()) * 2
            bad += int(not close(out, want, 1e-2)[1])
    torch.cuda.synchronize()
    return bad == 0, f"20 rounds of torch copy -> cake swiglu -> torch mul on a side stream: {bad} wrong"

@section("cuda_graph_gemm_rms_norm", "CUDA graph: gemm + rms_norm", 8)
def _():
    M, N, K = 512, 1024, 768
    a = torch.randn(M, K, device=dev, dtype=bf)
    b = torch.randn(N, K, device=dev, dtype=bf)
    w = torch.randn(N, device=dev, dtype=bf)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            ops.rms_norm(ops.gemm(a, b), w, 1e-6)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = ops.rms_norm(ops.gemm(a, b), w, 1e-6)
    worst, ok = 0.0, True
    for r in range(5):
        a.copy_(torch.randn(M, K, device=dev, dtype=bf))
        g.replay()
        torch.cuda.synchronize()
        want = F.rms_norm((a.float() @ b.float().T).to(bf).float(), (N,), w.float(), 1e-6)
        err, good = close(y, want, 3e-2)
        worst, ok = max(worst, err), ok and good
    return ok, f"5 replays with new inputs, worst rel err {worst:.2e}"

@section("torch_compile_fullgraph_", "torch.compile(fullgraph) MLP of torch.ops.cake", 30)
def _():
    D, Hd, T = 1024, 2816, 256
    w_n = torch.randn(D, device=dev, dtype=bf)
    wg, wu = (torch.randn(Hd, D, device=dev, dtype=bf) * D ** -0.5 for _ in range(2))
    wd = torch.randn(D, Hd, device=dev, dtype=bf) * Hd ** -0.5

    def mlp(x):
        h = torch.ops.cake.rms_norm(x, w_n, 1e-6)
        a = torch.ops.cake.swiglu(torch.ops.cake.gemm(h, wg), torch.ops.cake.gemm(h, wu))
        return x + torch.ops.cake.gemm(a, wd)
    x = torch.randn(T, D, device=dev, dtype=bf)
    eager = mlp(x)
    compiled = torch.compile(mlp, fullgraph=True)
    got = compiled(x)
    got2 = compiled(torch.randn(T, D, device=dev, dtype=bf))
    torch.cuda.synchronize()
    err, ok = close(got, eager, 1e-2)
    return ok and got2.shape == x.shape, f"matches eager, rel err {err:.2e}"

@section("call_overhead_of_a_cache", "call overhead of a cached kernel", 5)
def _():
    k = cake.load(os.path.join(cake.KERNELS, "swiglu.tir"))
    n = 8 * 256 * 4
    g, u = (torch.randn(n, device=dev, dtype=bf) for _ in range(2))
    h = torch.empty_like(g)
    z = torch.empty_like(g)
    reps = 600   # fewer than the launch queue holds: the host's time, not the GPU's

    def per_call(fn):
        for _ in range(100):
            fn()
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        dt = (time.perf_counter() - t) / reps
        torch.cuda.synchronize()
        return dt * 1e6
    bare = min(k.time_launches(reps, g, u, h) for _ in range(3)) * 1e6
    call = min(per_call(lambda: k(g, u, h)) for _ in range(3))
    t_add = min(per_call(lambda: torch.mul(g, u, out=z)) for _ in range(3))
    t_op = min(per_call(lambda: ops.swiglu(g, u)) for _ in range(3))
    t_silu = min(per_call(lambda: F.silu(g) * u) for _ in range(3))
    details["overhead_us"] = {"bare_launch": bare, "kernel_call": call, "torch_mul_out": t_add,
                              "cake_ops_swiglu": t_op, "torch_silu_mul": t_silu}
    return call - bare <= 10, (f"bare launch {bare:.1f} us, cake kernel call {call:.1f} us "
                               f"(+{call - bare:.1f}), torch.mul(out=) {t_add:.1f} us, "
                               f"cake.ops.swiglu {t_op:.1f} us, torch silu*mul {t_silu:.1f} us")

@section("examples_python_llama_ml", "examples/python/llama_mlp.py", 30)
def _():
    sys.path.insert(0, os.path.join(os.getcwd(), "examples", "python"))
    import llama_mlp
    res = llama_mlp.main(quick=True)
    details["llama_mlp"] = res
    ok = all(r["ok"] for r in res)
    return ok, "; ".join(f"T={r['tokens']}: cake {r['cake_ms']:.3f} ms, torch "
                         f"{r['torch_ms']:.3f}, compile {r['compile_ms']:.3f}, err "
                         f"{r['err']:.1e}" for r in res)


# the order they run in: the acceptance checks that cost little first, the compiles late
ORDER = ["import", "ops_gemm_vs_torch", "ops_rms_norm_vs_torch", "ops_swiglu_vs_torch",
         "call_overhead_of_a_cache", "two_streams_overlap", "ordering_with_torch_on_o",
         "cuda_graph_gemm_rms_norm", "ops_softmax_vs_torch", "ops_cross_entropy_vs_tor",
         "ops_layer_norm_vs_torch", "ops_attention_vs_torch_s", "torch_compile_fullgraph_",
         "examples_python_llama_ml", "ops_gemm_bias_silu_vs_to", "ops_gemm_fp8_vs_torch", "ops_fp8_row_quantize_vs",
         "dispatch_library_vs_mini"]
SECTIONS.sort(key=lambda s: ORDER.index(s[0]) if s[0] in ORDER else len(ORDER))


def table():
    rows = []
    if os.path.exists(RESULTS):
        with open(RESULTS) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    order = {k: i for i, (k, _, _, _) in enumerate(SECTIONS)}
    rows.sort(key=lambda r: order.get(r["key"], 99))
    with open(os.path.join(OUT, "python_device.json"), "w") as f:
        json.dump(rows, f, indent=1, default=str)
    print(f"== import cake on the device")
    print(f"| {'check':<46} | {'result':<6} | detail")
    print(f"|{'-' * 48}|{'-' * 8}|{'-' * 40}")
    for r in rows:
        print(f"| {r['title']:<46} | {r['result']:<6} | {r['detail']}")
    missing = [t for k, t, _, _ in SECTIONS if k not in {r["key"] for r in rows}]
    if missing:
        print(f"| not run: {', '.join(missing)}")
    return 0 if rows and all(r["result"] == "ok" for r in rows) and not missing else 1


def done_keys():
    if not os.path.exists(RESULTS):
        return set()
    with open(RESULTS) as f:
        return {json.loads(line)["key"] for line in f if line.strip()}


def killed(rc):
    """the section PROGRESS names started and has no result: it hung or crashed"""
    text = open(PROGRESS).read().strip() if os.path.exists(PROGRESS) else ""
    key, _, where = text.partition("\t")
    done = done_keys()
    titles = {k: t for k, t, _, _ in SECTIONS}
    if not key or key in done:   # died between sections: blame the next one
        key = next((k for k, _, _, _ in SECTIONS if k not in done), None)
        where = "before it started"
    if key:
        record(key, titles.get(key, key), "FAIL",
               f"the process ended (exit {rc}) during it, at {where}: a hang (traceback in "
               f"python_log.txt) or a crash")
    if " variant " in where and "/minimal" not in where:   # the next runs avoid that variant
        with open(os.path.join(OUT, "avoid.txt"), "a") as f:
            f.write(where.rsplit(" variant ", 1)[1].strip() + "\n")


def main(argv):
    if "--list" in argv:
        print(",".join(k for k, _, _, _ in SECTIONS))
        return 0
    if "--todo" in argv:
        done = done_keys()
        print(",".join(k for k, _, _, _ in SECTIONS if k not in done))
        return 0
    if "--killed" in argv:
        killed(argv[argv.index("--killed") + 1])
        return 0
    if "--table" in argv:
        return table()
    want = [k for k in os.environ.get("PY_SECTIONS", "").split(",") if k]
    todo = [s for s in SECTIONS if not want or s[0] in want]
    if todo and todo[0][0] != "import":   # a restart: the imports, recorded by the first run
        try:
            SECTIONS[0][3]()
        except Exception as e:
            traceback.print_exc()
            for key, title, _, _ in todo:
                record(key, title, "FAIL", f"import failed: {type(e).__name__}: {e}")
            return 0
    for key, title, budget, fn in todo:
        run_section(key, title, budget, fn)
        if key == "import" and cake is None:
            break
    progress("")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
