"""rows3_table.py — the table of bench/device/run_rows3.sh (session 8, round 2).

    python3 bench/device/rows3_table.py LIB.jsonl PEERS.jsonl SWEEP.json OUT.md

LIB.jsonl: `lib bench --shapes rows3_lines.txt --check --sample --json` rows, per shape the
retuned pick first, then (where it differs) the pick of the sweep SWEEP.json (the
2026-12-02 07:00 sweep with a static torch.compile for every shape). PEERS.jsonl: sweep.py
peers rows (the last of a shape is its summary). Per shape: before (the old pick, timed now),
after (the new pick), the peer (its best; `static` where torch.compile specialised to the
shape was among those timed) and peer / ours for both; the old call's ratio beside.
Per op: over the shapes with the static peer in this call, the share >= 1.0, min and
geomean after and before; then over all of the op's sweep shapes, each shape's ratio after
from this call where its static peer was timed, else the old call's peer over the pick's
time here (or the old ratio where the pick is unchanged and not timed): `all`.
"""
import json
import math
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rows2_table import group, jsonl, ms   # noqa: E402

OPS = ("rmsnorm", "layernorm", "fp8_row_quantize", "cross_entropy", "softmax")


def stats(v):
    if not v:
        return "-"
    g = math.exp(sum(math.log(x) for x in v) / len(v))
    return "%3d shapes  >= 1.0 %5.1f%%  min %.3f  geomean %.3f" % (
        len(v), 100.0 * sum(x >= 1.0 for x in v) / len(v), min(v), g)


def main(lib_path, peers_path, sweep_path, out_path):
    shapes, by = group(jsonl(lib_path))
    peers = {}
    for r in jsonl(peers_path):
        peers[(r["op"], r["shape"])] = r
    old = {(r["op"], r["shape"]): r for r in json.load(open(sweep_path))}
    md = ["| op | shape | before (07:00 pick) | ms | after | ms | check | peer | peer ms | before | after | 07:00 ratio |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    per = {}
    failed = []
    for k in shapes:
        rows = by[k]
        new = rows[0]
        o = old.get(k, {})
        before = next((r for r in rows[1:] if r.get("variant") == o.get("variant")), new)
        for r in rows:
            if r.get("check_ok") is False or r.get("error"):
                failed.append((k, r.get("variant"), (r.get("error") or "check failed")[:100]))
        p = peers.get(k, {})
        static = "torch_compile_static" in (p.get("all") or {})
        pm = p.get("peer_ms")
        t_new = ms(new) if new.get("check_ok") else None
        t_old = ms(before) if before.get("check_ok") else None
        r_new = pm / t_new if pm and t_new else None
        r_old = pm / t_old if pm and t_old else None
        s = per.setdefault(k[0], {"after": [], "before": [], "all": []})
        if static and r_new:
            s["after"].append(r_new)
            if r_old:
                s["before"].append(r_old)
            s["all"].append(r_new)
        elif t_new and o.get("peer_ms"):
            s["all"].append(o["peer_ms"] / t_new)
        elif o.get("ratio"):
            s["all"].append(o["ratio"])
        f = lambda x, d=4: ("%." + str(d) + "f") % x if x else "-"
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s%s | %s | %s | %s | %s |" % (
            k[0], k[1], before.get("variant"), f(t_old), new.get("variant"), f(t_new),
            "ok" if new.get("check_ok") and before.get("check_ok") else "FAIL", p.get("peer", "-"),
            "" if static else " (no static)", f(pm), f(r_old, 3), f(r_new, 3), f(o.get("ratio"), 3)))
    for k, r in old.items():   # shapes this call did not time: the old call's ratio
        if k[0] in ("rmsnorm", "layernorm", "fp8_row_quantize", "cross_entropy") and k not in by and r.get("ratio"):
            per.setdefault(k[0], {"after": [], "before": [], "all": []})["all"].append(r["ratio"])
    with open(out_path, "w") as fo:
        fo.write("\n".join(md) + "\n")
    for line in md[2:]:
        c = [x.strip() for x in line.split("|")[1:-1]]
        if c[2] != c[4] or (c[10] != "-" and float(c[10]) < 1.0):
            print("%-16s %-16s %-18s %s -> %-18s %s  peer %s %s  ratio %s -> %s (07:00 %s)" % tuple(c[:6] + c[7:12]))
    print()
    for op in OPS:
        if op in per:
            s = per[op]
            print("%-16s after  (static peer here) %s" % (op, stats(s["after"])))
            print("%-16s before (static peer here) %s" % (op, stats(s["before"])))
            print("%-16s all sweep shapes          %s" % (op, stats(s["all"])))
    for k, v, e in failed[:20]:
        print("CHECK/ERROR: %s %s %s %s" % (k[0], k[1], v, e))
    print("rows %d, failed or errors %d" % (sum(len(v) for v in by.values()), len(failed)))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
