#!/usr/bin/env python3
"""calibrate_cost.py — measures a sweep of kernel variants on the GPU and
compares each with `cakec cost` (the cost model, docs/cost-model.md).

For every variant: the prediction (`cakec cost --device DEV --json`, no GPU),
then the measurement (`cakec run --bench --json`: median of device-event times,
L2 flushed). Prints and writes ($OUT/calibration.md, $OUT/calibration.json):
one row per variant, then per family and overall Spearman's rank correlation,
the median absolute relative error, the interval coverage, and the gap between
the measured time of the predicted-best variant and the measured best.

    python3 bench/device/calibrate_cost.py [--cakec .carry/cakec] [--device h200]
        [--deadline 280] [--runs 20] [--only FAMILY,...]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

G4 = "M=4096,N=4096,K=4096"
# (family, file, shape, set, kernel): >= 40 variants; sm_80 vs sm_90a paths are
# separate families (gemm_sm80 runs on the H200 through the sm_80 path); a file
# "@NAME" is bench/cost/variants/NAME.tir, else examples/NAME.tir
VARIANTS = [
    ("gemm_sm90", "gemm_sm90", "M=2048,N=2048,K=2048", "", None),
    ("gemm_sm90", "gemm_sm90", G4, "", None),
    ("gemm_sm90", "gemm_sm90", "M=8192,N=8192,K=8192", "", None),
    ("gemm_sm90", "gemm_sm90", G4, "BN=128", None),
    ("gemm_sm90", "gemm_sm90", G4, "STAGES=2", None),
    ("gemm_sm90", "gemm_sm90", G4, "STAGES=3", None),
    ("gemm_sm90", "gemm_sm90", G4, "BN=128,STAGES=6", None),
    ("gemm_sm90", "gemm_sm90", G4, "GROUP_M=1", None),
    ("gemm_sm90", "gemm_sm90", G4, "GROUP_M=16", None),
    ("gemm_sm90", "gemm_sm90", "M=8192,N=8192,K=8192", "BN=128", None),
    ("gemm_sm90", "gemm_sm90_persistent", "M=2048,N=2048,K=2048", "", None),
    ("gemm_sm90", "gemm_sm90_persistent", G4, "", None),
    ("gemm_sm90", "gemm_sm90_persistent", "M=8192,N=8192,K=8192", "", None),
    ("gemm_sm90", "gemm_sm90_persistent", G4, "BN=128", None),
    ("gemm_sm90", "gemm_bias_act", G4, "", None),
    ("gemm_sm90", "gemm_bias_act", "M=8192,N=8192,K=8192", "", None),
    ("gemm_sm90", "gemm_fp8", G4, "", None),
    ("gemm_sm90", "gemm_fp8", "M=8192,N=8192,K=8192", "", None),
    # consumer warpgroups: gemm_sm90 with CWG a parameter (bench/cost/variants)
    ("gemm_sm90", "@gemm_sm90_cwg", G4, "CWG=1", None),
    ("gemm_sm90", "@gemm_sm90_cwg", G4, "CWG=1,BN=128", None),
    ("gemm_sm90", "@gemm_sm90_cwg", G4, "CWG=3,BN=128,CREGS=152", None),
    ("gemm_sm80", "gemm_sm80", "M=2048,N=2048,K=2048", "", None),
    ("gemm_sm80", "gemm_sm80", G4, "", None),
    ("gemm_sm80", "gemm_sm80", "M=8192,N=8192,K=8192", "", None),
    ("gemm_sm80", "gemm_sm80", G4, "STAGES=3", None),
    ("gemm_sm80", "gemm_sm80", G4, "STAGES=4", None),
    ("gemm_sm80", "gemm_sm80", G4, "BN=256", None),
    ("gemm_sm80", "gemm_sm80", G4, "BM=256", None),
    ("gemm_sm80", "gemm_sm80", G4, "BN=256,STAGES=3", None),
    ("attention", "flash_attn_fwd", "BH=32,S=4096", "", None),
    ("attention", "flash_attn_fwd", "BH=128,S=4096", "", None),
    ("attention", "flash_attn_fwd", "BH=128,S=4096", "CAUSAL=1", None),
    ("attention", "flash_attn_fwd_d64", "BH=128,S=4096", "", None),
    ("attention", "flash_attn_fwd_d64", "BH=128,S=4096", "CAUSAL=1", None),
    ("attention", "flash_attn_fwd_d64", "BH=128,S=4096", "STAGES=2", None),
    ("attention", "flash_attn_fwd_d64", "BH=128,S=4096", "STAGES=4", None),
    ("attention", "flash_attn_fwd_d64", "BH=128,S=4096", "BN=64,STAGES=4", None),
    ("attention", "flash_attn_fwd_d64", "BH=32,S=2048", "", None),
    ("simt", "copy", "N=268435456", "", None),
    ("simt", "copy", "N=268435456", "UNROLL=1", None),
    ("simt", "copy", "N=268435456", "UNROLL=8", None),
    ("simt", "copy", "N=268435456", "VEC=2", None),
    ("simt", "copy", "N=268435456", "VEC=1,UNROLL=4", None),
    ("simt", "copy", "N=268435456", "THREADS=128,UNROLL=1", None),
    ("simt", "copy", "N=16777216", "", None),
    ("simt", "vector_add", "N=268435456", "", None),
    ("simt", "vector_add", "N=268435456", "UNROLL=1", None),
    ("simt", "vector_add", "N=268435456", "VEC=1", None),
    ("simt", "rmsnorm", "M=32768,N=8192", "", None),
    ("simt", "rmsnorm", "M=32768,N=4096", "THREADS=128", None),
    ("simt", "rmsnorm", "M=32768,N=8192", "THREADS=512,ITERS=2", None),
    ("simt", "rmsnorm", "M=4096,N=4096", "", None),
    ("simt", "layernorm", "M=32768,N=8192", "", None),
    ("simt", "layernorm", "M=32768,N=4096", "THREADS=128", None),
    ("simt", "softmax", "M=32768,N=8192", "", None),
    ("simt", "softmax", "M=32768,N=8192", "THREADS=512,ITERS=4", None),
    ("simt", "softmax", "M=262144,N=1024", "ROWS=8", "softmax_warp"),
    ("simt", "softmax", "M=262144,N=1024", "ROWS=4", "softmax_warp"),
    ("simt", "softmax", "M=262144,N=1024", "ROWS=16", "softmax_warp"),
]


def run_json(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return json.loads(p.stdout) if p.stdout.strip() else {"error": p.stderr[-300:]}
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as e:
        return {"error": str(e)[:300]}


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
    if len(a) < 3:
        return float("nan")
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def stats(rows):
    p = [r["pred"] for r in rows]
    m = [r["meas"] for r in rows]
    err = [abs(x - y) / y for x, y in zip(p, m)]
    cover = sum(1 for r in rows if r["lo"] <= r["meas"] <= r["hi"])
    best_pred = min(rows, key=lambda r: r["pred"])
    best_meas = min(rows, key=lambda r: r["meas"])
    return {
        "n": len(rows),
        "spearman": spearman(p, m),
        "median_abs_err": statistics.median(err),
        "coverage": cover / len(rows),
        "best_gap": best_pred["meas"] / best_meas["meas"] - 1,
        "median_ratio": statistics.median(y / x for x, y in zip(p, m)),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cakec", default=os.environ.get("CAKEC", ".carry/cakec"))
    ap.add_argument("--device", default="h200")
    ap.add_argument("--deadline", type=float, default=280)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    out = os.environ.get("OUT", "/tmp/cake-out")
    os.makedirs(out, exist_ok=True)
    t0 = time.time()
    rows, failed = [], []
    for fam, ex, shape, st, kern in VARIANTS:
        if a.only and fam not in a.only.split(","):
            continue
        if time.time() - t0 > a.deadline:
            failed.append((fam, ex, shape, st, "deadline"))
            continue
        path = f"bench/cost/variants/{ex[1:]}.tir" if ex.startswith("@") else f"examples/{ex}.tir"
        base = [path, "--shape", shape] + (["--set", st] if st else []) + \
               (["--kernel", kern] if kern else [])
        c = run_json([a.cakec, "cost"] + base + ["--device", a.device, "--json"], 30).get("cost")
        b = run_json([a.cakec, "run"] + base + ["--bench", "--runs", str(a.runs), "--json"], 90)
        bench = b.get("bench")
        if not c or not bench or not bench.get("median_ms"):
            failed.append((fam, ex, shape, st, (b.get("error") or str(b.get("diagnostics", ""))[:200])))
            continue
        r = {"family": fam, "kernel": kern or ex.lstrip("@"), "shape": shape, "set": st or "-",
             "pred": c["time_ms"], "lo": c["interval_ms"][0], "hi": c["interval_ms"][1],
             "meas": bench["median_ms"], "bound": c["bottleneck"], "verdict": c["verdict"],
             "regs": bench.get("registers")}
        rows.append(r)
        print("%-10s %-22s %-22s %-20s pred %.4f [%.4f..%.4f] meas %.4f %s" %
              (fam, r["kernel"], shape, r["set"], r["pred"], r["lo"], r["hi"], r["meas"], r["bound"]),
              flush=True)
    fams = sorted({r["family"] for r in rows})
    summary = {f: stats([r for r in rows if r["family"] == f]) for f in fams}
    if rows:
        summary["overall"] = stats(rows)
    drv = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    md = ["# cost model calibration (%s)" % a.device, "",
          "- date: %s UTC" % datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"),
          "- device: %s" % drv, "- command: `bash bench/device/calibrate_cost.sh`",
          "- %d variants measured, %d failed, %.0f s" % (len(rows), len(failed), time.time() - t0), "",
          "| family | kernel | shape | set | predicted ms | interval | measured ms | error | bound | verdict |",
          "|---|---|---|---|---:|---|---:|---:|---|---|"]
    for r in rows:
        md.append("| %s | %s | %s | %s | %.4f | %.4f–%.4f | %.4f | %+.0f%% | %s | %s |" %
                  (r["family"], r["kernel"], r["shape"], r["set"], r["pred"], r["lo"], r["hi"], r["meas"],
                   100 * (r["pred"] / r["meas"] - 1), r["bound"], r["verdict"]))
    md += ["", "| family | n | Spearman | median abs err | interval coverage | predicted-best gap | median meas/pred |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for f, s in summary.items():
        md.append("| %s | %d | %.3f | %.1f%% | %.0f%% | %.1f%% | %.3f |" %
                  (f, s["n"], s["spearman"], 100 * s["median_abs_err"], 100 * s["coverage"],
                   100 * s["best_gap"], s["median_ratio"]))
    md += ["", "Acceptance (issue 8): Spearman >= 0.9 per family and overall, predicted-best within 5%,",
           "median abs error <= 25%, coverage >= 80%."]
    for f in failed:
        md.append("- failed: %s" % (f,))
    text = "\n".join(md) + "\n"
    print(text)
    with open(os.path.join(out, "calibration.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(out, "calibration.json"), "w") as fh:
        json.dump({"device": a.device, "driver": drv, "rows": rows, "summary": summary,
                   "failed": [list(f) for f in failed]}, fh, indent=1)
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
