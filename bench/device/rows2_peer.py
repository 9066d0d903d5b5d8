"""rows2_peer.py — what torch.compile's kernel does at a row-op shape, and ours beside it
under one timer (bench/device/run_rows2.sh, session 8).

    python3 rows2_peer.py LINES OUT.jsonl SASS_DIR [SECONDS]

LINES: `OP SHAPE [VARIANT ...]` (VARIANT: a single-launch variant of library/manifest.json,
compiled from its file with cake.load). Per line, in one process, every time by
gated.Timer (the L2 flushed, the stream held while the run is queued, stream and CUDA
graph, the faster kept):
  peer    sweep.py's torch function compiled for this shape alone (dynamic=False), run
          once (inductor autotunes), then timed; what it launched: each Triton kernel's
          name, source, the chosen config (XBLOCK, R0_BLOCK, num_warps), registers,
          spills, shared memory and the grid and block (the profiler's kernel records);
          its cubin disassembled (cuobjdump -sass) into SASS_DIR and counted
          (sass_counts: loads and stores by width, barriers, shuffles, instructions)
  ours    each VARIANT on torch tensors (x, w, y from torch's allocator, as cake.ops
          runs them), checked against torch eager in f32, timed as launched (no graph:
          peer_stream_us is the peer's time so), its grid and block, its SASS (the PTX
          of `cakec --emit ptx` through ptxas)
  place   at the first shape of each op: the first VARIANT again with x, w and y carved
          8 MiB apart from one buffer (each in a 2 MiB page of its own) and adjacent in
          one 2 MiB page: whether the pages an op touches cost time at these sizes
With ROWS2_ART (an artifact) and CAKEC set, the variant `cakec lib select` picks there
comes first in each line's VARIANTs (`pick` in the row). One JSON line per shape; stops
starting shapes after SECONDS (default 60).
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = tempfile.mkdtemp(prefix="rows2_tc_")
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(CACHE, "triton"))
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(CACHE, "inductor"))
sys.path.insert(0, HERE)

import torch                       # noqa: E402
import torch.nn.functional as F    # noqa: E402
import gated                       # noqa: E402
import sweep                       # noqa: E402

SASS_OPS = re.compile(r"\b(LDG|STG|LDS|STS|BAR|SHFL|LDC|ULDC|MUFU|EXIT|BRA|MEMBAR|RED|ATOM)[.A-Z0-9_]*")


def manifest():
    m = json.load(open(os.path.join(ROOT, "library", "manifest.json")))
    out = {}
    for op in m["ops"]:
        for v in op["variants"]:
            out[(op["op"], v["name"])] = v
    return out


def sass_of(cubin, path):
    """cubin disassembled into path (the instruction lines only); the counts"""
    try:
        text = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True,
                              timeout=20).stdout
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}
    lines = [ln.split(";")[0].strip() for ln in text.splitlines() if ln.strip().startswith("/*") and
             re.match(r"/\*[0-9a-f]{4}\*/", ln.strip())]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    counts = {}
    for ln in lines:
        for m in SASS_OPS.finditer(ln):
            counts[m.group(0)] = counts.get(m.group(0), 0) + 1
    counts["instructions"] = len(lines)
    return counts


def kernels_in(fn):
    """the kernels fn launches: name, grid, block, registers, shared memory (profiler)"""
    try:
        return _kernels_in(fn)
    except Exception as e:
        torch.cuda.synchronize()
        return [{"error": f"{type(e).__name__}: {str(e)[:200]}"}]


def _kernels_in(fn):
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    path = os.path.join(CACHE, "trace.json")
    p.export_chrome_trace(path)
    out = []
    for e in json.load(open(path)).get("traceEvents", []):
        if e.get("cat") == "kernel":
            a = e.get("args", {})
            out.append({"name": e.get("name", "")[:80], "grid": a.get("grid"), "block": a.get("block"),
                        "regs": a.get("registers per thread"), "smem": a.get("shared memory"),
                        "us": e.get("dur")})
    return out


class Made:
    """the CachingAutotuners inductor makes (each a Triton kernel of a compiled graph)"""

    def __init__(self):
        from torch._inductor.runtime import triton_heuristics as th
        self.list = []
        orig = th.CachingAutotuner.__init__
        made = self.list

        def init(self, *a, **k):
            orig(self, *a, **k)
            made.append(self)
        th.CachingAutotuner.__init__ = init


def describe(at, sass_dir, tag):
    try:
        return _describe(at, sass_dir, tag)
    except Exception as e:
        return {"error": f"{type(e).__name__}: {str(e)[:200]}"}


def _describe(at, sass_dir, tag):
    d = {"kernel": at.fn.__name__, "configs_tried": len(getattr(at, "configs", []) or [])}
    try:
        d["src"] = at.fn.src
    except Exception:
        pass
    d["size_hints"] = str(getattr(at, "size_hints", ""))
    if at.launchers:
        ln = at.launchers[0]
        cfg = ln.config
        d["config"] = dict(cfg.kwargs, num_warps=cfg.num_warps, num_stages=cfg.num_stages)
        d["regs"], d["spills"], d["shared"] = ln.n_regs, ln.n_spills, ln.shared
        folder = os.path.join(os.environ["TRITON_CACHE_DIR"], str(ln.cache_hash))
        cub = os.path.join(folder, at.fn.__name__ + ".cubin")
        if os.path.exists(cub):
            d["sass_counts"] = sass_of(cub, os.path.join(sass_dir, f"peer_{tag}.sass"))
            d["sass_file"] = f"peer_{tag}.sass"
        for ext in ("ttgir",):
            p = os.path.join(folder, at.fn.__name__ + "." + ext)
            if os.path.exists(p):
                d["layouts"] = [ln.strip()[:200] for ln in open(p) if "#ttg.blocked" in ln and "=" in ln][:6]
    return d


def inputs(op, s, seed=0):
    p = sweep.Peers.__new__(sweep.Peers)
    p.torch = torch
    return sweep.Peers.inputs(p, op, s, seed)


def reference(op, args):
    """torch eager in f32 (what ours is compared with)"""
    fns = sweep.peer_fns(torch, F)
    return fns[op](*args)


def our_call(op, s, args, place=None):
    """(fn, outputs) for a library kernel on these inputs; place: carve x, w, y from one
    buffer at this spacing (bytes) instead of torch's allocator"""
    dev = "cuda"
    if op in ("rmsnorm", "layernorm", "fp8_row_quantize"):
        M, N = s["M"], s["N"]
        if place is not None:
            big = torch.empty(4 * place + (M * N * 2 + 4096) * 4, dtype=torch.uint8, device=dev)

            def carve(k, n, dt):
                es = torch.tensor([], dtype=dt).element_size()
                off = k * place
                return big[off: off + n * es].view(dt)
            x = carve(0, M * N, torch.bfloat16).view(M, N)
            x.copy_(args[0])
            if op == "fp8_row_quantize":
                y = carve(1, M * N, torch.float8_e4m3fn).view(M, N)
                sc = carve(2, M, torch.float32)
                return (lambda k: k(x, y, sc)), (y, sc), big
            w = carve(1, N, torch.bfloat16)
            w.copy_(args[1])
            if op == "rmsnorm":
                y = carve(2, M * N, torch.bfloat16).view(M, N)
                return (lambda k: k(x, w, y, 1e-6)), (y,), big
            b = carve(2, N, torch.bfloat16)
            b.copy_(args[2])
            y = carve(3, M * N, torch.bfloat16).view(M, N)
            return (lambda k: k(x, w, b, y, 1e-6)), (y,), big
        x = args[0]
        if op == "fp8_row_quantize":
            y = torch.empty(M, N, dtype=torch.float8_e4m3fn, device=dev)
            sc = torch.empty(M, dtype=torch.float32, device=dev)
            return (lambda k: k(x, y, sc)), (y, sc), None
        y = torch.empty_like(x)
        if op == "rmsnorm":
            return (lambda k: k(x, args[1], y, 1e-6)), (y,), None
        return (lambda k: k(x, args[1], args[2], y, 1e-6)), (y,), None
    if op == "softmax":
        x = args[0]
        y = torch.empty_like(x)
        return (lambda k: k(x, y)), (y,), None
    logits, t = args
    t32 = t.to(torch.int32)
    loss = torch.empty(s["B"], dtype=torch.float32, device=dev)
    return (lambda k: k(logits, t32, loss)), (loss,), None


def close(op, got, want):
    """max error of ours against torch eager, and whether it is within the kernels' tolerance"""
    if op == "fp8_row_quantize":
        y, sc = got
        wy, wsc = want
        e_sc = ((sc.float() - wsc.view(-1).float()).abs() / wsc.view(-1).float().abs().clamp(min=1e-30)).max().item()
        dy = (y.float() - wy.float()).abs()
        e_y = (dy / wy.float().abs().clamp(min=1e-3)).max().item()
        return max(e_sc, e_y), e_sc < 1e-5 and e_y < 0.13
    g = got[0].float()
    w = want.float()
    err = ((g - w).abs() / (w.abs() + 1e-2)).max().item()
    return err, err < (0.05 if op in ("rmsnorm", "layernorm") else 1e-3)


def pick_of(op, shape):
    art, cakec = os.environ.get("ROWS2_ART"), os.environ.get("CAKEC")
    if not art or not cakec:
        return None
    try:
        out = subprocess.run([cakec, "lib", "select", art, "--op", op, "--shape", shape, "--json"],
                             capture_output=True, text=True, timeout=10).stdout
        return json.loads(out)["select"]["variant"]
    except Exception:
        return None


def our_sass(spec, sass_dir, tag, seen):
    """our variant's PTX (cakec --emit ptx, sm_90a) through ptxas, disassembled and counted"""
    cakec = os.environ.get("CAKEC")
    key = (spec["file"], spec.get("set", ""), spec.get("kernel"))
    if not cakec or key in seen:
        return seen.get(key)
    ptx = os.path.join(CACHE, "ours.ptx")
    cub = os.path.join(CACHE, "ours.cubin")
    cmd = [cakec, os.path.normpath(os.path.join(ROOT, "library", spec["file"])), "--target", "sm_90a",
           "--emit", "ptx", "-o", ptx]
    if spec.get("set"):
        cmd += ["--set", spec["set"]]
    if spec.get("kernel"):
        cmd += ["--kernel", spec["kernel"]]
    try:
        subprocess.run(cmd, capture_output=True, timeout=20, check=True)
        r = subprocess.run(["ptxas", "-arch=sm_90a", "-v", ptx, "-o", cub], capture_output=True, text=True,
                           timeout=20, check=True)
        d = sass_of(cub, os.path.join(sass_dir, f"ours_{tag}.sass"))
        d["ptxas"] = " ".join(ln.split(":", 1)[-1].strip() for ln in r.stderr.splitlines() if "Used" in ln)
        d["sass_file"] = f"ours_{tag}.sass"
    except Exception as e:
        d = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
    seen[key] = d
    return d


def main(argv):
    lines_path, out_path, sass_dir = argv[:3]
    budget = float(argv[3]) if len(argv) > 3 else 60.0
    t_end = time.time() + budget
    os.makedirs(sass_dir, exist_ok=True)
    for name in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                 "accumulated_recompile_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 1 << 20)
    try:
        torch._inductor.config.compile_threads = 1
    except Exception:
        pass
    made = Made()
    try:
        import cake
    except Exception as e:   # the peer's side still runs
        print(f"rows2_peer: no cake module ({type(e).__name__}: {e}): the peers only", file=sys.stderr)
        cake = None
    import triton
    print(f"rows2_peer: torch {torch.__version__}, triton {triton.__version__}", file=sys.stderr)
    man = manifest()
    timer = gated.Timer(torch)
    timer.warm(0.5)
    placed = set()
    seen = {}
    out = open(out_path, "a")
    for n_line, line in enumerate(open(lines_path)):
        if not line.strip() or line.startswith("#"):
            continue
        if time.time() > t_end:
            print(f"rows2_peer: out of time before line {n_line + 1}", file=sys.stderr)
            break
        parts = line.split()
        op, shape, variants = parts[0], parts[1], parts[2:]
        s = sweep.parse_shape(shape)
        row = {"op": op, "shape": shape}
        pick = pick_of(op, shape)
        if pick:
            row["pick"] = pick
            variants = [pick] + [v for v in variants if v != pick]
        args = inputs(op, s)
        tag = f"{op}_{shape.replace('=', '').replace(',', '_')}"
        # the peer
        try:
            t0 = time.time()
            g = torch.compile(sweep.fresh(sweep.peer_fns(torch, F)[op], f"r2s{n_line}"), dynamic=False)
            before = len(made.list)
            want = g(*args)
            torch.cuda.synchronize()
            row["compile_s"] = round(time.time() - t0, 2)
            row["peer_kernels"] = [describe(at, sass_dir, f"{tag}_{i}")
                                   for i, at in enumerate(made.list[before:])]
            timed = timer.best(lambda: g(*args), 10)
            mode, best = gated.fastest(timed)
            row["peer_us"] = round(best["median_ms"] * 1e3, 3)
            row["peer_min_us"] = round(best["min_ms"] * 1e3, 3)
            row["peer_mode"] = mode
            row["peer_stream_us"] = round(timed["stream"]["median_ms"] * 1e3, 3)
            row["peer_launches"] = kernels_in(lambda: g(*args))
        except Exception as e:
            row["peer_error"] = f"{type(e).__name__}: {str(e)[:300]}"
            torch.cuda.synchronize()
        ref = reference(op, args)
        # ours, on torch's tensors
        ours = {}
        for v in variants:
            spec = man.get((op, v))
            if cake is None:
                break
            if spec is None or spec.get("launches"):
                ours[v] = {"error": "not a single-launch variant of the manifest"}
                continue
            try:
                params = dict(kv.split("=") for kv in spec.get("set", "").split(",") if kv)
                k = cake.load(os.path.normpath(os.path.join(ROOT, "library", spec["file"])),
                              kernel=spec.get("kernel"), **{a: int(b) for a, b in params.items()})
                call, outs, keep = our_call(op, s, args)
                call(k)
                torch.cuda.synchronize()
                err, ok = close(op, outs, ref)
                timed = timer.best(lambda: call(k), 10, graph=False)   # a capture of cake's launch: untried
                mode, best = gated.fastest(timed)
                ours[v] = {"us": round(best["median_ms"] * 1e3, 3), "min_us": round(best["min_ms"] * 1e3, 3),
                           "mode": mode, "err": err, "ok": ok}
                if op not in placed and op in ("rmsnorm", "layernorm", "fp8_row_quantize"):
                    placed.add(op)
                    for label, gap in (("far_8MiB", 8 << 20), ("near_4KiB", max(4096, ((s["M"] * s["N"] * 2 + 4095) // 4096) * 4096))):
                        c2, o2, keep2 = our_call(op, s, args, place=gap)
                        c2(k)
                        torch.cuda.synchronize()
                        err2, ok2 = close(op, o2, ref)
                        t2 = timer.best(lambda: c2(k), 10, graph=False)
                        m2, b2 = gated.fastest(t2)
                        ours[v]["place_" + label] = {"us": round(b2["median_ms"] * 1e3, 3), "ok": ok2}
                        del keep2
                ours[v]["launch"] = kernels_in(lambda: call(k))
                ours[v]["sass"] = our_sass(spec, sass_dir, f"{op}_{v}", seen)
            except Exception as e:
                ours[v] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
                torch.cuda.synchronize()
        row["ours"] = ours
        out.write(json.dumps(row) + "\n")
        out.flush()
        del args, ref
    out.close()


if __name__ == "__main__":
    main(sys.argv[1:])
