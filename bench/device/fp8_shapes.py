"""fp8_shapes.py — the shapes the gemm_fp8 dispatch table is tuned at (bench/device/run_fp8x.sh):
log-uniform like the acceptance sweep (bench/device/sweep.py, whose generator it uses) but from
another seed, so the sweep measures the table at shapes it was not tuned at (a shape that
happens to be one of the sweep's is dropped). Beside the sweep's own distribution (a third with
M <= 64), a share drawn where gemm_fp8 lost the last sweep: M <= 128 with K >= 1024, and N <= 256.

    fp8_shapes.py [SEED]       one `gemm_fp8 M=..,N=..,K=..` per line on stdout (default 5167)
    fp8_shapes.py quant [SEED] the fp8_row_quantize tuning shapes (default 6173): the sweep's
                               distribution, and where it lost in the 2026-12-01 sweep: many
                               short rows (N 64 .. 1024, odd and even, M 10^3 .. 10^6) and few
                               rows (M <= 128) of any N, a third of them with N % 8 == 0
    fp8_shapes.py merge-op OP NEW.json TABLE.json > OUT.json
                               TABLE with its OP entries replaced by NEW's (the `lib tune -o`
                               format; one kind of device): how an op's tuned entries are
                               folded into bench/device/sweep_table_h200.json
    fp8_shapes.py table OP NEW.json OLD.json ARTIFACT > TABLE.json
                               NEW's OP entries, plus OLD's OP entries at shapes NEW did not
                               measure that are not the sweep's and that are complete: every
                               variant whose domain holds there (`cakec lib select ARTIFACT
                               --json`, $CAKEC or build/cakec) has a time or a failure in them
    fp8_shapes.py predict ARTIFACT ALL.jsonl PEERS.jsonl
                               what dispatch through ARTIFACT (built with a table) would give at
                               the shapes of ALL.jsonl (`lib bench --all` rows, e.g. the sweep's,
                               measured but not tuned at): per shape the variant `lib select`
                               picks, its time in ALL, the fastest variant's and the peer's
    fp8_shapes.py loo TABLE.json... [PEERS.jsonl...] [ART.cakelib]
                               gemmx.py loo's dispatch rules scored leave-one-out on the
                               tables' gemm_fp8 entries (the fitted model with an artifact
                               built with a table whose gemm_fp8 variants have a `fit`)

bench/device/fp8_tune_shapes.txt is the output at 5167.
"""
import json
import math
import os
import random
import subprocess
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


QUANT_DRAWN = 32
QUANT_LOSSES = 24


def quant_loss_shape(rng, i):
    logu = sweep.logu
    for _ in range(1000):
        if i % 2 == 0:   # many short rows
            m, n = logu(rng, 1000, 1_000_000), logu(rng, 64, 1024)
        else:            # few rows
            m, n = logu(rng, 1, 128), logu(rng, 64, 65536)
        if i % 3 == 0:   # whole 16-byte vectors: the kernels' other path
            n = sweep.round_to(n, 8, 64)
        if m * n <= sweep.CAP_ELEMS:
            return f"M={m},N={n}"
    return "M=1000,N=140"


def draw_quant(seed):
    rng = random.Random(seed)
    op = "fp8_row_quantize"
    taken = {line.split()[1] for line in sweep.shapes(2027) if line.startswith(op + " ")}
    out = [sweep.gen_rows(rng, 65536) for _ in range(QUANT_DRAWN)]
    out += [quant_loss_shape(rng, i) for i in range(QUANT_LOSSES)]
    rng.shuffle(out)
    seen = set()
    return [f"{op} {s}" for s in out if s not in taken and not (s in seen or seen.add(s))]


def merge_op(op, new_path, table_path):
    new, table = json.load(open(new_path)), json.load(open(table_path))
    if new.get("device") != table.get("device"):
        sys.exit(f"merge-op: {new_path} was measured on {new.get('device')}, "
                 f"{table_path} on {table.get('device')}")
    mine = [e for e in new["entries"] if e["op"] == op]
    table["entries"] = [e for e in table["entries"] if e["op"] != op] + mine
    print(json.dumps(table, indent=1))


def select(art, op, shape):
    cakec = os.environ.get("CAKEC", "build/cakec")
    out = subprocess.run([cakec, "lib", "select", art, "--op", op, "--shape", shape, "--json"],
                         capture_output=True, text=True).stdout
    return json.loads(out).get("select") or {}


def shape_text(shape):
    return ",".join(f"{k}={v}" for k, v in shape.items())


def table(op, new_path, old_path, art):
    new, old = json.load(open(new_path)), json.load(open(old_path))
    if new.get("device") != old.get("device"):
        sys.exit(f"table: {new_path} was measured on {new.get('device')}, {old_path} on {old.get('device')}")
    taken = {line.split()[1] for line in sweep.shapes(2027) if line.startswith(op + " ")}
    mine = [e for e in new["entries"] if e["op"] == op]
    seen = {shape_text(e["shape"]) for e in mine}
    kept = []
    for e in old["entries"]:
        s = shape_text(e["shape"])
        if e["op"] != op or s in seen or s in taken:
            continue
        holds = [d["variant"] for d in select(art, op, s).get("domains", []) if d.get("holds")]
        known = set(e.get("times_ms", {})) | set(e.get("failed", {}))
        if holds and all(v in known for v in holds):
            kept.append(e)
    print(f"table: {len(mine)} new entries, {len(kept)} old kept", file=sys.stderr)
    print(json.dumps({"device": new["device"], "runner": new.get("runner", "local"),
                      "entries": mine + kept}, indent=1))


def predict(art, all_path, peers_path):
    peers = {}
    for line in open(peers_path):
        if line.startswith("{"):
            r = json.loads(line)
            if r.get("peer_ms"):
                peers[(r["op"], r["shape"])] = r
    ratios, best = [], []
    for line in open(all_path):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        t = r.get("bench_all")
        p = peers.get((r["op"], r["shape"]))
        if not t or not p:
            continue
        sel = select(art, r["op"], r["shape"])
        v = sel.get("variant")
        bv = min(t, key=t.get)
        ms = t.get(v)
        ratio = p["peer_ms"] / ms if ms else None
        ratios.append(ratio)
        best.append(p["peer_ms"] / t[bv])
        print(f"{r['shape']:24s} {v or '-':22s} {sel.get('why', '-'):10s} {ms or 0:.4f}  best {bv:22s} "
              f"{t[bv]:.4f}  {p['peer']:20s} {p['peer_ms']:.4f}  ratio {ratio or 0:.3f}")
    for name, rs in (("picked", ratios), ("fastest", best)):
        rs = [x for x in rs if x]
        if rs:
            gm = math.exp(sum(math.log(x) for x in rs) / len(rs))
            print(f"{name}: {len(rs)} shapes, >=1.0 {sum(x >= 1.0 for x in rs)}, min {min(rs):.3f}, "
                  f"geomean {gm:.3f}")


def loo(args):
    import tempfile
    import gemmx
    tables, rest = [], []
    for a in args:
        if a.endswith(".json"):
            t = json.load(open(a))
            t["entries"] = [dict(e, op="gemm") for e in t["entries"] if e["op"] == "gemm_fp8"]
            f = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
            json.dump(t, f)
            f.close()
            tables.append(f.name)
        elif a.endswith(".jsonl"):
            f = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False)
            for r in gemmx.rows(a):
                if r.get("op") == "gemm_fp8":
                    f.write(json.dumps(dict(r, op="gemm")) + "\n")
            f.close()
            rest.append(f.name)
        else:
            rest.append(a)
    geometry = gemmx.artifact_geometry
    gemmx.artifact_geometry = lambda path: geometry(path, "gemm_fp8")
    gemmx.main(["loo"] + tables + rest)


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "loo":
    loo(sys.argv[2:])
elif __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "merge-op":
    merge_op(sys.argv[2], sys.argv[3], sys.argv[4])
elif __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "table":
    table(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
elif __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "predict":
    predict(sys.argv[2], sys.argv[3], sys.argv[4])
elif __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "quant":
    print("\n".join(draw_quant(int(sys.argv[2]) if len(sys.argv) > 2 else 6173)))
elif __name__ == "__main__":
    print("\n".join(draw(int(sys.argv[1]) if len(sys.argv) > 1 else 5167)))
