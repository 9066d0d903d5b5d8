"""gemm3_shapes.py — the tuning shapes of run_gemm3.sh's `tune` pass: 6 of tall M, N of 96 .. 256
and long K (first), the 26 shapes of
bench/device/narrow_tune_shapes.txt that session 8's run_gemm2.sh did not reach (small and
medium M with N of 150 .. 3300: where the table's narrow-N variants were never timed, and
their fits extrapolate), then, log-uniform, small M with long K and wide N (bf16) and small M
with medium N and long K (gemm_fp8); never a shape of the acceptance sweep (sweep.py, seed
2027).

    gemm3_shapes.py TUNE_ALL.jsonl > bench/device/gemm3_tune_shapes.txt

TUNE_ALL.jsonl: session 8's rows (bench/results/2026-12-02-s8/gemm2/tune_all.jsonl).
"""
import json
import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sweep   # noqa: E402


def draw(done_path):
    done = {r["op"] + " " + r["shape"] for r in (json.loads(l) for l in open(done_path) if l.startswith("{"))}
    taken = set(sweep.shapes(2027))
    out = [l.strip() for l in open(os.path.join(HERE, "narrow_tune_shapes.txt"))
           if l.strip() and l.strip() not in done and l.strip() not in taken]

    def lu(rng, lo, hi, mult=1):
        x = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        return max(mult, int(round(x / mult)) * mult)

    def add(rng, n, fmt):
        want = len(out) + n
        while len(out) < want:
            line = fmt(rng)
            if line not in taken and line not in out and line not in done:
                out.append(line)

    # first: tall M with N of 96 .. 256 at long K, where the narrow variants' span reaches but
    # none was timed (the 2026-12-03 call 3 picked narrow_128x48 at M=4079,N=144,K=7672, 1.41x
    # slower than splitk_bulk_128x160_s4)
    r0 = random.Random(9302)
    first = []
    while len(first) < 6:
        line = "gemm M=%d,N=%d,K=%d" % (lu(r0, 1024, 16384), 8 * r0.randint(12, 32), lu(r0, 2048, 12288, 8))
        if line not in taken and line not in out and line not in done and line not in first:
            first.append(line)
    out[:0] = first
    r = random.Random(9301)
    add(r, 10, lambda r: "gemm M=%d,N=%d,K=%d" % (lu(r, 2, 512), lu(r, 1024, 12288, 8), lu(r, 1024, 12288, 8)))
    add(r, 6, lambda r: "gemm_fp8 M=%d,N=%d,K=%d" % (lu(r, 16, 128), lu(r, 256, 1024, 16), lu(r, 1024, 8192, 16)))
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print("\n".join(draw(sys.argv[1])))
