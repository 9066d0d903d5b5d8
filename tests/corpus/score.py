#!/usr/bin/env python3
"""score.py CAKEC [FILE...] — the planted-bug corpus against `cakec check`.

Every tests/corpus/*/*.tir (or the FILEs given) has a header (bugs.py):
    # corpus: static CODE at LINE    check must report CODE (an error)
    # corpus: dynamic                check must report no error (run --check's business)
For each file it runs `cakec check --json` and records: caught (CODE among the
errors), right line (an error of that code, or one of its notes, at LINE),
a help (a help line or a fix-it on the expected error) and whether that help
misleads: a fix-it whose edit, applied to a copy, leaves CODE at the same place or
brings a new error (cakec applies and re-checks every fix-it before it shows one,
so this should stay 0). Dynamic entries must pass `check` (a false alarm there
is a failure). Prints one line per file and the rates; exit 1 when a static bug
is missed or a dynamic entry is rejected (the CI gate), 0 otherwise.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def header(path):
    with open(path) as f:
        first = f.readline()
    m = re.match(r"# corpus: static (E\d{4}) at (\d+)( deleted)?", first)
    if m:  # a deleted line stood between lines LINE - 1 and LINE: either is its place
        line = int(m.group(2))
        return ("static", m.group(1), (line - 1, line) if m.group(3) else (line,))
    if first.startswith("# corpus: dynamic"):
        return ("dynamic", None, None)
    return (None, None, None)


def check(cakec, path):
    p = subprocess.run([cakec, "check", "--json", path], capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        return None, p.returncode
    try:
        return json.loads(p.stdout), p.returncode
    except ValueError:
        return None, p.returncode


def errors(doc):
    return [d for d in doc.get("diagnostics", []) if d.get("severity") == "error"]


def lines_of(d):
    out = [d["span"]["line"]] if d.get("span") else []
    for n in d.get("notes", []):
        if n.get("span"):
            out.append(n["span"]["line"])
    return out


def apply_fixits(text, fixits):
    """the text with the fix-its applied (spans as line/col, 1-based, end exclusive)"""
    lines = text.split("\n")
    starts, pos = [], 0
    for l in lines:
        starts.append(pos)
        pos += len(l) + 1
    edits = []
    for fx in fixits:
        sp = fx["span"]
        a = starts[sp["line"] - 1] + sp["col"] - 1
        b = starts[sp["end_line"] - 1] + sp["end_col"] - 1
        edits.append((a, b, fx["replacement"]))
    for a, b, r in sorted(edits, reverse=True):
        text = text[:a] + r + text[b:]
    return text


def original_of(path):
    """the example a corpus entry was planted in, without its header"""
    with open(path) as f:
        head = [f.readline() for _ in range(3)]
    m = re.search(r"planted in (\S+\.tir)", head[2])
    root = os.path.dirname(os.path.dirname(HERE))
    return open(os.path.join(root, m.group(1))).read() if m else None


def fix_outcome(cakec, path, d):
    """what applying d's fix-its does: None (none), "restores" (the result is the example),
    "passes" (check passes on something else: review it on a GPU), "errors" (check still fails)"""
    fixits = d.get("fixits") or []
    if not fixits:
        return None
    with open(path) as f:
        text = f.read()
    fixed = apply_fixits(text, fixits)
    body = fixed.split("\n", 3)[3] if fixed.count("\n") >= 3 else fixed
    if body == original_of(path):
        return "restores"
    with tempfile.NamedTemporaryFile("w", suffix=".tir", delete=False) as t:
        t.write(fixed)
        tmp = t.name
    try:
        doc, _ = check(cakec, tmp)
    finally:
        os.unlink(tmp)
    return "passes" if doc is not None and not errors(doc) else "errors"


def misleads(cakec, path, d, code):
    fixits = d.get("fixits") or []
    if not fixits:
        return False
    with open(path) as f:
        text = f.read()
    fixed = apply_fixits(text, fixits)
    with tempfile.NamedTemporaryFile("w", suffix=".tir", delete=False) as t:
        t.write(fixed)
        tmp = t.name
    try:
        doc, _ = check(cakec, tmp)
    finally:
        os.unlink(tmp)
    if doc is None:
        return True
    before = {(e["code"]) for e in errors({"diagnostics": [d]})}
    after = errors(doc)
    same = any(e["code"] == code and e["span"]["line"] == d["span"]["line"] for e in after)
    return same or len(after) > 0 and not before


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: score.py CAKEC [FILE...]")
    cakec = sys.argv[1]
    files = sys.argv[2:] or sorted(
        os.path.join(dp, f) for dp, _, fs in os.walk(HERE) for f in fs if f.endswith(".tir"))
    n_static = caught = right = helped = misled = 0
    n_dyn = dyn_clean = 0
    restores = review = 0
    to_review = []
    failures = []
    for path in files:
        kind, code, line = header(path)
        if not kind:
            continue
        name = os.path.relpath(path, HERE)
        doc, rc = check(cakec, path)
        if doc is None:
            failures.append(name)
            print("%-58s CRASH (exit %d)" % (name, rc))
            continue
        errs = errors(doc)
        if kind == "dynamic":
            n_dyn += 1
            clean = not errs
            dyn_clean += clean
            if not clean:
                failures.append(name)
            print("%-58s dynamic  %s" % (name, "check clean" if clean else
                                         "REJECTED: " + ",".join(sorted({e["code"] for e in errs}))))
            continue
        n_static += 1
        hits = [e for e in errs if e["code"] == code]
        ok = bool(hits)
        at = ok and any(l in lines_of(e) for e in hits for l in line)
        hp = ok and any(e.get("help") or e.get("helps") or e.get("fixits") for e in hits)
        bad = ok and any(misleads(cakec, path, e, code) for e in hits)
        outs = [o for o in (fix_outcome(cakec, path, e) for e in hits) if o]
        restores += "restores" in outs
        review += "passes" in outs and "restores" not in outs
        if "passes" in outs and "restores" not in outs:
            to_review.append(name)
        caught += ok
        right += at
        helped += hp
        misled += bad
        if not ok:
            failures.append(name)
        got = ",".join(sorted({"%s:%d" % (e["code"], e["span"]["line"]) for e in errs})) or "-"
        print("%-58s %s at %-4d %s%s%s  (%s)" % (name, code, line[-1], "caught" if ok else "MISSED",
                                              "" if not ok else " right-line" if at else " other-line",
                                              " MISLEADING-FIXIT" if bad else "", got))
    print("static: %d/%d caught (%.0f%%), %d/%d at the right line (%.0f%% of caught), %d with a help, "
          "%d misleading fix-its; dynamic: %d/%d pass check" % (
              caught, n_static, 100.0 * caught / max(n_static, 1), right, caught,
              100.0 * right / max(caught, 1), helped, misled, dyn_clean, n_dyn))
    print("fix-its: %d restore the example exactly, %d make check pass on other text (to review on a GPU%s)" % (
        restores, review, ": " + " ".join(to_review) if to_review else ""))
    if failures:
        print("failures: " + " ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
