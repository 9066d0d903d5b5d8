"""norms_table.py — the table of bench/device/run_norms.sh (the row ops: rmsnorm,
layernorm, softmax, cross_entropy, fp8_row_quantize).

  norms_table.py best ALL.jsonl > BEST.txt
      from `lib bench --shapes --all` rows: one `OP SHAPE VARIANT` line per shape, the
      fastest variant there (run again with --check to check and time it)
  norms_table.py table LIB.jsonl BEST.jsonl PEERS.jsonl ALL.jsonl OUTDIR
      per shape: the dispatched variant (LIB), the fastest variant (BEST), both checked,
      against the best peer (PEERS, bench/device/sweep.py peers); OUTDIR/norms_table.md
      and norms.json; prints the per-op summary (>= 1.0 share, min, geomean) last
"""
import json
import math
import os
import sys

OPS = ("rmsnorm", "layernorm", "softmax", "cross_entropy", "fp8_row_quantize")


def rows_of(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("{"):
                r = json.loads(line)
                if "op" in r:
                    out[(r["op"], r.get("shape", ""))] = r
    return out


def best_main(path):
    for (op, shape), r in rows_of(path).items():
        times = r.get("bench_all") or {}
        if times:
            print(op, shape, min(times, key=times.get))


def checked(r):
    cs = r.get("check") or []
    return bool(r.get("check_ok")) and bool(cs) and all(c.get("ok") for c in cs)


def ms_of(r):
    return (r.get("bench") or {}).get("median_ms")


def stats(rat):
    if not rat:
        return "    -      -       -"
    share = sum(1 for x in rat if x >= 1.0) / len(rat)
    gm = math.exp(sum(math.log(x) for x in rat) / len(rat))
    return f"{100 * share:5.1f}%  {min(rat):5.3f}  {gm:6.3f}"


def table_main(lib_p, best_p, peers_p, all_p, outdir):
    lib, best, peers, allv = rows_of(lib_p), rows_of(best_p), rows_of(peers_p), rows_of(all_p)
    keys = list(dict.fromkeys(list(lib) + list(best) + list(peers)))
    rows = []
    for k in keys:
        li, be, pe = lib.get(k, {}), best.get(k, {}), peers.get(k, {})
        pms = pe.get("peer_ms")
        lms, bms = ms_of(li), ms_of(be)
        rows.append({"op": k[0], "shape": k[1], "peer": pe.get("peer", "-"), "peer_ms": pms,
                     "variant": li.get("variant", "-"), "ms": lms, "check": checked(li),
                     "ratio": pms / lms if pms and lms else None,
                     "best": be.get("variant", "-"), "best_ms": bms, "best_check": checked(be),
                     "best_ratio": pms / bms if pms and bms else None,
                     "all": (allv.get(k) or {}).get("bench_all"),
                     "error": li.get("error") or be.get("error") or pe.get("error")})
    os.makedirs(outdir, exist_ok=True)
    json.dump(rows, open(os.path.join(outdir, "norms.json"), "w"), indent=0)

    def f(v, d):
        return "-" if v is None else f"{v:.{d}f}"
    lines = ["| op | shape | peer | peer ms | dispatched | check | ms | ratio | fastest | check | ms | ratio |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['op']} | {r['shape']} | {r['peer']} | {f(r['peer_ms'], 4)} | {r['variant']} | "
                     f"{'ok' if r['check'] else 'FAIL'} | {f(r['ms'], 4)} | {f(r['ratio'], 3)} | {r['best']} | "
                     f"{'ok' if r['best_check'] else 'FAIL'} | {f(r['best_ms'], 4)} | {f(r['best_ratio'], 3)} |"
                     + (f" {r['error'][:100]}" if r["error"] else ""))
    open(os.path.join(outdir, "norms_table.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print()
    print("op                 shapes  dispatched: >=1.0   min  geomean checks | fastest: >=1.0   min  geomean checks")
    for op in OPS:
        rs = [r for r in rows if r["op"] == op]
        if not rs:
            continue
        a = [r["ratio"] for r in rs if r["ratio"]]
        b = [r["best_ratio"] for r in rs if r["best_ratio"]]
        print(f"{op:18s} {len(rs):6d}  {stats(a)}  {sum(r['check'] for r in rs):2d}/{len(rs):<2d}   |  "
              f"{stats(b)}  {sum(r['best_check'] for r in rs):2d}/{len(rs)}")


if __name__ == "__main__":
    if sys.argv[1] == "best":
        best_main(sys.argv[2])
    else:
        table_main(*sys.argv[2:7])
