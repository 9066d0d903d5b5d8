#!/usr/bin/env python3
"""report.py — the cost model's calibration report (bench/device/run_cost.sh, step 3):
from measure.py's measured.jsonl and `cakec calibrate --json`'s fit.json, the
held-out error, the share of `model` cases within 25%, Spearman's rank correlation
per family (all variants and shapes of a family) and per family and shape, and the
gap between the measured time of the predicted-best variant and the measured best
per family and shape (infeasible variants are ranked last). Writes
$OUT/calibration.md, calibration.json and completes the constants file (the GPU and
its driver); prints the summary table last.

    python3 bench/cost/report.py --measured M.jsonl --fit FIT.json --constants C.json --out DIR
"""
import argparse
import json
import os
import statistics
import subprocess


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for t in range(i, j + 1):
            r[order[t]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(a, b):
    if len(a) < 2:
        return float("nan")
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def feasible(c):
    occ = c.get("occupancy", {})
    return occ.get("blocks_per_sm", 1) > 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--measured", required=True)
    ap.add_argument("--fit", required=True)
    ap.add_argument("--constants", default="")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/cake-out"))
    a = ap.parse_args()
    meas = [json.loads(l) for l in open(a.measured) if l.strip()]
    try:
        fit = json.load(open(a.fit))
    except (OSError, ValueError) as e:
        fit = {"cases": [], "error": str(e)}
    rows = []
    for c in fit.get("cases", []):
        cost = c.get("cost")
        if not cost or not c.get("meas_ms"):
            continue
        rows.append({"split": c["split"], "family": c["family"], "kernel": c.get("kernel", "?"),
                     "set": c["set"], "shape": c["shape"], "meas": c["meas_ms"], "pred": cost["time_ms"],
                     "lo": cost["interval_ms"][0], "hi": cost["interval_ms"][1], "verdict": cost["verdict"],
                     "bound": cost["bottleneck"], "pattern": cost.get("pattern", ""),
                     "feasible": feasible(cost), "check": c.get("check", "none"), "peer": c.get("peer_ms"),
                     "why": next((n for n in cost.get("assumptions", []) if n.startswith("measure:")), "")})
    failed = [m for m in meas if "meas_ms" not in m]
    bad_check = [r for r in rows if r["check"] == "FAIL"]
    for r in rows:
        r["err"] = r["pred"] / r["meas"] - 1
    ho = [r for r in rows if r["split"] == "heldout"]
    tr = [r for r in rows if r["split"] == "train"]
    ou = [r for r in rows if r["split"] == "outside"]
    fr = [r for r in rows if r["split"] == "fresh"]   # new shapes of the held-out kernels

    def share(rs):
        m = [r for r in rs if r["verdict"] == "model"]
        w = [r for r in m if abs(r["err"]) <= 0.25]
        return len(m), len(w), (len(w) / len(m) if m else float("nan"))

    fams = {}
    for r in rows:
        fams.setdefault((r["split"], r["family"]), []).append(r)
    def ranking(rs):
        # Spearman over the cases, the least per shape, and the largest gap between the
        # measured time of the predicted-best variant and the measured best per shape
        sp_all = spearman([r["pred"] if r["feasible"] else 1e9 for r in rs], [r["meas"] for r in rs])
        by_shape = {}
        for r in rs:
            by_shape.setdefault(r["shape"], []).append(r)
        gaps, sps = [], []
        for sh, g in by_shape.items():
            if len(g) < 2:
                continue
            key = lambda r: (not r["feasible"], r["pred"])
            best_pred = min(g, key=key)
            best = min(g, key=lambda r: r["meas"])
            gaps.append(best_pred["meas"] / best["meas"] - 1)
            sps.append(spearman([r["pred"] if r["feasible"] else 1e9 for r in g], [r["meas"] for r in g]))
        return sp_all, min(sps) if sps else float("nan"), max(gaps) if gaps else float("nan")

    fam_rows = []
    for (sp, f), rs in sorted(fams.items()):
        sp_all, sp_min, gap = ranking(rs)
        # the ranking the model answers for: its `model` cases (a `measure` case leaves
        # the choice to a measurement); ranked where two or more variants say `model`
        mrs = [r for r in rs if r["verdict"] == "model"]
        m_all, m_min, m_gap = ranking(mrs)
        fam_rows.append({"split": sp, "family": f, "n": len(rs), "spearman": sp_all,
                         "variants": len({(r["kernel"], r["set"]) for r in rs}),
                         "spearman_per_shape_min": sp_min, "best_gap_max": gap,
                         "model_cases": len(mrs), "model_variants": len({(r["kernel"], r["set"]) for r in mrs}),
                         "model_spearman": m_all, "model_best_gap_max": m_gap,
                         "median_abs_err": statistics.median(abs(r["err"]) for r in rs)})
    try:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        drv = "unknown (no nvidia-smi)"
    md = ["# cost model calibration (h200)", "", "- device: %s" % drv,
          "- command: `bash bench/device/run_cost.sh`",
          "- %d cases measured (%d train, %d held out), %d failed to run, %d failed the check" %
          (len(rows), len(tr), len(ho), len(failed), len(bad_check)), "",
          "| split | family | kernel | set | shape | predicted ms | interval | measured ms | error | bound | verdict | check | torch ms |",
          "|---|---|---|---|---|---:|---|---:|---:|---|---|---|---:|"]
    for r in rows:
        md.append("| %s | %s | %s | %s | %s | %.4f | %.4f–%.4f | %.4f | %+.0f%% | %s | %s | %s | %s |" %
                  (r["split"], r["family"], r["kernel"], r["set"], r["shape"], r["pred"], r["lo"], r["hi"],
                   r["meas"], 100 * r["err"], r["bound"], r["verdict"] + ("" if r["feasible"] else " (infeasible)"),
                   r["check"], "%.4f" % r["peer"] if r["peer"] else "-"))
    md += ["", "| split | family | n | Spearman (all) | min Spearman per shape | max predicted-best gap | "
           "model cases | Spearman (model) | predicted-best gap (model) | median abs err |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for f in fam_rows:
        md.append("| %s | %s | %d | %.3f | %.3f | %.1f%% | %d | %.3f | %.1f%% | %.1f%% |" % (
            f["split"], f["family"], f["n"], f["spearman"], f["spearman_per_shape_min"],
            100 * f["best_gap_max"], f["model_cases"], f["model_spearman"], 100 * f["model_best_gap_max"],
            100 * f["median_abs_err"]))
    if failed:
        md += ["", "Not measured:"] + ["- %s %s %s: %s" % (m.get("file"), m.get("set"), m.get("shape"),
                                                         m.get("error", "?")) for m in failed]
    if bad_check:
        md += ["", "Check failed:"] + ["- %s %s %s" % (r["kernel"], r["set"], r["shape"]) for r in bad_check]
    why = {}
    for r in ho:
        if r["verdict"] == "measure":
            why[r["why"][:90]] = why.get(r["why"][:90], 0) + 1
    if why:
        md += ["", "Why `measure` (held out):"] + ["- %d× %s" % (n, w) for w, n in sorted(why.items(), key=lambda x: -x[1])]
    os.makedirs(a.out, exist_ok=True)
    open(os.path.join(a.out, "calibration.md"), "w").write("\n".join(md) + "\n")
    json.dump({"rows": rows, "families": fam_rows, "failed": failed}, open(os.path.join(a.out, "calibration.json"), "w"),
              indent=1, default=str)
    if a.constants and os.path.exists(a.constants):
        k = json.load(open(a.constants))
        k["driver"] = drv
        json.dump(k, open(a.constants, "w"), indent=2)
    # the summary, last
    hm, hw, hs = share(ho)
    tm, tw, ts = share(tr)
    print("== cost model (bench/device/run_cost.sh): %d cases, %d not run, %d check failures" %
          (len(rows), len(failed), len(bad_check)))
    print("%-8s %5s %6s %8s %12s %14s %10s" % ("split", "cases", "model", "within", "share<=25%", "median|err|",
                                              "covered"))
    for name, rs, (m, w, s) in (("train", tr, (tm, tw, ts)), ("heldout", ho, (hm, hw, hs)),
                                ("outside", ou, share(ou)), ("fresh", fr, share(fr))):
        if not rs:
            continue
        med = statistics.median(abs(r["err"]) for r in rs) if rs else float("nan")
        mod = [r for r in rs if r["verdict"] == "model"]
        cov = sum(1 for r in mod if r["lo"] <= r["meas"] <= r["hi"]) / len(mod) if mod else float("nan")
        print("%-8s %5d %6d %8d %11.0f%% %13.1f%% %9.0f%%" % (name, len(rs), m, w, 100 * s if s == s else float("nan"),
                                                         100 * med, 100 * cov))
    print("%-8s %-12s %3s %4s %9s %10s %9s" % ("split", "family", "n", "var", "Spearman", "minPerShp", "bestGap"))
    for f in fam_rows:
        print("%-8s %-12s %3d %4d %9.3f %10.3f %8.1f%%" % (f["split"], f["family"], f["n"], f["variants"],
                                                        f["spearman"], f["spearman_per_shape_min"],
                                                        100 * f["best_gap_max"]))
    # the acceptance of issue 18, last: per split, the model cases within 25%, and the
    # families of variants (two or more kernel/params variants) ranked right
    print("== acceptance (issue 18): model cases within 25% >= 80%; every family of variants: "
          "Spearman >= 0.9, predicted best within 5%")
    print("%-8s %5s %6s %7s %7s %6s %9s %12s %10s" % ("split", "cases", "model", "within", "share", "meas.",
                                                  "families", "Spearman ok", "best ok"))
    for name, rs in (("heldout", ho), ("fresh", fr), ("outside", ou), ("train", tr)):
        if not rs:
            continue
        m, w, s_ = share(rs)
        fv = [f for f in fam_rows if f["split"] == name and f["variants"] >= 2]
        sp_ok = sum(1 for f in fv if f["spearman"] >= 0.9)
        gap_ok = sum(1 for f in fv if not f["best_gap_max"] > 0.05)
        print("%-8s %5d %6d %7d %6.0f%% %6d %9d %12s %10s" % (name, len(rs), m, w, 100 * s_ if s_ == s_ else float("nan"),
              len(rs) - m, len(fv), "%d/%d" % (sp_ok, len(fv)), "%d/%d" % (gap_ok, len(fv))))
        bad = [f["family"] for f in fv if not f["spearman"] >= 0.9 or f["best_gap_max"] > 0.05]
        if bad:
            print("%-8s families not met: %s" % (name, ", ".join(bad)))
    # the same over the `model` answers only (what the acceptance counts): a family the
    # model ranks has two or more variants that say `model`
    print("== the ranking the model answers for (its `model` cases; families with >= 2 model variants)")
    print("%-8s %9s %12s %10s  %s" % ("split", "families", "Spearman ok", "best ok", "not met / all measure"))
    for name in ("heldout", "fresh", "outside", "train"):
        fv = [f for f in fam_rows if f["split"] == name and f["variants"] >= 2]
        if not fv:
            continue
        ranked = [f for f in fv if f["model_variants"] >= 2]
        sp_ok = sum(1 for f in ranked if f["model_spearman"] >= 0.9 or f["model_spearman"] != f["model_spearman"])
        gap_ok = sum(1 for f in ranked if not f["model_best_gap_max"] > 0.05)
        bad = [f["family"] for f in ranked if (f["model_spearman"] < 0.9) or f["model_best_gap_max"] > 0.05]
        meas = [f["family"] for f in fv if f["model_variants"] < 2]
        print("%-8s %9d %12s %10s  %s / %s" % (name, len(ranked), "%d/%d" % (sp_ok, len(ranked)),
              "%d/%d" % (gap_ok, len(ranked)), ", ".join(bad) or "-", ", ".join(meas) or "-"))


if __name__ == "__main__":
    main()
