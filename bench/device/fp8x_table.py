"""fp8x_table.py — the summary of bench/device/run_fp8x.sh: per gemm_fp8 shape the variant
dispatch chose and its time, the fastest variant timed there (`lib bench --all`), the fastest
peer (sweep.py peers) and the ratios peer ms / library ms; then per set of shapes (the sweep's,
the tuning set's) the share >= 1.0, the minimum and the geomean, for the chosen and for the
fastest variant (what a perfect table gives). The tuning set's rows are printed only with
FP8X_ALL_ROWS=1 (its summary lines always).

    fp8x_table.py EVAL.jsonl PEERS.jsonl [TUNE.jsonl [WINNERS.jsonl]]

WINNERS: `lib bench --check` rows of the fastest variants; a shape whose winner failed its
check is marked FAIL.
"""
import json
import math
import os
import sys


def rows(path):
    try:
        return [json.loads(line) for line in open(path) if line.startswith("{")]
    except OSError:
        return []


def summary(name, ratios):
    ratios = [r for r in ratios if r]
    if not ratios:
        return f"{name:28s} no shapes with both times"
    ge = sum(r >= 1.0 for r in ratios)
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return (f"{name:28s} {len(ratios):3d} shapes  >=1.0 {ge:3d} ({100.0 * ge / len(ratios):5.1f}%)  "
            f"min {min(ratios):.3f}  geomean {gm:.3f}")


def main():
    peers = {(r["op"], r["shape"]): r for r in rows(sys.argv[2]) if r.get("peer_ms")}
    checks = {}
    for r in rows(sys.argv[4]) if len(sys.argv) > 4 else []:
        checks[(r.get("op"), r.get("shape"), r.get("variant"))] = bool(r.get("check_ok"))
    sets = [("sweep shapes", rows(sys.argv[1]))]
    if len(sys.argv) > 3:
        sets.append(("tuning shapes", rows(sys.argv[3])))
    lines = []
    for name, rs in sets:
        chosen, best = [], []
        show = name == "sweep shapes" or os.environ.get("FP8X_ALL_ROWS") == "1"
        out = sys.stdout if show else open(os.devnull, "w")
        print(f"| {name} | chosen | ms | check | fastest | ms | peer | peer ms | chosen | fastest |", file=out)
        print("|---|---|---|---|---|---|---|---|---|---|", file=out)
        for r in rs:
            key = (r.get("op"), r.get("shape"))
            p = peers.get(key)
            ms = (r.get("bench") or {}).get("median_ms")
            t = r.get("bench_all") or {}
            bv = min(t, key=t.get) if t else None
            bms = t.get(bv) if bv else None
            ck = r.get("check")
            ok = ("ok" if r.get("check_ok") else "FAIL") if ck is not None else \
                {True: "ok", False: "FAIL", None: "-"}[checks.get((key[0], key[1], bv))]
            pms = p["peer_ms"] if p else None
            rc = pms / ms if pms and ms else None
            rb = pms / bms if pms and bms else None
            chosen.append(rc)
            best.append(rb)
            f = lambda x, d=4: f"{x:.{d}f}" if x else "-"
            print(f"| {key[1]} | {r.get('variant', r.get('error', '-'))} | {f(ms)} | {ok} | {bv or '-'} | "
                  f"{f(bms)} | {p['peer'] if p else '-'} | {f(pms)} | {f(rc, 3)} | {f(rb, 3)} |", file=out)
        lines.append(summary(f"{name}, chosen", chosen))
        if any(best):
            lines.append(summary(f"{name}, fastest variant", best))
        print(file=out)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
