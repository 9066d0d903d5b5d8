#!/usr/bin/env python3
"""score.py — scores `cakec check` on the outside planted-bug corpus (tests/outside/corpus).

usage: python3 tests/outside/score.py CAKEC [--corpus DIR] [--judge TSV] [-o OUT.tsv]
                                           [--run-list RUN.txt] [--quiet]

For every corpus file (header `# corpus: static|dynamic`, `# bug: LINE: what`, `# from: SRC`)
it runs `CAKEC check --json FILE` and records:
  caught     any error diagnostic
  at_line    an error's span starts on the bug line
  near       an error or note span within 3 lines of the bug line (or at_line)
  fixits     the errors' fix-its; they are applied to a copy, which is checked again:
             fixit_clean (the copy checks clean) and fixit_restores (the bug line of the copy
             equals the line of the original kernel, comments and spacing aside)
  help       the errors' help lines, and my judgement of them from --judge (default
             tests/outside/judgement.tsv: name, verdict, note; verdicts: fix = following the
             help/fix-it fixes the bug, partial = points at the right place or mechanism but not
             the edit, silences = following it silences the error and leaves the bug,
             misleading = points elsewhere, none = no help)
Writes one TSV row per bug (default tests/outside/score.tsv), the names check leaves clean
(heaviest first) to CORPUS/RUN.txt for bench/device/run_outside.sh, and prints a summary last.
Exit 0 unless the harness fails or cakec has an internal error (exit 2) on an entry: the
scores are a report, not a test.
"""
import json, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def header(path):
    kind, line, what, src = None, None, "", None
    for text in open(path).read().split("\n")[:5]:
        m = re.match(r"# corpus: (static|dynamic)\s*$", text)
        if m:
            kind = m.group(1)
        m = re.match(r"# bug: (\d+): (.*)$", text)
        if m:
            line, what = int(m.group(1)), m.group(2)
        m = re.match(r"# from: (\S+)", text)
        if m:
            src = m.group(1)
    return kind, line, what, src


def check(cakec, path):
    p = subprocess.run([cakec, "check", "--json", path], capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {"diagnostics": [], "internal_error": True}
    return p.returncode, doc


def errors(doc):
    return [d for d in doc.get("diagnostics", []) if d.get("severity") == "error"]


def offset(lines, line, col):
    """1-based line/col -> offset into the joined text (lines keep their newlines)."""
    return sum(len(l) for l in lines[:line - 1]) + col - 1


def apply_fixits(text, fixits):
    lines = text.splitlines(keepends=True)
    edits = []
    for f in fixits:
        sp = f["span"]
        a = offset(lines, sp["line"], sp["col"])
        b = offset(lines, sp.get("end_line", sp["line"]), sp.get("end_col", sp["col"]))
        edits.append((a, b, f.get("replacement", "")))
    for a, b, r in sorted(edits, reverse=True):
        text = text[:a] + r + text[b:]
    return text


def code_of(line):
    return re.sub(r"\s+", " ", line.split("#", 1)[0]).strip()


def load_judge(path):
    out = {}
    if path and os.path.exists(path):
        for text in open(path):
            if text.startswith("#") or not text.strip():
                continue
            parts = text.rstrip("\n").split("\t")
            if parts[0] == "name":
                continue
            out[parts[0]] = (parts[1] if len(parts) > 1 else "", parts[2] if len(parts) > 2 else "")
    return out


def main(argv):
    args = list(argv[1:])
    if not args or args[0].startswith("-"):
        sys.exit(__doc__)
    cakec = args.pop(0)
    corpus = os.path.join(HERE, "corpus")
    judge_path = os.path.join(HERE, "judgement.tsv")
    out_path = os.path.join(HERE, "score.tsv")
    quiet = False
    run_list = None
    while args:
        a = args.pop(0)
        if a == "--corpus":
            corpus = args.pop(0)
        elif a == "--judge":
            judge_path = args.pop(0)
        elif a == "-o":
            out_path = args.pop(0)
        elif a == "--run-list":
            run_list = args.pop(0)
        elif a == "--quiet":
            quiet = True
        else:
            sys.exit("unknown option " + a)
    judge = load_judge(judge_path)
    rows = []
    for fn in sorted(os.listdir(corpus)):
        if not fn.endswith(".tir"):
            continue
        path = os.path.join(corpus, fn)
        name = fn[:-4]
        kind, bline, what, src = header(path)
        rc, doc = check(cakec, path)
        errs = errors(doc)
        caught = bool(errs)
        spans = [(e.get("span") or {}).get("line") for e in errs]
        at_line = bline in spans
        near = at_line or any(s is not None and abs(s - bline) <= 3 for s in spans) or any(
            (n.get("span") or {}).get("line") == bline for e in errs for n in e.get("notes", []))
        fixits = [f for e in errs for f in e.get("fixits", [])]
        fix_clean = fix_restores = ""
        if fixits:
            text = open(path).read()
            fixed = apply_fixits(text, fixits)
            with tempfile.NamedTemporaryFile("w", suffix=".tir", delete=False, dir=tempfile.gettempdir()) as t:
                t.write(fixed)
            frc, fdoc = check(cakec, t.name)
            os.unlink(t.name)
            fix_clean = "yes" if frc == 0 and not errors(fdoc) else "no"
            restores = "?"
            if src and os.path.exists(os.path.join(ROOT, src)):
                orig = open(os.path.join(ROOT, src)).read().split("\n")
                # restored: a line reading as the original bug line appears near the bug line
                # more often than before the fix-its (they may insert lines above it)
                want = code_of(orig[bline - 4]) if 0 <= bline - 4 < len(orig) else None
                before, after = text.split("\n"), fixed.split("\n")
                grow = max(0, len(after) - len(before))
                lo = max(0, bline - 4)
                n0 = sum(code_of(l) == want for l in before[lo:bline + 3])
                n1 = sum(code_of(l) == want for l in after[lo:bline + 3 + grow])
                restores = "yes" if want and n1 > n0 else "no"
            fix_restores = restores
        helps = [h for e in errs for h in e.get("help", [])]
        verdict, note = judge.get(name, ("", ""))
        rows.append({
            "name": name, "kind": kind, "bug_line": bline, "caught": "yes" if caught else "no",
            "codes": " ".join("%s@%s" % (e["code"], (e.get("span") or {}).get("line")) for e in errs[:6]),
            "at_line": "yes" if at_line else "no", "near": "yes" if near else "no",
            "fixits": str(len(fixits)), "fixit_clean": fix_clean, "fixit_restores": fix_restores,
            "internal_error": "yes" if doc.get("internal_error") or rc == 2 else "no",
            "verdict": verdict if caught else "", "judge_note": note if caught else "",
            "message": errs[0]["message"] if errs else "",
            "help": " | ".join(helps)[:400], "what": what,
        })
    cols = ["name", "kind", "bug_line", "caught", "codes", "at_line", "near", "fixits", "fixit_clean",
            "fixit_restores", "internal_error", "verdict", "judge_note", "message", "help", "what"]
    with open(out_path, "w") as o:
        o.write("\t".join(cols) + "\n")
        for r in rows:
            o.write("\t".join(str(r[c]).replace("\t", " ").replace("\n", " ") for c in cols) + "\n")
    # the entries check leaves clean: bench/device/run_outside.sh runs them under run --check
    heavy = ("pp_", "vl_", "fa_", "dp_")
    clean = [r["name"] for r in rows if r["caught"] == "no"]
    with open(run_list or os.path.join(corpus, "RUN.txt"), "w") as o:
        for n in sorted(clean, key=lambda n: (not n.startswith(heavy), n)):
            o.write(n + "\n")
    if not quiet:
        for r in rows:
            print("%-28s %-7s line %-4s caught %-3s at_line %-3s near %-3s %-28s fixits %s%s %s" % (
                r["name"], r["kind"], r["bug_line"], r["caught"], r["at_line"], r["near"], r["codes"][:28],
                r["fixits"], ("(clean %s, restores %s)" % (r["fixit_clean"], r["fixit_restores"])) if r["fixits"] != "0" else "",
                r["verdict"]))
    for kind in ("static", "dynamic"):
        rs = [r for r in rows if r["kind"] == kind]
        c = [r for r in rs if r["caught"] == "yes"]
        print("%s: %d bugs; caught by check %d; at the bug line %d; within 3 lines %d; with fix-its %d "
              "(copy checks clean %d, restores the original line %d); help judged fix %d, partial %d, "
              "silences %d, misleading %d, none %d" % (
                  kind, len(rs), len(c), sum(r["at_line"] == "yes" for r in c), sum(r["near"] == "yes" for r in c),
                  sum(r["fixits"] != "0" for r in c), sum(r["fixit_clean"] == "yes" for r in c),
                  sum(r["fixit_restores"] == "yes" for r in c),
                  *[sum(r["verdict"] == v for r in c) for v in ("fix", "partial", "silences", "misleading", "none")]))
    unjudged = [r["name"] for r in rows if r["caught"] == "yes" and not r["verdict"]]
    if unjudged:
        print("caught but not judged yet: " + " ".join(unjudged))
    print("internal errors: %d; rows in %s" % (sum(r["internal_error"] == "yes" for r in rows),
                                               os.path.relpath(out_path)))
    return 2 if any(r["internal_error"] == "yes" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
