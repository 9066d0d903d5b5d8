"""attnx_peers.py — the attention follow-up (issue 15): decode in ONE launch
(examples/attn_decode_fused.tir: the last block of each KV head merges its splits) beside
the two-launch partial + merge and the fastest of the cuDNN / flash / efficient SDPA
backends, at the library's split count (`ours`) and around it (`best`); and the forward
sweep (48 shapes; without --full the S <= 2048 ones) beside cuDNN and flash SDPA, `ours`
the variant the library's dispatch picks, in one process. Shapes, peers, checks and
timing are attnfwd_peers.py's (imported).

    python3 attnx_peers.py --out FILE.json [--deadline S] [--go FILE] [--full]

--full: the whole forward sweep of attnfwd_peers.py (48 shapes) instead of the losing ones.
Writes FILE.json after every shape and prints the tables last.
"""
import argparse
import json
import math
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnfwd_peers as af  # noqa: E402
import attnbwd_peers as ab  # noqa: E402
import torch  # noqa: E402

T0 = time.time()
# the dense variants per head dim; the first is the default
VARIANTS = {128: [("q2", {"QST": 2}), ("x", {"QST": 2, "FILE": "flash_attn_fwd_ppx"})],
            64: [("q2", {"QST": 2}), ("bn192", {"QST": 2, "BN": 192}), ("x", {"QST": 2, "FILE": "flash_attn_fwd_ppx"}),
                 ("pp3", {"FILE": "flash_attn_fwd_pp3"})]}
# causal only: the pair order (flash_attn_fwd_pp.tir's PAIR = 1: a block takes a head's light
# and heavy tile in turn, heads in order), per head dim
# (round 1 on the H200: the pair order won at D = 128, S <= 4096 and lost at D = 64, where
# p, xp and bn192p were 1-7% slower than q2: D = 64 times p only)
PAIRS = {128: [("p", {"QST": 2, "PAIR": 1}), ("xp", {"QST": 2, "PAIR": 1, "FILE": "flash_attn_fwd_ppx"})],
         64: [("p", {"QST": 2, "PAIR": 1})]}
# ("fr", "fd": RSKIP = 1, the warps of rows past R skip the softmax; fr at every split tried)
# (round 1: RSKIP = 1 was 1-9% slower at every shape and split, DEFER 0 and 1: not timed now)
FUSED = {128: [("fs", {"DEFER": 0}), ("f", {"DEFER": 1})],
         64: [("fs", {"DEFER": 0}), ("f", {"DEFER": 1})]}


def pick(D, c, S, BH):
    """the variant the library's dispatch takes (library/manifest.json's `when` rules of the
    attention_fwd_gqa* ops): `ours` in the table"""
    if D == 128:
        if c:
            return "p" if S <= 4096 else "q2"
        return "x" if S >= 2048 else "q2"
    tiles = BH * -(-S // 192)   # pp3's 192-row tiles
    if (S >= 2048 and tiles >= 256) if c else (S >= 512 and tiles >= 176):
        return "pp3"
    return "bn192" if S > (4096 if c else 2047) else "q2"


def ordered(D, c, S, BH):
    """VARIANTS[D] (and PAIRS[D] when causal) with the dispatch's pick first (dense_case
    times the first as `ours`)"""
    t = pick(D, c, S, BH)
    vs = VARIANTS[D] + (PAIRS[D] if c else [])
    return [v for v in vs if v[0] == t] + [v for v in vs if v[0] != t]


def losing(name, S):
    return isinstance(S, int) and S <= 2048 or name.startswith("varlen_d128_c0")


def ns_rule(BHK, S):
    """the split count the library takes (library/manifest.json's fusedN domains, round 1):
    NS * BHK = 128 blocks, at least 4 tiles a split, a power of two in 4 .. 64"""
    tiles = -(-S // 128)
    n = max(1, min(128 // BHK, tiles // 4))
    p = 4
    while p * 2 <= min(n, 64):
        p *= 2
    return p


def fused_splits(BHK, S):
    """the rule's split, half and twice it, and one wave of 132 blocks exactly"""
    r = ns_rule(BHK, S)
    return sorted({max(1, r // 2), r, r * 2, max(1, 132 // BHK)})


def decode_case(B, H, HKV, S, D):
    dev, bf = "cuda", torch.bfloat16
    G, BHK = H // HKV, B * HKV
    scale = 1.0 / math.sqrt(D)
    q = torch.randn(B, H, 1, D, device=dev, dtype=bf)
    k = torch.randn(B, HKV, S, D, device=dev, dtype=bf)
    v = torch.randn(B, HKV, S, D, device=dev, dtype=bf)
    q3, k3, v3 = q.reshape(BHK, G, D), k.reshape(BHK, S, D), v.reshape(BHK, S, D)
    o = torch.empty(BHK, G, D, device=dev, dtype=bf)
    kx, vx = k.repeat_interleave(G, dim=1), v.repeat_interleave(G, dim=1)
    qg = q.view(B, HKV, G, D).float()
    sc = torch.einsum("bkgd,bksd->bkgs", qg, k.float()) * scale
    ref = torch.einsum("bkgs,bksd->bkgd", torch.softmax(sc, -1), v.float()).reshape(B, H, D)
    del sc, qg
    cn = torch.zeros(BHK, device=dev, dtype=torch.int32)
    tried, cands = {}, []

    def check(tag, fn, ns):
        """checked once here; timed with the peers below (trials A B A B)"""
        o.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        e = ((o.view(B, H, D).float() - ref).norm() / ref.norm()).item()
        e = e if e == e else float("inf")
        ok = e < 1e-2 and int(cn.abs().sum().item()) == 0
        tried[f"{tag}/{ns}"] = {"err": e, "ok": ok}
        cands.append((f"{tag}/{ns}", fn))
        return ok

    keep = []   # the workspaces of every candidate, alive until timed
    for i, (tag, ps) in enumerate(FUSED[D]):
        kf = af.kernel("attn_decode_fused", HD=D, **ps)
        for ns in fused_splits(BHK, S):
            if tag in ("f", "fd") and ns != ns_rule(BHK, S):
                continue      # the other variants at the rule's split only
            op = torch.empty(ns, BHK, G, D, device=dev, dtype=torch.float32)
            lp = torch.empty(ns, BHK, G, 8, device=dev, dtype=torch.float32)
            keep.append((op, lp))
            check(tag, lambda op=op, lp=lp, kf=kf: kf(q3, k3, v3, o, op, lp, cn, scale), ns)
    # the two-launch form at the rule's split and half of it
    kp, km = af.kernel("attn_decode_partial", HD=D), af.kernel("attn_decode_merge", HD=D)
    nsr = ns_rule(BHK, S)
    for ns in sorted({nsr, max(1, nsr // 2)}):
        op = torch.empty(ns, BHK, G, D, device=dev, dtype=torch.float32)
        lp = torch.empty(ns, BHK, G, 8, device=dev, dtype=torch.float32)
        keep.append((op, lp))

        def f2(op=op, lp=lp):
            kp(q3, k3, v3, op, lp, scale)
            km(op, lp, o)
        check("two", f2, ns)
    got = af.best_sdpa(q, k, v, kx, vx, ours=[c for c in cands if tried[c[0]]["ok"]])
    tp, peer_name, ms = got[0], got[1], (got[2] if len(got) > 2 else {})
    for name, t in ms.items():
        tried[name]["ms"] = t
    fused = [(t, n) for n, t in ms.items() if n.startswith("f")]
    two = [t for n, t in ms.items() if n.startswith("two")]
    best = min(fused) if fused else None
    rule = tried.get(f"fs/{nsr}", {})
    d = {"tried": tried, "peer": peer_name, "peer_ms": tp, "ok": best is not None and rule.get("ok", False),
         "two_ms": min(two) if two else None, "best_ms": best[0] if best else None, "best": best[1] if best else None}
    if best and "ms" in rule:
        d.update({"ms": rule["ms"], "splits": f"fs/{nsr}", "err": rule["err"],
                  "ratio": tp / rule["ms"] if tp else None, "ratio_best": tp / best[0] if tp else None,
                  "gbps": 2 * BHK * S * D * 2 / rule["ms"] * 1e-6})
    return d


def decode_table(docs):
    lines = ["| decode (1 row/head) | ours: the library's split | ours ms | best ms (variant/splits) "
             "| two-launch ms | best SDPA | SDPA ms | SDPA/ours | SDPA/best | ours GB/s | of 4.8 TB/s | check |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rs, rb = [], []
    for name, d in docs.items():
        if "ms" not in d:
            lines.append(f"| {name} | {d.get('error', 'missing')[:80]} | | | | | | | | | | |")
            continue
        r, b = d.get("ratio"), d.get("ratio_best")
        if r:
            rs.append(r)
        if b:
            rb.append(b)
        lines.append(f"| {name} | {d['splits']} | {d['ms']:.4f} | {d['best_ms']:.4f} ({d['best']}) | "
                     f"{d.get('two_ms') or 0:.4f} | {d['peer']} | {d['peer_ms'] or 0:.4f} | {r or 0:.3f} | "
                     f"{b or 0:.3f} | {d['gbps']:.0f} | {d['gbps'] / 4800:.2f} | {'ok' if d.get('ok') else 'FAIL'} |")
    lines.append("")
    lines.append(f"decode: {len(rs)} timed, SDPA/ours >= 1.0 at {sum(r >= 1.0 for r in rs)}, geomean {af.gm(rs):.3f}, "
                 f"min {min(rs or [0]):.3f}; SDPA/best >= 1.0 at {sum(r >= 1.0 for r in rb)}, "
                 f"geomean {af.gm(rb):.3f}, min {min(rb or [0]):.3f}")
    return "\n".join(lines)


def precompile(full):
    from concurrent.futures import ThreadPoolExecutor
    jobs = []
    for D in (128, 64):
        for c in (1, 0):
            for _, ps in VARIANTS[D]:
                ps = dict(ps)
                jobs.append((ps.pop("FILE", "flash_attn_fwd_pp"), dict(D=D, CAUSAL=c, **ps)))
            jobs.append(("flash_attn_varlen_fwd", dict(D=D, CAUSAL=c)))
        for _, ps in PAIRS[D]:
            ps = dict(ps)
            jobs.append((ps.pop("FILE", "flash_attn_fwd_pp"), dict(D=D, CAUSAL=1, **ps)))
        jobs += [("attn_decode_fused", dict(HD=D, **ps)) for _, ps in FUSED[D]]
        jobs += [("attn_decode_partial", dict(HD=D)), ("attn_decode_merge", dict(HD=D))]
    bj = []   # the backward's kernels (attnbwd_peers.kern)
    for D in (128, 64):
        bj += [("attn_bwd_prep", dict(HD=D)), ("attn_bwd_prep_zero", dict(HD=D)), ("attn_bwd_dq_convert", dict(HD=D))]
        for c in (0, 1):
            bj += [("attn_bwd", dict(HD=D, CAUSAL=c)), ("attn_bwd", dict(HD=D, CAUSAL=c, LSM=0)),
                   ("attn_bwd_dq", dict(HD=D, CAUSAL=c)), ("attn_bwd_dkdv", dict(HD=D, CAUSAL=c))]
    t0 = time.time()
    with ThreadPoolExecutor(8) as ex:
        futs = [ex.submit(af.kernel, f, **ps) for f, ps in jobs] + [ex.submit(ab.kern, f, **ps) for f, ps in bj]
        errs = [f.exception() for f in futs]
    jobs += bj
    bad = [f"{j[0]} {j[1]}: {e}"[:200] for j, e in zip(jobs, errs) if e]
    print(f"precompiled {len(jobs) - len(bad)} of {len(jobs)} kernels in {time.time() - t0:.1f} s", flush=True)
    for b in bad:
        print("precompile failed:", b, flush=True)


def bwd_cases(deadline):
    """attnbwd_peers' backward shapes (the small ones checked against f32 math too; the
    two-pass kernels beside the fused ones on the first four) until the deadline"""
    cases = [(c, True, True) for c in ab.SMALL] + [(c, False, i < 4) for i, c in enumerate(ab.BWD)]
    for c, math_, two in cases:
        if time.time() - T0 > deadline - 4:
            ab.emit({"kind": "bwd", "shape": str(c), "skipped": "deadline"})
            continue
        try:
            ab.backward_case(*c, check_math=math_, twopass_too=two)
        except Exception as e:  # noqa: BLE001
            ab.emit({"kind": "bwd", "shape": str(c), "ok": False, "error": repr(e)[:300]})
        print("bwd", json.dumps({k: v for k, v in ab.rows[-1].items() if k != "tried"})[:600], flush=True)
        torch.cuda.empty_cache()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=100)
    ap.add_argument("--go", default="")
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--decode-share", type=float, default=0.2)
    ap.add_argument("--bwd-share", type=float, default=0.3)
    ap.add_argument("--no-bwd", action="store_true")
    a = ap.parse_args()
    af.VARIANTS.update(VARIANTS)
    try:
        precompile(a.full)
    except Exception as e:
        print("precompile:", repr(e)[:300], flush=True)
    while a.go and not os.path.exists(a.go) and time.time() - T0 < a.deadline / 2:
        time.sleep(0.2)
    print(f"timings start at {time.time() - T0:.1f} s", flush=True)
    docs, dec = {}, {}

    def save():
        json.dump({"fwd": docs, "decode": dec}, open(a.out, "w"), indent=1)
    # decode first, then the forward shapes, then the backward
    rest = a.deadline - (time.time() - T0)
    dec_end = time.time() - T0 + rest * a.decode_share
    fwd_end = a.deadline - (0 if a.no_bwd else rest * a.bwd_share)
    for B, H, Hkv, S, D in af.DECODE:
        name = f"B={B},H={H},Hkv={Hkv},S={S},D={D}"
        if time.time() - T0 > dec_end:
            dec[name] = {"error": "skipped: out of time"}
            continue
        try:
            d = decode_case(B, H, Hkv, S, D)
        except Exception as e:
            d = {"error": f"{type(e).__name__}: {e}"[:300], "trace": traceback.format_exc()[-1500:]}
        dec[name] = d
        print(name, json.dumps({k: v for k, v in d.items() if k != "trace"}), flush=True)
        save()
        torch.cuda.empty_cache()
    for name, B, H, Hkv, S, D, c in af.shapes():
        if not a.full and not losing(name, S):
            continue
        if time.time() - T0 > fwd_end - 4:
            docs[name] = {"error": "skipped: out of time"}
            continue
        try:
            if not isinstance(S, list):
                af.VARIANTS[D] = ordered(D, c, S, B * H)
            fn = af.varlen_case if isinstance(S, list) else af.dense_case
            d = fn(name, B, H, Hkv, S, D, c)
            if not isinstance(S, list):
                d["ours"] = af.VARIANTS[D][0][0]
        except Exception as e:
            d = {"error": f"{type(e).__name__}: {e}"[:300], "trace": traceback.format_exc()[-1500:]}
        d["flops"] = af.flops_of(B, H, S, D, c)
        docs[name] = d
        print(name, json.dumps({k: v for k, v in d.items() if k != "trace"}), flush=True)
        save()
        torch.cuda.empty_cache()
    if not a.no_bwd:
        bwd_cases(a.deadline)
    print(af.ops_check())
    print(decode_table(dec))
    print()
    print(af.table(docs))
    print("ours = the dispatch's pick: " + ", ".join(f"{n} {d.get('ours', '-')}" for n, d in docs.items()))
    if not a.no_bwd:
        print()
        ab.table()


if __name__ == "__main__":
    main()
