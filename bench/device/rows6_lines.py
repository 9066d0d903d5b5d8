"""rows6_lines.py — the tuning lines of run_rows6.sh (session 10, issue 13): more non-sweep shapes in
the classes of the row ops' loser shapes, timed only with the variants that came within 10% of the
fastest at that class's shapes already tuned, so that the new variants of the rows branch get the
tuned shapes their fits need.

    python3 bench/device/rows6_lines.py CAKEC ART LOSERS TUNE.jsonl ... > LINES

LOSERS: `OP SHAPE` lines (bench/device/rows4_losers.txt); TUNE.jsonl: checked `lib bench` rows
(run_rows4.sh's and run_rows5.sh's tune.jsonl). Per loser, PER_CLASS (3) other shapes of its
class (rowsx_shapes.in_class: the bit length of M and of N, N's trailing zeros), seed 5531, never
a sweep shape (sweep.py shapes 2027) nor a tuned one; per shape `OP SHAPE` (the dispatched
variant) and `OP SHAPE VARIANT` for each variant within 10% of the fastest at a tuned shape of
the class whose domain holds there (`cakec lib select --json`).
"""
import collections
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rowsx_shapes   # noqa: E402
import sweep          # noqa: E402
from rows2_lines import holding   # noqa: E402

PER_CLASS = 3
NEAR = 1.10


def class_of(shape):
    (a, va), (b, vb) = sweep.parse_shape(shape).items()
    return va.bit_length(), vb.bit_length(), rowsx_shapes.tz(vb)


def main(cakec, art, losers, tunes):
    times = collections.defaultdict(dict)
    for path in tunes:
        for line in open(path):
            r = json.loads(line) if line.startswith("{") else {}
            b = r.get("bench")
            if isinstance(b, dict) and b.get("median_ms") and r.get("check_ok"):
                times[(r["op"], r["shape"])][r["variant"]] = b["median_ms"]
    near = collections.defaultdict(set)   # (op, class) -> variants near the fastest there
    for (op, shape), t in times.items():
        best = min(t.values())
        near[(op, class_of(shape))] |= {v for v, ms in t.items() if ms <= best * NEAR}
    taken = set(sweep.shapes(2027)) | {f"{op} {s}" for op, s in times}
    rng = random.Random(5531)
    for line in open(losers):
        if not line.strip():
            continue
        op, shape = line.split()[:2]
        (a, va), (b, vb) = sweep.parse_shape(shape).items()
        want = near[(op, class_of(shape))]
        for _ in range(PER_CLASS):
            s = "%s=%d,%s=%d" % (a, rowsx_shapes.in_class(rng, va, True), b, rowsx_shapes.in_class(rng, vb, True))
            if f"{op} {s}" in taken:
                continue
            taken.add(f"{op} {s}")
            print(op, s)
            for v in sorted(want & set(holding(cakec, art, op, s))):
                print(op, s, v)


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
