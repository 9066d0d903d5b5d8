"""rowsx_table.py — the tables of bench/device/run_rowsx.sh (the row ops where the 2027
sweep lost, and the checks of the variants added for them).

  rowsx_table.py losers LIB.jsonl BEST.jsonl PEERS.jsonl OUTDIR
      per losing shape: the dispatched variant (checked, timed), the best peer timed in this
      call and the conservative peer time of the sweep (REF, the faster of its two calls), the
      ratios against both, and the fastest variant timed there; OUTDIR/rowsx_losers.md
  rowsx_table.py tune TUNE.jsonl PEERS.jsonl
      the tuning set per op: the dispatched variant's ratio to the best peer (the table folded
      into the artifact) and the fastest variant's (what a table tuned there gives)
  rowsx_table.py prew CAKEC OUT.jsonl SECONDS
      the weights-prefetch experiment (rowsx_rms_prefetch.tir, `cakec run --check --bench`) at
      PREW_SHAPES, PREW = 0 and 1 in turn, within SECONDS
  rowsx_table.py prew_table OUT.jsonl PEERS.jsonl
      its times beside the peers
  rowsx_table.py failed CHECKS.jsonl
      the variants whose check failed, as `--skip` takes them (V,V,...; nothing: none)
  rowsx_table.py checks CHECKS.jsonl
      one line per `OP SHAPE VARIANT` check: ok or what failed; the count last
  rowsx_table.py checks2 ROWS.jsonl...
      `OP SHAPE VARIANT` for every variant of ADDED timed (`bench_all`) in the rows: the
      shapes round 2 checks them at (bench/device/rowsx_checks2.txt)
"""
import json
import os
import sys

from norms_table import OPS, checked, fastest, ms_of, rows_of, stats

# the peer ms of the 2027 sweep where the row ops lost (bench/results/2026-12-01-sweep-round2:
# the best peer, timed the way bench/device/gated.py times both sides; 4 decimals), the time to beat
REF = {("rmsnorm", "M=1017,N=1166"): 0.0072,
       ("layernorm", "M=51361,N=374"): 0.0276,
       ("rmsnorm", "M=47351,N=622"): 0.0344,
       ("rmsnorm", "M=1407,N=5865"): 0.0213,
       ("softmax", "M=137906,N=273"): 0.0859,
       ("rmsnorm", "M=6181,N=579"): 0.0148,
       ("layernorm", "M=5,N=987"): 0.0042,
       ("rmsnorm", "M=482500,N=109"): 0.0753,
       ("layernorm", "M=2204,N=897"): 0.0093,
       ("layernorm", "M=33848,N=160"): 0.0104,
       ("cross_entropy", "B=4,V=5273"): 0.0058,
       ("rmsnorm", "M=272,N=33928"): 0.0182,
       ("rmsnorm", "M=1062,N=1679"): 0.0079,
       ("layernorm", "M=12076,N=367"): 0.0137,
       ("layernorm", "M=192472,N=223"): 0.0657,
       ("layernorm", "M=30,N=593"): 0.0042,
       ("layernorm", "M=21341,N=217"): 0.0115,
       ("cross_entropy", "B=1551,V=15247"): 0.0542,
       ("layernorm", "M=1042,N=267"): 0.0052,
       ("rmsnorm", "M=835,N=9797"): 0.0263,
       ("layernorm", "M=68,N=4113"): 0.0068,
       ("layernorm", "M=141,N=178"): 0.0044,
       ("cross_entropy", "B=4,V=4159"): 0.0057,
       ("layernorm", "M=39,N=2734"): 0.0051,
       ("rmsnorm", "M=16790,N=86"): 0.0065,
       ("layernorm", "M=4,N=65536"): 0.0114,
       ("rmsnorm", "M=290950,N=114"): 0.0396,
       ("layernorm", "M=231,N=1389"): 0.0054,
       ("rmsnorm", "M=8931,N=973"): 0.0223,
       ("rmsnorm", "M=16384,N=1024"): 0.0268,
       ("cross_entropy", "B=64,V=1109"): 0.0049,
       ("rmsnorm", "M=7,N=18211"): 0.0089,
       ("cross_entropy", "B=5,V=1495"): 0.0047,
       ("rmsnorm", "M=269,N=3322"): 0.0079,
       ("rmsnorm", "M=91,N=124"): 0.0042,
       ("rmsnorm", "M=31,N=596"): 0.0044,
       ("softmax", "M=15,N=6879"): 0.0066}


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


# small aligned rmsnorm shapes (the 2026-12-01 20:05 sweep lost at their neighbours under the
# gated peer timing) and the threads the library's block variant of that N uses
PREW_SHAPES = [("M=6,N=472", 128), ("M=15,N=512", 128), ("M=66,N=1088", 256), ("M=124,N=2488", 512),
               ("M=1017,N=1168", 256), ("M=2,N=400", 128)]


def find_median(doc):
    if isinstance(doc, dict):
        if "median_ms" in doc:
            return doc["median_ms"]
        doc = list(doc.values())
    if isinstance(doc, list):
        for v in doc:
            m = find_median(v)
            if m is not None:
                return m
    return None


def prew_main(cakec, out_path, seconds):
    import subprocess
    import time
    t0 = time.time()
    here = os.path.dirname(os.path.abspath(__file__))
    kernel = os.path.join(here, "rowsx_rms_prefetch.tir")
    with open(out_path, "w") as out:
        for shape, threads in PREW_SHAPES:
            for prew in (0, 1):
                left = float(seconds) - (time.time() - t0)
                if left < 1.5:
                    return
                row = {"op": "rmsnorm", "shape": shape, "prew": prew, "threads": threads}
                try:
                    r = subprocess.run([cakec, "run", kernel, "--set", f"THREADS={threads},ITERS=1,PREW={prew}",
                                        "--shape", shape, "--check", "--bench", "--runs", "20", "--json"],
                                       capture_output=True, text=True, timeout=left)
                    doc = json.loads(r.stdout)
                    row["check_ok"] = bool(doc.get("check")) and all(c.get("ok") for c in doc["check"])
                    row["ms"] = find_median(doc.get("bench"))
                except Exception as e:
                    row["error"] = f"{type(e).__name__}: {str(e)[:120]}"
                out.write(json.dumps(row) + "\n")
                out.flush()


def prew_table_main(path, peers_p):
    peers = rows_of(peers_p)
    rows = [json.loads(x) for x in open(path) if x.startswith("{")] if os.path.exists(path) else []
    by = {}
    for r in rows:
        by.setdefault(r["shape"], {})[r["prew"]] = r
    print("rmsnorm, weights loaded after / before the reduction (rowsx_rms_prefetch.tir), beside the best peer")
    print("shape            threads  after ms  check  before ms  check  peer ms  peer")
    for shape, d in by.items():
        a, b = d.get(0, {}), d.get(1, {})
        pe = peers.get(("rmsnorm", shape), {})
        print(f"{shape:16s} {a.get('threads', b.get('threads', 0)):7d}  {f(a.get('ms'), 4):>8s}  "
              f"{'ok' if a.get('check_ok') else '-':5s}  {f(b.get('ms'), 4):>9s}  {'ok' if b.get('check_ok') else '-':5s}  "
              f"{f(pe.get('peer_ms'), 4):>7s}  {pe.get('peer', '-')}")


def failed_main(path):
    rows = [json.loads(x) for x in open(path) if x.startswith("{")] if os.path.exists(path) else []
    bad = sorted({r["variant"] for r in rows if r.get("variant") and "op" in r and not checked(r)})
    print(",".join(bad))


# the variants added by the 2026-12-01 evening rounds (library/manifest.json)
ADDED = {"rmsnorm": ("warp8_n128", "warp16_n256", "warp16_n512", "ragged8_n128", "ragged16_n256",
                     "ragged16_n512", "pairs_n512", "pairs_n1024"),
         "softmax": ("warp16_n256", "warp16_n512", "ragged16_n256", "ragged16_n512")}
ADDED["layernorm"] = ADDED["rmsnorm"]


def checks2_main(paths):
    seen = []
    for path in paths:
        for r in rows_list(path):
            for v in (r.get("bench_all") or {}):
                if v in ADDED.get(r.get("op"), ()):
                    seen.append(f"{r['op']} {r['shape']} {v}")
    print("\n".join(dict.fromkeys(seen)))


def rows_list(path):
    return [json.loads(x) for x in open(path) if x.startswith("{")] if os.path.exists(path) else []


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
    if sys.argv[1] == "checks2":
        checks2_main(sys.argv[2:])
    elif sys.argv[1] == "losers":
        losers_main(*sys.argv[2:6])
    elif sys.argv[1] == "prew":
        prew_main(*sys.argv[2:5])
    elif sys.argv[1] == "prew_table":
        prew_table_main(*sys.argv[2:4])
    elif sys.argv[1] == "failed":
        failed_main(sys.argv[2])
    elif sys.argv[1] == "tune":
        tune_main(*sys.argv[2:4])
    else:
        checks_main(sys.argv[2])
