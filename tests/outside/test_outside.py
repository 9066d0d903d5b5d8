#!/usr/bin/env python3
"""test_outside.py — ctest `outside.corpus`: the outside corpus and kernels stay what they say.

usage: python3 tests/outside/test_outside.py CAKEC   (from anywhere)
  1. plant.py regenerates exactly the committed corpus (each bug one changed line of its
     source, the header's line number pointing at it);
  2. no corpus entry is a syntax or name error (E01xx/E02xx: a planted bug must be a real
     kernel bug, not a typo), and cakec never has an internal error on one (score.py);
  3. every kernel of tests/outside/kernels checks clean at every declared parameter value.
The scores themselves (what check catches) are a report (score.tsv), not asserted here.
"""
import filecmp, json, os, subprocess, sys, tempfile

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
        for f in names:
            if not f.endswith(".tir"):
                continue
            p = subprocess.run([cakec, "check", "--json", os.path.join(committed, f)], capture_output=True, text=True)
            doc = json.loads(p.stdout)
            bad = [d["code"] for d in doc["diagnostics"] if d["code"][:3] in ("E01", "E02")]
            if bad or p.returncode == 2:
                fails.append("corpus/%s: %s (exit %d)" % (f, ",".join(bad) or "internal error", p.returncode))
        r = subprocess.run([sys.executable, os.path.join(HERE, "score.py"), cakec, "--quiet",
                            "-o", os.path.join(tmp, "score.tsv"), "--run-list", os.path.join(tmp, "RUN.txt")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            fails.append("score.py exit %d: %s" % (r.returncode, (r.stdout + r.stderr)[-500:]))
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
