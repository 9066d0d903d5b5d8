"""rows4_table.py — the table of bench/device/run_rows4.sh (session 10, the row ops' new
variants at the structural losers of issue 13's sweep).

    python3 bench/device/rows4_table.py LIB.jsonl TUNE.jsonl PEERS.jsonl NEW.txt OUT.md [SWEEP.json ...]

LIB.jsonl: `lib bench --shapes rows4_loser_lines.txt --check --sample --json` rows, per
loser shape (sweep shapes: diagnosis only, never folded) the current pick first, then the
new variants (NEW.txt: `OP VARIANT` lines) and the sweep's old picks. PEERS.jsonl: sweep.py
peers rows (the last of a shape is its summary). Per loser shape: the pick, the fastest
new variant, the fastest of all timed, the peer, and peer / ours for the pick and the
fastest new one. Then per tuning shape of TUNE.jsonl (not sweep shapes: what
rows2_fold.py folds): the pick, the fastest variant, whether it is a new one, and the
pick's slowdown. Rows whose check failed are left out of every minimum. A loser shape
whose peer this call did not time takes the peer of the SWEEP.json files (the last that has
it), its peer ms marked `*`.
"""
import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from rows2_table import group, jsonl, ms   # noqa: E402


def fastest(rows, keep=lambda r: True):
    ok = [r for r in rows if r.get("check_ok") and ms(r) and keep(r)]
    return min(ok, key=ms) if ok else None


def cell(r):
    return ("%s | %.4f" % (r["variant"], ms(r))) if r else "- | -"


def ratio(peer, r):
    return "%.3f" % (peer / ms(r)) if peer and r else "-"


def main(lib_path, tune_path, peers_path, new_path, out_path, *sweeps):
    old = {}
    for path in sweeps:
        for r in json.load(open(path)):
            if r.get("peer_ms"):
                old[(r["op"], r["shape"])] = r["peer_ms"]
    new = set()
    for line in open(new_path):
        p = line.split()
        if len(p) == 2:
            new.add((p[0], p[1]))
    peers = {(r["op"], r["shape"]): r for r in jsonl(peers_path)}
    md = ["| op | shape | pick | ms | best new | ms | best of all | ms | peer ms | pick ratio | new ratio |",
          "|---|---|---|---|---|---|---|---|---|---|---|"]
    shapes, by = group(jsonl(lib_path))
    wins = 0
    for k in shapes:
        rows = by[k]
        pick = rows[0] if rows[0].get("check_ok") else None
        bn = fastest(rows, lambda r: (k[0], r.get("variant")) in new)
        ba = fastest(rows)
        p = peers.get(k, {}).get("peer_ms")
        mark = ""
        if not p and k in old:
            p, mark = old[k], "*"
        if p and bn and p / ms(bn) >= 1.0:
            wins += 1
        md.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            k[0], k[1], cell(pick), cell(bn), cell(ba), "%.4f%s" % (p, mark) if p else "-",
            ratio(p, pick), ratio(p, bn)))
    md.append("")
    md.append("loser shapes: %d, the fastest new variant >= 1.0x the peer at %d" % (len(shapes), wins))
    md.append("")
    md.append("| op | tuning shape | pick | ms | fastest | ms | new? | pick / fastest |")
    md.append("|---|---|---|---|---|---|---|---|")
    shapes, by = group(jsonl(tune_path))
    newbest = 0
    for k in shapes:
        rows = by[k]
        pick = rows[0] if rows[0].get("check_ok") else None
        ba = fastest(rows)
        isnew = bool(ba) and (k[0], ba["variant"]) in new
        newbest += isnew
        md.append("| %s | %s | %s | %s | %s | %s |" % (
            k[0], k[1], cell(pick), cell(ba), "new" if isnew else "",
            "%.3f" % (ms(pick) / ms(ba)) if pick and ba else "-"))
    md.append("")
    md.append("tuning shapes: %d, a new variant the fastest at %d" % (len(shapes), newbest))
    open(out_path, "w").write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main(*sys.argv[1:])
