#!/usr/bin/env python3
"""lib_kernels_ptx.py — every library kernel at every declared parameter point, through
`cakec check --set`, `cakec FILE --emit ptx --set` and `ptxas -arch=sm_90a` (and sm_80 PTX
through ptxas -arch=sm_80 for kernels that list sm_80).

  scripts/lib_kernels_ptx.py [--cakec build/cakec] [--ptxas ptxas] [--quick|--defaults] [FILE.tir ...]
  scripts/lib_kernels_ptx.py --split DIR FILE.tir ...   (writes DIR/KERNEL.tir, one kernel each)

Default files: library/kernels/*.tir. A parameter's declared values come from its
`in {a, b}` or `in lo .. hi` (tir.md section 4.1); a parameter without them keeps its
default. --quick takes, per kernel, the defaults and one point per declared value (each
value once, the others at their defaults) instead of the whole product; --defaults
only the defaults (the ctest, tests/libkernels/test_kernels.sh). Prints one line
per failure and `N points, N failed`; exits 1 when any failed. Also reports the largest
register count and any spill (ptxas -v) per kernel.
"""
import glob
import itertools
import os
import re
import subprocess
import sys
import tempfile


def split_top(s):
    """split at commas outside parentheses and braces"""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return out


def kernels_of(text):
    """[(name, [(param, default, [values] or None)], [targets])] of a .tir file"""
    text = re.sub(r"#[^\n]*", "", text)
    res = []
    for m in re.finditer(r"\bkernel\s+(\w+)\s*(<([^>]*)>)?", text):
        params = []
        for p in split_top(m.group(3) or ""):
            pm = re.match(r"\s*(\w+)\s*=\s*(.*?)(\s+in\s+(.*))?\s*$", p, re.S)
            name, dflt, vals = pm.group(1), pm.group(2), None
            if pm.group(4):
                v = pm.group(4).strip()
                if v.startswith("{"):
                    vals = [int(x) for x in v.strip("{}").split(",")]
                else:
                    lo, hi = v.split("..")
                    vals = list(range(int(lo), int(hi)))
            params.append((name, dflt, vals))
        tail = text[m.end():]
        tm = re.search(r"\btarget\s+([\w, ]+)", tail)
        targets = [t.strip() for t in tm.group(1).split(",")] if tm else []
        res.append((m.group(1), params, targets))
    return res


def only_kernel(text, name):
    """the file's text with every kernel but NAME cut out (lines from one `kernel` line to the
    next): `cakec FILE --emit ptx` compiles every kernel of a file and binds --set against
    the first one (driver/commands.c, drv_cmd_compile), whatever --kernel says"""
    lines = text.split("\n")
    keep, cur = [], None
    for line in lines:
        m = re.match(r"kernel\s+(\w+)", line)
        if m:
            cur = m.group(1)
        if cur is None or cur == name:
            keep.append(line)
    return "\n".join(keep)


def points(params, quick):
    decl = [(n, v) for n, _, v in params if v]
    if not decl or quick == "defaults":
        return [{}]
    if not quick:
        return [dict(zip([n for n, _ in decl], c)) for c in itertools.product(*[v for _, v in decl])]
    pts = [{}]
    for n, vals in decl:
        for v in vals:
            pts.append({n: v})
    return pts


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    args = sys.argv[1:]
    cakec = "build/cakec"
    ptxas = os.environ.get("PTXAS") or "ptxas"
    quick = False
    files = []
    while args:
        a = args.pop(0)
        if a == "--cakec":
            cakec = args.pop(0)
        elif a == "--ptxas":
            ptxas = args.pop(0)
        elif a == "--quick":
            quick = True
        elif a == "--defaults":
            quick = "defaults"
        else:
            files.append(a)
    if files and files[0] == "--split":
        for f in files[2:]:
            text = open(f).read()
            for kname, _, _ in kernels_of(text):
                with open(os.path.join(files[1], kname + ".tir"), "w") as out:
                    out.write(only_kernel(text, kname))
        return
    files = files or sorted(glob.glob("library/kernels/*.tir"))
    n = bad = 0
    tmp = tempfile.mkdtemp(prefix="lkptx.")
    for f in files:
        text = open(f).read()
        ks = kernels_of(text)
        for kname, params, targets in ks:
            src = f
            if len(ks) > 1:
                src = os.path.join(tmp, kname + ".tir")
                with open(src, "w") as out:
                    out.write(only_kernel(text, kname))
            regs, spills = 0, []
            for pt in points(params, quick):
                sets = ",".join("%s=%d" % kv for kv in pt.items())
                tag = "%s %s %s" % (f, kname, sets or "(defaults)")
                extra = ["--set", sets] if sets else []
                n += 1
                rc, out = run([cakec, "check", f, "--kernel", kname] + extra)
                if rc != 0 or "error" in out:
                    bad += 1
                    print("FAIL check: %s\n%s" % (tag, out[:800]))
                    continue
                for tg, arch in (("sm_90a", "sm_90a"), ("sm_80", "sm_80")):
                    if tg not in targets:
                        continue
                    ptx = os.path.join(tmp, "k.ptx")
                    rc, out = run([cakec, src, "--target", tg, "--emit", "ptx",
                                   "-o", ptx] + extra)
                    if rc != 0:
                        bad += 1
                        print("FAIL emit %s: %s\n%s" % (tg, tag, out[:800]))
                        continue
                    rc, out = run([ptxas, "-arch=" + arch, "-v", ptx, "-o", os.path.join(tmp, "k.cubin")])
                    if rc != 0:
                        bad += 1
                        print("FAIL ptxas %s: %s\n%s" % (arch, tag, out[:800]))
                        continue
                    # ptxas -v: one "Used N registers" line per entry in the module
                    for line in out.splitlines():
                        r = re.search(r"Used (\d+) registers", line)
                        if r and arch == "sm_90a":
                            regs = max(regs, int(r.group(1)))
                        s = re.search(r"(\d+) bytes spill stores", line)
                        if s and int(s.group(1)) > 0 and arch == "sm_90a":
                            spills.append("%s: %s bytes" % (sets or "defaults", s.group(1)))
            print("%s %s: up to %d registers%s" % (f, kname, regs,
                  "; spills at " + ", ".join(sorted(set(spills))) if spills else ""))
    print("%d points, %d failed" % (n, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
