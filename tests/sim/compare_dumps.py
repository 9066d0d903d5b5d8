#!/usr/bin/env python3
"""compare_dumps.py A B — the outputs of two runs of the same examples at the
same seeds and shapes (`cakec run --dump-outputs`, e.g. the H200's from
bench/device/run_sim.sh and `run --sim`'s here), element by element.

A and B are folders of NAME/ARG.SHAPE.DTYPE.bin (NAME: a line of
tests/sim/shapes.txt). Each pair passes within bf16's bound, the form the
oracle uses for bf16 (docs/checking.md): |a - b| <= 2^-6 |b| + 2^-6 max|b|.
Prints one line per output (elements, exactly equal, max |a - b|, the worst
ratio to the bound) and exits 1 when a pair fails or a file has no partner."""
import os, struct, sys


def e4m3(byte):
    s = -1.0 if byte & 0x80 else 1.0
    e, m = (byte >> 3) & 15, byte & 7
    if e == 15 and m == 7:
        return float("nan")
    if e == 0:
        return s * m / 8 * 2.0 ** -6
    return s * (1 + m / 8) * 2.0 ** (e - 7)


def decode(path):
    dt = path.rsplit(".", 2)[-2]
    raw = open(path, "rb").read()
    if dt == "bf16":
        return [struct.unpack("<f", struct.pack("<I", v << 16))[0]
                for v in struct.unpack("<%dH" % (len(raw) // 2), raw)]
    if dt == "f16":
        return list(struct.unpack("<%de" % (len(raw) // 2), raw))
    if dt == "f32":
        return list(struct.unpack("<%df" % (len(raw) // 4), raw))
    if dt == "e4m3":
        return [e4m3(b) for b in raw]
    if dt in ("i32", "u32"):
        return [float(v) for v in struct.unpack("<%d%s" % (len(raw) // 4, "i" if dt == "i32" else "I"), raw)]
    return [float(b) for b in raw]


def files(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith(".bin"):
                out[os.path.relpath(os.path.join(d, f), root)] = os.path.join(d, f)
    return out


def main():
    a, b = files(sys.argv[1]), files(sys.argv[2])
    bad = 0
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            print("%-60s only in %s" % (name, sys.argv[1] if name in a else sys.argv[2]))
            bad += 1
            continue
        x, y = decode(a[name]), decode(b[name])
        if len(x) != len(y):
            print("%-60s sizes differ: %d, %d" % (name, len(x), len(y)))
            bad += 1
            continue
        fin = [abs(v) for v in y if v == v and abs(v) != float("inf")]
        atol = 2.0 ** -6 * (max(fin) if fin else 0)
        worst, maxd, same = 0.0, 0.0, 0
        for u, v in zip(x, y):
            if u == v or (u != u and v != v):
                same += 1
                continue
            d = abs(u - v)
            maxd = max(maxd, d)
            bound = 2.0 ** -6 * abs(v) + atol
            worst = max(worst, d / bound if bound > 0 else float("inf"))
        ok = worst <= 1
        bad += not ok
        print("%-60s %8d elements  %6.2f%% equal  max|a-b| %.3g  worst/bound %.3g  %s"
              % (name, len(x), 100.0 * same / max(1, len(x)), maxd, worst, "ok" if ok else "FAIL"))
    print("%d outputs, %d failed" % (len(set(a) | set(b)), bad))
    sys.exit(1 if bad else 0)


main()
