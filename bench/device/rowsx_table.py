"""rowsx_table.py — the tables of bench/device/run_rowsx.sh (the row ops where the 2027
sweep lost, and the checks of the variants added for them).

  rowsx_table.py losers LIB.jsonl BEST.jsonl PEERS.jsonl OUTDIR
      per losing shape: the dispatched variant (checked, timed), the best peer timed in this
      call and the conservative peer time of the sweep (REF, the faster of its two calls), the
      ratios against both, and the fastest variant timed there; OUTDIR/rowsx_losers.md
  rowsx_table.py tune TUNE.jsonl PEERS.jsonl
      the tuning set per op: the dispatched variant's ratio to the best peer (the table folded
      into the artifact) and the fastest variant's (what a table tuned there gives)
  rowsx_table.py failed CHECKS.jsonl
      the variants whose check failed, as `--skip` takes them (V,V,...; nothing: none)
  rowsx_table.py checks CHECKS.jsonl
      one line per `OP SHAPE VARIANT` check: ok or what failed; the count last
"""
import json
import os
import sys

from norms_table import OPS, checked, fastest, ms_of, rows_of, stats

# the conservative peer ms of the 2027 sweep (bench/results/2026-12-01-sweep-final: the faster
# of its calls 2 and 4, 4 decimals), the time to beat
REF = {("rmsnorm", "M=9131,N=3972"): 0.0527, ("rmsnorm", "M=290950,N=114"): 0.0468,
       ("rmsnorm", "M=1136,N=592"): 0.0054, ("rmsnorm", "M=6143,N=10044"): 0.1118,
       ("layernorm", "M=1915,N=1772"): 0.0120, ("layernorm", "M=921,N=5464"): 0.0165,
       ("softmax", "M=39,N=89"): 0.0044, ("softmax", "M=2822,N=617"): 0.0099,
       ("softmax", "M=10,N=2670"): 0.0051, ("softmax", "M=13,N=2980"): 0.0051,
       ("softmax", "M=14,N=3239"): 0.0057, ("softmax", "M=32768,N=1024"): 0.0672,
       ("fp8_row_quantize", "M=375,N=18493"): 0.0342}


def f(v, d):
    return "-" if v is None else f"{v:.{d}f}"


def losers_main(lib_p, best_p, peers_p, outdir):
    lib, best, peers = rows_of(lib_p), rows_of(best_p), rows_of(peers_p)
    lines = ["| op | shape | dispatched | check | ms | GB/s | roofline | peer (this call) | peer ms | ratio | ref peer ms | "
             "ratio vs ref | fastest | check | ms | ratio vs ref |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    n_ok = n = 0
    for k, li in lib.items():
        pe, ref = peers.get(k, {}), REF.get(k)
        be = best.get(k) or (li if fastest(li) == li.get("variant") else {})
        lms, pms, bms = ms_of(li), pe.get("peer_ms"), ms_of(be)
        conservative = min(x for x in (pms, ref) if x) if (pms or ref) else None
        r = conservative / lms if conservative and lms else None
        n += 1
        n_ok += bool(r and r >= 1.0 and checked(li))
        lines.append(f"| {k[0]} | {k[1]} | {li.get('variant', '-')} | {'ok' if checked(li) else 'FAIL'} | "
                     f"{f(lms, 4)} | {f((li.get('bench') or {}).get('gbps'), 0)} | "
                     f"{f((li.get('bench') or {}).get('roofline_fraction'), 2)} | {pe.get('peer', '-')} | {f(pms, 4)} | {f(pms / lms if pms and lms else None, 3)} | "
                     f"{f(ref, 4)} | {f(ref / lms if ref and lms else None, 3)} | {be.get('variant', '-')} | "
                     f"{'ok' if checked(be) else '-'} | {f(bms, 4)} | {f(ref / bms if ref and bms else None, 3)} |"
                     + (f" {li['error'][:100]}" if li.get("error") else ""))
    os.makedirs(outdir, exist_ok=True)
    open(os.path.join(outdir, "rowsx_losers.md"), "w").write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print(f"losers now >= 1.0 against the faster of this call's peer and the sweep's (and checked): {n_ok} of {n}")


def tune_main(tune_p, peers_p):
    rows, peers = rows_of(tune_p), rows_of(peers_p)
    print("op                 shapes  dispatched: >=1.0   min  geomean | fastest: >=1.0   min  geomean")
    for op in OPS:
        a, b = [], []
        for k, r in rows.items():
            pms = peers.get(k, {}).get("peer_ms")
            times = r.get("bench_all") or {}
            if k[0] != op or not pms or not times:
                continue
            if ms_of(r):
                a.append(pms / ms_of(r))
            b.append(pms / min(times.values()))
        if b:
            print(f"{op:18s} {len(b):6d}  {stats(a)} | {stats(b)}")


def failed_main(path):
    rows = [json.loads(x) for x in open(path) if x.startswith("{")] if os.path.exists(path) else []
    bad = sorted({r["variant"] for r in rows if r.get("variant") and "op" in r and not checked(r)})
    print(",".join(bad))


def checks_main(path):
    rows = [json.loads(x) for x in open(path) if x.startswith("{")] if os.path.exists(path) else []
    rows = [r for r in rows if "op" in r]
    ok = 0
    for r in rows:
        good = checked(r)
        ok += good
        print(f"{'ok  ' if good else 'FAIL'} {r.get('op')} {r.get('shape')} {r.get('variant', '-')}"
              + ("" if good else f" {(r.get('error') or '')[:120]}"))
    print(f"checks of the added variants: {ok} of {len(rows)} pass")


if __name__ == "__main__":
    if sys.argv[1] == "losers":
        losers_main(*sys.argv[2:6])
    elif sys.argv[1] == "failed":
        failed_main(sys.argv[2])
    elif sys.argv[1] == "tune":
        tune_main(*sys.argv[2:4])
    else:
        checks_main(sys.argv[2])
