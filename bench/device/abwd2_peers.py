"""abwd2_peers.py — the attention backward's schedule candidates beside cuDNN SDPA backward
(run_abwd2.sh runs it): attnbwd_peers.backward_case with its own ALT points, so every
candidate is the whole three-launch sequence (attn_bwd_prep_zero + attn_bwd +
attn_bwd_dq_convert), timed by gated.py's method (cold L2, device work only, trials
A B A B) in the same call as cuDNN's backward through autograd, its dQ, dK, dV checked
against cuDNN's at the forward's real O and LSE (attnbwd_peers' checks: relative norm
error < 3e-2; a point that fails is never the shape's best).

Candidates (attn_bwd parameters; W = attn_bwd_prep_zero's WARPS, default 4):
  fused      the defaults (DQO = 0; XWG = 1 at HD = 128, 0 at HD = 64)
  dqo        DQO = 1: a tile's dQ^T retired, staged and added under the next tile's S^T
  dqo_w16    DQO = 1 with W = 16 (the zeroing's runs 128 bytes at HD = 128; dqo_w32: W = 32)
  xa, xa_dqo, xa_dqo_w16, xa_dqo_w32, xa_dqo_rot (HD = 64 only): XWG = 1 there, one warpgroup per tile computes all of
             dQ_i^T over the 128 keys and adds it (half the staging and the L2 additions)
  h_*        the same points compiled with CAKE_WG_HOIST=1 (docs/tir.md §8.4)
  p_*        ... with CAKE_CVT_PAIRS=1 (f32 -> bf16 element pairs by one cvt.rn.bf16x2.f32)
  *rot       ROT = 1: key tile n of a head walks its query tiles from the n-th on (wrapping), so
             the blocks of one head do not add into the same dQ tile at the same time
Prints one JSON line per shape to $OUT/abwd2_results.jsonl, the compact table last.
usage: python3 abwd2_peers.py GO_FILE   (environment: OUT, DEADLINE seconds)
       python3 abwd2_peers.py table RESULTS.jsonl"""
import json
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

T0 = time.time()
DEADLINE = float(os.environ.get("DEADLINE", "120"))
OUT = os.environ.get("OUT", "/tmp/cake-out")
os.environ["DEADLINE"] = str(DEADLINE)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbwd_peers as ab  # noqa: E402
import torch  # noqa: E402

W16, W32 = {"WARPS": 16}, {"WARPS": 32}
ab.ALT = {
    128: [("dqo", {"DQO": 1}), ("dqo_w16", {"DQO": 1}, W16), ("dqo_w32", {"DQO": 1}, W32),
          ("rot", {"ROT": 1}), ("dqo_rot", {"DQO": 1, "ROT": 1})],
    64: [("dqo", {"DQO": 1}), ("xa", {"XWG": 1}), ("xa_dqo", {"XWG": 1, "DQO": 1}),
         ("xa_dqo_w16", {"XWG": 1, "DQO": 1}, W16), ("xa_dqo_w32", {"XWG": 1, "DQO": 1}, W32),
         ("rot", {"ROT": 1}), ("xa_dqo_rot", {"XWG": 1, "DQO": 1, "ROT": 1})],
}
# compiled with CAKE_WG_HOIST=1 (a register-A wgmma's operands packed before its group's
# fence): HOIST is no parameter of the kernel, only of this script's cache key
HOISTED = {128: [{}, {"DQO": 1}], 64: [{}, {"XWG": 1, "DQO": 1}]}
# and with CAKE_CVT_PAIRS=1 (f32 -> bf16 element pairs by one cvt.rn.bf16x2.f32): PAIRS, p_*
ENVS = {"HOIST": "CAKE_WG_HOIST", "PAIRS": "CAKE_CVT_PAIRS"}
for _e, _pre in (("HOIST", "h"), ("PAIRS", "p")):
    for _d, _ps in HOISTED.items():
        ab.ALT[_d] += [(_pre + "".join("_" + {"DQO": "dqo", "XWG": "xa", "ROT": "rot"}[k] for k in ps), dict(ps, **{_e: 1}))
                       for ps in _ps]
ab.RES = os.path.join(OUT, "abwd2_results.jsonl")
# the acceptance's shapes, the most telling first: each (D, causal) class early
SHAPES = [(4, 16, 2048, 128, False), (2, 16, 4096, 64, False), (4, 16, 2048, 128, True), (4, 16, 2048, 64, True),
          (2, 16, 4096, 128, False), (4, 16, 2048, 64, False), (2, 16, 4096, 128, True), (2, 16, 4096, 64, True),
          (1, 16, 8192, 64, False), (1, 16, 8192, 128, False), (8, 16, 1024, 128, True), (8, 16, 1024, 64, False),
          (1, 16, 8192, 128, True), (1, 16, 8192, 64, True), (8, 16, 1024, 128, False), (8, 16, 1024, 64, True),
          (2, 32, 2048, 128, True), (16, 16, 1024, 64, True)]


def precompile_hoisted():
    """the HOISTED points, compiled one at a time with CAKE_WG_HOIST=1 (the code generator reads
    it while it compiles), then cake's own cache cleared so that the rest compile without it"""
    import cake
    for knob, var in ENVS.items():
        os.environ[var] = "1"
        try:
            for D, pss in HOISTED.items():
                for c in (0, 1):
                    for ps in pss:
                        params = dict(HD=D, CAUSAL=c, **ps)
                        key = ("attn_bwd", tuple(sorted(dict(params, **{knob: 1}).items())))
                        try:
                            ab.KERNELS[key] = cake.load("examples/attn_bwd.tir", **params)
                        except Exception as e:  # noqa: BLE001
                            print(f"precompile {var} failed:", params, repr(e)[:200], flush=True)
        finally:
            del os.environ[var]
            cake._compiled.clear()


def precompile():
    t0 = time.time()
    precompile_hoisted()
    print(f"hoisted: {time.time() - t0:.1f} s", flush=True)
    jobs = []
    for D in (128, 64):
        jobs += [("attn_bwd_prep", dict(HD=D)), ("attn_bwd_prep_zero", dict(HD=D)),
                 ("attn_bwd_prep_zero", dict(HD=D, **W16)), ("attn_bwd_prep_zero", dict(HD=D, **W32)),
                 ("attn_bwd_dq_convert", dict(HD=D))]
        for c in (0, 1):
            jobs.append(("attn_bwd", dict(HD=D, CAUSAL=c)))
            jobs += [("attn_bwd", dict(HD=D, CAUSAL=c, **alt[1])) for alt in ab.ALT[D]
                     if not set(ENVS) & set(alt[1])]
    t0 = time.time()
    with ThreadPoolExecutor(8) as ex:
        futs = [ex.submit(ab.kern, f, **ps) for f, ps in jobs]
        errs = [f.exception() for f in futs]
    bad = [f"{j[0]} {j[1]}: {e}"[:300] for j, e in zip(jobs, errs) if e]
    print(f"precompiled {len(jobs) - len(bad)} of {len(jobs)} kernels in {time.time() - t0:.1f} s", flush=True)
    for b in bad:
        print("precompile failed:", b, flush=True)


def geo(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table():
    names = ["fused"] + sorted({a[0] for D in ab.ALT for a in ab.ALT[D]})
    print("| shape | cuDNN ms | " + " | ".join(names) + " | best | cuDNN/best | main ms (fused / best) | "
          "prep_zero W 4/16/32 ms | convert ms | ok |")
    print("|---|---|" + "---|" * len(names) + "---|---|---|---|---|---|")
    per = {n: [] for n in names}
    best_r = []
    for r in ab.rows:
        if "ms" not in r or r.get("kind") != "bwd":
            print(f"| {r.get('shape')} | {r.get('error', r.get('skipped', '-'))} |")
            continue
        cells = []
        for n in names:
            w = r.get(n)
            if not w:
                cells.append("-")
                continue
            x = r["cudnn_ms"] / w["ms"]
            per[n].append(x)
            cells.append(f"{w['ms']:.3f} x{x:.3f}{'' if w['ok'] else ' BAD'}")
        bw = r[r["way"]]
        best_r.append(r["ratio"])
        main = f"{r['fused']['parts_ms'].get('main', 0):.3f} / {bw['parts_ms'].get('main', 0):.3f}" if "fused" in r else "-"
        oks = all(r[n]["ok"] for n in names if r.get(n))
        pz = [(r.get(n) or {}).get("parts_ms", {}).get("prep_zero") for n in ("fused", "dqo_w16", "dqo_w32")]
        if pz[1] is None:
            pz[1:] = [(r.get(n) or {}).get("parts_ms", {}).get("prep_zero") for n in ("xa_dqo_w16", "xa_dqo_w32")]
        conv = (r.get("fused") or {}).get("parts_ms", {}).get("convert")
        print(f"| {r['shape']} | {r['cudnn_ms']:.3f} | " + " | ".join(cells) +
              f" | {r['way']} | {r['ratio']:.3f} | {main} | " + "/".join(f"{x:.3f}" if x else "-" for x in pz) +
              f" | {conv or 0:.3f} | {'ok' if oks else 'FAIL'} |")
    print()
    print("per candidate (cuDNN / candidate, geomean over its shapes): " +
          ", ".join(f"{n} {geo(v):.3f} (n={len(v)}, >=1.0 at {sum(x >= 1.0 for x in v)})" for n, v in per.items() if v))
    print(f"best per shape: {len(best_r)} timed, >= 1.0x cuDNN at {sum(x >= 1.0 for x in best_r)}, "
          f"geomean {geo(best_r):.3f}, min {min(best_r) if best_r else float('nan'):.3f}")


def main():
    go = sys.argv[1] if len(sys.argv) > 1 else None
    try:
        precompile()
    except Exception as e:  # noqa: BLE001
        print("precompile:", repr(e)[:300], flush=True)
    while go and not os.path.exists(go) and ab.left() > DEADLINE / 2:
        time.sleep(0.2)
    print(f"timings start at {time.time() - T0:.1f} s", flush=True)
    for c in SHAPES:
        if ab.left() < 6:
            ab.emit({"kind": "bwd", "shape": str(c), "skipped": "deadline"})
            continue
        t0 = time.time()
        try:
            ab.backward_case(*c, check_math=False, twopass_too=False, alt=True)
        except Exception as e:  # noqa: BLE001
            ab.emit({"kind": "bwd", "shape": str(c), "ok": False, "error": repr(e)[:300]})
        print("bwd", f"{time.time() - t0:.1f} s", json.dumps(ab.rows[-1])[:900], flush=True)
        torch.cuda.empty_cache()
    table()


if __name__ == "__main__":
    if sys.argv[1:2] == ["table"]:   # the table of a results file (a run cut short)
        ab.rows.extend(json.loads(line) for line in open(sys.argv[2]) if line.strip())
        table()
    else:
        main()
