"""abwd3_peers.py — attn_bwd's session-8 candidates beside cuDNN SDPA backward (run_abwd3.sh
runs it, once per code-generator setting: the process's CAKE_LLVM_ARGS is read once, so a
setting is a process): attnbwd_peers.backward_case with its own ALT points, every candidate
the whole three-launch sequence (attn_bwd_prep_zero + attn_bwd + attn_bwd_dq_convert), timed
by gated.py's method in the same call as cuDNN's backward, its gradients checked against
cuDNN's (relative norm error < 3e-2).
Candidates: fused (the defaults: MSK = 1), msk0 (MSK = 0, the session-7 mask); nl and nl_msk0: the
same compiled with CAKE_NOLICM=1 (the code generator marks its loops llvm.licm.disable: no per-thread
value hoisted out of the consumer's loop; HD = 128 spill-free); at HD = 64 also b128, nl_b128 and nl_b128k0
(BM = 128, which makes DVRS = 0 and STAGES = 2: P^T through shared memory, half the steps; k0: DKRS = 0,
dS^T's A operand from shared too).
usage: python3 abwd3_peers.py GO_FILE TAG   (environment: OUT, DEADLINE, A3_SHAPES = all | few)
       python3 abwd3_peers.py table RESULTS.jsonl"""
import json
import math
import os
import sys
import time

T0 = time.time()
DEADLINE = float(os.environ.get("DEADLINE", "120"))
OUT = os.environ.get("OUT", "/tmp/cake-out")
os.environ["DEADLINE"] = str(DEADLINE)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnbwd_peers as ab  # noqa: E402
import torch  # noqa: E402
import cake  # noqa: E402

POINTS = [("msk0", {"MSK": 0}), ("nl", {"NOLICM": 1}), ("nl_msk0", {"MSK": 0, "NOLICM": 1})]
B128 = {"BM": 128}   # HD = 64: 128 query rows a step (DVRS = 0: P^T through shared; STAGES = 2)
ab.ALT = {128: list(POINTS), 64: POINTS + [("b128", B128), ("nl_b128", dict(B128, NOLICM=1)),
                                           ("nl_b128k0", dict(B128, DKRS=0, NOLICM=1))]}
ENVS = {"NOLICM": "CAKE_NOLICM"}   # compile-time knobs of the code generator, not parameters
TAG = sys.argv[2] if len(sys.argv) > 2 else "plain"
ab.RES = os.path.join(OUT, f"abwd3_{TAG}.jsonl")
ALL = [(4, 16, 2048, 128, False), (2, 16, 4096, 64, False), (4, 16, 2048, 128, True), (4, 16, 2048, 64, True),
       (2, 16, 4096, 128, False), (4, 16, 2048, 64, False), (2, 16, 4096, 128, True), (2, 16, 4096, 64, True),
       (1, 16, 8192, 64, False), (1, 16, 8192, 128, False), (8, 16, 1024, 128, True), (8, 16, 1024, 64, False),
       (1, 16, 8192, 128, True), (1, 16, 8192, 64, True), (8, 16, 1024, 128, False), (8, 16, 1024, 64, True),
       (2, 32, 2048, 128, True), (16, 16, 1024, 64, True)]
FEW = [ALL[0], ALL[2], ALL[4], ALL[14], ALL[1], ALL[3]]
SHAPES = ALL if os.environ.get("A3_SHAPES", "few") == "all" else FEW


def precompile():
    t0 = time.time()
    n = 0
    for D in (128, 64):
        for f, ps in (("attn_bwd_prep_zero", dict(HD=D)), ("attn_bwd_dq_convert", dict(HD=D)),
                      ("attn_bwd_prep", dict(HD=D))):
            ab.kern(f, **ps)
            n += 1
        for c in (0, 1):
            for ps in [{}] + [a[1] for a in ab.ALT[D]]:
                env = {ENVS[k]: "1" for k in ps if k in ENVS}
                params = {k: v for k, v in ps.items() if k not in ENVS}
                key = ("attn_bwd", tuple(sorted(dict(ps, HD=D, CAUSAL=c).items())))
                os.environ.update(env)
                try:
                    ab.KERNELS[key] = cake.load("examples/attn_bwd.tir", HD=D, CAUSAL=c, **params)
                    n += 1
                except Exception as e:  # noqa: BLE001
                    print("precompile failed:", D, c, ps, repr(e)[:200], flush=True)
                finally:
                    for k in env:
                        del os.environ[k]
                    cake._compiled.clear()
    print(f"precompiled {n} kernels in {time.time() - t0:.1f} s ({TAG})", flush=True)


def geo(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table():
    names = ["fused"] + [a[0] for a in ab.ALT[64]]
    print(f"[{TAG}] | shape | cuDNN ms | " + " | ".join(names) + " | main ms (each) | prep_zero ms | convert ms |")
    per = {n: [] for n in names}
    for r in ab.rows:
        if "cudnn_ms" not in r:
            print(f"| {r.get('shape')} | {r.get('error', r.get('skipped', '-'))} |")
            continue
        cells = []
        for n in names:
            w = r.get(n)
            if not w or "ms" not in w:
                cells.append("-")
                continue
            x = r["cudnn_ms"] / w["ms"]
            per[n].append(x)
            cells.append(f"{w['ms']:.3f} x{x:.3f}{'' if w['ok'] else ' BAD'}")
        pm = [((r.get(n) or {}).get("parts_ms") or {}).get("main") for n in names]
        pz = ((r.get("fused") or {}).get("parts_ms") or {})
        print(f"| {r['shape']} | {r['cudnn_ms']:.3f} | " + " | ".join(cells) + " | " +
              " / ".join(f"{x:.3f}" if x else "-" for x in pm) +
              f" | {pz.get('prep_zero', 0):.3f} | {pz.get('convert', 0):.3f} |")
    print(f"[{TAG}] per candidate (cuDNN / candidate, geomean): " +
          ", ".join(f"{n} {geo(v):.3f} (n={len(v)}, >=1.0 at {sum(x >= 1.0 for x in v)})" for n, v in per.items() if v))


def main():
    go = sys.argv[1]
    try:
        precompile()
    except Exception as e:  # noqa: BLE001
        print("precompile:", repr(e)[:300], flush=True)
    while not os.path.exists(go) and ab.left() > 8:
        time.sleep(0.2)
    print(f"timings start at {time.time() - T0:.1f} s ({TAG})", flush=True)
    for c in SHAPES:
        if ab.left() < 5:
            ab.emit({"kind": "bwd", "shape": str(c), "skipped": "deadline"})
            continue
        try:
            ab.backward_case(*c, check_math=False, twopass_too=False, alt=True)
        except Exception as e:  # noqa: BLE001
            ab.emit({"kind": "bwd", "shape": str(c), "ok": False, "error": repr(e)[:300]})
        torch.cuda.empty_cache()
    table()


if __name__ == "__main__":
    if sys.argv[1:2] == ["table"]:
        ab.rows.extend(json.loads(line) for line in open(sys.argv[2]) if line.strip())
        TAG = os.path.basename(sys.argv[2])
        table()
    else:
        main()
