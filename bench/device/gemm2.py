"""gemm2.py — the diagnosis of bench/device/run_gemm2.sh's losing GEMM shapes:
    gemm2.py diagnose ALL.jsonl PEERS.jsonl CHECKS.jsonl OUT.md
        per shape timed with `lib bench --all`: the artifact's pick and its time, the fastest
        variant and its time, cuBLAS (sweep.py peers), both ratios (cuBLAS ms / ours) and the
        verdict: `selection` where the fastest variant is >= 5% faster than the pick and
        reaches 0.95 of cuBLAS, `missing` where even the fastest is below 0.95, `ok` where
        the pick is at 0.95 or more; the table in OUT.md and on stdout, a count line last
    gemm2.py narrow ALL.jsonl PEERS.jsonl CHECKS.jsonl NEW_RE OUT.md
        per shape timed with `lib bench --all` (both GEMM ops): the pick, the fastest old
        variant and the fastest new one (name matching the regex NEW_RE), each with its
        ratio to the peer (peer ms / ours), and the check of the fastest; counts last
    gemm2.py oldpicks SWEEP.json VAL.jsonl
        `OP SHAPE VARIANT` for every shape of VAL (`lib bench` rows) whose pick differs from
        the pick SWEEP.json (an earlier acceptance sweep, sweep.py's output) made there
    gemm2.py before VAL.jsonl OLD.jsonl PEERS.jsonl OUT.md
        before -> after per shape and per op (both GEMM ops): after is VAL's pick, before the
        earlier pick timed in the same call (OLD's row at that shape, else VAL's: the pick is
        the same), each against the peer of this call (peer ms / ours); a shape counts only
        where its pick passed its check (a failed check is listed as FAIL)
No torch, no GPU.
"""
import json
import math
import re
import sys


def rows(path):
    try:
        return [json.loads(l) for l in open(path) if l.startswith("{")]
    except OSError:
        return []


def verdict(pick_ratio, best_ratio, pick_ms, best_ms):
    if pick_ratio is None:
        return "-"
    if pick_ratio >= 0.95:
        return "ok"
    if best_ms < pick_ms / 1.05 and best_ratio >= 0.95:
        return "selection"
    return "missing"


def diagnose(all_path, peers_path, checks_path, out_path):
    peer = {r["shape"]: r.get("peer_ms") for r in rows(peers_path) if r.get("op") == "gemm"}
    chk = {r["shape"]: r.get("check_ok") for r in rows(checks_path)}
    lines = ["| shape | pick | ms | fastest | ms | cuBLAS ms | pick ratio | best ratio | verdict | check |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    count = {}
    for r in rows(all_path):
        times = r.get("bench_all")
        if not times:
            continue
        best = min(times, key=times.get)
        pick = r.get("variant")
        pick_ms = times.get(pick) or (r.get("bench") or {}).get("median_ms")
        pm = peer.get(r["shape"])
        pr = pm / pick_ms if pm and pick_ms else None
        br = pm / times[best] if pm else None
        v = verdict(pr, br, pick_ms or 0, times[best])
        count[v] = count.get(v, 0) + 1
        c = {True: "ok", False: "FAIL", None: "-"}[chk.get(r["shape"])]
        lines.append(f"| {r['shape']} | {pick} | {pick_ms or 0:.4f} | {best} | {times[best]:.4f} | "
                     f"{pm or 0:.4f} | {pr or 0:.3f} | {br or 0:.3f} | {v} | {c} |")
    text = "\n".join(lines) + "\n"
    open(out_path, "w").write(text)
    print(text + "verdicts: " + ", ".join(f"{k} {n}" for k, n in sorted(count.items())))


def narrow(all_path, peers_path, checks_path, new_re, out_path):
    peer = {(r.get("op"), r["shape"]): r.get("peer_ms") for r in rows(peers_path)}
    chk = {(r.get("op"), r["shape"]): r.get("check_ok") for r in rows(checks_path)}
    lines = ["| op | shape | pick | ms | best old | ms | best new | ms | peer ms | pick | old | new | check |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    n = {"shapes": 0, "old>=1": 0, "new>=1": 0, "either>=1": 0, "new faster": 0}
    for r in rows(all_path):
        times = r.get("bench_all")
        if not times:
            continue
        key = (r.get("op"), r["shape"])
        new = {v: t for v, t in times.items() if re.match(new_re, v)}
        old = {v: t for v, t in times.items() if v not in new}
        bo = min(old, key=old.get) if old else None
        bn = min(new, key=new.get) if new else None
        pick = r.get("variant")
        pm = times.get(pick) or (r.get("bench") or {}).get("median_ms") or 0
        ref = peer.get(key)
        ratio = lambda t: ref / t if ref and t else 0
        ro, rn = ratio(old.get(bo)), ratio(new.get(bn))
        n["shapes"] += 1
        n["old>=1"] += ro >= 1
        n["new>=1"] += rn >= 1
        n["either>=1"] += max(ro, rn) >= 1
        n["new faster"] += bool(bn and bo and new[bn] < old[bo])
        best = bn if bn and (not bo or new[bn] < old[bo]) else bo
        c = {True: "ok", False: "FAIL", None: "-"}[chk.get(key)]
        lines.append(f"| {key[0]} | {key[1]} | {pick} | {pm:.4f} | {bo} | {old.get(bo, 0):.4f} | {bn} | "
                     f"{new.get(bn, 0):.4f} | {ref or 0:.4f} | {ratio(pm):.3f} | {ro:.3f} | {rn:.3f} | {c} ({best}) |")
    text = "\n".join(lines) + "\n"
    open(out_path, "w").write(text)
    print(text + "counts: " + ", ".join(f"{k} {v}" for k, v in n.items()))


def oldpicks(sweep_path, val_path):
    old = {(r["op"], r["shape"]): r.get("variant") for r in json.load(open(sweep_path))}
    for r in rows(val_path):
        v = old.get((r.get("op"), r.get("shape")))
        if v and r.get("variant") and v != r["variant"]:
            print(r["op"], r["shape"], v)


def ms_of(r):
    b = r.get("bench") or {}
    return b.get("median_ms")


def before(val_path, old_path, peers_path, out_path):
    peer = {(r.get("op"), r["shape"]): r.get("peer_ms") for r in rows(peers_path)}
    olds = {(r.get("op"), r.get("shape")): r for r in rows(old_path)}
    lines = ["| op | shape | before | ms | after | ms | peer ms | before | after | check |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    ratios = {}
    for r in rows(val_path):
        key = (r.get("op"), r.get("shape"))
        after = ms_of(r)
        pm = peer.get(key)
        o = olds.get(key)
        bms = ms_of(o) if o else after
        bname = o.get("variant") if o else r.get("variant")
        ok = r.get("check_ok")
        if not after or not pm or not bms:
            continue
        ra, rb = pm / after, pm / bms
        if ok:
            ratios.setdefault(key[0], []).append((rb, ra))
        lines.append(f"| {key[0]} | {key[1]} | {bname} | {bms:.4f} | {r.get('variant')} | {after:.4f} | "
                     f"{pm:.4f} | {rb:.3f} | {ra:.3f} | {'ok' if ok else 'FAIL'} |")
    out = ["| op | shapes | >= 1.0 before | after | min before | after | geomean before | after |",
           "|---|---|---|---|---|---|---|---|"]
    for op, rs in ratios.items():
        b = [x for x, _ in rs]
        a = [y for _, y in rs]
        share = lambda v: 100.0 * sum(x >= 1.0 for x in v) / len(v)
        gm = lambda v: math.exp(sum(math.log(x) for x in v) / len(v))
        out.append(f"| {op} | {len(rs)} | {share(b):.1f}% | {share(a):.1f}% | {min(b):.3f} | {min(a):.3f} | "
                   f"{gm(b):.3f} | {gm(a):.3f} |")
    text = "\n".join(out) + "\n\n" + "\n".join(lines) + "\n"
    open(out_path, "w").write(text)
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "diagnose":
        diagnose(*sys.argv[2:6])
    elif len(sys.argv) == 7 and sys.argv[1] == "narrow":
        narrow(*sys.argv[2:7])
    elif len(sys.argv) == 4 and sys.argv[1] == "oldpicks":
        oldpicks(*sys.argv[2:4])
    elif len(sys.argv) == 6 and sys.argv[1] == "before":
        before(*sys.argv[2:6])
    else:
        print(__doc__)
        sys.exit(1)
