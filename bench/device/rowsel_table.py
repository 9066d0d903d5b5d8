"""rowsel_table.py — run_rowsel.sh's summary: the row ops' dispatch at the acceptance sweep's
layernorm and rmsnorm shapes, against this call's peer and against a reference peer (the
faster of this call's and the earlier sweep's at the same shape: torch.compile specialised
per shape reaches only some shapes in a call's time), the shapes whose pick changed since
that sweep with both times, and the select times.

    rowsel_table.py OUTDIR EARLIER_SWEEP.json

OUTDIR holds sweep.json (sweep.py table of this call) and select.txt (cake_lib_select_speed
lines, then `repeat OP SHAPE NS` lines). ratio = peer ms / library ms.
"""
import json
import math
import os
import sys


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return []


def summary(rows, ref):
    out = ["| op | shapes | checks ok | >= 1.0 (this peer) | geomean | >= 1.0 (ref peer) | geomean (ref) | min (ref) |",
           "|---|---|---|---|---|---|---|---|"]
    for op in ("layernorm", "rmsnorm"):
        rs = [r for r in rows if r["op"] == op and r.get("ms")]
        if not rs:
            out.append(f"| {op} | 0 | - | - | - | - | - | - |")
            continue
        now = [r["peer_ms"] / r["ms"] for r in rs if r.get("peer_ms")]
        refs = []
        for r in rs:
            p = [x for x in (r.get("peer_ms"), (ref.get((op, r["shape"])) or {}).get("peer_ms")) if x]
            if p:
                refs.append(min(p) / r["ms"])
        ok = sum(1 for r in rs if r.get("check"))

        def share(v):
            return f"{100 * sum(x >= 1 for x in v) / len(v):.1f}% of {len(v)}" if v else "-"
        out.append(f"| {op} | {len(rs)} | {ok} | {share(now)} | {geomean(now):.3f} | {share(refs)} | "
                   f"{geomean(refs):.3f} | {min(refs) if refs else float('nan'):.3f} |")
    return out


def changed(rows, ref):
    out = ["", "picks changed since the earlier sweep (its ms -> this call's; ratio against the ref peer; "
           "the 12 that moved most):", "| op | shape | then | ms | now | ms | ratio then -> now |",
           "|---|---|---|---|---|---|---|"]
    n = 0
    moved = []
    for r in rows:
        e = ref.get((r["op"], r["shape"]))
        if not e or not r.get("ms") or e.get("variant") == r.get("variant"):
            continue
        p = min(x for x in (r.get("peer_ms"), e.get("peer_ms"), 1e9) if x)
        then = f"{p / e['ms']:.3f}" if e.get("ms") and p < 1e9 else "-"
        now = f"{p / r['ms']:.3f}" if p < 1e9 else "-"
        moved.append((abs(math.log(r["ms"] / e["ms"])) if e.get("ms") else 9,
                      f"| {r['op']} | {r['shape']} | {e.get('variant')} | {e.get('ms') or 0:.4f} | "
                      f"{r['variant']} | {r['ms']:.4f} | {then} -> {now} |"))
        n += 1
    out += [line for _, line in sorted(moved, reverse=True)[:12]]
    out.append(f"({n} picks changed)")
    if not n:
        out.append("| (none) | | | | | | |")
    return out


def selects(path):
    out = ["", "select (ns per call; cake_lib_select_speed: the median over 64 seeded shapes of each op):"]
    try:
        lines = open(path).read().splitlines()
    except OSError:
        return out + ["(no select.txt)"]
    for line in lines:
        w = line.split()
        if w and w[0] == "repeat":
            out.append(f"lib select --repeat 100000  {w[1]} {w[2]}: {w[3]}")
        elif w and w[0] in ("gemm", "gemm_fp8", "rmsnorm", "layernorm", "softmax", "cross_entropy", "worst"):
            out.append(line.strip())
    return out


def main(outdir, earlier):
    rows = [r for r in load(os.path.join(outdir, "sweep.json")) if r.get("op") in ("layernorm", "rmsnorm")]
    ref = {(r["op"], r["shape"]): r for r in load(earlier)}
    print("\n".join(changed(rows, ref) + selects(os.path.join(outdir, "select.txt")) + [""] +
                    summary(rows, ref)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
