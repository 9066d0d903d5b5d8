#!/usr/bin/env python3
"""measure.py — times the cost model's calibration cases (bench/cost/cases.tsv) on
the GPU in one process: every (kernel, params) is compiled once with `cake.load`,
then at each of its shapes the inputs are drawn (seeded, never zeros), the kernel is
checked against a torch reference of its op (the kernel's own `reference` block
restated; REFS below) and timed: 2 warm-up launches, then RUNS launches each after an
L2 flush (a 256 MiB write), median of the device-event times — the method of
`cakec run --bench`.

One JSON line per case is appended to $OUT/measured.jsonl (split, family, file, kernel,
set, shape, meas_ms, check, registers) as soon as it is measured, so a process that
is stopped (a hang: the watchdog exits it after CASE_S seconds) keeps what it had;
run_cost.sh starts it again with --skip-done. $OUT/progress.txt names the case
running.

    python3 bench/cost/measure.py [--cases bench/cost/cases.tsv] [--runs 10]
        [--deadline S] [--skip-done] [--dry]
--dry: no GPU, no torch: lists the cases and the tensors they would allocate.
"""
import argparse
import faulthandler
import json
import os
import re
import statistics
import sys
import time

T0 = time.time()
CASE_S = 20.0


def cdiv(a, b):
    return -(-a // b)


def read_cases(path):
    """[(split, family, file, kernel|None, set|None, shape)]: every line's first shape
    (in file order), then every line's second, ...: a call cut short by its deadline
    loses shapes, not whole families"""
    out = []
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        split, fam, f, k, st, shapes = line.rstrip("\n").split("\t")
        for i, sh in enumerate(shapes.split(";")):
            out.append((i, len(out), (split, fam, f, None if k == "-" else k, None if st == "-" else st, sh)))
    return [c for _, _, c in sorted(out)]


def kv(text):
    d = {}
    for part in (text or "").split(","):
        if part:
            n, v = part.split("=")
            d[n.strip()] = int(v)
    return d


ARG = re.compile(r"global\s+(\w+)\s*\[(.*?)\](.*)")


def arg_specs(args, env):
    """[(name, dtype or scalar type, extents or None, values range or None)]"""
    out = []
    for name, ty in args:
        m = ARG.match(ty)
        if not m:
            out.append((name, ty.strip(), None, None))
            continue
        ext = [int(eval(e, {"cdiv": cdiv, "min": min, "max": max}, dict(env))) for e in m.group(2).split(",")]
        vr = re.search(r"values\s+(\S+)\s*\.\.\s*(\S+)", m.group(3))
        rng = (int(eval(vr.group(1), {}, dict(env))), int(eval(vr.group(2), {}, dict(env)))) if vr else None
        if re.search(r"\bworkspace\b", m.group(3)):
            rng = "zero"   # the caller passes it zero-filled (docs/tir.md 4.2)
        out.append((name, m.group(1), ext, rng))
    return out


SCALARS = {"eps": 1e-5, "sm_scale": None, "scale_a": 1.0, "scale_b": 1.0}


# ---- references: op semantics in torch (f32), per kernel name -----------------------------

def _gemm(t):
    return t["A"].float() @ t["B"].float().T


def _rms(h, w, eps):
    return h * torch.rsqrt((h * h).mean(1, keepdim=True) + eps) * w.float()


def _ref_add_rmsnorm(t, p, e):
    h = t["x"].float() + t["res"].float()
    return {"h": h, "y": _rms(h, t["w"], 1e-5)}


def _ref_rowstats(t, p, e):
    x = t["x"].float()
    mu = x.mean(1)
    return {"mean": mu, "rstd": torch.rsqrt(((x - mu[:, None]) ** 2).mean(1) + 1e-5)}


def _gelu(x):
    x = x.float()
    return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x ** 3)))


def _ref_splitk(t, p, e):
    K, S = e["K"], p["SPLIT"]
    kt = cdiv(K, 64)
    out = []
    for s in range(S):
        k0, k1 = s * kt // S * 64, min(K, (s + 1) * kt // S * 64)
        out.append(t["A"][:, k0:k1].float() @ t["B"][:, k0:k1].float().T)
    return {"P": torch.stack(out)}


def _ref_attn(t, p, e):
    q, k, v = (t[n].float() for n in "QKV")
    s = (q @ k.transpose(1, 2)) * t["sm_scale"]
    if p.get("CAUSAL"):
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, device=s.device, dtype=torch.bool).triu(1), float("-inf"))
    return {"O": torch.softmax(s, -1) @ v}


def _ref_attn_gqa(t, p, e):
    """O only (L, the log-sum-exp, is the backward's): K and V shared by BH / BHK query heads"""
    g = t["Q"].shape[0] // t["K"].shape[0]
    kv = {n: t[n].repeat_interleave(g, 0) for n in "KV"}
    return _ref_attn({"Q": t["Q"], "K": kv["K"], "V": kv["V"], "sm_scale": t["sm_scale"]}, p, e)


def _ref_layernorm(t, p, e):
    x = t["x"].float()
    mu = x.mean(1, keepdim=True)
    var = ((x - mu) ** 2).mean(1, keepdim=True)
    return {"y": (x - mu) * torch.rsqrt(var + 1e-5) * t["w"].float() + t["b"].float()}


def _ref_layernorm_stats(t, p, e):
    x = t["x"].float()
    mu = x.mean(1, keepdim=True)
    r = torch.rsqrt(((x - mu) ** 2).mean(1, keepdim=True) + 1e-5)
    return {"y": (x - mu) * r * t["w"].float() + t["b"].float(), "mean": mu[:, 0], "rstd": r[:, 0]}


# outputs a kernel accumulates into (`+=`): zero before the checked launch
ZERO_OUT = {"colsum_atomic": ("y",), "gemm_splitk_tma_add": ("C",)}


def _ref_xent(t, p, e):
    x = t["logits"]
    return {"loss": torch.logsumexp(x, 1) - x.gather(1, t["target"].long()[:, None])[:, 0]}


REFS = {
    "rowsum_block": lambda t, p, e: {"y": t["x"].float().sum(1)},
    "rowsum_warp": lambda t, p, e: {"y": t["x"].float().sum(1)},
    "rowsum_lanes": lambda t, p, e: {"y": t["x"].float().sum(1)},
    "rowstats_block": _ref_rowstats,
    "rowstats_warp": _ref_rowstats,
    "add_rmsnorm_block": _ref_add_rmsnorm,
    "add_rmsnorm_warp": _ref_add_rmsnorm,
    "scale_odd_2d": lambda t, p, e: {"y": t["x"] * t["s"][:, None] + t["b"][None, :]},
    "scale_odd_row": lambda t, p, e: {"y": t["x"] * t["s"][:, None] + t["b"][None, :]},
    "scale_odd_flat": lambda t, p, e: {"y": t["x"] * t["s"][:, None] + t["b"][None, :]},
    "gelu_vec": lambda t, p, e: {"y": _gelu(t["x"])},
    "gelu_scalar": lambda t, p, e: {"y": _gelu(t["x"])},
    "lse_block": lambda t, p, e: {"lse": torch.logsumexp(t["x"], 1)},
    "lse_warp": lambda t, p, e: {"lse": torch.logsumexp(t["x"], 1)},
    "softmax_odd": lambda t, p, e: {"y": torch.softmax(t["x"], 1)},
    "colsum": lambda t, p, e: {"y": t["x"].sum(0)},
    "dot_rows": lambda t, p, e: {"y": (t["a"].float() * t["b"].float()).sum(1)},
    "bias_gelu_2d": lambda t, p, e: {"y": _gelu(t["x"].float() + t["bias"].float())},
    "transpose_naive": lambda t, p, e: {"y": t["x"].T},
    "stride_sum": lambda t, p, e: {"y": t["x"].float().sum(1)},
    # the kernels written outside the project (tests/outside/kernels), split "outside"
    "add_rmsnorm": _ref_add_rmsnorm,
    "layernorm_stats": _ref_layernorm_stats,
    "topk_rows": lambda t, p, e: (lambda v: {"vals": v.values, "idx": v.indices.int()})(
        torch.topk(t["x"].float(), p["K"], dim=1)),
    "colsum_atomic": lambda t, p, e: {"y": t["x"].sum(0)},
    "gemm_rowscale": lambda t, p, e: {"C": _gemm(t) * t["scale"][:, None]},
    "gemm_splitk_tma_add": lambda t, p, e: {"C": _gemm(t)},
    "gemm_splitk_persistent": lambda t, p, e: {"C": _gemm(t)},
    "stride_fill": lambda t, p, e: {"y": t["x"][:, None].expand(-1, e["S"])},
    "sum_partials": lambda t, p, e: {"C": t["P"].sum(0)},
    "gemm_pingpong": lambda t, p, e: {"C": _gemm(t)},
    "gemm_2out": lambda t, p, e: (lambda c: {"C": c, "D": c * torch.sigmoid(c)})(_gemm(t)),
    "gemm_rowmax": lambda t, p, e: {"y": _gemm(t).max(1).values[:, None].expand(-1, p["BN"])},
    "gemm_splitk2": _ref_splitk,
    "gemm_splitk_partial": _ref_splitk,
    "gemm_sm90": lambda t, p, e: {"C": _gemm(t)},
    "gemm_sm90_persistent": lambda t, p, e: {"C": _gemm(t)},
    "gemm_persistent": lambda t, p, e: {"C": _gemm(t)},
    "gemm_bias_act": lambda t, p, e: (lambda c: {"C": c * torch.sigmoid(c)})(_gemm(t) + t["bias"]),
    "flash_attn_fwd_d64": _ref_attn,
    "flash_attn_fwd": _ref_attn,
    "flash_attn_fwd_pp": _ref_attn_gqa,
    "gemm_gemv": lambda t, p, e: {"C": _gemm(t)},
    "rmsnorm_warp_ragged": lambda t, p, e: {"y": _rms(t["x"].float(), t["w"], 1e-5)},
    "layernorm_warp_ragged": _ref_layernorm,
    "softmax_warp_ragged": lambda t, p, e: {"y": torch.softmax(t["x"], 1)},
    "copy": lambda t, p, e: {"dst": t["src"]},
    "vector_add": lambda t, p, e: {"z": t["x"] + t["y"]},
    "rmsnorm": lambda t, p, e: {"y": _rms(t["x"].float(), t["w"], 1e-5)},
    "rmsnorm_warp": lambda t, p, e: {"y": _rms(t["x"].float(), t["w"], 1e-5)},
    "rmsnorm_block": lambda t, p, e: {"y": _rms(t["x"].float(), t["w"], 1e-5)},
    "layernorm": _ref_layernorm,
    "layernorm_warp": _ref_layernorm,
    "softmax": lambda t, p, e: {"y": torch.softmax(t["x"], 1)},
    "softmax_warp": lambda t, p, e: {"y": torch.softmax(t["x"], 1)},
    "softmax_online": lambda t, p, e: {"y": torch.softmax(t["x"], 1)},
    "softmax_block": lambda t, p, e: {"y": torch.softmax(t["x"], 1)},
    "cross_entropy": _ref_xent,
}
TOL = {"bf16": 2e-2, "f32": 2e-3}

# the peer: torch's own op for the family, timed once per family and shape on the
# case's inputs (bf16 GEMMs through cuBLAS, eager reductions and elementwise ops)
PEERS = {
    "gemm": lambda t: t["A"] @ t["B"].T,
    "gemm_pp": lambda t: t["A"] @ t["B"].T,
    "gemm_2out": lambda t: (lambda c: (c, torch.nn.functional.silu(c)))(t["A"] @ t["B"].T),
    "gemm_rowmax": lambda t: (t["A"] @ t["B"].T).amax(1),
    "splitk": lambda t: t["A"] @ t["B"].T,
    "rowsum": lambda t: t["x"].sum(1, dtype=torch.float32),
    "rowstats": lambda t: torch.var_mean(t["x"].float(), 1),
    "add_rmsnorm": lambda t: (lambda h: torch.nn.functional.rms_norm(h, h.shape[-1:], t["w"], 1e-5))(t["x"] + t["res"]),
    "scale_odd": lambda t: torch.addcmul(t["b"][None, :], t["x"], t["s"][:, None]),
    "gelu": lambda t: torch.nn.functional.gelu(t["x"], approximate="tanh"),
    "lse": lambda t: torch.logsumexp(t["x"], 1),
    "softmax_odd": lambda t: torch.softmax(t["x"], 1),
    "softmax": lambda t: torch.softmax(t["x"], 1),
    "colsum": lambda t: t["x"].sum(0),
    "dot_rows": lambda t: (t["a"] * t["b"]).sum(1, dtype=torch.float32),
    "bias_gelu": lambda t: torch.nn.functional.gelu(t["x"] + t["bias"], approximate="tanh"),
    "transpose": lambda t: t["x"].T.contiguous(),
    "sum_partials": lambda t: t["P"].sum(0).bfloat16(),
    "rmsnorm": lambda t: torch.nn.functional.rms_norm(t["x"], t["x"].shape[-1:], t["w"], 1e-5),
    "copy": lambda t: t[next(iter(t))].clone(),
    "gemm_stages": lambda t: t["A"] @ t["B"].T,
    "gemm_waves": lambda t: t["A"] @ t["B"].T,
    "gemm_tiles": lambda t: t["A"] @ t["B"].T,
    "rms_threads": lambda t: torch.nn.functional.rms_norm(t["x"], t["x"].shape[-1:], t["w"], 1e-5),
    "smx_threads": lambda t: torch.softmax(t["x"], 1),
    "gemv": lambda t: t["A"] @ t["B"].T,
    "attn_pp": lambda t: torch.nn.functional.scaled_dot_product_attention(
        t["Q"][None], t["K"][None], t["V"][None], scale=t["sm_scale"], enable_gqa=True),
    "attn_stages": lambda t: torch.nn.functional.scaled_dot_product_attention(
        t["Q"][:, None], t["K"][:, None], t["V"][:, None], scale=t["sm_scale"]),
}


def compare(got, want, dt):
    """max |got - want| / max |want| (NaN fails), against the dtype's tolerance"""
    if got.dtype == getattr(torch, "uint32", None):   # no float conversion of uint32: compare the bits
        got, want = got.view(torch.int32), want.view(torch.int32)
    g, w = got.float(), want.float().to(got.device)
    if not torch.isfinite(g).all():
        return False, "non-finite output"
    err = (g - w).abs().max().item() / max(w.abs().max().item(), 1e-6)
    tol = TOL.get(dt, 2e-2)
    return err <= tol, "max rel err %.2e (tol %.0e)" % (err, tol)


# ---- the device part ------------------------------------------------------------------------

DT = {}


def make(specs, env, st):
    t = {}
    g = torch.Generator(device="cuda").manual_seed(1)
    for name, ty, ext, rng in specs:
        if ext is None:
            if name in SCALARS:
                v = SCALARS[name]
                t[name] = v if v is not None else 1.0 / (env.get("D", 64) ** 0.5)
            elif ty.startswith(("i", "u")):
                t[name] = env[name]
            else:
                t[name] = 0.5
            continue
        if rng == "zero":
            t[name] = torch.zeros(ext, device="cuda", dtype=DT[ty])
        elif rng:
            t[name] = torch.randint(rng[0], rng[1], ext, device="cuda", generator=g, dtype=DT[ty])
        elif ty.startswith(("u", "i")):
            t[name] = torch.randint(1, 1 << 20, ext, device="cuda", generator=g, dtype=torch.int32).view(DT[ty])
        else:
            x = torch.randn(ext, device="cuda", generator=g, dtype=torch.float32)
            x = torch.where(x == 0, torch.full_like(x, 0.5), x) * (0.25 if "A" in name or "B" in name else 1.0)
            t[name] = x.to(DT[ty])
    return t


def bench(k, call, runs, flush):
    """median ms of k(*call) over `runs` launches, the L2 flushed before each"""
    for _ in range(2):
        k(*call)
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(runs)]
    for a, b in ev:
        flush.zero_()
        a.record()
        k(*call)
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev)


def main():
    global torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="bench/cost/cases.tsv")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--deadline", type=float, default=50)
    ap.add_argument("--skip-done", action="store_true")
    ap.add_argument("--dry", action="store_true")
    a = ap.parse_args()
    out = os.environ.get("OUT", "/tmp/cake-out")
    os.makedirs(out, exist_ok=True)
    res_path, prog_path = os.path.join(out, "measured.jsonl"), os.path.join(out, "progress.txt")
    done = set()
    if a.skip_done and os.path.exists(res_path):
        for line in open(res_path):
            r = json.loads(line)
            done.add((r["file"], r["kernel_arg"], r["set"], r["shape"]))
    cases = read_cases(a.cases)
    if a.dry:
        import cake
        for split, fam, f, kn, st, sh in cases:
            k = cake.load(f, kernel=kn, target="sm_90a", **kv(st))
            env = dict(k.params, **kv(sh))
            print(split, fam, k.name, st or "-", sh, [(n, ty, ext) for n, ty, ext, _ in arg_specs(k.args, env)])
        return
    import torch as _t
    torch = _t
    import cake
    DT.update({"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "i32": torch.int32,
               "u32": getattr(torch, "uint32", torch.int32), "e4m3": torch.float8_e4m3fn})
    flush = torch.empty(64 << 20, dtype=torch.float32, device="cuda")
    loaded = {}
    peered = set()
    for split, fam, f, kn, st, sh in cases:
        key = (f, kn or "-", st or "-", sh)
        if key in done:
            continue
        if time.time() - T0 > a.deadline:
            print("measure.py: deadline, %s %s %s not measured" % (f, st or "-", sh), flush=True)
            continue
        with open(prog_path, "w") as p:
            p.write(json.dumps({"file": f, "kernel_arg": kn or "-", "set": st or "-", "shape": sh}) + "\n")
        faulthandler.dump_traceback_later(CASE_S, exit=True)
        r = {"split": split, "family": fam, "file": f, "kernel_arg": kn or "-", "set": st or "-", "shape": sh}
        t1 = time.time()
        try:
            lk = (f, kn, st)
            if lk not in loaded:
                loaded[lk] = cake.load(f, kernel=kn, target="sm_90a", **kv(st))
            k = loaded[lk]
            r["kernel"] = k.name
            env = dict(k.params, **kv(sh))
            specs = arg_specs(k.args, env)
            t = make(specs, env, st)
            call = [t[n] for n, _, _, _ in specs]
            for n in ZERO_OUT.get(k.name, ()):
                t[n].zero_()
            k(*call)
            torch.cuda.synchronize()
            ref = REFS.get(k.name)
            if ref:
                want = ref(t, env, env)
                oks, msgs = [], []
                for n, w in want.items():
                    dt = next(ty for nn, ty, _, _ in specs if nn == n)
                    ok, msg = compare(t[n], w, dt)
                    oks.append(ok)
                    msgs.append("%s: %s" % (n, msg))
                r["check"] = "ok" if all(oks) else "FAIL"
                r["check_detail"] = "; ".join(msgs)
            else:
                r["check"] = "none"
            r["meas_ms"] = bench(k, call, a.runs, flush)
            r["registers"] = k.func_info if hasattr(k, "func_info") else None
            pk = (fam, sh)
            if fam in PEERS and pk not in peered and time.time() - T0 < a.deadline - 5:
                peered.add(pk)
                try:
                    r["peer_ms"] = bench(lambda: PEERS[fam](t), [], a.runs, flush)
                except Exception as e:   # a peer that fails is reported, the case stays
                    r["peer_error"] = str(e)[:200]
            del t, call
        except Exception as e:  # one case's failure is recorded, the next runs
            r["error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
        faulthandler.cancel_dump_traceback_later()
        r["wall_s"] = round(time.time() - t1, 2)
        broken = False
        if "error" in r:   # a fault poisons the context: record it, exit, run_cost.sh starts again
            try:
                torch.cuda.synchronize()
            except Exception as e:
                broken = True
                r["error"] += " (the device context is broken: %s)" % str(e)[:100]
        with open(res_path, "a") as fo:
            fo.write(json.dumps(r, default=str) + "\n")
        if broken:
            os.remove(prog_path)
            sys.exit(3)
        print("%-8s %-12s %-20s %-18s %-24s %s %s" % (split, fam, r.get("kernel", "?"), st or "-", sh,
              "%.4f ms" % r["meas_ms"] if "meas_ms" in r else r.get("error", ""), r.get("check", "")),
              flush=True)
    os.remove(prog_path) if os.path.exists(prog_path) else None


if __name__ == "__main__":
    main()
