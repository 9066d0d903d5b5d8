"""meas_eval.py — the measured-near rule (docs/library.md, "Measured shapes") scored offline
at several thresholds, leave-one-out on a tuned table's own shapes: for each measured shape
t of the ops asked for, the artifact gets the table without t (`cakec lib build ART
--table`), `cakec lib select --json` gives the fit's pick there (the pick it made, or the
`fit_pick` a measured-near choice replaced) and which variants' domains hold; then, for each
threshold C, the rule is replayed in Python: the nearest other measured shape of t's class
(the same bit length and trailing zeros, at most 7, of every dim; the least product over the
dims of the larger over the smaller) overrides the fit's pick with its fastest variant that
holds at t and was timed there C times faster than the pick. Each pick is scored with t's own
times (regret: its time over the fastest's; unscored where t did not time it).

    meas_eval.py CAKEC ART TABLE.json [--op OP,...] [--thresholds 1.05,1.1,...]

Prints, per threshold, the picks the rule moved, how many got better or worse, and the
geomean regret of all scored picks (the fit alone is C = inf).
"""
import json
import math
import os
import subprocess
import sys
import tempfile


def tz(v):
    return min(7, (v & -v).bit_length() - 1)


def klass(dims):
    return tuple((min(31, d.bit_length()), tz(d)) for d in dims)


def apart(a, b):
    p = 1.0
    for x, y in zip(a, b):
        p *= x / y if x > y else y / x
    return p


def main(argv):
    opt = {argv[i][2:]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    args = [a for a in argv if not a.startswith("--") and a not in opt.values()]
    cakec, art, table_path = args[:3]
    ops = opt.get("op", "rmsnorm,layernorm").split(",")
    thr = [float(x) for x in opt.get("thresholds", "1.05,1.1,1.15,1.25,1.5").split(",")]
    table = json.load(open(table_path))
    entries = [e for e in table["entries"] if e["op"] in ops and e.get("times_ms")]
    tmp = tempfile.mkdtemp()
    rows = []
    for e in entries:
        rest = dict(table, entries=[x for x in table["entries"] if x is not e])
        tpath, a = os.path.join(tmp, "t.json"), os.path.join(tmp, "a.cakelib")
        json.dump(rest, open(tpath, "w"))
        subprocess.run([cakec, "lib", "build", art, "--table", tpath, "-o", a], capture_output=True)
        shape = ",".join(f"{k}={v}" for k, v in e["shape"].items())
        p = subprocess.run([cakec, "lib", "select", a, "--op", e["op"], "--shape", shape, "--json"],
                           capture_output=True, text=True)
        try:
            sel = json.loads(p.stdout)["select"]
        except (ValueError, KeyError):
            continue
        if sel["why"] not in ("tuned-fit", "measured-near"):
            continue
        fit = (sel.get("measured") or {}).get("fit_pick", sel["variant"])
        holds = {d["variant"] for d in sel["domains"] if d["holds"]}
        dims = list(e["shape"].values())
        mates = [x for x in entries if x is not e and x["op"] == e["op"] and
                 klass(list(x["shape"].values())) == klass(dims)]
        near = min(mates, key=lambda x: apart(list(x["shape"].values()), dims)) if mates else None
        rows.append((e, fit, holds, near))
        print(f"{e['op']:10s} {shape:20s} fit {fit:18s} near {'-' if not near else near['shape']}", flush=True)
    best = lambda e: min(e["times_ms"].values())
    gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    print(f"\n{len(rows)} fit picks scored leave-one-out; {sum(1 for r in rows if r[3])} have a measured "
          f"shape of their class")
    for c in thr + [float("inf")]:
        regrets, moved, better, worse = [], 0, 0, 0
        for e, fit, holds, near in rows:
            pick = fit
            if near and fit in near["times_ms"]:
                tf = near["times_ms"][fit]
                for v, t in sorted(near["times_ms"].items(), key=lambda kv: kv[1]):
                    if v != fit and v in holds and t * c < tf:
                        pick = v
                        break
            times = e["times_ms"]
            if pick != fit:
                moved += 1
                if pick in times and fit in times:
                    better += times[pick] < times[fit]
                    worse += times[pick] > times[fit]
            if pick in times:
                regrets.append(times[pick] / best(e))
        print(f"C {c:5}: moved {moved:3d} (better {better}, worse {worse}); scored {len(regrets)}, "
              f"geomean regret {gm(regrets):.4f}, within 5% {sum(r <= 1.05 for r in regrets)}")


if __name__ == "__main__":
    main(sys.argv[1:])
