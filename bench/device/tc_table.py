"""tc_table.py — turns the raw documents of run_tc.sh into the tensor-core results table.

    python3 bench/device/tc_table.py RAW_DIR

Reads RAW_DIR/status.tsv (every command's exit status), cases.tsv (the bench cases:
name, file, shape, params, FLOPs, peer rule), check_*.json, bench_*.json,
emit_*.json, ptxas_*.txt, sass_*.txt, {memcheck,racecheck,synccheck}_*.txt and
tc_peers.json. Prints markdown: the steps that did not finish, the checks, the SASS
facts, the sanitizer verdicts, then the speed table with the acceptance verdicts
(printed last: the device reply keeps the end of the output). Standard library only.

Ratios are peer time over ours (above 1: faster than the peer), with the FLOPs of
cases.tsv on both sides: 2·M·N·K for GEMMs, 4·BH·S²·D for attention, halved when causal.
"""
import json
import os
import re
import sys
from collections import Counter

DATASHEET_TFLOPS = {"bf16": 989.0, "fp8": 1979.0}  # H100/H200 SXM dense, vendor datasheet
EXPECTED_MMA = {"gemm_sm80": "HMMA", "gemm_fp8": "QGMMA"}  # default: HGMMA
COUNTED = ("HGMMA", "HMMA", "QGMMA", "LDL", "STL", "UTMALDG", "UTMASTG", "UBLKCP", "LDSM",
           "STSM", "LDGSTS", "SYNCS", "WARPGROUP", "USETMAXREG", "BAR")


def read(raw, name):
    try:
        with open(os.path.join(raw, name), errors="replace") as f:
            return f.read()
    except OSError:
        return None


def load_json(raw, name):
    text = read(raw, name)
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def read_status(raw):
    """name -> (exit status text, seconds), in the order the commands ran"""
    out = {}
    for line in (read(raw, "status.tsv") or "").splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            out[parts[0]] = (parts[1], parts[2])
    return out


def status_word(st):
    if st is None:
        return "not run"
    rc = st[0]
    return {"skip": "skipped (time budget)", "124": "timed out", "137": "timed out (killed)",
            "missing": "file does not exist yet",
            "nocompile": "skipped: does not compile"}.get(rc, f"exit {rc}")


def diag_summary(doc):
    """the first error diagnostic of a cakec JSON document, shortened"""
    for d in (doc or {}).get("diagnostics", []):
        if d.get("severity") == "error":
            code = d.get("code", "")
            if code == "E0902":
                return "does not compile yet (E0902)"
            return f"{code}: {d.get('message', '')[:90]}"
    return ""


def fmt(x, spec=".3f"):
    return "" if x is None else format(x, spec)


# ---- steps that did not finish ------------------------------------------------------------

def steps_section(status):
    bad = [(n, status_word(st)) for n, st in status.items()
           if st[0] in ("skip", "124", "137")]
    missing = sorted({n.split(":", 1)[-1] for n, st in status.items() if st[0] == "missing"})
    print("## Steps")
    print()
    print(f"{len(status)} commands logged; {len(bad)} timed out or skipped for time.")
    for n, w in bad:
        print(f"- {n}: {w}")
    if missing:
        print(f"- not there, skipped: {', '.join(missing)}")
    print()


# ---- checks ---------------------------------------------------------------------------------

def check_row(raw, name, st):
    doc = load_json(raw, f"check_{name}.json")
    reps = (doc or {}).get("check", [])
    refused = [r for r in reps if "violates an assume" in (r.get("message") or "")]
    passed = sum(1 for r in reps if r.get("ok"))
    worst = max((r["max_rel_err"] for r in reps if r.get("max_rel_err") is not None), default=None)
    if st and st[0] in ("skip", "124", "137"):
        verdict = status_word(st)
    elif not doc:
        verdict = f"no output ({status_word(st)})"
    elif refused and len(refused) == len(reps):
        verdict = "refused: the shape violates an assume"
    elif reps and passed == len(reps):
        verdict = "PASS"
    elif reps:
        bad = [r for r in reps if not r.get("ok")]
        verdict = "FAIL: " + "; ".join(f"{r.get('shape')} {r.get('status')} "
                                       f"{(r.get('message') or '')[:60]}" for r in bad[:2])
    else:
        verdict = diag_summary(doc) or f"no check ran ({status_word(st)})"
    shapes = reps[0].get("shape", "") if len(reps) == 1 else f"{len(reps)} shapes" if reps else "—"
    return f"| {name} | {shapes} | {passed}/{len(reps)} | {fmt(worst, '.3g')} | {verdict} |"


def checks_section(raw, status):
    names = [n.split(":", 1)[1] for n in status if n.startswith("check:")]
    if not names:
        return
    print("## Correctness (`cakec run --check`)")
    print()
    print("| check | shape(s) | passed | worst max_rel_err | verdict |")
    print("|---|---|---|---|---|")
    for name in names:
        print(check_row(raw, name, status.get(f"check:{name}")))
    print()


# ---- SASS facts ---------------------------------------------------------------------------------

def parse_ptxas(text):
    """function -> {regs, stack, spill_st, spill_ld, smem}; plus remarks (warnings, perf notes)"""
    funcs, cur, remarks = {}, None, []
    for line in text.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            cur = funcs.setdefault(m.group(1), {})
            continue
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), {})
            continue
        if re.search(r"warning|Performance|serializ|error", line, re.I):
            remarks.append(line.strip())
        if cur is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            cur.update(stack=int(m.group(1)), spill_st=int(m.group(2)), spill_ld=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            cur["regs"] = int(m.group(1))
        m = re.search(r"(\d+) bytes smem", line)
        if m:
            cur["smem"] = int(m.group(1))
    return funcs, remarks


SASS_LINE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)")


def parse_sass(text):
    """function -> Counter of opcodes (the part before the first '.')"""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.search(r"Function\s*:\s*(\S+)", line)
        if m:
            cur = funcs.setdefault(m.group(1), Counter())
            continue
        m = SASS_LINE.match(line)
        if m and cur is not None:
            cur[m.group(1)] += 1
    return funcs


def sass_verdict(example, arch, props, ops):
    want = EXPECTED_MMA.get(example.split("_c1")[0], "HGMMA")
    problems = []
    if arch == "sm_90a" or want == "HMMA":
        if ops.get(want, 0) == 0:
            problems.append(f"no {want}")
    if ops.get("LDL", 0) or ops.get("STL", 0):
        problems.append(f"local memory: LDL {ops.get('LDL', 0)}, STL {ops.get('STL', 0)}")
    if props.get("spill_st") or props.get("spill_ld"):
        problems.append(f"spills {props.get('spill_st')}/{props.get('spill_ld')} B")
    return "ok" if not problems else "; ".join(problems)


def sass_section(raw, status):
    emits = [n.split(":", 1)[1] for n in status if n.startswith("ptx:")]
    if not emits:
        return
    print("## SASS (cakec --emit ptx; ptxas -v; cuobjdump -sass)")
    print()
    print("| kernel | example | arch | regs | stack B | spill st/ld B | smem B | HGMMA | HMMA | QGMMA "
          "| TMA ld/st | LDSM/STSM | cp.async | setmaxnreg | LDL/STL | verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    remarks_all = []
    for ex in emits:
        archs = sorted(n.split(":")[2] for n in status if n.startswith(f"ptxas:{ex}:"))
        if not archs:
            doc = load_json(raw, f"emit_{ex}.json")
            why = diag_summary(doc) or status_word(status.get(f"ptx:{ex}"))
            print(f"| — | {ex} | | | | | | | | | | | | | | {why} |")
            continue
        for arch in archs:
            ptxas = read(raw, f"ptxas_{ex}_{arch}.txt") or ""
            props_by_fn, remarks = parse_ptxas(ptxas)
            remarks_all += [f"{ex} {arch}: {r}" for r in remarks]
            st = status.get(f"ptxas:{ex}:{arch}")
            if st and st[0] != "0":
                first = next((ln for ln in ptxas.splitlines() if "error" in ln.lower()), "")
                print(f"| — | {ex} | {arch} | | | | | | | | | | | | | ptxas {status_word(st)}: "
                      f"{first[:80]} |")
                continue
            ops_by_fn = parse_sass(read(raw, f"sass_{ex}_{arch}.txt") or "")
            for fn in sorted(set(props_by_fn) | set(ops_by_fn)):
                p, o = props_by_fn.get(fn, {}), ops_by_fn.get(fn, Counter())
                verdict = sass_verdict(ex, arch, p, o) if fn in ops_by_fn else "no SASS (cuobjdump)"
                print(f"| {fn} | {ex} | {arch} | {p.get('regs', '')} | {p.get('stack', '')} "
                      f"| {p.get('spill_st', '')}/{p.get('spill_ld', '')} | {p.get('smem', '')} "
                      f"| {o['HGMMA']} | {o['HMMA']} | {o['QGMMA']} | {o['UTMALDG']}/{o['UTMASTG']} "
                      f"| {o['LDSM']}/{o['STSM']} | {o['LDGSTS']} | {o['USETMAXREG']} "
                      f"| {o['LDL']}/{o['STL']} | {verdict} |")
    print()
    if remarks_all:
        print("ptxas remarks:")
        for r in remarks_all[:20]:
            print(f"- {r}")
        print()


# ---- compute-sanitizer ---------------------------------------------------------------------------

def sanitizer_verdict(text, st):
    if st and st[0] in ("skip", "124", "137", "nocompile"):
        return status_word(st), ""
    if not re.search(r"^check\s", text, re.M):  # cakec's text report: one line per shape
        err = next((ln.strip() for ln in text.splitlines() if "error" in ln), "")
        return f"no kernel ran ({status_word(st)})", err[:100]
    m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed \((\d+) errors?, (\d+) warnings?\)", text)
    if m:
        errors, warnings = int(m.group(2)), int(m.group(3))
        word = "clean" if errors == 0 else f"{errors} race errors"
        return (word + (f", {warnings} warnings" if warnings else "")), m.group(0)
    m = re.search(r"ERROR SUMMARY: (\d+) errors?", text)
    if m:
        return ("clean" if m.group(1) == "0" else f"{m.group(1)} errors"), m.group(0)
    last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
    return f"no summary ({status_word(st)})", last[:100]


def sanitizer_section(raw, status):
    runs = [n for n in status if n.split(":")[0] in ("memcheck", "racecheck", "synccheck")]
    if not runs:
        return
    print("## compute-sanitizer (small shapes)")
    print()
    print("| tool | example | verdict | exit | summary |")
    print("|---|---|---|---|---|")
    for n in runs:
        tool, ex = n.split(":", 1)
        st = status.get(n)
        verdict, summary = sanitizer_verdict(read(raw, f"{tool}_{ex}.txt") or "", st)
        print(f"| {tool} | {ex} | {verdict} | {st[0] if st else ''} | {summary} |")
    print()
    print("exit 9: the sanitizer found errors; exit 1 with a clean summary: cakec's check "
          "itself failed (see the check table).")
    print()


# ---- speed and acceptance ---------------------------------------------------------------------------

def read_cases(raw):
    out = []
    for line in (read(raw, "cases.tsv") or "").splitlines():
        parts = line.split("\t")
        if len(parts) == 6:
            name, f, shape, params, flops, rule = parts
            out.append({"name": name, "file": f, "shape": shape, "params": params,
                        "flops": float(flops), "rule": rule})
    return out


def ceilings(peers, name):
    """(measured, datasheet, label) TFLOP/s for the case's data type"""
    if "fp8" in name:
        fast = peers.get("scaled_mm_fp8_fast_8192", {})
        return fast.get("best_tflops"), DATASHEET_TFLOPS["fp8"], "best _scaled_mm fast-accum rate"
    roof = peers.get("roofline", {})
    return roof.get("measured_bf16_tflops"), DATASHEET_TFLOPS["bf16"], roof.get("label", "")


def speed_rows(raw, status, peers, case, tally):
    name = case["name"]
    st = status.get(f"bench:{name}")
    doc = load_json(raw, f"bench_{name}.json")
    b = (doc or {}).get("bench")
    shape = case["shape"] + ("" if case["params"] == "-" else f" {case['params']}")
    rules = [r.rsplit(":", 1) for r in case["rule"].split(",") if ":" in r]
    if not b or not b.get("median_ms"):
        if f"missing:{case['file']}" in status:
            why = "file does not exist yet"
        else:
            why = diag_summary(doc) or status_word(st if st else ("missing", "0"))
        for _, need in rules:
            if need != "-":
                tally["not measured"] += 1
        print(f"| {name} | {shape} | {why} | | | | | | | | | | |")
        return
    ms = b.get("median_ms")
    tflops = case["flops"] / ms * 1e-9 if ms else None
    meas, sheet, _ = ceilings(peers, name)
    of_meas = f"{tflops / meas:.3f}" if tflops and meas else ""
    of_sheet = f"{tflops / sheet:.3f}" if tflops else ""
    first = True
    for key, need in rules or [("", "-")]:
        p = peers.get(key, {})
        pms = p.get("ms")
        ratio = pms / ms if pms and ms else None
        if need == "-":
            verdict = "(info)"
        elif ratio is None:
            verdict = "no peer: " + (p.get("error", "not measured")[:40])
            tally["not measured"] += 1
        elif ratio >= float(need):
            verdict = "**PASS**"
            tally["PASS"] += 1
        else:
            verdict = "**FAIL**"
            tally["FAIL"] += 1
        need_txt = "—" if need == "-" else f"≥ {need}"
        kcols = (f"{name} | {shape} | {ms:.4f} | {fmt(tflops, '.1f')} | {b.get('registers', '')} "
                 if first else " | | | | ")
        tail = f"| {of_meas} | {of_sheet} |" if first else "| | |"
        print(f"| {kcols}| {key} | {fmt(pms, '.4f')} | {fmt(p.get('tflops'), '.1f')} "
              f"| {fmt(ratio, '.3f')} | {need_txt} | {verdict} {tail}")
        first = False


def speed_section(raw, status, peers):
    cases = read_cases(raw)
    if not cases:
        return
    roof = peers.get("roofline", {})
    print("## Speed (`cakec run --bench`, median ms; peers in the same run)")
    print()
    print(f"device: {peers.get('device', '?')}; torch {peers.get('torch', '?')}, "
          f"triton {peers.get('triton', '?')}")
    print(f"ceilings: measured {fmt(roof.get('measured_bf16_tflops'), '.1f')} TFLOP/s bf16 "
          f"({roof.get('label', 'not measured')}); datasheet {DATASHEET_TFLOPS['bf16']:.0f} bf16, "
          f"{DATASHEET_TFLOPS['fp8']:.0f} fp8 (fp8 rows: measured = best _scaled_mm fast-accum rate)")
    print()
    print("| kernel | shape | ms | TFLOP/s | regs | peer | peer ms | peer TFLOP/s | ratio "
          "| threshold | verdict | of measured | of datasheet |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    tally = Counter()
    for case in cases:
        speed_rows(raw, status, peers, case, tally)
    print()
    print("ratio: peer ms / our ms (above 1: faster than the peer); FLOPs 2·M·N·K, attention "
          "4·BH·S²·D (halved when causal), the same on both sides.")
    errors = {k: v["error"] for k, v in peers.items() if isinstance(v, dict) and "error" in v}
    for k, e in errors.items():
        print(f"- peer {k} failed: {e[:120]}")
    print()
    print(f"acceptance: {tally['PASS']} PASS, {tally['FAIL']} FAIL, "
          f"{tally['not measured']} not measured")


def main():
    raw = sys.argv[1] if len(sys.argv) > 1 else "."
    status = read_status(raw)
    peers = load_json(raw, "tc_peers.json") or {}
    gpu = read(raw, "gpu.txt")
    print("# CAKE tensor-core session")
    print()
    if gpu:
        for line in gpu.strip().splitlines():
            print(f"- gpu {line}")
        print()
    steps_section(status)
    checks_section(raw, status)
    sass_section(raw, status)
    sanitizer_section(raw, status)
    speed_section(raw, status, peers)


if __name__ == "__main__":
    main()
