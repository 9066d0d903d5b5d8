"""afwd2_peers.py — candidate variants of the attention forward and decode (issue 15) at the
shapes that lost to cuDNN in the last acceptance call and at a few that won, beside cuDNN
and flash SDPA (forward) and the fastest SDPA backend (decode), in one process.

Forward: every shape times the dispatch's pick (`ours`, attnx_peers.pick: what
run_attnx.sh times) and the candidates of CANDS: exp2.fma for EMU of every 8 column chunks
of S_j (flash_attn_fwd_pp.tir's EMU: the D = 64 kernel is bound by the exp2 unit) on the
q2, bn192, pair and chained forms, and (causal) flash_attn_fwd_ppx.tir's DIAG = 1 (warpgroup
0's diagonal block at N = 64) and 2 (its softmax too);
D = 128 non-causal at BN = 160 (QST = 1). Decode: the fused one-launch kernel at the library's
split (ns_rule) in its old form (fs), with the two-pass merge (MERGE = 1: fm) and with
exp2.fma in the consumer's softmax (EMU = 2, 4), and the two-pass merge at half and twice
the split. Checks and timing are attnfwd_peers.py's (imported): every timed kernel checked
against cuDNN and f32 math (forward) or f32 math (decode); gated.py's method, trials A B A B.

    python3 afwd2_peers.py --out FILE.json [--deadline S] [--go FILE] [--decode-share F]

Writes FILE.json after every shape and prints the compact tables last.
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
import attnx_peers as ax  # noqa: E402
import torch  # noqa: E402

T0 = time.time()
PP, PX = "flash_attn_fwd_pp", "flash_attn_fwd_ppx"
# every forward variant: tag -> (file, parameters without D and CAUSAL)
FWD = {"q2": (PP, {"QST": 2}), "x": (PX, {"QST": 2}), "bn192": (PP, {"QST": 2, "BN": 192}),
       "p": (PP, {"QST": 2, "PAIR": 1}), "xp": (PX, {"QST": 2, "PAIR": 1})}
for e in (1, 2, 3, 4):
    FWD[f"q2e{e}"] = (PP, {"QST": 2, "EMU": e})
for e in (2, 3, 4):
    FWD[f"bn192e{e}"] = (PP, {"QST": 2, "BN": 192, "EMU": e})
    FWD[f"xe{e}"] = (PX, {"QST": 2, "EMU": e})
FWD["pe2"] = (PP, {"QST": 2, "PAIR": 1, "EMU": 2})
# D = 128 non-causal: KV blocks of 160 keys (Q one stage: 32 + 2 x 40 + 2 x 40 + 32 = 224 KiB)
FWD["bn160"] = (PP, {"QST": 1, "BN": 160})
FWD["xbn160"] = (PX, {"QST": 1, "BN": 160})
# DIAG = 1 (flash_attn_fwd_ppx.tir): warpgroup 0's diagonal block at N = 64 / K = 64
FWD["xd"] = (PX, {"QST": 2, "DIAG": 1})
FWD["xpd"] = (PX, {"QST": 2, "PAIR": 1, "DIAG": 1})
FWD["xde2"] = (PX, {"QST": 2, "DIAG": 1, "EMU": 2})
FWD["xde3"] = (PX, {"QST": 2, "DIAG": 1, "EMU": 3})
# DIAG = 2: also the softmax of warpgroup 0's diagonal block on its 64 visible columns
FWD["xd2"] = (PX, {"QST": 2, "DIAG": 2})
FWD["xd2e2"] = (PX, {"QST": 2, "DIAG": 2, "EMU": 2})
FWD["xpd2"] = (PX, {"QST": 2, "PAIR": 1, "DIAG": 2})
FWD["xpe2"] = (PX, {"QST": 2, "PAIR": 1, "EMU": 2})
# the candidates per (D, causal), beside the dispatch's pick
# (D = 64, per KV block and SM sub-partition: 1024 cycles of the exp2 unit (2 warps x 64 exp2
# x 8 cycles), 1024 of the tensor cores, ~400 of FMA/ALU; EMU = 2 moves a quarter of the
# exp2 to ~11 FMA-pipe instructions each: 768 / 1024 / ~750)
CANDS = {(64, 0): ["q2", "q2e2", "q2e3", "q2e4", "bn192", "bn192e2", "bn192e3", "xe2"],
         (64, 1): ["q2", "q2e2", "q2e3", "q2e4", "bn192e2", "x", "xd", "xde2", "xd2", "xd2e2"],
         (128, 0): ["q2", "x", "q2e1", "bn160", "xbn160"],
         (128, 1): ["p", "xp", "q2", "x", "xd", "xpd", "xpd2"]}
# the shapes: the losers of the last acceptance call first, then a few winners
LOSERS = ["d64_c1_b16h16k16_s512", "d64_c1_b8h32k32_s1000", "d64_c1_b8h32k8_s2048", "d64_c1_b4h32k32_s1024",
          "d64_c0_b16h16k16_s512", "d64_c0_b4h32k32_s1024", "d64_c0_b8h32k8_s2048", "d64_c0_b2h32k32_s4096",
          "d64_c0_b2h32k4_s4096", "d64_c1_b1h8k8_s1537", "d64_c1_b2h32k32_s4096", "d64_c1_b2h32k4_s4096",
          "d64_c0_b1h32k32_s8192", "d128_c1_b16h16k16_s512", "d128_c1_b8h32k32_s1000", "d128_c0_b16h16k16_s512",
          "d128_c0_b4h32k32_s1024", "d128_c1_b8h32k8_s2048", "d128_c0_b2h32k32_s4096", "d128_c1_b1h32k32_s8192",
          "d128_c1_b4h32k32_s1024"]
WINNERS = ["d64_c1_b1h16k16_s16384", "d64_c0_b4h8k8_s3000", "d64_c1_b4h8k8_s3000", "d64_c0_b8h32k32_s1000",
           "d128_c0_b1h32k32_s8192", "d128_c1_b2h16k2_s5000"]
# decode candidates: tag -> (parameters, split multiplier of the rule's)
DEC = {"fs": ({"DEFER": 0, "MERGE": 0}, 1), "fm": ({"DEFER": 0, "MERGE": 1}, 1), "fme2": ({"DEFER": 0, "MERGE": 1, "EMU": 2}, 1),
       "fme4": ({"DEFER": 0, "MERGE": 1, "EMU": 4}, 1), "fm/x2": ({"DEFER": 0, "MERGE": 1}, 2),
       "fm/h": ({"DEFER": 0, "MERGE": 1}, 0.5), "fdm": ({"DEFER": 1, "MERGE": 1}, 1)}


def fwd_kernels():
    out = set()
    for (D, c), tags in CANDS.items():
        for t in tags + [ax.pick(D, c, 4096 if c else 1024, 64), ax.pick(D, c, 1024, 64), ax.pick(D, c, 8192, 64)]:
            f, ps = FWD[t]
            out.add((f, tuple(sorted(dict(D=D, CAUSAL=c, **ps).items()))))
    return sorted(out)


def precompile():
    from concurrent.futures import ThreadPoolExecutor
    jobs = [(f, dict(ps)) for f, ps in fwd_kernels()]
    jobs += [("attn_decode_fused", dict(HD=D, **ps)) for D in (128, 64) for ps, _ in DEC.values()]
    jobs = list({(f, tuple(sorted(p.items()))): (f, p) for f, p in jobs}.values())
    t0 = time.time()
    with ThreadPoolExecutor(12) as ex:
        futs = [ex.submit(af.kernel, f, **ps) for f, ps in jobs]
        errs = [f.exception() for f in futs]
    bad = [f"{j[0]} {j[1]}: {e}"[:200] for j, e in zip(jobs, errs) if e]
    print(f"precompiled {len(jobs) - len(bad)} of {len(jobs)} kernels in {time.time() - t0:.1f} s", flush=True)
    for b in bad:
        print("precompile failed:", b, flush=True)


def decode_case(B, H, HKV, S, D):
    """every DEC candidate checked once against f32 math, then timed beside the SDPA
    backends in the same trials (attnfwd_peers.best_sdpa)"""
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
    nsr = ax.ns_rule(BHK, S)
    tried, cands, keep = {}, [], []
    for tag, (ps, mult) in DEC.items():
        ns = max(1, int(nsr * mult))
        kf = af.kernel("attn_decode_fused", HD=D, **ps)
        if f"{tag.split('/')[0]}/{ns}" in tried:
            continue                  # the same kernel and split under another tag
        op = torch.empty(ns, BHK, G, D, device=dev, dtype=torch.float32)
        lp = torch.empty(ns, BHK, G, 8, device=dev, dtype=torch.float32)
        keep.append((op, lp))
        fn = (lambda op=op, lp=lp, kf=kf: kf(q3, k3, v3, o, op, lp, cn, scale))
        o.fill_(float("nan"))
        fn()
        torch.cuda.synchronize()
        e = ((o.view(B, H, D).float() - ref).norm() / ref.norm()).item()
        e = e if e == e else float("inf")
        name = f"{tag.split('/')[0]}/{ns}"
        tried[name] = {"err": e, "ok": e < 1e-2 and int(cn.abs().sum().item()) == 0}
        if tried[name]["ok"]:
            cands.append((name, fn))
    tp, peer, ms = af.best_sdpa(q, k, v, kx, vx, ours=cands)
    for n, t in ms.items():
        tried[n]["ms"] = t
    return {"peer": peer, "peer_ms": tp, "rule": nsr, "tried": tried,
            "ok": all(t["ok"] for t in tried.values())}


def fwd_case(name, B, H, Hkv, S, D, c):
    pick = ax.pick(D, c, S, B * H)
    tags = [pick] + [t for t in CANDS[(D, c)] if t != pick]
    af.VARIANTS[D] = [(t, dict(FWD[t][1], FILE=FWD[t][0])) for t in tags]
    d = af.dense_case(name, B, H, Hkv, S, D, c)
    d["ours"] = pick
    return d


def tables(fwd, dec):
    out = ["| decode | SDPA ms (peer) | " + " | ".join(DEC) + " | check |", "|---" * (len(DEC) + 3) + "|"]
    best = {}
    for name, d in dec.items():
        if "tried" not in d:
            out.append(f"| {name} | {d.get('error', '?')[:100]} |")
            continue
        cells = []
        for tag in DEC:
            hit = [(n, t) for n, t in d["tried"].items() if n.split("/")[0] == tag.split("/")[0]
                   and int(n.split("/")[1]) == max(1, int(d["rule"] * DEC[tag][1]))]
            if hit and "ms" in hit[0][1]:
                r = d["peer_ms"] / hit[0][1]["ms"]
                best.setdefault(tag, []).append(r)
                cells.append(f"{r:.3f} ({hit[0][0].split('/')[1]})")
            else:
                cells.append("-" if not hit else ("FAIL" if not hit[0][1]["ok"] else "?"))
        out.append(f"| {name} | {d['peer_ms'] or 0:.4f} ({d['peer']}) | " + " | ".join(cells) +
                   f" | {'ok' if d['ok'] else 'FAIL'} |")
    out.append("decode SDPA/candidate geomean: " + ", ".join(f"{t} {af.gm(v):.3f} (>=1.0 at {sum(x >= 1 for x in v)}/{len(v)})"
                                                         for t, v in best.items()))
    out.append("")
    out.append("| shape | cuDNN ms | flash ms | ours (pick) cuDNN/ours | best (cuDNN/best) | cuDNN / each candidate | check |")
    out.append("|---|---|---|---|---|---|---|")
    per, rc, rb = {}, [], []
    for name, d in fwd.items():
        if "cudnn_ms" not in d:
            out.append(f"| {name} | {d.get('error', '?')[:100]} |")
            continue
        cu = d["cudnn_ms"]
        vs = d.get("variants", {})
        each = " ".join(f"{t}:{cu / v['ms']:.3f}" for t, v in vs.items() if v.get("ms"))
        for t, v in vs.items():
            if v.get("ms") and v.get("ok"):
                per.setdefault(("_".join(name.split("_")[:2]), t), []).append(cu / v["ms"])
        rc.append(cu / d["ours_ms"])
        rb.append(cu / d.get("best_ms", d["ours_ms"]))
        bad = [t for t, v in vs.items() if not v.get("ok")]
        out.append(f"| {name} | {cu:.4f} | {d['flash_ms']:.4f} | {d['ours']} {cu / d['ours_ms']:.3f} | "
                   f"{d.get('best', '-')} {rb[-1]:.3f} | {each} | {'ok' if not bad else 'FAIL ' + ','.join(bad)} |")
    out.append(f"forward: {len(rc)} shapes; cuDNN/ours >= 1.05 at {sum(r >= 1.05 for r in rc)}, geomean {af.gm(rc):.3f}; "
               f"cuDNN/best >= 1.05 at {sum(r >= 1.05 for r in rb)}, geomean {af.gm(rb):.3f}")
    out.append("per (head dim, causal) and candidate, geomean cuDNN/candidate: " +
               "; ".join(f"{k[0]} {k[1]} {af.gm(v):.3f} (n={len(v)})" for k, v in sorted(per.items())))
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=130)
    ap.add_argument("--go", default="")
    ap.add_argument("--decode-share", type=float, default=0.22)
    a = ap.parse_args()
    try:
        precompile()
    except Exception as e:  # noqa: BLE001
        print("precompile:", repr(e)[:300], flush=True)
    while a.go and not os.path.exists(a.go) and time.time() - T0 < a.deadline / 2:
        time.sleep(0.2)
    print(f"timings start at {time.time() - T0:.1f} s", flush=True)
    fwd, dec = {}, {}

    def save():
        json.dump({"fwd": fwd, "decode": dec}, open(a.out, "w"), indent=1)
    dec_end = time.time() - T0 + (a.deadline - (time.time() - T0)) * a.decode_share
    for B, H, Hkv, S, D in af.DECODE:
        name = f"B={B},H={H},Hkv={Hkv},S={S},D={D}"
        if time.time() - T0 > dec_end:
            dec[name] = {"error": "skipped: out of time"}
            continue
        try:
            dec[name] = decode_case(B, H, Hkv, S, D)
        except Exception as e:  # noqa: BLE001
            dec[name] = {"error": f"{type(e).__name__}: {e}"[:300], "trace": traceback.format_exc()[-1500:]}
        print(name, json.dumps({k: v for k, v in dec[name].items() if k != "trace"}), flush=True)
        save()
        torch.cuda.empty_cache()
    shapes = {s[0]: s for s in af.shapes()}
    for name in LOSERS + WINNERS:
        if time.time() - T0 > a.deadline - 6:           # a shape takes up to ~4 s
            fwd[name] = {"error": "skipped: out of time"}
            continue
        try:
            d = fwd_case(*shapes[name])
        except Exception as e:  # noqa: BLE001
            d = {"error": f"{type(e).__name__}: {e}"[:300], "trace": traceback.format_exc()[-1500:]}
        fwd[name] = d
        print(name, json.dumps({k: v for k, v in d.items() if k != "trace"})[:1500], flush=True)
        save()
        torch.cuda.empty_cache()
    print("== tables")
    print(tables(fwd, dec))


if __name__ == "__main__":
    main()
