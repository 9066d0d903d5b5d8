#!/usr/bin/env python3
"""docs_test.py — the docs cannot drift from the compiler: every command example
and every "works" / "not supported" claim in README.md and docs/*.md is executed.

1. Command examples: every `cakec ...` line of a fenced block (not ```tir) and
   every inline `cakec ...` code span that names only files of the repository
   runs (from the repository root, outputs redirected to a temporary folder)
   and must not crash: exit 0, 1 (diagnostics) or 3 (no GPU here), never 2, a
   signal or a hang. A synopsis (placeholders such as FILE, `[`, `|`, `...`)
   is skipped; an example naming a .tir/.json that does not exist fails.
2. Claims: tests/docs/claims.tsv lists claims as (doc, phrase, kind, args):
     check-ok FILE            `cakec check FILE` exits 0
     check-code CODE FILE     `cakec check FILE` exits 1 and reports CODE
     check-warn CODE FILE     `cakec check FILE` exits 0 and reports CODE (a warning)
     compile-ok FILE T        `cakec FILE --target T` exits 0
     compile-code CODE FILE T [ARGS]   exits 1 and reports CODE
     cost-ok FILE [ARGS]      `cakec cost FILE` exits 0
     prose WHY                the line is not a claim about what the compiler
                              does (a heading, a note about tests, ...)
   The phrase must occur in the doc, and the claim must hold. Every line of
   the docs that makes a claim (CLAIM_RE) must contain a phrase of its doc.

usage: docs_test.py CAKEC ROOT      prints `N passed, N failed`, exits 1 on failure"""
import glob, os, re, shlex, subprocess, sys, tempfile

cakec, root = sys.argv[1], sys.argv[2]
CLAIM_RE = re.compile(r"not supported|not compiled|does not work|\bworks\b|not yet|not built|"
                      r"E0902 today|is E0902|are E0902", re.I)
docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
tmp = tempfile.mkdtemp(prefix="cake_docs.")
passed = failed = skipped = 0


def ok():
    global passed
    passed += 1


def bad(msg):
    global failed
    failed += 1
    print("FAIL:", msg)


def rel(p):
    return os.path.relpath(p, root)


def run(args, timeout=90):
    try:
        p = subprocess.run([cakec] + args, cwd=root, capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL, env=dict(os.environ, NO_COLOR="1"))
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return 124, "timed out"


# ---- 1. command examples -----------------------------------------------------------
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*(\.[a-z]+)?$|/[A-Z][A-Z0-9_]*(\.[a-z]+)?$")
ANY_KERNEL = {"k.tir"}       # the docs' name for "any kernel file"
MISSING_ON_PURPOSE = {"nofile.tir"}   # E0001's example: a file that does not exist


def find_in_tests(name):
    """a file the docs name by its base name (tests/docs/run_copy.tir as run_copy.tir)"""
    hits = glob.glob(os.path.join(root, "tests", "**", os.path.basename(name)), recursive=True)
    return rel(hits[0]) if len(hits) == 1 else None


def examples(path):
    text = open(path).read()
    fence = None
    for no, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if s.startswith("```"):
            fence = None if fence is not None else s[3:].strip()
            continue
        if fence is not None and fence != "tir":
            s = s[2:] if s.startswith("$ ") else s
            if s.startswith("cakec "):
                yield no, s
        elif fence is None:
            for m in re.finditer(r"`(cakec [^`]+)`", line):
                yield no, m.group(1)


def prepare(cmd):
    """the argument list to run, or (None, why) for a synopsis"""
    cmd = re.sub(r"\s+#.*$", "", cmd).strip()
    if any(c in cmd for c in "[]|<>…") or "..." in cmd or "&&" in cmd:
        return None, "synopsis"
    try:
        words = shlex.split(cmd)[1:]
    except ValueError:
        return None, "not a command line"
    if not words or words[0] in ("agent",) or "--help" in words:
        return None, "needs a network or is the usage"
    out, i = [], 0
    while i < len(words):
        w = words[i]
        if w in ("-o", "--svg") and i + 1 < len(words):
            out += [w, os.path.join(tmp, "out" + os.path.splitext(words[i + 1])[1])]
            i += 2
            continue
        if "=" not in w and not w.startswith("-") and PLACEHOLDER.search(w):
            return None, "placeholder " + w
        if re.search(r"\.(tir|json)$", w) and not w.startswith("-") and "=" not in w:
            if w in ANY_KERNEL:
                return None, "placeholder " + w
            if not os.path.exists(os.path.join(root, w)) and w not in MISSING_ON_PURPOSE:
                w = find_in_tests(w) or w
                if not os.path.exists(os.path.join(root, w)):
                    return None, "missing " + w
        out.append(w)
        i += 1
    return out, ""


seen = set()
for d in docs:
    for no, cmd in examples(d):
        args, why = prepare(cmd)
        where = f"{rel(d)}:{no}: `{cmd}`"
        if args is None:
            if why.startswith("missing"):
                bad(f"{where} names a file that does not exist ({why[8:]})")
            else:
                skipped += 1
            continue
        if tuple(args) in seen:
            continue
        seen.add(tuple(args))
        rc, out = run(args)
        if rc in (0, 1, 3):
            ok()
        else:
            bad(f"{where}: exit {rc}: {out[-300:]}")

# ---- 2. claims ------------------------------------------------------------------------
claims = {}
for no, line in enumerate(open(os.path.join(root, "tests", "docs", "claims.tsv")), 1):
    if not line.strip() or line.startswith("#"):
        continue
    f = line.rstrip("\n").split("\t")
    if len(f) < 3:
        bad(f"claims.tsv:{no}: want doc, phrase, kind, args")
        continue
    doc, phrase, kind, args = f[0], f[1], f[2], f[3:]
    claims.setdefault(doc, []).append(phrase)
    text = open(os.path.join(root, doc)).read() if os.path.exists(os.path.join(root, doc)) else ""
    if phrase not in text:
        bad(f"claims.tsv:{no}: `{phrase}` is no longer in {doc} (update the claim with the doc)")
        continue
    where = f"claims.tsv:{no} ({doc}: {phrase})"
    if kind == "prose":
        ok()
        continue
    if kind == "check-ok":
        rc, out = run(["check", args[0]])
        want_rc, code = 0, None
    elif kind in ("check-code", "check-warn"):
        rc, out = run(["check", args[1]])
        want_rc, code = (1 if kind == "check-code" else 0), args[0]
    elif kind == "compile-ok":
        rc, out = run([args[0], "--target", args[1], "-o", os.path.join(tmp, "c.out")] + args[2:])
        want_rc, code = 0, None
    elif kind == "compile-code":
        rc, out = run([args[1], "--target", args[2], "-o", os.path.join(tmp, "c.out")] + args[3:])
        want_rc, code = 1, args[0]
    elif kind == "cost-ok":
        rc, out = run(["cost", args[0]] + args[1:])
        want_rc, code = 0, None
    else:
        bad(f"{where}: unknown kind {kind}")
        continue
    if rc != want_rc or (code and f"[{code}]" not in out):
        bad(f"{where}: want exit {want_rc}{' with ' + code if code else ''}, got {rc}: {out[-400:]}")
    else:
        ok()

for d in docs:
    phrases = claims.get(rel(d), [])
    for no, line in enumerate(open(d), 1):
        if CLAIM_RE.search(line) and not any(p in line for p in phrases):
            bad(f"{rel(d)}:{no}: a claim no test executes (add it to tests/docs/claims.tsv): {line.strip()[:120]}")

print(f"{passed} passed, {failed} failed ({skipped} synopses skipped)")
sys.exit(1 if failed else 0)
