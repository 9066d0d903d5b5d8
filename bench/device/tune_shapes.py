"""tune_shapes.py — the shapes the library's dispatch table is tuned at on the device
(bench/device/run_gsmall.sh): seeded and log-uniform like the acceptance sweep
(bench/device/sweep.py, whose generators it uses) but drawn from another seed, so the
sweep measures the table at shapes it was not tuned at; more GEMM shapes (the op with
the most variants and classes) and some of every other op the sweep serves.

    tune_shapes.py [SEED]      one `OP DIM=V,...` per line on stdout (default seed 4099)
    tune_shapes.py gemm SEED COUNT
                               COUNT GEMM shapes only (bench/device/run_gemmx.sh): as the
                               sweep draws them, and a third drawn in the classes the sweep
                               loses most (medium M x small N x long K; M 128..512 x large
                               N*K); none of the sweep's own (seed 2027)
    tune_shapes.py merge NEW.json OLD.json [DROP] > TABLE.json
                               a tuned table (`lib tune -o` format): NEW's entries, then
                               OLD's at shapes NEW did not measure (one kind of device);
                               the variants named in DROP (OP/NAME,...: those that failed
                               their check on the device) moved to `failed`

GEMM shapes are capped at CAP_FLOPS (a tuning pass times every variant whose domain
holds, ~16 at a GEMM shape, 11 launches each); a third of them have M <= 64, as in the
sweep. The lines are shuffled, ops interleaved: a pass cut short by its time limit
loses some of every op. bench/device/gsmall_tune_shapes.txt is the output at 4099.
"""
import json
import random
import sys

import sweep

COUNTS = {"gemm": 200, "gemm_fp8": 16, "rmsnorm": 18, "layernorm": 16, "softmax": 18,
          "cross_entropy": 14, "fp8_row_quantize": 12}
CAP_FLOPS = 1e12


def draw(seed):
    rng = random.Random(seed)
    sweep.CAP_FLOPS = CAP_FLOPS
    out = []
    for op, count in COUNTS.items():
        for i in range(count):
            if op.startswith("gemm"):
                s = sweep.gen_gemm(rng, op, i)
            elif op == "softmax":
                s = sweep.gen_rows(rng, 262144)
            elif op == "cross_entropy":
                s = sweep.gen_rows(rng, 262144, ("B", "V"), mmax=65536)
            else:
                s = sweep.gen_rows(rng, 65536)
            out.append(f"{op} {s}")
    rng.shuffle(out)
    return out


# the classes where the 2026-12-01 sweep lost most: (M, N, K) log-uniform bounds
HARD = [((128, 4096), (8, 640), (1024, 16384)),
        ((128, 512), (512, 8192), (1024, 16384)),
        ((1, 64), (256, 8192), (256, 12288))]


def draw_gemm(seed, count):
    rng = random.Random(seed)
    sweep.CAP_FLOPS = 5e11
    taken = set(sweep.shapes(2027))
    out = []
    i = 0
    while len(out) < count:
        i += 1
        if i % 3 == 2:
            (m0, m1), (n0, n1), (k0, k1) = HARD[i // 3 % len(HARD)]
            m = sweep.logu(rng, m0, m1)
            n = sweep.round_to(sweep.logu(rng, n0, n1), 8, 8)
            k = sweep.round_to(sweep.logu(rng, k0, k1), 8, 64)
            line = f"gemm M={m},N={n},K={k}"
            if 2.0 * m * n * k > sweep.CAP_FLOPS:
                continue
        else:
            line = "gemm " + sweep.gen_gemm(rng, "gemm", i)
        if line not in taken and line not in out:
            out.append(line)
    return out


def merge(new_path, old_path, drop=""):
    new = json.load(open(new_path))
    try:
        old = json.load(open(old_path))
    except (OSError, ValueError):
        old = {"device": new["device"], "entries": []}
    if old.get("device") != new.get("device"):
        sys.exit(f"merge: {old_path} was measured on {old.get('device')}, not {new.get('device')}")
    seen = {(e["op"], json.dumps(e["shape"], sort_keys=True)) for e in new["entries"]}
    for e in old["entries"]:
        if (e["op"], json.dumps(e["shape"], sort_keys=True)) not in seen:
            new["entries"].append(e)
    gone = {tuple(d.split("/", 1)) for d in drop.split(",") if "/" in d}
    for e in new["entries"]:
        for op, name in gone:
            if e["op"] == op and name in e["times_ms"]:
                del e["times_ms"][name]
                e.setdefault("failed", {})[name] = "check failed on the device"
    print(json.dumps(new, indent=1))


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "merge":
    merge(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
elif __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "gemm":
    print("\n".join(draw_gemm(int(sys.argv[2]), int(sys.argv[3]))))
elif __name__ == "__main__":
    print("\n".join(draw(int(sys.argv[1]) if len(sys.argv) > 1 else 4099)))
