#!/usr/bin/env python3
"""difftest.py — the differential-testing campaign: generate kernels (tirgen.py), run
each against its reference, classify, reduce the failures (reduce.py), write a table.

  difftest.py --cakec CAKEC --seeds A:B [--size small|medium] [--mode device|host]
              [--jobs J] [--out DIR] [--deadline SECONDS] [--reduce N] [--reduce-budget S]

--mode device (default): `cakec run K --check --json --timeout 10` per kernel (a GPU).
--mode host: no GPU; `cakec check`, the reference evaluated on the checker's shapes
             (--refcheck CAKE_REFCHECK), `cakec K --emit ptx`, and `ptxas -arch=sm_90a` when
             ptxas is on PATH (what CI runs).
Classes: pass; setup (no GPU E0973, no plugin E0974: nothing was tested); check-reject (cakec check rejects a generated kernel: a generator bug or a
checker false alarm — the log says which codes); unsupported (E0902 at compile);
compile-error (any other error compiling); ptxas (ptxas rejects the PTX); crash (exit 2:
a compiler bug, or a signal); mismatch, nan, unwritten (`run --check` failed: wrong
values, NaN, elements never written); device (a fault, E0972/E0962); hang (past the
timeout); reference-error (the reference cannot be evaluated: E0951..E0961, a generator
bug). Writes DIR/results.tsv (one line per seed), DIR/summary.md (counts and every
failure, reduced), DIR/kernels/ (the failing kernels) and DIR/reduced/. Exit 0 when
every kernel passed, 1 otherwise. Python 3 stdlib only.
"""
import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tirgen  # noqa: E402

FAILS = ["setup", "check-reject", "unsupported", "compile-error", "ptxas", "crash", "mismatch", "nan",
         "unwritten", "device", "hang", "reference-error"]


def run(args, timeout):
    try:
        p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return 124, "", "timeout"


def codes(out):
    try:
        j = json.loads(out)
    except ValueError:
        return None, []
    return j, [d.get("code", "") for d in j.get("diagnostics", []) if d.get("severity") == "error"]


def first_msg(out):
    try:
        for d in json.loads(out).get("diagnostics", []):
            if d.get("severity") == "error":
                return "%s %s" % (d.get("code"), d.get("message", "")[:160])
    except ValueError:
        pass
    return out.strip().replace("\n", " ")[:160]


def classify_check(cakec, f):
    rc, out, _ = run([cakec, "check", f, "--json"], 60)
    if rc != 0:
        return "check-reject", first_msg(out)
    return None, ""


def classify_host(cakec, f, timeout, refcheck=None):
    k, d = classify_check(cakec, f)
    if k:
        return k, d
    if refcheck:    # the reference evaluates on the checker's shapes (tests/gpu/difftest/refcheck.c)
        rc, out, err = run([refcheck, f], timeout)
        if rc != 0:
            return "reference-error", " ".join(err.strip().split("\n")[-4:])[:200]
    rc, out, err = run([cakec, f, "--emit", "ptx", "-o", f + ".ptx", "--json"], timeout)
    if rc == 124:
        return "hang", "compile past %gs" % timeout
    if rc == 2 or rc < 0:
        return "crash", first_msg(out) or err[:160]
    if rc != 0:
        _, cs = codes(out)
        return ("unsupported" if "E0902" in cs else "compile-error"), first_msg(out)
    if shutil.which("ptxas"):
        rc, out, err = run(["ptxas", "-arch=sm_90a", f + ".ptx", "-o", os.devnull], timeout)
        if rc != 0:
            return "ptxas", (err or out).strip().split("\n")[0][:160]
    return "pass", ""


def classify_file(cakec, f, timeout=60):
    """`cakec run --check` of one kernel: (class, detail)"""
    k, d = classify_check(cakec, f)
    if k:
        return k, d
    rc, out, err = run([cakec, "run", f, "--check", "--json", "--timeout", "10"], timeout)
    if rc == 124:
        return "hang", "past %gs" % timeout
    if rc < 0:
        return "crash", "signal %d" % -rc
    j, cs = codes(out)
    if rc == 0 and j is not None and j.get("ok"):
        return "pass", ""
    if rc == 2:
        return "crash", first_msg(out) or err[:160]
    if "E0973" in cs or "E0974" in cs:
        return "setup", first_msg(out)    # no GPU, or no code generator plugin
    if "E0902" in cs:
        return "unsupported", first_msg(out)
    if "E0972" in cs or "E0962" in cs:
        return "device", first_msg(out)
    if rc == 3:
        return "device", first_msg(out)
    if any(c in ("E0951", "E0952", "E0953", "E0954", "E0955", "E0960", "E0961") for c in cs):
        return "reference-error", first_msg(out)
    if j is not None and j.get("check"):
        bad = [c for c in j["check"] if not c.get("ok")]
        if bad:
            b = bad[0]
            fb = b.get("first_bad", {})
            detail = "%s: %s %s[%s] got %s want %s (%s bad, max_rel_err %.3g)" % (
                b.get("shape"), fb.get("why", b.get("status")), fb.get("output", "?"),
                ",".join(str(int(x)) for x in fb.get("index", [])), fb.get("got"), fb.get("want"),
                int(b.get("bad_elements", 0)), b.get("max_rel_err", 0))
            if b.get("nan"):
                return "nan", detail
            if b.get("unwritten"):
                return "unwritten", detail
            return "mismatch", detail
    return "compile-error", first_msg(out)


def one(a, seed):
    t0 = time.time()
    p = tirgen.generate(seed, a.size, a.lane_masks)
    text = tirgen.render(p)
    f = os.path.join(a.work, "g%d.tir" % seed)
    with open(f, "w") as fh:
        fh.write(text)
    if a.mode == "host":
        k, d = classify_host(a.cakec, f, a.timeout, a.refcheck)
    else:
        k, d = classify_file(a.cakec, f, a.timeout)
    ops = sorted({o["op"] if o["op"] not in ("hred", "red", "math", "shfl") else o.get("fn")
                  for o in p["ops"]})
    return {"seed": seed, "class": k, "detail": d, "secs": time.time() - t0, "file": f,
            "lines": text.count("\n"), "L": p["L"], "T": p["T"], "ops": ",".join(ops)}


def reduce_one(a, r):
    out = os.path.join(a.out, "reduced", "g%d.%s.tir" % (r["seed"], r["class"]))
    args = [sys.executable, os.path.join(HERE, "reduce.py"), r["file"], "--cakec", a.cakec, "-q",
            "--budget", str(a.reduce_budget), "--timeout", str(a.timeout), "-o", out]
    if r["class"] == "check-reject":
        args += ["--check-rejects", r["detail"].split(" ")[0]]
    elif a.mode == "host":
        args += ["--host-class", r["class"]]
    else:
        args += ["--class", r["class"]]
    rc, _, err = run(args, a.reduce_budget + 60)
    return out if rc == 0 and os.path.exists(out) else None


def main():
    ap = argparse.ArgumentParser(description="differential testing of cakec on generated kernels")
    ap.add_argument("--cakec", default=os.environ.get("CAKEC", "cakec"))
    ap.add_argument("--seeds", default="1:100", help="A:B, both included")
    ap.add_argument("--size", choices=["small", "medium", "mixed"], default="mixed")
    ap.add_argument("--mode", choices=["device", "host"], default="device")
    ap.add_argument("--lane-masks", action="store_true")
    ap.add_argument("--refcheck", help="host mode: cake_refcheck (built in build/tests) to evaluate "
                                       "each reference on the checker's shapes")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--out", default=os.environ.get("OUT", "difftest-out"))
    ap.add_argument("--timeout", type=float, default=60, help="seconds per kernel")
    ap.add_argument("--deadline", type=float, default=270, help="stop starting kernels after this")
    ap.add_argument("--reduce", type=int, default=6, help="failures to reduce (one per class first)")
    ap.add_argument("--reduce-budget", type=float, default=90, help="seconds per reduction")
    a = ap.parse_args()
    lo, hi = (int(x) for x in a.seeds.split(":"))
    os.makedirs(os.path.join(a.out, "kernels"), exist_ok=True)
    os.makedirs(os.path.join(a.out, "reduced"), exist_ok=True)
    a.work = os.path.join(a.out, "work")
    os.makedirs(a.work, exist_ok=True)
    t0 = time.time()
    sizes = a.size
    res = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {}
        for s in range(lo, hi + 1):
            a2 = argparse.Namespace(**vars(a))
            a2.size = sizes if sizes != "mixed" else ("medium" if s % 3 == 0 else "small")
            futs[ex.submit(lambda a2=a2, s=s: None if time.time() - t0 > a.deadline else one(a2, s))] = s
        for fu in cf.as_completed(futs):
            r = fu.result()
            if r:
                res.append(r)
                if r["class"] != "pass":
                    print("seed %d: %s %s" % (r["seed"], r["class"], r["detail"]), flush=True)
    res.sort(key=lambda r: r["seed"])
    gen_secs = time.time() - t0
    fails = [r for r in res if r["class"] != "pass"]
    for r in fails:
        shutil.copy(r["file"], os.path.join(a.out, "kernels"))
    # reduce: one failure of each class first, then more, up to --reduce
    pick, seen = [], set()
    for r in fails:
        if r["class"] not in seen and r["class"] not in ("unsupported", "setup"):
            pick.append(r)
            seen.add(r["class"])
    pick += [r for r in fails if r not in pick and r["class"] not in ("unsupported", "setup")]
    pick = pick[:a.reduce]
    with cf.ThreadPoolExecutor(max(1, min(a.jobs, len(pick) or 1))) as ex:
        for r, red in zip(pick, ex.map(lambda r: reduce_one(a, r), pick)):
            r["reduced"] = red
    with open(os.path.join(a.out, "results.tsv"), "w") as f:
        f.write("seed\tclass\tsecs\tlines\tL\tT\tops\tdetail\n")
        for r in res:
            f.write("%d\t%s\t%.1f\t%d\t%d\t%d\t%s\t%s\n" % (r["seed"], r["class"], r["secs"], r["lines"],
                                                          r["L"], r["T"], r["ops"], r["detail"]))
    counts = {}
    for r in res:
        counts[r["class"]] = counts.get(r["class"], 0) + 1
    md = ["# difftest: seeds %d..%d, mode %s, size %s" % (lo, hi, a.mode, a.size), "",
          "%d kernels in %.0f s (%d jobs), reductions %.0f s" % (len(res), gen_secs, a.jobs,
                                                                   time.time() - t0 - gen_secs), "",
          "| class | kernels |", "|---|---|"]
    for k in ["pass"] + FAILS:
        if counts.get(k):
            md.append("| %s | %d |" % (k, counts[k]))
    if fails:
        md += ["", "| seed | class | detail | reduced |", "|---|---|---|---|"]
        for r in fails:
            red = r.get("reduced")
            rl = ""
            if red:
                with open(red) as fh:
                    rl = "reduced/%s (%d lines)" % (os.path.basename(red), fh.read().count("\n"))
            md.append("| %d | %s | %s | %s |" % (r["seed"], r["class"], r["detail"].replace("|", "/"), rl))
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    shutil.rmtree(a.work, ignore_errors=True)
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())
