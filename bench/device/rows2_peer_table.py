"""rows2_peer_table.py — the tables of bench/device/run_rows2.sh (session 8).

    python3 bench/device/rows2_peer_table.py PEER.jsonl [TUNE.jsonl [LOSERS.jsonl]]

PEER.jsonl (rows2_peer.py): per shape torch.compile's time and kernel (config, grid, block,
registers, SASS counts) beside ours (the pick, the best new variant; one timer), and the
page placement probe. TUNE / LOSERS (`lib bench --json` rows, rows2_lines.py's layout: the
dispatched variant first): per shape the pick and the fastest new variant (the runtime's
timer, checked rows only); per op how often a new variant is the faster, the geomean of
pick / best new.
"""
import json
import math
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rows2_table import fastest, group, jsonl, ms   # noqa: E402

KEYS = ("instructions", "LDG", "STG", "BAR", "SHFL", "LDS", "STS", "MUFU")


def sass_brief(c):
    """'instr 212 LDG.E.64x2 STG.E.64x2 BAR.SYNC x2 SHFL x10': the memory and sync counts"""
    if not c or "error" in c:
        return (c or {}).get("error", "-")[:40]
    parts = ["n%d" % c.get("instructions", 0)]
    for k in sorted(c):
        if k.split(".")[0] in KEYS[1:]:
            parts.append("%s:%d" % (k, c[k]))
    return " ".join(parts)


def new_variant(v):
    return v.startswith("leanb") or v.startswith("lean")


def peer_main(path):
    rows = jsonl(path)
    print("| op | shape | peer us | peer kernel: config, grid x block, regs | ours (pick) us | best other us | r.pick | r.best | place far / near us |")
    print("|---|---|---|---|---|---|---|---|---|")
    per = {}
    for r in rows:
        ks = r.get("peer_kernels") or []
        cfg = ", ".join("%s %s" % (k.get("kernel", "?")[-24:], k.get("config")) for k in ks)
        la = r.get("peer_launches") or []
        geo = "; ".join("%s x %s r%s" % (x.get("grid"), x.get("block"), x.get("regs")) for x in la)
        ours = r.get("ours") or {}
        pick = r.get("pick")
        po = ours.get(pick) or {}
        others = [(v, o) for v, o in ours.items() if v != pick and o.get("us") and o.get("ok")]
        bo = min(others, key=lambda vo: vo[1]["us"]) if others else None
        pu = r.get("peer_stream_us") or r.get("peer_us")   # ours are timed as launched: so the peer
        rp = pu / po["us"] if pu and po.get("us") and po.get("ok") else None
        best_us = min([x for x in (po.get("us") if po.get("ok") else None, bo[1]["us"] if bo else None) if x],
                      default=None)
        rb = pu / best_us if pu and best_us else None
        place = ""
        for v, o in ours.items():
            if "place_far_8MiB" in o:
                place = "%s %.2f / %.2f (torch's %.2f)" % (v, o["place_far_8MiB"]["us"], o["place_near_4KiB"]["us"],
                                                         o.get("us", 0))
        print("| %s | %s | %s | %s; %s | %s %s | %s | %s | %s | %s |" % (
            r["op"], r["shape"], "%s (best %s)" % (pu, r.get("peer_us")), cfg, geo, pick, po.get("us", po.get("error", "-")),
            "%s %s" % (bo[0], bo[1]["us"]) if bo else "-", "%.3f" % rp if rp else "-",
            "%.3f" % rb if rb else "-", place))
        s = per.setdefault(r["op"], {"pick": [], "best": []})
        if rp:
            s["pick"].append(rp)
        if rb:
            s["best"].append(rb)
    print()
    for op, s in sorted(per.items()):
        for what in ("pick", "best"):
            v = s[what]
            if v:
                print("peer %-16s %-4s shapes %2d  >= 1.0 %5.1f%%  geomean %.3f  min %.3f" % (
                    op, what, len(v), 100.0 * sum(x >= 1.0 for x in v) / len(v),
                    math.exp(sum(math.log(x) for x in v) / len(v)), min(v)))
    print()
    print("SASS (peer's kernel | ours: the pick | the best other):")
    for r in rows:
        ks = r.get("peer_kernels") or []
        ours = r.get("ours") or {}
        pick = r.get("pick")
        print("%s %s" % (r["op"], r["shape"]))
        for k in ks:
            print("   peer %-40s %s regs %s" % (k.get("kernel", "?")[-40:], sass_brief(k.get("sass_counts")), k.get("regs")))
            for lay in k.get("layouts", [])[:2]:
                print("        " + lay[:150])
        for v, o in ours.items():
            la = (o.get("launch") or [{}])[0] if o.get("launch") else {}
            print("   %-4s %-40s %s | %s x %s | %s | %s us ok %s" % (
                "pick" if v == pick else "", v, sass_brief(o.get("sass")), la.get("grid"), la.get("block"),
                (o.get("sass") or {}).get("ptxas", ""), o.get("us"), o.get("ok")))
        if r.get("peer_error"):
            print("   peer error: " + r["peer_error"][:200])


def lines_main(path, label):
    shapes, by = group(jsonl(path))
    per = {}
    bad = 0
    for k in shapes:
        rows = by[k]
        bad += sum(1 for r in rows if r.get("check_ok") is False or r.get("error"))
        pick = rows[0] if rows and rows[0].get("check_ok") else None
        new = fastest([r for r in rows[1:] if new_variant(r.get("variant", ""))])
        if pick and new and ms(pick) and ms(new):
            per.setdefault(k[0], []).append((ms(pick) / ms(new), k[1], pick.get("variant"), ms(pick),
                                             new.get("variant"), ms(new)))
    print("%s: %d shapes, %d rows failed a check or broke" % (label, len(shapes), bad))
    for op, v in sorted(per.items()):
        g = math.exp(sum(math.log(x[0]) for x in v) / len(v))
        print("%s %-16s shapes %2d  new faster at %2d  pick / best new geomean %.3f  max %.3f" % (
            label, op, len(v), sum(x[0] > 1.0 for x in v), g, max(x[0] for x in v)))
        for x in sorted(v, reverse=True)[:6]:
            print("    %-16s %-14s %.2f -> %-20s %.2f us" % (x[1], x[2], x[3] * 1e3, x[4], x[5] * 1e3))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    peer_main(sys.argv[1])
    for p, label in zip(sys.argv[2:4], ("tune", "losers")):
        print()
        lines_main(p, label)
