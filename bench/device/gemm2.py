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


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "diagnose":
        diagnose(*sys.argv[2:6])
    elif len(sys.argv) == 7 and sys.argv[1] == "narrow":
        narrow(*sys.argv[2:7])
    else:
        print(__doc__)
        sys.exit(1)
