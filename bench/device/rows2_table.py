"""rows2_table.py — the table of bench/device/run_rows2.sh.

    python3 bench/device/rows2_table.py LIB.jsonl PEERS.jsonl OUT.md
    python3 bench/device/rows2_table.py tune TUNE.jsonl
        the tuning rows: per op, at how many shapes the fastest lean variant beat the
        fastest old one, and the geomean of old / lean
    python3 bench/device/rows2_table.py slim FILE.jsonl ...
        the rows cut to what the tables read (the files come back under a size limit), in place
    python3 bench/device/rows2_table.py entries TUNE.jsonl [DEVICE] > PART.json
        the tuning rows as a table part (bench/device/table_merge.py): per shape the times
        of the variants whose check passed

LIB.jsonl: `lib bench --shapes rows2_lines.txt --check --sample --json` rows; the first
row of each shape is its dispatched line (rows2_lines.py writes it first), the others a
named variant. PEERS.jsonl: sweep.py peers rows (the faster of a launch and a graph
replay of the fastest peer). Per shape: the pick, the fastest old variant and the fastest
lean one (kernels/*_lean.tir), each among the rows whose check passed, the peer, and
peer ms / ours. Per op: the share of shapes >= 1.0 and the geomean, with the pick and with
the fastest variant timed. Failed checks are listed. The markdown table goes to OUT.md,
the compact one to stdout.
"""
import json
import math
import sys


def jsonl(path):
    rows = []
    try:
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return rows


def ms(r):
    b = r.get("bench") or {}
    return b.get("median_ms")


def fastest(rows):
    best = None
    for r in rows:
        t = ms(r)
        if t and r.get("check_ok") and (best is None or t < ms(best)):
            best = r
    return best


def main(lib_path, peers_path, out_path):
    lib, peers = jsonl(lib_path), jsonl(peers_path)
    shapes, by = group(lib)
    peer = {(p["op"], p["shape"]): p for p in peers if p.get("peer_ms")}
    bad = [r for r in lib if r.get("check_ok") is False or r.get("error")]
    md = ["| op | shape | pick | us | fastest old | us | fastest lean | us | peer | peer us | ratio pick | ratio best |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    compact = ["%-9s %-16s %-15s %6s  %-15s %6s  %-15s %6s  %6s  %5s %5s" %
               ("op", "shape", "pick", "us", "fastest old", "us", "fastest lean", "us", "peer", "r.pick", "r.best")]
    per_op = {}

    def us(t):
        return "%.2f" % (t * 1e3) if t else "-"
    for k in shapes:
        rows = by[k]
        pick, rest = rows[0], rows[1:]
        old = fastest([r for r in rest if not r.get("variant", "").startswith("lean")] +
                      ([pick] if not pick.get("variant", "").startswith("lean") else []))
        lean = fastest([r for r in rest if r.get("variant", "").startswith("lean")])
        best = fastest([x for x in (old, lean, pick) if x])
        p = peer.get(k)
        pm = p["peer_ms"] if p else None
        rp = pm / ms(pick) if pm and ms(pick) and pick.get("check_ok") else None
        rb = pm / ms(best) if pm and best else None
        s = per_op.setdefault(k[0], {"pick": [], "best": []})
        if rp:
            s["pick"].append(rp)
        if rb:
            s["best"].append(rb)
        name = lambda r: r.get("variant", "-") if r else "-"
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            k[0], k[1], name(pick), us(ms(pick)), name(old), us(ms(old) if old else None), name(lean),
            us(ms(lean) if lean else None), p["peer"] if p else "-", us(pm),
            "%.3f" % rp if rp else "-", "%.3f" % rb if rb else "-"))
        compact.append("%-9s %-16s %-15s %6s  %-15s %6s  %-15s %6s  %6s  %5s %5s" % (
            k[0], k[1], name(pick)[:15], us(ms(pick)), name(old)[:15], us(ms(old) if old else None),
            name(lean)[:15], us(ms(lean) if lean else None), us(pm),
            "%.2f" % rp if rp else "-", "%.2f" % rb if rb else "-"))
    with open(out_path, "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(compact))
    for r in bad[:12]:
        print("CHECK/ERROR: %s %s %s %s" % (r.get("op"), r.get("shape"), r.get("variant", "-"),
                                           (r.get("error") or "check failed")[:100]))
    print("rows %d, checks passed %d, failed or errors %d" %
          (len(lib), sum(1 for r in lib if r.get("check_ok")), len(bad)))
    for op, s in sorted(per_op.items()):
        for what in ("pick", "best"):
            v = s[what]
            if v:
                print("%-9s %-4s shapes %2d  >= 1.0 %5.1f%%  geomean %.3f  min %.3f" % (
                    op, what, len(v), 100.0 * sum(x >= 1.0 for x in v) / len(v),
                    math.exp(sum(math.log(x) for x in v) / len(v)), min(v)))


def group(rows):
    shapes, by = [], {}
    for r in rows:
        k = (r.get("op"), r.get("shape"))
        if k not in by:
            shapes.append(k)
            by[k] = []
        by[k].append(r)
    return shapes, by


def tune_main(path):
    shapes, by = group(jsonl(path))
    per = {}
    for k in shapes:
        old = fastest([r for r in by[k] if not r.get("variant", "").startswith("lean")])
        lean = fastest([r for r in by[k] if r.get("variant", "").startswith("lean")])
        if old and lean:
            per.setdefault(k[0], []).append(ms(old) / ms(lean))
    for op, v in sorted(per.items()):
        print("tune %-9s shapes %2d  lean fastest at %2d  old/lean geomean %.3f  min %.3f  max %.3f" % (
            op, len(v), sum(x > 1.0 for x in v), math.exp(sum(math.log(x) for x in v) / len(v)),
            min(v), max(v)))


def entries_main(path, device="NVIDIA H200"):
    shapes, by = group(jsonl(path))
    out = []
    for k in shapes:
        times = {}
        for r in by[k]:
            t = ms(r)
            v = r.get("variant")
            if t and v and r.get("check_ok") and (v not in times or t < times[v]):
                times[v] = t
        if times:
            shape = {a: int(b) for a, b in (kv.split("=") for kv in k[1].split(","))}
            out.append({"op": k[0], "shape": shape, "times_ms": times, "failed": {}})
    json.dump({"device": device, "runner": "local", "entries": out}, sys.stdout, indent=1)
    print()


def slim_main(paths):
    for path in paths:
        rows = jsonl(path)
        with open(path, "w") as f:
            for r in rows:
                b = r.get("bench") or {}
                c = [{k: x.get(k) for k in ("status", "ok", "max_rel_err", "bad_elements")}
                     for x in r.get("check") or []]
                keep = {k: r[k] for k in ("line", "op", "shape", "variant", "check_ok", "exit", "error")
                        if k in r}
                if c:
                    keep["check"] = c
                if b:
                    keep["bench"] = {k: b.get(k) for k in ("median_ms", "min_ms", "runs", "registers",
                                                           "grid", "block") if k in b}
                f.write(json.dumps(keep) + "\n")


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "tune":
        tune_main(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "slim":
        slim_main(sys.argv[2:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "entries":
        entries_main(*sys.argv[2:4])
    elif len(sys.argv) == 4:
        main(*sys.argv[1:])
    else:
        sys.exit(__doc__)
