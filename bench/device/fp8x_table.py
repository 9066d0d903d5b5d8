"""fp8x_table.py — the summary of bench/device/run_fp8x.sh: per shape of the fp8 ops (gemm_fp8,
fp8_row_quantize) the variant dispatch chose and its time, the fastest variant timed there
(`lib bench --all`), the fastest peer and the ratios peer ms / library ms; then per op the share
>= 1.0, the minimum and the geomean, for the chosen and for the fastest variant (what a perfect
table gives).

    fp8x_table.py EVAL.jsonl PEERS.jsonl [WINNERS.jsonl] [--peers MORE.jsonl]

PEERS: sweep.py peers rows timed in this call; MORE: peer rows for the shapes PEERS lacks (the
quantizer's from an earlier sweep: the peer column names where they come from). WINNERS:
`lib bench --check` rows of the fastest variants; a shape whose winner failed its check is
marked FAIL.
"""
import json
import math
import sys


def rows(path):
    try:
        return [json.loads(line) for line in open(path) if line.startswith("{")]
    except OSError:
        return []


def summary(name, ratios):
    ratios = [r for r in ratios if r]
    if not ratios:
        return f"{name:36s} no shapes with both times"
    ge = sum(r >= 1.0 for r in ratios)
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    return (f"{name:36s} {len(ratios):3d} shapes  >=1.0 {ge:3d} ({100.0 * ge / len(ratios):5.1f}%)  "
            f"min {min(ratios):.3f}  geomean {gm:.3f}")


def main(argv):
    more = []
    if "--peers" in argv:
        i = argv.index("--peers")
        more = rows(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    peers = {(r["op"], r["shape"]): r for r in more if r.get("peer_ms")}
    peers.update({(r["op"], r["shape"]): r for r in rows(argv[1]) if r.get("peer_ms")})
    checks = {}
    for r in rows(argv[2]) if len(argv) > 2 else []:
        checks[(r.get("op"), r.get("shape"), r.get("variant"))] = bool(r.get("check_ok"))
    evals = rows(argv[0])
    lines = []
    for op in ("gemm_fp8", "fp8_row_quantize"):
        rs = [r for r in evals if r.get("op") == op]
        if not rs:
            continue
        chosen, best = [], []
        print(f"| {op} | chosen | ms | check | fastest | ms | peer | peer ms | chosen | fastest |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rs:
            key = (op, r.get("shape"))
            p = peers.get(key)
            ms = (r.get("bench") or {}).get("median_ms")
            t = r.get("bench_all") or {}
            bv = min(t, key=t.get) if t else None
            bms = t.get(bv) if bv else None
            if r.get("check") is not None or "check_ok" in r:
                ok = "ok" if r.get("check_ok") else "FAIL"
            else:
                ok = {True: "ok", False: "FAIL", None: "-"}[checks.get((op, key[1], bv))]
            pms = p["peer_ms"] if p else None
            rc = pms / ms if pms and ms else None
            rb = pms / bms if pms and bms else None
            chosen.append(rc)
            best.append(rb)
            f = lambda x, d=4: f"{x:.{d}f}" if x else "-"
            print(f"| {key[1]} | {r.get('variant', r.get('error', '-'))} | {f(ms)} | {ok} | {bv or '-'} | "
                  f"{f(bms)} | {p['peer'] if p else '-'} | {f(pms)} | {f(rc, 3)} | {f(rb, 3)} |")
        print()
        lines.append(summary(f"{op}, chosen", chosen))
        if any(best):
            lines.append(summary(f"{op}, fastest variant", best))
    print("\n".join(lines))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1:])
