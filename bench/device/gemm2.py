"""gemm2.py — the diagnosis of bench/device/run_gemm2.sh's losing GEMM shapes:
    gemm2.py diagnose ALL.jsonl PEERS.jsonl CHECKS.jsonl OUT.md
        per shape timed with `lib bench --all`: the artifact's pick and its time, the fastest
        variant and its time, cuBLAS (sweep.py peers), both ratios (cuBLAS ms / ours) and the
        verdict: `selection` where the fastest variant is >= 5% faster than the pick and
        reaches 0.95 of cuBLAS, `missing` where even the fastest is below 0.95, `ok` where
        the pick is at 0.95 or more; the table in OUT.md and on stdout, a count line last
No torch, no GPU.
"""
import json
import math
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


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "diagnose":
        diagnose(*sys.argv[2:6])
    else:
        print(__doc__)
        sys.exit(1)
