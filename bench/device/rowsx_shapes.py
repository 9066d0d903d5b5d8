"""rowsx_shapes.py — the row ops' tuning set of bench/device/run_rowsx.sh (stdout, one
`OP DIM=V,...` line per shape).

    rowsx_shapes.py tune [SEED]       the row ops' tuning set: first shapes in the dispatch
                                      classes where the 2027 sweep lost (the same bit length
                                      of every dim and the same power-of-two divisibility of
                                      N, never the sweep's shape itself), then a grid dense
                                      along N (two points an octave from 64 to 65536, odd and
                                      even, M drawn few or many in turn: the fitted row model
                                      needs every variant timed across its N), then seeded
                                      log-uniform shapes (the generator of sweep.py at another
                                      seed, default 5151)
    rowsx_shapes.py class OP SHAPE    the dispatch class of a shape (docs/library.md)
    rowsx_shapes.py part TUNED.json BASE.json > bench/device/rows_table_h200.json
                                      the row ops' part of the sweep's table: TUNED's entries
                                      (sweep.py tune of run_rowsx.sh's tuning step) and BASE's
                                      of the row ops at every shape TUNED did not time (the
                                      fits gain from every point), less any entry at a shape
                                      of the 2027 sweep and the times of variants the manifest
                                      no longer has; table_merge.py folds it into BASE

A tuning set must not contain a shape of the sweep it is judged on: `tune` drops any
that sweep.py's shapes at seed 2027 contain.
"""
import os
import random
import sys

import sweep

ROW_OPS = ("rmsnorm", "layernorm", "softmax", "cross_entropy")
# where the 2027 sweep lost (bench/results/2026-12-01-sweep-round2, bench/RESULTS.md
# 2026-12-01 20:45), worst first: a class per line
LOST = ["rmsnorm M=1017,N=1166",
        "layernorm M=51361,N=374",
        "rmsnorm M=47351,N=622",
        "rmsnorm M=1407,N=5865",
        "softmax M=137906,N=273",
        "rmsnorm M=6181,N=579",
        "layernorm M=5,N=987",
        "rmsnorm M=482500,N=109",
        "layernorm M=2204,N=897",
        "layernorm M=33848,N=160",
        "cross_entropy B=4,V=5273",
        "rmsnorm M=272,N=33928",
        "rmsnorm M=1062,N=1679",
        "layernorm M=12076,N=367",
        "layernorm M=192472,N=223",
        "layernorm M=30,N=593",
        "layernorm M=21341,N=217",
        "cross_entropy B=1551,V=15247",
        "layernorm M=1042,N=267",
        "rmsnorm M=835,N=9797",
        "layernorm M=68,N=4113",
        "layernorm M=141,N=178",
        "cross_entropy B=4,V=4159",
        "layernorm M=39,N=2734",
        "rmsnorm M=16790,N=86",
        "layernorm M=4,N=65536",
        "rmsnorm M=290950,N=114",
        "layernorm M=231,N=1389",
        "rmsnorm M=8931,N=973",
        "rmsnorm M=16384,N=1024",
        "cross_entropy B=64,V=1109",
        "rmsnorm M=7,N=18211",
        "cross_entropy B=5,V=1495",
        "rmsnorm M=269,N=3322",
        "rmsnorm M=91,N=124",
        "rmsnorm M=31,N=596",
        "softmax M=15,N=6879"]


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


def targeted(rng, per_class=1):
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


def grid(rng):
    """two N an octave from 64 to 65536 (odd and even in turn), each op, M few then many"""
    out, k = [], 0
    for op in ROW_OPS:
        for e in range(12, 33):
            n = int(round(2 ** (e / 2))) | ((k >> 1) & 1)
            m = rng.randint(1, 300) if k % 2 == 0 else max(1, int(2 ** rng.uniform(21, 26)) // n)
            d = ("B", "V") if op == "cross_entropy" else ("M", "N")
            out.append(f"{op} {d[0]}={min(m, 65536 if op == 'cross_entropy' else 1048576)},{d[1]}={n}")
            k += 1
    return out


def tune(seed):
    rng = random.Random(seed)
    drawn = [s for s in sweep.shapes(seed) if s.split()[0] in ROW_OPS and s not in sweep.ANCHORS]
    held_out = set(sweep.shapes(2027))
    lines = [s for s in targeted(rng) + grid(rng) + drawn if s not in held_out]
    return list(dict.fromkeys(lines))


def part(tuned_path, base_path):
    import json
    tuned, base = json.load(open(tuned_path)), json.load(open(base_path))
    held_out = set(sweep.shapes(2027))

    def key(e):
        return e["op"] + " " + ",".join(f"{k}={v}" for k, v in e["shape"].items())
    entries = [e for e in tuned["entries"] if e["op"] in ROW_OPS]
    timed = {key(e) for e in entries}
    # the base's entries of every shape the tuning did not time stay (fewer variants timed
    # there, but each variant's fit gains from every point it was timed at)
    entries += [e for e in base["entries"] if e["op"] in ROW_OPS and key(e) not in timed]
    kept = [e for e in entries if key(e) not in held_out]
    # the variants measured then but no longer in the manifest (pruned: they never won)
    here = os.path.dirname(os.path.abspath(__file__))
    manifest = json.load(open(os.path.join(here, "..", "..", "library", "manifest.json")))
    names = {op["op"]: {v["name"] for v in op["variants"]} for op in manifest["ops"]}
    for e in kept:
        e["times_ms"] = {v: t for v, t in e["times_ms"].items() if v in names.get(e["op"], ())}
        e["failed"] = {v: w for v, w in e.get("failed", {}).items() if v in names.get(e["op"], ())}
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
