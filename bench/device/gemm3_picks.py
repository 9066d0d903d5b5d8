"""gemm3_picks.py — which GEMM picks a new table changes, and whether they go the right way.

    gemm3_picks.py CAKEC OLD.cakelib NEW.cakelib SHAPES.txt [ALL.jsonl PEERS.jsonl] [--changed OUT.txt]

SHAPES.txt: `OP SHAPE` lines (e.g. `sweep.py shapes 2027 | grep '^gemm'`). Per shape the
pick of each artifact (`cakec lib select --json`: variant and why); a line per changed pick.
ALL.jsonl (`lib bench --all` rows, e.g. session 8's losers_all.jsonl at the sweep's losers:
diagnosis only, never table entries) and PEERS.jsonl (sweep.py peers) give, where the shape
was timed, each pick's time, the fastest variant's, the peer's and the ratios (peer ms /
ours). --changed writes `OP SHAPE NEW OLD` for every changed pick (run_gemm3.sh's input).
No torch, no GPU.
"""
import json
import subprocess
import sys


def rows(path):
    try:
        return [json.loads(l) for l in open(path) if l.startswith("{")]
    except OSError:
        return []


def select(cakec, art, op, shape):
    p = subprocess.run([cakec, "lib", "select", art, "--op", op, "--shape", shape, "--json"],
                       capture_output=True, text=True)
    try:
        s = json.loads(p.stdout)["select"]
        return s["variant"], s.get("why", "")
    except (ValueError, KeyError):
        return None, "error"


def main(argv):
    out = None
    if "--changed" in argv:
        i = argv.index("--changed")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    cakec, old_art, new_art, shapes = argv[:4]
    timed = {(r["op"], r["shape"]): r["bench_all"] for r in rows(argv[4])
             if r.get("bench_all")} if len(argv) > 4 else {}
    peer = {(r.get("op"), r["shape"]): r.get("peer_ms") for r in rows(argv[5])} if len(argv) > 5 else {}
    changed, n, good, bad = [], {}, 0, 0
    print("| op | shape | old pick (why) | new pick (why) | old ms | new ms | best | ms | peer | old | new |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for line in open(shapes):
        if not line.strip():
            continue
        op, shape = line.split()[:2]
        n[op] = n.get(op, 0) + 1
        (o, ow), (v, vw) = select(cakec, old_art, op, shape), select(cakec, new_art, op, shape)
        if o == v:
            continue
        changed.append(f"{op} {shape} {v} {o}")
        t = timed.get((op, shape), {})
        pm = peer.get((op, shape))
        best = min(t, key=t.get) if t else None
        f = lambda x: f"{x:.4f}" if x else "-"
        r = lambda x: f"{pm / x:.3f}" if x and pm else "-"
        if t.get(o) and t.get(v):
            good += t[v] < t[o]
            bad += t[v] > t[o]
        print(f"| {op} | {shape} | {o} ({ow}) | {v} ({vw}) | {f(t.get(o))} | {f(t.get(v))} | "
              f"{best or '-'} | {f(t.get(best))} | {f(pm)} | {r(t.get(o))} | {r(t.get(v))} |")
    print(f"\nchanged picks: {len(changed)} of " + ", ".join(f"{op} {k}" for op, k in n.items())
          + f"; timed both: faster {good}, slower {bad}")
    if out:
        open(out, "w").write("".join(c + "\n" for c in changed))


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(sys.argv[1:])
