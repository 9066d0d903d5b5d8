"""afwd3_peers.py — session 8's attention forward candidates beside the dispatch's pick, cuDNN
and flash SDPA (issue 15), in one process.

Forward: every dense shape of the sweep (the D = 64 shapes first: the worst class) times the
dispatch's pick (`ours`, attnx_peers.pick) and the candidates of CANDS beside it:
  pp3     examples/flash_attn_fwd_pp3.tir: D = 64, 192-row tiles, three consumer warpgroups
          taking the tensor cores in a ring (FA3's D = 64 schedule)
  *_f     compiled with CAKE_FRESH=1: an element's coordinates in T[r, c] = ... from a thread.x
          read where the statement stands (NF_FRESH), not hoisted out of the loops as one
          register per element (the spills of pp D = 128 causal, BN = 192, pp3 causal)
  *_c     compiled with CAKE_FRESH=conv (that read convergent: pp D = 128 causal spill-free)
  (the rest: main's code generation)
Every timed kernel checked against cuDNN and f32 math (attnfwd_peers.dense_case); gated.py's
method, trials A B A B. Decode (--decode): the fused kernel at the library's split beside the
fastest SDPA backend (afwd2_peers.decode_case).

    python3 afwd3_peers.py --out FILE.json [--deadline S] [--go FILE] [--decode]

Writes FILE.json after every shape and prints the compact tables last.
"""
import argparse
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attnfwd_peers as af  # noqa: E402
import attnx_peers as ax  # noqa: E402
import afwd2_peers as a2  # noqa: E402
import torch  # noqa: E402

T0 = time.time()
PP, PX, P3 = "flash_attn_fwd_pp", "flash_attn_fwd_ppx", "flash_attn_fwd_pp3"
FRESH = "CAKE_FRESH=1"
CONV = "CAKE_FRESH=conv"
FWD = dict(a2.FWD)
FWD["pp3"] = (P3, {})
for t in list(FWD):
    FWD[t + "_f"] = (FWD[t][0], dict(FWD[t][1], ENV=FRESH))
    FWD[t + "_c"] = (FWD[t][0], dict(FWD[t][1], ENV=CONV))
# "pick_f": the dispatch's pick with CAKE_FRESH=1
CANDS = {(64, 0): ["pick_f", "pp3_f", "q2", "bn192_f"],
         (64, 1): ["pick_f", "pp3_f", "q2", "bn192_f"],
         (128, 1): ["pick_f", "p_c", "q2_c", "p", "q2"],
         (128, 0): ["pick_f", "q2", "x"]}
a2.FWD, a2.CANDS = FWD, CANDS
KERNELS = {}
_kernel = af.kernel


def kernel(file, ENV=None, **params):
    """af.kernel, and with ENV a code-generation toggle set while this kernel compiles (its
    source text tagged so that cake.load's cache keeps it apart): compile these first, in
    one thread (precompile_env), the environment is the process's"""
    if not ENV:
        return _kernel(file, **params)
    key = (file, ENV, tuple(sorted(params.items())))
    if key not in KERNELS:
        text = f"# compiled with {ENV}\n" + open(os.path.join(af.EX, file + ".tir")).read()
        var, val = ENV.split("=")
        os.environ[var] = val
        try:
            KERNELS[key] = af.cake.load(text, **params)
        finally:
            del os.environ[var]
    return KERNELS[key]


af.kernel = kernel


def tags_of(D, c, S):
    pick = ax.pick(D, c, S, 64)
    out = [pick]
    for t in CANDS[(D, c)]:
        t = pick + "_f" if t == "pick_f" else t
        if t not in out:
            out.append(t)
    return out


def fwd_case(name, B, H, Hkv, S, D, c):
    """a2.fwd_case with `pick_f` the pick compiled with CAKE_FRESH=1"""
    pick = ax.pick(D, c, S, B * H)
    tags = tags_of(D, c, S)
    af.VARIANTS[D] = [(t, dict(FWD[t][1], FILE=FWD[t][0])) for t in tags]
    d = af.dense_case(name, B, H, Hkv, S, D, c)
    d["ours"] = pick
    return d


def precompile():
    """the toggled kernels one at a time, then a2.precompile (threads) for the rest"""
    t0 = time.time()
    n = 0
    for (D, c) in CANDS:
        for t in {t for S in (1024, 4096, 8192) for t in tags_of(D, c, S)}:
            if "ENV" not in FWD[t][1]:
                continue
            f, ps = FWD[t]
            try:
                kernel(f, D=D, CAUSAL=c, **ps)
                n += 1
            except Exception as e:  # noqa: BLE001
                print(f"precompile failed: {t} D={D} CAUSAL={c}: {e}"[:200], flush=True)
    print(f"precompiled {n} toggled kernels in {time.time() - t0:.1f} s", flush=True)
    a2.CANDS = {k: [t for t in v if t in FWD and "ENV" not in FWD[t][1]] for k, v in CANDS.items()}
    a2.precompile()
    a2.CANDS = CANDS


ORDER = ([n for n, B, H, Hk, S, D, c in af.shapes() if isinstance(S, int) and D == 64] +
         [n for n, B, H, Hk, S, D, c in af.shapes() if isinstance(S, int) and D == 128])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline", type=float, default=130)
    ap.add_argument("--go", default="")
    ap.add_argument("--decode", action="store_true")
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
    for B, H, Hkv, S, D in (af.DECODE if a.decode else []):
        name = f"B={B},H={H},Hkv={Hkv},S={S},D={D}"
        try:
            dec[name] = a2.decode_case(B, H, Hkv, S, D)
        except Exception as e:  # noqa: BLE001
            dec[name] = {"error": f"{type(e).__name__}: {e}"[:300]}
        print(name, json.dumps(dec[name]), flush=True)
        save()
    shapes = {s[0]: s for s in af.shapes()}
    for name in ORDER:
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
    print(a2.tables(fwd, dec))


if __name__ == "__main__":
    main()
