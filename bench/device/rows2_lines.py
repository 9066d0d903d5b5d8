"""rows2_lines.py — the shapes and lines of bench/device/run_rows2.sh.

    python3 bench/device/rows2_lines.py losers SWEEP.json [MAX_RATIO]
        the row shapes of an acceptance sweep's sweep.json below MAX_RATIO (default 1.0),
        as `OP M=..,N=..` lines, the short ones (fewest elements) first
    python3 bench/device/rows2_lines.py tune SHAPES [PER_SHAPE] [SEED]
        the tuning shapes beside SHAPES: PER_SHAPE (default 2) other shapes of each one's
        dispatch class (the same bit length and trailing zeros of M and N;
        rowsx_shapes.in_class), seed 7013, never a shape of the acceptance sweep (sweep.py
        shapes 2027): the table may be tuned on them, the sweep is judged on its own
    python3 bench/device/rows2_lines.py new ART SHAPES
        for each shape: `OP SHAPE` (the dispatched variant), then `OP SHAPE VARIANT` for
        every variant of the single-path families of session 8 (rmsnorm_leanb,
        layernorm_leanb, fp8_quant_lean, fp8_quant_leanb, cross_entropy_lean,
        cross_entropy_leanb) whose domain holds there and
        whose capacity is at most max(4 N, 512), and at N >= 4096 fp8_quant_split's: what
        round 1 of session 8 times (and the table is tuned on)
    python3 bench/device/rows2_lines.py validate ART SWEEP.json LINES SHAPES [CAKEC]
        run_rows3.sh's inputs: per sweep shape (rmsnorm, layernorm, fp8_row_quantize,
        cross_entropy) of SWEEP.json the retuned pick and, where it differs, the old one
        (LINES); the shapes, those whose pick changed first (SHAPES)
    python3 bench/device/rows2_lines.py every ART SHAPES
        for each shape: `OP SHAPE` (the dispatched variant), then `OP SHAPE VARIANT` for
        every variant whose domain holds there, of every family, but for lane groups and
        blocks whose capacity is more than max(4 N, 512) (idle lanes): session 9's tuning
        lines (run_rowt.sh)
    python3 bench/device/rows2_lines.py lines ART SHAPES
        for each shape: `OP SHAPE` (the dispatched variant), then `OP SHAPE VARIANT` for
        every variant of the short-row families whose domain holds there (`cakec lib
        select --json` says which): the lane-group kernels (warp, ragged, pairs, lean) and
        the small blocks; never the long-row forms (smem, async, blocks of 8192 and more,
        the split sequences), which a short row cannot use well, nor lane groups for rows
        more than 4 times as long (at least 512)
"""
import json
import os
import random
import subprocess
import sys

SHORT = ("warp", "ragged", "pairs", "lean", "block_n1024", "block_n2048", "block128_n2048",
         "block_n4096", "block256_n4096", "block64_short", "block256")


def losers(path, most=1.0):
    rows = [r for r in json.load(open(path)) if r.get("ratio") and r["ratio"] < most
            and r["op"] in ("rmsnorm", "layernorm", "fp8_row_quantize", "cross_entropy")]

    def size(r):
        d = [int(kv.split("=")[1]) for kv in r["shape"].split(",")]
        return d[0] * d[1]
    for r in sorted(rows, key=size):
        print(r["op"], r["shape"])


def tune(path, per_shape=2, seed=7013):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import rowsx_shapes
    import sweep
    rng = random.Random(seed)
    held_out = set(sweep.shapes(2027))
    out = []
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        op, shape = line.split()[:2]
        (a, va), (b, vb) = sweep.parse_shape(shape).items()   # M, N (cross_entropy: B, V)
        for _ in range(per_shape):
            s = "%s %s=%d,%s=%d" % (op, a, rowsx_shapes.in_class(rng, va, True),
                                    b, rowsx_shapes.in_class(rng, vb, True))
            if s not in held_out and s not in out:
                out.append(s)
    print("\n".join(out))


def holding(cakec, art, op, shape):
    out = subprocess.run([cakec, "lib", "select", art, "--op", op, "--shape", shape, "--json"],
                         capture_output=True, text=True).stdout
    sel = json.loads(out)["select"]
    return [d["variant"] for d in sel["domains"] if d["holds"]]


def lines(art, shapes, cakec="cakec"):
    for line in open(shapes):
        if not line.strip() or line.startswith("#"):
            continue
        op, shape = line.split()[:2]
        print(op, shape)
        n = int(dict(kv.split("=") for kv in shape.split(","))["N"])
        for v in holding(cakec, art, op, shape):
            cap = int(v.rsplit("_n", 1)[1]) if "_n" in v else 0
            if v.startswith(SHORT) and cap <= max(4 * n, 512):   # a lane group 4x the row: idle lanes
                print(op, shape, v)


def in_range(art, shapes, cakec):
    """(op, shape, N, the variants whose domain holds) per shape of SHAPES inside its op's
    range; prints `OP SHAPE` (the dispatched variant's line) before each"""
    for line in open(shapes):
        if not line.strip() or line.startswith("#"):
            continue
        op, shape = line.split()[:2]
        try:
            hold = holding(cakec, art, op, shape)
        except (KeyError, ValueError):   # outside the op's range (a tuning shape of N's class)
            continue
        print(op, shape)
        yield op, shape, int(shape.split(",")[1].split("=")[1]), hold   # N (cross_entropy: V)


def every_lines(art, shapes, cakec="cakec"):
    for op, shape, n, hold in in_range(art, shapes, cakec):
        for v in hold:
            cap = v.rsplit("_n", 1)[1] if "_n" in v else ""
            if not cap.isdigit() or int(cap) <= max(4 * n, 512):
                print(op, shape, v)


NEW = ("leanb", "lean_v", "lean16_v")   # fp8_quant_lean's names, and the leanb families


def new_lines(art, shapes, cakec="cakec"):
    for op, shape, n, hold in in_range(art, shapes, cakec):
        for v in hold:
            if op == "fp8_row_quantize" and v.startswith("split_t") and "_v" in v:
                if n >= 4096:                    # fp8_quant_split.tir: long rows only
                    print(op, shape, v)
                continue
            fresh = v.startswith("leanb") or (op in ("fp8_row_quantize", "cross_entropy") and v.startswith(NEW))
            if fresh and int(v.rsplit("_n", 1)[1]) <= max(4 * n, 512):
                print(op, shape, v)


def picked(cakec, art, op, shape):
    out = subprocess.run([cakec, "lib", "select", art, "--op", op, "--shape", shape, "--json"],
                         capture_output=True, text=True).stdout
    return json.loads(out)["select"]["variant"]


def validate(art, sweep_json, lines_out, shapes_out, cakec="cakec",
             ops=("rmsnorm", "layernorm", "fp8_row_quantize", "cross_entropy")):
    """run_rows3.sh's lines: per sweep shape of ops the retuned pick (`OP SHAPE`) and, where
    it differs, the old call's pick (`OP SHAPE VARIANT`); the shapes, the changed first"""
    changed, same, lines = [], [], []
    for r in json.load(open(sweep_json)):
        if r["op"] not in ops:
            continue
        new = picked(cakec, art, r["op"], r["shape"])
        lines.append("%s %s" % (r["op"], r["shape"]))
        if new != r.get("variant"):
            lines.append("%s %s %s" % (r["op"], r["shape"], r["variant"]))
            changed.append("%s %s" % (r["op"], r["shape"]))
        else:
            same.append("%s %s" % (r["op"], r["shape"]))
    open(lines_out, "w").write("\n".join(lines) + "\n")
    open(shapes_out, "w").write("\n".join(changed + same) + "\n")
    print(f"validate: {len(changed)} picks changed of {len(changed) + len(same)} shapes", file=sys.stderr)


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "losers":
        losers(sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 1.0)
    elif cmd == "tune":
        tune(sys.argv[2], *(int(a) for a in sys.argv[3:5]))
    elif cmd == "new":
        new_lines(sys.argv[2], sys.argv[3], *(sys.argv[4:5]))
    elif cmd == "validate":
        validate(*sys.argv[2:7])
    elif cmd == "every":
        every_lines(sys.argv[2], sys.argv[3], *(sys.argv[4:5]))
    elif cmd == "lines":
        lines(sys.argv[2], sys.argv[3], *(sys.argv[4:5]))
    else:
        sys.exit(__doc__)
