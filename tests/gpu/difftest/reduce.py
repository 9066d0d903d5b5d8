#!/usr/bin/env python3
"""reduce.py — shrink a failing TIR kernel while its failure persists.

  reduce.py KERNEL.tir --cakec CAKEC PREDICATE... [-o SMALL.tir] [--budget SECONDS]

PREDICATE (the failure to keep; every candidate must also pass `cakec check`, except
with --check-rejects):
  --ptx-contains REGEX      the sm_90a PTX matches REGEX (a host-side test of the reducer)
  --class CLASS             `cakec run --check` classifies as CLASS (difftest.py's classes:
                            mismatch, nan, unwritten, crash, device, hang, compile-error,
                            unsupported); needs a GPU
  --host-class CLASS        the same without a GPU: check, PTX, ptxas (compile-error, ptxas, ...)
  --check-rejects CODE      `cakec check` reports CODE (a checker false alarm to shrink)
  --cmd 'SHELL CMD {}'      CMD exits 0 on the candidate file {} (anything else)

A kernel from tirgen.py (it carries its program as a `# tirgen:` comment) is reduced on
the program: drop operations with everything that uses them, bypass an operation (its
users read one of its operands instead), fewer and narrower lanes (L), fewer threads
(T), no ragged rows, shorter loops, fewer inputs; each candidate is rendered again,
so kernel and reference stay consistent. Any kernel (generated or not) is then
reduced on its text: delete one line, or one `{ ... }` block, at a time. Greedy, to a
fixed point or the time budget. Python 3 stdlib only.
"""
import argparse
import copy
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tirgen  # noqa: E402


class Reducer:
    def __init__(self, a):
        self.a = a
        self.tmp = tempfile.mkdtemp(prefix="tirreduce.")
        self.tries = 0
        self.t_end = time.time() + a.budget
        self.env = dict(os.environ)

    def run(self, args, timeout):
        try:
            p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                               env=self.env)
            return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
        except subprocess.TimeoutExpired:
            return 124, "", "timeout"

    def interesting(self, text):
        """the failure persists on this kernel text"""
        self.tries += 1
        f = os.path.join(self.tmp, "cand.tir")
        with open(f, "w") as fh:
            fh.write(text)
        C = self.a.cakec
        rc, out, err = self.run([C, "check", f, "--json"], 30)
        if self.a.check_rejects:
            return rc == 1 and self.a.check_rejects in out
        if rc != 0:
            return False
        if self.a.ptx_contains:
            rc, _, _ = self.run([C, f, "--emit", "ptx", "-o", f + ".ptx"], 60)
            if rc != 0:
                return False
            with open(f + ".ptx") as fh:
                return re.search(self.a.ptx_contains, fh.read()) is not None
        if self.a.klass:
            import difftest
            return difftest.classify_file(C, f, self.a.timeout)[0] == self.a.klass
        if self.a.host_class:
            import difftest
            return difftest.classify_host(C, f, self.a.timeout)[0] == self.a.host_class
        if self.a.cmd:
            rc, _, _ = self.run(["sh", "-c", self.a.cmd.replace("{}", f)], self.a.timeout)
            return rc == 0
        raise SystemExit("reduce.py: no predicate given")

    def out_of_time(self):
        return time.time() > self.t_end

    # ---- program-level reduction ----
    def try_prog(self, p):
        try:
            text = tirgen.render(p)
        except (KeyError, ValueError, IndexError, TypeError):
            return None
        return text if self.interesting(text) else None

    def candidates(self, p):
        ops = p["ops"]
        # drop one op and every op that (transitively) uses it; keep at least one store
        for o in reversed(ops):
            if self.out_of_time():
                return
            dead = {o["id"]}
            for u in ops:
                if any(a in dead for a in u.get("args", [])) or u.get("lmask") in dead:
                    dead.add(u["id"])
            q = copy.deepcopy(p)
            q["ops"] = [u for u in q["ops"] if u["id"] not in dead]
            if any(u["op"] == "store" for u in q["ops"]):
                yield q
        # bypass an op: its users read an operand of the same kind and dtype instead
        for o in reversed(ops):
            if o["op"] == "store":
                continue
            for a in o.get("args", []):
                src = next((u for u in ops if u["id"] == a), None)
                if not src or src["dt"] != o["dt"] or src["kind"] != o["kind"]:
                    continue
                q = copy.deepcopy(p)
                q["ops"] = [u for u in q["ops"] if u["id"] != o["id"]]
                for u in q["ops"]:
                    u["args"] = [a if x == o["id"] else x for x in u.get("args", [])]
                    if u.get("lmask") == o["id"]:
                        u["lmask"] = a
                yield q
        # smaller frame
        for key, vals in (("L", [2, 4, 8]), ("T", [32, 64, 128])):
            for v in vals:
                if v < p[key]:
                    q = copy.deepcopy(p)
                    q[key] = v
                    for u in q["ops"]:
                        if u["op"] == "smem":
                            u["k"] = min(u["k"], q["T"] - 1)
                    yield q
        if p.get("ragged"):
            q = copy.deepcopy(p)
            q["ragged"] = False
            yield q
        for o in ops:
            if o["op"] == "loop" and o["R"] > 1:
                q = copy.deepcopy(p)
                next(u for u in q["ops"] if u["id"] == o["id"])["R"] = 1
                yield q
            if o["op"] == "store" and o.get("cond"):
                q = copy.deepcopy(p)
                next(u for u in q["ops"] if u["id"] == o["id"])["cond"] = False
                yield q
        used = {u["src"] for u in ops if u["op"] == "load"}
        if len(used) < len(p["inputs"]):
            q = copy.deepcopy(p)
            q["inputs"] = [x for x in q["inputs"] if x["name"] in used]
            yield q

    def reduce_program(self, p, text):
        changed = True
        while changed and not self.out_of_time():
            changed = False
            for q in self.candidates(p):
                t = self.try_prog(q)
                if t is not None:
                    p, text, changed = q, t, True
                    self.log("program: %d ops, L=%d, T=%d" % (len(p["ops"]), p["L"], p["T"]))
                    break
        return p, text

    # ---- text-level reduction ----
    def reduce_text(self, text):
        lines = text.split("\n")
        changed = True
        while changed and not self.out_of_time():
            changed = False
            i = len(lines) - 1
            while i >= 0 and not self.out_of_time():
                ln = lines[i].strip()
                if not ln or ln.startswith("kernel") or ln == "}" or ln == "{":
                    i -= 1
                    continue
                j = i
                if ln.endswith("{"):            # the whole block
                    depth = 0
                    for j in range(i, len(lines)):
                        depth += lines[j].count("{") - lines[j].count("}")
                        if depth <= 0:
                            break
                cand = lines[:i] + lines[j + 1:]
                if self.interesting("\n".join(cand)):
                    lines = cand
                    changed = True
                    self.log("text: %d lines" % len(lines))
                i -= 1
        return "\n".join(lines)

    def log(self, msg):
        if not self.a.quiet:
            print("reduce: %s (%d tries)" % (msg, self.tries), file=sys.stderr)


def program_of(text):
    for ln in text.split("\n"):
        if ln.startswith("# tirgen: "):
            return json.loads(ln[len("# tirgen: "):])
    return None


def main():
    ap = argparse.ArgumentParser(description="shrink a failing TIR kernel")
    ap.add_argument("kernel")
    ap.add_argument("--cakec", default=os.environ.get("CAKEC", "cakec"))
    ap.add_argument("--ptx-contains")
    ap.add_argument("--class", dest="klass")
    ap.add_argument("--host-class", help="like --class, without a GPU (difftest.py --mode host)")
    ap.add_argument("--check-rejects")
    ap.add_argument("--cmd")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per candidate run")
    ap.add_argument("--budget", type=float, default=120, help="seconds for the whole reduction")
    ap.add_argument("--no-text", action="store_true", help="skip the line-deletion pass")
    ap.add_argument("-o", "--output")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args()
    with open(a.kernel) as f:
        text = f.read()
    r = Reducer(a)
    if not r.interesting(text):
        print("reduce.py: the failure does not reproduce on %s" % a.kernel, file=sys.stderr)
        return 1
    n0 = len(text.split("\n"))
    p = program_of(text)
    if p:
        p, text = r.reduce_program(p, text)
    if not a.no_text:
        text = r.reduce_text(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    else:
        sys.stdout.write(text)
    print("reduce.py: %d -> %d lines in %d tries" % (n0, len(text.split("\n")), r.tries), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
