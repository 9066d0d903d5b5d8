"""rowsx_shapes.py — the row ops' tuning set of bench/device/run_rowsx.sh (stdout, one
`OP DIM=V,...` line per shape).

    rowsx_shapes.py tune [SEED]       seeded log-uniform shapes of four row ops (the
                                      generator of sweep.py at another seed, default 5151:
                                      never the sweep's own shapes) and, first, shapes in
                                      the dispatch classes where the 2027 sweep lost (the same
                                      bit length of every dim and the same power-of-two
                                      divisibility of N, never the sweep's shape itself)
    rowsx_shapes.py class OP SHAPE    the dispatch class of a shape (docs/library.md)
    rowsx_shapes.py part TUNED.json BASE.json > bench/device/rows_table_h200.json
                                      the row ops' part of the sweep's table: TUNED's entries
                                      (sweep.py tune of run_rowsx.sh's tuning step) and BASE's
                                      entries of the row ops not retuned (cross_entropy), less
                                      any entry at a shape of the 2027 sweep; table_merge.py
                                      folds it into BASE

A tuning set must not contain a shape of the sweep it is judged on: `tune` drops any
that sweep.py's shapes at seed 2027 contain.
"""
import random
import sys

import sweep

# cross_entropy is not retuned (100% >= 1.0 in the 2027 sweep, min 1.21): its entries stay
ROW_OPS = ("rmsnorm", "layernorm", "softmax", "fp8_row_quantize")
# where the 2027 sweep lost (bench/RESULTS.md, 2026-12-01 17:31): a class per line
LOST = ["rmsnorm M=9131,N=3972", "rmsnorm M=290950,N=114", "rmsnorm M=1136,N=592",
        "rmsnorm M=6143,N=10044", "layernorm M=1915,N=1772", "layernorm M=921,N=5464",
        "softmax M=39,N=89", "softmax M=2822,N=617", "softmax M=10,N=2670", "softmax M=13,N=2980",
        "softmax M=14,N=3239", "softmax M=32768,N=1024", "fp8_row_quantize M=375,N=18493"]


def tz(v):
    return min(7, (v & -v).bit_length() - 1)


def dim_class(v):
    return (tz(v) << 5) | v.bit_length()


def in_class(rng, v, exact_tz):
    """another value of v's class: the same bit length (and for N the same trailing zeros)"""
    b = v.bit_length()
    lo, hi = 1 << (b - 1), (1 << b) - 1
    for _ in range(1000):
        u = rng.randint(lo, hi)
        if u != v and (not exact_tz or tz(u) == tz(v)):
            return u
    return v


def targeted(rng, per_class=2):
    out = []
    for line in LOST:
        op, shape = line.split()
        dims = sweep.parse_shape(shape)
        names = list(dims)
        for _ in range(per_class):
            m = in_class(rng, dims[names[0]], False)
            n = in_class(rng, dims[names[1]], True)
            out.append(f"{op} {names[0]}={m},{names[1]}={n}")
    return out


def tune(seed):
    rng = random.Random(seed)
    drawn = [s for s in sweep.shapes(seed) if s.split()[0] in ROW_OPS and s not in sweep.ANCHORS]
    held_out = set(sweep.shapes(2027))
    lines = [s for s in targeted(rng) + drawn if s not in held_out]
    return list(dict.fromkeys(lines))


def part(tuned_path, base_path):
    import json
    tuned, base = json.load(open(tuned_path)), json.load(open(base_path))
    held_out = set(sweep.shapes(2027))

    def key(e):
        return e["op"] + " " + ",".join(f"{k}={v}" for k, v in e["shape"].items())
    entries = [e for e in tuned["entries"] if e["op"] in ROW_OPS]
    entries += [e for e in base["entries"] if e["op"] == "cross_entropy"]
    kept = [e for e in entries if key(e) not in held_out]
    print(f"part: {len(kept)} entries ({len(entries) - len(kept)} at sweep shapes dropped)", file=sys.stderr)
    tuned["entries"] = kept
    print(json.dumps(tuned, indent=1))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "class":
        d = sweep.parse_shape(sys.argv[3])
        print("".join(f"{dim_class(v):02x}" for v in reversed(list(d.values()))).rjust(16, "0"))
    elif len(sys.argv) > 3 and sys.argv[1] == "part":
        part(sys.argv[2], sys.argv[3])
    elif len(sys.argv) > 1 and sys.argv[1] == "tune":
        print("\n".join(tune(int(sys.argv[2]) if len(sys.argv) > 2 else 5151)))
    else:
        sys.exit(__doc__)
