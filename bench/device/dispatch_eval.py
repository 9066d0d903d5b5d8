"""dispatch_eval.py — how well the library's dispatch picks between tuned points, measured
offline (no GPU) from a tuned table's own measurements, leave-one-out: for each measured
shape, the artifact is given the table WITHOUT that shape (`cakec lib build ART --table`,
no compiling), `cakec lib select` picks a variant there, and the pick is scored with the
times measured at that shape: regret = its time / the best variant's time (1.0 is a
perfect pick), and, where the peer was timed there, ratio = peer ms / its time.

    dispatch_eval.py CAKEC ART TABLE.json [PEERS.jsonl] [--op OP] [--limit N] [--held-out 1]

With --held-out 1, ART is scored as it is (already tuned, not rebuilt) at TABLE's shapes,
which it was not tuned on: out of sample (e.g. the sweep's losers timed with --all,
`sweep.py tune LOSERS.jsonl` making the table).

TABLE is the format of `lib tune -o` (run_gsmall.sh's tuned_table.json); PEERS the rows of
sweep.py peers (op, shape, peer_ms). Prints one line per shape and a summary: the share of
shapes picked within 5% of the best, the geomean regret, how the pick was made (why), and
the geomean ratio to the peer of the pick against that of the best variant, and where the
measured-near rule moved a pick (docs/library.md, "Measured shapes"), its regret against
the fit's pick it replaced.
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def shape_text(s):
    return ",".join(f"{k}={v}" for k, v in s.items())


def select(cakec, art, op, shape):
    p = subprocess.run([cakec, "lib", "select", art, "--op", op, "--shape", shape, "--json"],
                       capture_output=True, text=True)
    try:
        sel = json.loads(p.stdout)["select"]
        return sel["variant"], sel["why"], (sel.get("measured") or {}).get("fit_pick", sel["variant"])
    except (ValueError, KeyError):
        return None, "error", None


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    opt = {argv[i][2:]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    args = [a for a in args if a not in opt.values()]
    held_out = opt.get("held-out") == "1"
    cakec, art, table_path = args[0], args[1], args[2]
    peers = {}
    if len(args) > 3:
        for line in open(args[3]):
            if line.startswith("{"):
                r = json.loads(line)
                if r.get("peer_ms"):
                    peers[(r["op"], r["shape"])] = r["peer_ms"]
    table = json.load(open(table_path))
    entries = [e for e in table["entries"] if e.get("times_ms") and
               (not opt.get("op") or e["op"] == opt["op"])]
    if opt.get("limit"):
        entries = entries[:int(opt["limit"])]
    tmp = tempfile.mkdtemp()
    rows = []
    for i, e in enumerate(entries):
        a = art
        if not held_out:
            rest = dict(table, entries=[x for x in table["entries"] if x is not e])
            tpath = os.path.join(tmp, "t.json")
            json.dump(rest, open(tpath, "w"))
            a = os.path.join(tmp, "a.cakelib")
            subprocess.run([cakec, "lib", "build", art, "--table", tpath, "-o", a], capture_output=True)
        shape = shape_text(e["shape"])
        v, why, fit_v = select(cakec, a, e["op"], shape)
        times = e["times_ms"]
        best = min(times, key=times.get)
        t = times.get(v)
        regret = t / times[best] if t else None
        peer = peers.get((e["op"], shape))
        tf = times.get(fit_v)
        rows.append((e["op"], shape, v, why, best, regret, peer / t if peer and t else None,
                     peer / times[best] if peer else None, tf / times[best] if tf else None))
        print(f"{e['op']:10s} {shape:24s} {v or '-':20s} {why:11s} best {best:20s} "
              f"regret {regret if regret is None else round(regret, 3)!s:6s} "
              f"ratio {'-' if not rows[-1][6] else round(rows[-1][6], 3)}", flush=True)
    scored = [r for r in rows if r[5]]
    gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0
    whys = {}
    for r in rows:
        whys[r[3]] = whys.get(r[3], 0) + 1
    print(f"\n{len(rows)} shapes, {len(scored)} scored: within 5% of the best {sum(r[5] <= 1.05 for r in scored)}"
          f", geomean regret {gm([r[5] for r in scored]):.3f}, worst {max([r[5] for r in scored] or [0]):.2f}; "
          f"why {whys}")
    moved = [r for r in scored if r[3] == "measured-near"]
    if moved:
        both = [r for r in moved if r[8]]
        print(f"measured-near moved {len(moved)} picks: regret {gm([r[5] for r in both]):.3f} "
              f"against the fit's {gm([r[8] for r in both]):.3f} at the {len(both)} where both were timed; "
              f"better at {sum(r[5] < r[8] for r in both)}, worse at {sum(r[5] > r[8] for r in both)}")
    withp = [r for r in scored if r[6]]
    if withp:
        print(f"ratio to the peer: picked geomean {gm([r[6] for r in withp]):.3f} "
              f"(>= 1.0: {sum(r[6] >= 1 for r in withp)}/{len(withp)}), best variant "
              f"{gm([r[7] for r in withp]):.3f} (>= 1.0: {sum(r[7] >= 1 for r in withp)}/{len(withp)})")


if __name__ == "__main__":
    main(sys.argv[1:])
