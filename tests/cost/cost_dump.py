#!/usr/bin/env python3
"""cost_dump.py — every `cakec cost` answer the project has kernels for, in one file:
`--json` and `--explain` of every kernel of examples/*.tir at its own shape, every
case of bench/cost/cases.tsv (train, held-out, fresh, outside) at each of its shapes,
every kernel of tests/cost/heldout/, tests/outside/kernels/ and bench/cost/{train,variants}/
at its own shape, every variant of the kernel library (library/manifest.json) at two
shapes of its op's range (--json, the calibration compiled in), and two sweeps. Each answer with its exit status and stderr, so
that a change meant to make the model faster, not different, is checked by a diff:

    python3 tests/cost/cost_dump.py CAKEC before.txt     (before the change)
    python3 tests/cost/cost_dump.py CAKEC after.txt      (after it)
    cmp before.txt after.txt

With --check BEFORE, it writes nothing and exits 1 when an answer differs from BEFORE's.
The built-in calibration (CAKE_COST_DIR unset) and none (CAKE_COST_DIR=none) both."""
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys


def kernels_of(path):
    with open(path) as f:
        return re.findall(r"^\s*kernel\s+(\w+)", f.read(), re.M)


def jobs(root):
    out = []
    for f in sorted(glob.glob(os.path.join(root, "examples", "*.tir"))):
        rel = os.path.relpath(f, root)
        for k in kernels_of(f):
            out.append([rel, "--kernel", k])
    for d in ("tests/cost/heldout", "tests/outside/kernels", "bench/cost/train", "bench/cost/variants"):
        for f in sorted(glob.glob(os.path.join(root, d, "*.tir"))):
            rel = os.path.relpath(f, root)
            for k in kernels_of(f):
                out.append([rel, "--kernel", k])
    with open(os.path.join(root, "bench/cost/cases.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            split, fam, file, kern, st, shapes = line.rstrip("\n").split("\t")
            for shape in shapes.split(";"):
                a = [file, "--shape", shape, "--device", "h200"]
                if kern != "-":
                    a += ["--kernel", kern]
                if st != "-":
                    a += ["--set", st]
                out.append(a)
    man = json.load(open(os.path.join(root, "library/manifest.json")))
    for op in man["ops"]:
        rng = op.get("range", {})
        for v in op["variants"]:
            for p in (4096, 128):
                shape = ",".join("%s=%d" % (d, min(max(p, lo), hi)) for d, (lo, hi) in rng.items())
                for k in v.get("launches", [v.get("kernel")]):
                    one = k if isinstance(k, dict) else {"kernel": k}
                    f = os.path.normpath(os.path.join("library", one.get("file", v["file"])))
                    a = [f, "--shape", shape, "--target", v["target"]]
                    if one.get("kernel"):
                        a += ["--kernel", one["kernel"]]
                    st = one.get("set", v.get("set"))
                    if st:
                        a += ["--set", st]
                    out.append(a)
    out.append(["examples/gemm_sm90.tir", "--shape", "M=4096,N=4096,K=4096", "--sweep",
                "BN=128,256", "STAGES=2,3,4"])
    out.append(["examples/flash_attn_fwd.tir", "--shape", "BH=128,S=4096", "--sweep", "BN=64,128",
                "STAGES=2,3"])
    return out


def run(cakec, root, args, calib, modes):
    env = dict(os.environ)
    env.pop("CAKE_COST_DIR", None)
    if calib == "none":
        env["CAKE_COST_DIR"] = "none"
    text = []
    for mode in modes:
        p = subprocess.run([cakec, "cost"] + args + [mode], cwd=root, env=env, capture_output=True,
                           text=True)
        text.append("$ CAKE_COST_DIR=%s cakec cost %s %s\nexit %d\n%s%s" %
                    (calib, " ".join(args), mode, p.returncode, p.stdout, p.stderr))
    return "".join(text)


def main():
    argv = sys.argv[1:]
    check = None
    if len(argv) == 3 and argv[1] == "--check":
        check, argv = argv[2], [argv[0]]
    cakec = os.path.abspath(argv[0])
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    todo = []
    for a in jobs(root):   # the library's variants: --json with the calibration compiled in
        lib = a[0].startswith("library/")
        for c in ("builtin",) if lib else ("builtin", "none"):
            todo.append((a, c, ("--json",) if lib else ("--json", "--explain")))
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        parts = list(ex.map(lambda j: run(cakec, root, *j), todo))
    text = "".join(parts)
    if check is None:
        with open(argv[1], "w") as f:
            f.write(text)
        print("%d answers" % len(todo))
        return 0
    old = open(check).read()
    if old == text:
        print("%d answers, all the same" % len(todo))
        return 0
    a, b = old.split("\n$ "), text.split("\n$ ")
    bad = [x.split("\n")[0] for x, y in zip(a, b) if x != y]
    print("%d answers differ, the first: %s" % (len(bad) or abs(len(a) - len(b)), bad[:3]))
    return 1


if __name__ == "__main__":
    sys.exit(main())
