#!/usr/bin/env python3
"""test_outside.py — ctest `outside.corpus`: the outside corpus and kernels stay what they say.

usage: python3 tests/outside/test_outside.py CAKEC   (from anywhere)
  1. plant.py regenerates exactly the committed corpus (each bug one changed line of its
     source, the header's line number pointing at it);
  2. no corpus entry is a syntax or name error (E01xx/E02xx: a planted bug must be a real
     kernel bug, not a typo), and cakec never has an internal error on one; score.py runs
     end to end on three small entries;
  3. every frozen original (tests/outside/orig) and every kernel of tests/outside/kernels checks
     clean at every declared parameter value.
The scores themselves (what check catches) are a report (score.tsv), not asserted here.
"""
import filecmp, json, os, shutil, subprocess, sys, tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    cakec = os.path.abspath(sys.argv[1])
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, os.path.join(HERE, "plant.py"), "--out", tmp], cwd=ROOT,
                       check=True, capture_output=True)
        committed = os.path.join(HERE, "corpus")
        names = sorted(f for f in os.listdir(tmp) if f.endswith(".tir") or f == "MANIFEST.tsv")
        for f in names:
            if not os.path.exists(os.path.join(committed, f)) or not filecmp.cmp(
                    os.path.join(tmp, f), os.path.join(committed, f), shallow=False):
                fails.append("corpus/%s differs from what plant.py writes (run it from the repo root)" % f)
        extra = set(f for f in os.listdir(committed) if f.endswith(".tir")) - set(names)
        fails += ["corpus/%s is not in plant.py" % f for f in sorted(extra)]
        tirs = [f for f in names if f.endswith(".tir")]

        def check_one(f):
            p = subprocess.run([cakec, "check", "--json", os.path.join(committed, f)], capture_output=True, text=True)
            doc = json.loads(p.stdout)
            bad = [d["code"] for d in doc["diagnostics"] if d["code"][:3] in ("E01", "E02")]
            if bad or p.returncode == 2:
                return "corpus/%s: %s (exit %d)" % (f, ",".join(bad) or "internal error", p.returncode)
            return None
        with ThreadPoolExecutor(max_workers=2) as pool:
            fails += [m for m in pool.map(check_one, tirs) if m]
        # score.py end to end on three small entries (the whole corpus is its report, not a test)
        small = os.path.join(tmp, "small")
        os.makedirs(small)
        for f in ("s80_drop_sync.tir", "ce_sum_stride.tir", "dp_row_mask_oob.tir"):
            shutil.copy(os.path.join(committed, f), small)
        r = subprocess.run([sys.executable, os.path.join(HERE, "score.py"), cakec, "--quiet", "--corpus", small,
                            "-o", os.path.join(tmp, "score.tsv"), "--run-list", os.path.join(tmp, "RUN.txt")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fails.append("score.py exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-500:]))
        elif open(os.path.join(tmp, "RUN.txt")).read().split() != ["ce_sum_stride"]:
            fails.append("score.py: RUN.txt should list ce_sum_stride alone (the entry check leaves clean)")
    odir = os.path.join(HERE, "orig")
    for f in sorted(os.listdir(odir)):
        p = subprocess.run([cakec, "check", os.path.join(odir, f)], capture_output=True, text=True)
        if p.returncode != 0:
            fails.append("orig/%s (a planted bug's unchanged kernel) does not check clean:\n%s" % (f, p.stderr[-800:]))
    kdir = os.path.join(HERE, "kernels")
    for f in sorted(os.listdir(kdir)):
        if f.endswith(".tir"):
            p = subprocess.run([cakec, "check", os.path.join(kdir, f)], capture_output=True, text=True)
            if p.returncode != 0:
                fails.append("kernels/%s does not check clean:\n%s" % (f, p.stderr[-800:]))
    for m in fails:
        print("FAIL: " + m)
    print("outside: %d problems" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
