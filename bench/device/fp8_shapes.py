"""fp8_shapes.py — the shapes the gemm_fp8 dispatch table is tuned at (bench/device/run_fp8x.sh):
log-uniform like the acceptance sweep (bench/device/sweep.py, whose generator it uses) but from
another seed, so the sweep measures the table at shapes it was not tuned at (a shape that
happens to be one of the sweep's is dropped). Beside the sweep's own distribution (a third with
M <= 64), a share drawn where gemm_fp8 lost the last sweep: M <= 128 with K >= 1024, and N <= 256.

    fp8_shapes.py [SEED]       one `gemm_fp8 M=..,N=..,K=..` per line on stdout (default 5167)
    fp8_shapes.py merge-op OP NEW.json TABLE.json > OUT.json
                               TABLE with its OP entries replaced by NEW's (the `lib tune -o`
                               format; one kind of device): how an op's tuned entries are
                               folded into bench/device/sweep_table_h200.json

bench/device/fp8_tune_shapes.txt is the output at 5167.
"""
import json
import math
import random
import sys

import sweep

DRAWN = 48        # from the sweep's distribution
LOSSES = 32       # from the region the last sweep lost in
CAP_FLOPS = 5e11  # every variant is timed at a tuning shape: keep each one short


def loss_shape(rng, i):
    logu = sweep.logu
    for _ in range(1000):
        if i % 2 == 0:   # few rows, long K
            m, n, k = logu(rng, 1, 128), logu(rng, 8, 16384), logu(rng, 1024, 16384)
        else:            # few columns
            m, n, k = logu(rng, 1, 4096), logu(rng, 8, 256), logu(rng, 512, 16384)
        n, k = sweep.round_to(n, 8, 8), sweep.round_to(k, 16, 128)
        if 2.0 * m * n * k <= CAP_FLOPS and max(m, n) * k <= sweep.CAP_ELEMS:
            return f"M={m},N={n},K={k}"
    return "M=16,N=1024,K=8192"


def draw(seed):
    rng = random.Random(seed)
    sweep.CAP_FLOPS = CAP_FLOPS
    taken = {line.split()[1] for line in sweep.shapes(2027) if line.startswith("gemm_fp8 ")}
    out = [sweep.gen_gemm(rng, "gemm_fp8", i) for i in range(DRAWN)]
    out += [loss_shape(rng, i) for i in range(LOSSES)]
    rng.shuffle(out)
    seen = set()
    return [f"gemm_fp8 {s}" for s in out if s not in taken and not (s in seen or seen.add(s))]


def merge_op(op, new_path, table_path):
    new, table = json.load(open(new_path)), json.load(open(table_path))
    if new.get("device") != table.get("device"):
        sys.exit(f"merge-op: {new_path} was measured on {new.get('device')}, "
                 f"{table_path} on {table.get('device')}")
    mine = [e for e in new["entries"] if e["op"] == op]
    table["entries"] = [e for e in table["entries"] if e["op"] != op] + mine
    print(json.dumps(table, indent=1))


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "merge-op":
    merge_op(sys.argv[2], sys.argv[3], sys.argv[4])
elif __name__ == "__main__":
    print("\n".join(draw(int(sys.argv[1]) if len(sys.argv) > 1 else 5167)))
