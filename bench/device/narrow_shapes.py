"""narrow_shapes.py — the tuning shapes of the narrow-N GEMM variants (kernels/gemm_narrow.tir,
gemm_fp8_narrow.tir; bench/device/run_gemm2.sh, GEMM2_MODE=narrow), log-uniform in the
classes the 2026-12-02 sweep lost: tall M with N of 8 .. 96, small M x medium N at short K,
a few rows x medium N, and gemm_fp8 at narrow N; never a shape of the acceptance sweep
(sweep.py, seed 2027).

    narrow_shapes.py > bench/device/narrow_tune_shapes.txt
"""
import math
import random

import sweep


def draw():
    taken = set(sweep.shapes(2027))
    out = []

    def add(rng, n, fmt):
        want = len(out) + n
        while len(out) < want:
            line = fmt(rng)
            if line not in taken and line not in out:
                out.append(line)

    def lu(rng, lo, hi, mult=1):
        x = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        return max(mult, int(round(x / mult)) * mult)

    r1 = random.Random(8209)
    add(r1, 24, lambda r: "gemm M=%d,N=%d,K=%d" % (lu(r, 256, 16384), 8 * r.randint(1, 12), lu(r, 64, 8192, 8)))
    add(r1, 12, lambda r: "gemm M=%d,N=%d,K=%d" % (lu(r, 16, 2048), lu(r, 128, 4096, 8), lu(r, 64, 1024, 8)))
    fp8 = []
    n = len(out)
    add(r1, 10, lambda r: "gemm_fp8 M=%d,N=%d,K=%d" % (lu(r, 128, 8192), 8 * r.randint(1, 12), lu(r, 128, 8192, 16)))
    fp8, out[n:] = out[n:], []
    r2 = random.Random(8210)
    add(r2, 10, lambda r: "gemm M=%d,N=%d,K=%d" % (lu(r, 2, 64), lu(r, 256, 4096, 8), lu(r, 64, 1024, 8)))
    return out + fp8


if __name__ == "__main__":
    print("\n".join(draw()))
