"""gemm4_shapes.py — the inputs of run_gemm4.sh (session 10, issue 13): tuning shapes beside the
acceptance sweep's losing and re-picked GEMM shapes, and the picks to diagnose.

    gemm4_shapes.py CAKEC ART SWEEP.json TABLE.json CHANGED.txt TUNE.txt

ART: the library's artifact with TABLE.json (the sweep's table) folded in; SWEEP.json: a sweep's
rows (op, shape, variant, ms, ratio: session 9's first call). For every gemm and gemm_fp8 shape
of SWEEP.json the artifact's pick (`cakec lib select`); CHANGED.txt gets `OP SHAPE NEW OLD` where
the pick differs from the sweep's (run_gemm4.sh times both there: diagnosis only, never table
entries). TUNE.txt gets one neighbour of each such shape and of
each shape whose ratio was below 1.0: every dim scaled by a log-uniform factor in 0.7 .. 1.4
(K and N of at least 16 rounded to 8), seed 9401, never a shape of the sweep (sweep.py shapes
2027) nor one TABLE.json holds. No GPU.
"""
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sweep   # noqa: E402
from gemm3_picks import select   # noqa: E402


def neighbour(rng, shape, taken):
    d = dict(kv.split("=") for kv in shape.split(","))
    for _ in range(50):
        out = {}
        for k, v in d.items():
            x = max(1, int(round(int(v) * math.exp(rng.uniform(math.log(0.7), math.log(1.4))))))
            out[k] = x if k == "M" or x < 16 else max(16, int(round(x / 8)) * 8)
        s = ",".join(f"{k}={v}" for k, v in out.items())
        if s not in taken:
            return s
    return None


def main(cakec, art, sweep_path, table_path, changed_path, tune_path):
    rows = [r for r in json.load(open(sweep_path)) if r["op"] in ("gemm", "gemm_fp8")]
    taken = set(sweep.shapes(2027))
    table = json.load(open(table_path))
    taken |= {e["op"] + " " + ",".join(f"{k}={v}" for k, v in e["shape"].items()) for e in table["entries"]}
    rng = random.Random(9401)
    changed, tune = [], []
    for r in rows:
        new = select(cakec, art, r["op"], r["shape"])[0]
        fresh = new and new != r["variant"]
        if fresh:
            changed.append(f"{r['op']} {r['shape']} {new} {r['variant']}")
        if fresh or (r.get("ratio") or 2) < 1.0:
            s = neighbour(rng, r["shape"], {t.split(" ", 1)[1] for t in taken if t.startswith(r["op"] + " ")})
            if s:
                tune.append(f"{r['op']} {s}")
                taken.add(tune[-1])
    open(changed_path, "w").write("".join(l + "\n" for l in changed))
    open(tune_path, "w").write("".join(l + "\n" for l in tune))
    print(f"gemm4_shapes: {len(changed)} changed picks, {len(tune)} tuning shapes of {len(rows)} sweep shapes")


if __name__ == "__main__":
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    main(*sys.argv[1:])
