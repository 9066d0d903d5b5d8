"""gemmx.py — the rows of bench/device/run_gemmx.sh (`lib bench --shapes --all` JSON lines):

    gemmx.py timed ALL.jsonl...            `OP SHAPE` of every row with timings (stdout)
    gemmx.py best ALL.jsonl...             `OP SHAPE VARIANT`: each row's fastest variant
    gemmx.py summary LOSERS TUNE PEERS CHECKS OUT.md
                                           per shape the best and second variant, cuBLAS, the
                                           ratio (cuBLAS ms / best ms) and the best variant's
                                           check; a line per set on stdout, the table in OUT.md
    gemmx.py table ALL.jsonl... OLD_TABLE.json [--drop=V,...] > TABLE.json
                                           the tuned table: the rows' GEMM timings, then
                                           OLD's entries elsewhere, no GEMM entry at a shape
                                           of the acceptance sweep (seed 2027); V moved to
                                           `failed` (variants that failed a check)
    gemmx.py merge TABLE.json ALL.jsonl... [--drop=V,...] [--op=gemm_fp8] > PART.json
                                           the GEMM part of a tuned table: TABLE's GEMM
                                           entries with the rows' timings of variants
                                           they lack added at the same shape (a variant
                                           timed in both keeps TABLE's time; their
                                           ratio, new / old, is printed on stderr), the
                                           rows at other shapes as new entries, never a
                                           shape of the acceptance sweep; V dropped
                                           from every entry (a variant removed from the
                                           manifest, or moved to `failed` when the
                                           rows say its check failed)
    gemmx.py picks CAKEC ART ALL.jsonl... PEERS.jsonl
                                           at every shape timed with --all: the artifact's
                                           pick, its regret and its ratio to cuBLAS (e.g. a
                                           table's picks at the sweep's worst shapes)
    gemmx.py loo TABLE.json... [PEERS.jsonl...] [ART.cakelib]
                                           dispatch rules scored leave-one-out on the tables'
                                           GEMM entries: each shape's pick from the others,
                                           its regret (time / the fastest there) and ratio;
                                           with an artifact built with a table (its
                                           variants' fit_geo) also the fitted model
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


def timed(paths):
    return [r for p in paths for r in rows(p) if r.get("bench_all")]


def summary(losers, tune, peers, checks, out_path):
    peer = {r["shape"]: r.get("peer_ms") for r in rows(peers) if r.get("op") == "gemm"}
    chk = {r["shape"]: r.get("check_ok") for r in rows(checks)}
    out = open(out_path, "w")
    for title, path in (("losers (sweep shapes, not tuned on)", losers), ("tuning shapes", tune)):
        rs = timed([path])
        out.write(f"\n{title}: {len(rs)}\n\n| shape | best | ms | 2nd | ms | cuBLAS ms | ratio | check |\n"
                  "|---|---|---|---|---|---|---|---|\n")
        ratios = []
        for r in rs:
            t = sorted(r["bench_all"].items(), key=lambda x: x[1])
            pm = peer.get(r["shape"])
            ratio = pm / t[0][1] if pm and t[0][1] else None
            if ratio:
                ratios.append(ratio)
            snd = t[1] if len(t) > 1 else ("-", 0.0)
            c = {True: "ok", False: "FAIL", None: "-"}[chk.get(r["shape"])]
            out.write(f"| {r['shape']} | {t[0][0]} | {t[0][1]:.4f} | {snd[0]} | {snd[1]:.4f} | "
                      f"{pm or 0:.4f} | {ratio or 0:.3f} | {c} |\n")
        if ratios:
            g = math.exp(sum(map(math.log, ratios)) / len(ratios))
            print(f"{title}: {len(ratios)} with cuBLAS, best variant >= 1.0 at "
                  f"{sum(x >= 1 for x in ratios)}, min {min(ratios):.3f}, geomean {g:.3f}")


# ---- the dispatch rule, simulated leave-one-out ------------------------------------------

def bucket(v):
    return min(v.bit_length(), 31)


def twos(v):
    return min((v & -v).bit_length() - 1, 7)


def cls(shape):
    return tuple((bucket(shape[d]), twos(shape[d])) for d in ("M", "N", "K"))


def ranking(entries):
    """variants by the geomean over entries of time / fastest there (lib_build.c's fold)"""
    acc = {}
    for e in entries:
        best = min(e["times_ms"].values())
        for v, t in e["times_ms"].items():
            a = acc.setdefault(v, [0.0, 0])
            a[0] += math.log(t / best)
            a[1] += 1
    return sorted(acc, key=lambda v: acc[v][0] / acc[v][1])


def rule_classes(train, q, near=4):
    """lib_select.c: the exact class, else the nearest tuned class within `near` buckets
    (summed over the dims), the closest divisibility breaking ties"""
    cells = {}
    for e in train:
        cells.setdefault(cls(e["shape"]), []).append(e)
    k = cls(q)
    if k in cells:
        return ranking(cells[k]), "tuned"
    best, bd = None, None
    for c in cells:
        d = sum(abs(a[0] - b[0]) for a, b in zip(k, c))
        t = sum(a[1] != b[1] for a, b in zip(k, c))
        if d <= near and (bd is None or d * 16 + t < bd):
            best, bd = c, d * 16 + t
    return (ranking(cells[best]), "near") if best else ([], "model")


def rule_knn(train, q, kn=1, w=(1.0, 1.0, 1.0)):
    """the kn tuned shapes nearest in log2 space (weights w per dim)"""
    def dist(e):
        return sum(wi * abs(math.log2(e["shape"][d]) - math.log2(q[d])) for wi, d in zip(w, "MNK"))
    near = sorted(train, key=dist)[:kn]
    return ranking(near), "knn"


def artifact_geometry(path, op="gemm"):
    """{variant: (family, geo)} from an artifact's meta document (docs/library.md, "The
    artifact"): the geometry lib_fit.c computed when a table was folded"""
    raw = open(path, "rb").read()
    meta_len = int.from_bytes(raw[16:24], "little")
    meta = json.loads(raw[40:40 + meta_len])
    o = next(x for x in meta["ops"] if x["op"] == op)
    return {v["name"]: (v["fit"], v["fit_geo"]) for v in o["variants"] if v.get("fit_geo")}, o.get("fit_sms", 132)


def cdiv(a, b):
    return -(-a // b)


def fit_features(family, g, s, sms):
    """lib_fit.c's features: g = BM, BN, BK, SPLIT, MR, COLS, LANE_K"""
    bm, bn, bk, split, mr, cols, lane_k = g
    M, N, K = s["M"], s["N"], s["K"]
    kt, tiles = cdiv(K, bk), cdiv(M, bm) * cdiv(N, bn)
    moved = ((M + N) * K * 2 + M * N * 2) * 1e-6
    if family == "splitk":
        return [1.0, cdiv(tiles * split, sms) * cdiv(kt, split), moved, split * M * N * 1e-6, 0.0]
    if family == "gemv":
        rows = cdiv(M, mr)
        blocks = rows * cdiv(N, cols)
        return [1.0, cdiv(blocks, sms * 8) * cdiv(K, lane_k) * mr * 1e-3, rows * N * K * 2e-6, moved,
                blocks * 1e-3]   # f4: the blocks
    return [1.0, cdiv(tiles, sms) * kt, moved, float(cdiv(tiles, sms)), 0.0]   # f3: the waves


def fit_solve(pts):
    """nonnegative weighted least squares of the relative error (lib_fit_solve); a term
    that is zero at every point is left out"""
    n_terms = len(pts[0][0])
    on = [any(f[i] for f, _ in pts) for i in range(n_terms)]
    for _ in range(n_terms):
        idx = [i for i in range(n_terms) if on[i]]
        a = [[sum(f[i] * f[j] / (t * t) for f, t in pts) for j in idx] +
             [sum(f[i] / t for f, t in pts)] for i in idx]
        n = len(idx)
        for c in range(n):
            p = max(range(c, n), key=lambda r: abs(a[r][c]))
            if abs(a[p][c]) < 1e-300:
                return None
            a[c], a[p] = a[p], a[c]
            for r in range(n):
                if r != c:
                    m = a[r][c] / a[c][c]
                    a[r] = [x - m * y for x, y in zip(a[r], a[c])]
        x = [0.0] * n_terms
        for k, i in enumerate(idx):
            x[i] = a[k][n] / a[k][k]
        if all(v >= 0 for v in x):
            return x
        on = [on[i] and x[i] >= 0 for i in range(n_terms)]
    return None


def rule_fit(train, q, geo, sms):
    pts = {}
    for e in train:
        for v, t in e["times_ms"].items():
            if v in geo and t > 0:
                pts.setdefault(v, []).append((fit_features(geo[v][0], geo[v][1], e["shape"], sms), t))
    pred = {}
    for v, p in pts.items():
        c = fit_solve(p) if len(p) >= 8 else None
        if c:
            t = sum(a * b for a, b in zip(c, fit_features(geo[v][0], geo[v][1], q, sms)))
            if t > 0:
                pred[v] = t
    return sorted(pred, key=pred.get), "fit"


def loo(table_paths, peer_paths, art=None):
    entries = []
    for p in table_paths:
        t = json.load(open(p))
        entries += [e for e in t["entries"] if e["op"] == "gemm" and e.get("times_ms")]
    seen, uniq = set(), []
    for e in entries:
        k = json.dumps(e["shape"], sort_keys=True)
        if k not in seen:
            seen.add(k)
            uniq.append(e)
    peer = {}
    for p in peer_paths:
        for r in rows(p):
            if r.get("op") == "gemm" and r.get("peer_ms"):
                peer[r["shape"]] = r["peer_ms"]
    rules = {"classes4": lambda tr, q: rule_classes(tr, q, 4),
             "classes2": lambda tr, q: rule_classes(tr, q, 2),
             "knn1": lambda tr, q: rule_knn(tr, q, 1),
             "knn2": lambda tr, q: rule_knn(tr, q, 2),
             "knn3": lambda tr, q: rule_knn(tr, q, 3),
             "knn1_k.5": lambda tr, q: rule_knn(tr, q, 1, (1, 1, .5)),
             "knn2_k.5": lambda tr, q: rule_knn(tr, q, 2, (1, 1, .5))}
    if art:
        geo, sms = artifact_geometry(art)
        rules["fit"] = lambda tr, q: rule_fit(tr, q, geo, sms)
    for name, rule in rules.items():
        regrets, ratios, whys, worst = [], [], {}, []
        for e in uniq:
            train = [x for x in uniq if x is not e]
            rank, why = rule(train, e["shape"])
            whys[why] = whys.get(why, 0) + 1
            times = e["times_ms"]
            pick = next((v for v in rank if v in times), None)
            if pick is None:
                continue
            rg = times[pick] / min(times.values())
            regrets.append(rg)
            shape = ",".join(f"{d}={e['shape'][d]}" for d in "MNK")
            worst.append((rg, shape, pick, min(times, key=times.get)))
            if shape in peer:
                ratios.append(peer[shape] / times[pick])
        gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else 0
        worst.sort(reverse=True)
        print(f"{name:10s} {len(regrets)} scored {whys}: within 5% {sum(r <= 1.05 for r in regrets)}, "
              f"geomean regret {gm(regrets):.3f}, worst {worst[0][0]:.2f} ({worst[0][1]} {worst[0][2]}"
              f" for {worst[0][3]}); ratio to cuBLAS {len(ratios)}: geomean {gm(ratios):.3f}")


def make_table(tune_paths, old_path, drop_variants=""):
    """the GEMM rows of tune_paths (`lib bench --all`) as table entries, then old_path's
    entries at other shapes, without any GEMM entry at a shape of the acceptance sweep
    (seed 2027: the sweep measures the table where it was not tuned); variants in
    drop_variants (NAME,...: failed a check on the device) moved to `failed`"""
    import sweep
    taken = {l for l in sweep.shapes(2027) if l.startswith("gemm ")}
    old = json.load(open(old_path))
    device, entries, seen = old["device"], [], set()
    for r in timed(tune_paths):
        if r["op"] != "gemm" or f"gemm {r['shape']}" in taken:
            continue
        device = r.get("device") or device
        shape = sweep.parse_shape(r["shape"])
        entries.append({"op": "gemm", "shape": shape, "times_ms": dict(r["bench_all"]),
                        "failed": r.get("failed_all", {})})
        seen.add(json.dumps(shape, sort_keys=True))
    if device != old["device"]:
        sys.exit(f"table: the rows were measured on {device}, {old_path} on {old['device']}")
    for e in old["entries"]:
        k = json.dumps(e["shape"], sort_keys=True)
        text = e["op"] + " " + ",".join(f"{d}={v}" for d, v in e["shape"].items())
        if e["op"] == "gemm" and (k in seen or text in taken):
            continue
        entries.append(e)
    gone = [v for v in drop_variants.split(",") if v]
    for e in entries:
        for v in gone:
            if e["op"] == "gemm" and v in e["times_ms"]:
                del e["times_ms"][v]
                e.setdefault("failed", {})[v] = "check failed on the device"
    return {"device": device, "runner": old.get("runner", "local"), "entries": entries}


def merge_table(table_path, all_paths, drop_variants="", op="gemm"):
    """TABLE's GEMM entries, each with the rows' times of the variants it lacks at its
    shape; the rows at other shapes as new entries (never an acceptance-sweep shape);
    op: the op merged (gemm, or gemm_fp8 into bench/device/fp8_table_h200.json)"""
    import sweep
    taken = {l for l in sweep.shapes(2027) if l.startswith(op + " ")}
    old = json.load(open(table_path))
    text = lambda shape: op + " " + ",".join(f"{d}={v}" for d, v in shape.items())
    entries = [e for e in old["entries"] if e["op"] == op and text(e["shape"]) not in taken]
    at = {text(e["shape"]): e for e in entries}
    both = []
    for r in timed(all_paths):
        key = f"{op} {r['shape']}"
        if r["op"] != op or key in taken:
            continue
        if (r.get("device") or old["device"]) != old["device"]:
            sys.exit(f"merge: a row was measured on {r.get('device')}, {table_path} on {old['device']}")
        e = at.get(key)
        if e is None:
            e = {"op": op, "shape": sweep.parse_shape(r["shape"]), "times_ms": {}, "failed": {}}
            entries.append(e)
            at[key] = e
        for v, ms in r["bench_all"].items():
            if v in e["times_ms"]:
                both.append((v, ms / e["times_ms"][v]))
            else:
                e["times_ms"][v] = ms
        for v, why in r.get("failed_all", {}).items():
            e.setdefault("failed", {}).setdefault(v, why)
    gone = [v for v in drop_variants.split(",") if v]
    for e in entries:
        for v in gone:
            if v in e["times_ms"]:
                del e["times_ms"][v]
            if v in e.get("failed", {}):
                del e["failed"][v]
    by = {}
    for v, q in both:
        by.setdefault(v, []).append(q)
    for v, qs in sorted(by.items()):
        g = math.exp(sum(math.log(q) for q in qs) / len(qs))
        print(f"merge: {v} timed in both at {len(qs)} shapes: new / old geomean {g:.3f}, "
              f"min {min(qs):.3f}, max {max(qs):.3f}", file=sys.stderr)
    return {"device": old["device"], "runner": old.get("runner", "local"), "entries": entries}


def picks(cakec, art, all_paths, peer_paths):
    """at every shape of the rows (`lib bench --all`): the artifact's choice (`cakec lib
    select`), its measured time over the fastest variant's there, and cuBLAS over it"""
    import subprocess
    peer = {r["shape"]: r["peer_ms"] for p in peer_paths for r in rows(p)
            if r.get("op") == "gemm" and r.get("peer_ms")}
    regrets, ratios, best_ratios = [], [], []
    for r in timed(all_paths):
        if r["op"] != "gemm":
            continue
        p = subprocess.run([cakec, "lib", "select", art, "--op", "gemm", "--shape", r["shape"], "--json"],
                           capture_output=True, text=True)
        try:
            v = json.loads(p.stdout)["select"]["variant"]
        except (ValueError, KeyError):
            v = None
        t = r["bench_all"]
        b = min(t, key=t.get)
        pm = peer.get(r["shape"])
        rg = t[v] / t[b] if v in t else None
        if rg:
            regrets.append(rg)
            if pm:
                ratios.append(pm / t[v])
                best_ratios.append(pm / t[b])
        print(f"{r['shape']:24s} pick {v or '-':22s} best {b:22s} regret {rg and round(rg, 3)} "
              f"ratio {pm and v in t and round(pm / t[v], 3)} (best {pm and round(pm / t[b], 3)})")
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else 0
    print(f"{len(regrets)} picks timed: within 5% {sum(x <= 1.05 for x in regrets)}, geomean regret "
          f"{gm(regrets):.3f}; against cuBLAS ({len(ratios)}): picks {gm(ratios):.3f} "
          f">= 1.0 at {sum(x >= 1 for x in ratios)}, best variants {gm(best_ratios):.3f}")


def main(argv):
    if argv[0] == "timed":
        for r in timed(argv[1:]):
            print(r["op"], r["shape"])
    elif argv[0] == "best":
        for r in timed(argv[1:]):
            t = r["bench_all"]
            print(r["op"], r["shape"], min(t, key=t.get))
    elif argv[0] == "loo":
        tables = [a for a in argv[1:] if a.endswith(".json")]
        arts = [a for a in argv[1:] if a.endswith(".cakelib")]
        loo(tables, [a for a in argv[1:] if a.endswith(".jsonl")], arts[0] if arts else None)
    elif argv[0] == "merge":
        drop = next((a[7:] for a in argv[1:] if a.startswith("--drop=")), "")
        op = next((a[5:] for a in argv[1:] if a.startswith("--op=")), "gemm")
        paths = [a for a in argv[1:] if not a.startswith(("--drop=", "--op="))]
        print(json.dumps(merge_table(paths[0], paths[1:], drop, op), indent=1))
    elif argv[0] == "table":
        drop = next((a[7:] for a in argv if a.startswith("--drop=")), "")
        paths = [a for a in argv[1:] if not a.startswith("--drop=")]
        print(json.dumps(make_table(paths[:-1], paths[-1], drop), indent=1))
    elif argv[0] == "picks":
        picks(argv[1], argv[2], [a for a in argv[3:] if "peer" not in a], [a for a in argv[3:] if "peer" in a])
    elif argv[0] == "summary":
        summary(*argv[1:6])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
