"""gemmx.py — the rows of bench/device/run_gemmx.sh (`lib bench --shapes --all` JSON lines):

    gemmx.py timed ALL.jsonl...            `OP SHAPE` of every row with timings (stdout)
    gemmx.py best ALL.jsonl...             `OP SHAPE VARIANT`: each row's fastest variant
    gemmx.py summary LOSERS TUNE PEERS CHECKS OUT.md
                                           per shape the best and second variant, cuBLAS, the
                                           ratio (cuBLAS ms / best ms) and the best variant's
                                           check; a line per set on stdout, the table in OUT.md
No torch, no GPU.
"""
import json
import math
import sys


def rows(path):
    try:
        return [json.loads(l) for l in open(path) if l.startswith("{")]
    except OSError:
        return []


def timed(paths):
    return [r for p in paths for r in rows(p) if r.get("bench_all")]


def summary(losers, tune, peers, checks, out_path):
    peer = {r["shape"]: r.get("peer_ms") for r in rows(peers) if r.get("op") == "gemm"}
    chk = {r["shape"]: r.get("check_ok") for r in rows(checks)}
    out = open(out_path, "w")
    for title, path in (("losers (sweep shapes, not tuned on)", losers), ("tuning shapes", tune)):
        rs = timed([path])
        out.write(f"\n{title}: {len(rs)}\n\n| shape | best | ms | 2nd | ms | cuBLAS ms | ratio | check |\n"
                  "|---|---|---|---|---|---|---|---|\n")
        ratios = []
        for r in rs:
            t = sorted(r["bench_all"].items(), key=lambda x: x[1])
            pm = peer.get(r["shape"])
            ratio = pm / t[0][1] if pm and t[0][1] else None
            if ratio:
                ratios.append(ratio)
            snd = t[1] if len(t) > 1 else ("-", 0.0)
            c = {True: "ok", False: "FAIL", None: "-"}[chk.get(r["shape"])]
            out.write(f"| {r['shape']} | {t[0][0]} | {t[0][1]:.4f} | {snd[0]} | {snd[1]:.4f} | "
                      f"{pm or 0:.4f} | {ratio or 0:.3f} | {c} |\n")
        if ratios:
            g = math.exp(sum(map(math.log, ratios)) / len(ratios))
            print(f"{title}: {len(ratios)} with cuBLAS, best variant >= 1.0 at "
                  f"{sum(x >= 1 for x in ratios)}, min {min(ratios):.3f}, geomean {g:.3f}")


def main(argv):
    if argv[0] == "timed":
        for r in timed(argv[1:]):
            print(r["op"], r["shape"])
    elif argv[0] == "best":
        for r in timed(argv[1:]):
            t = r["bench_all"]
            print(r["op"], r["shape"], min(t, key=t.get))
    elif argv[0] == "summary":
        summary(*argv[1:6])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
