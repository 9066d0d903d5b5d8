"""gemm3_fold.py — `lib bench --all` rows of both GEMM ops into their table parts and the sweep's table.

    python3 bench/device/gemm3_fold.py ALL.jsonl ... [--checks CHECKS.jsonl]

ALL.jsonl: `lib bench --json --all` rows (e.g. session 8's run_gemm2.sh tune_all.jsonl).
CHECKS.jsonl: `lib bench --check` rows (run_gemm3.sh's best_checks.jsonl): a variant whose
check failed at a shape is moved from that shape's times to its `failed`.
The gemm rows go into bench/device/gemm_table_h200.json, the gemm_fp8 rows into
bench/device/fp8_table_h200.json (its fp8_row_quantize entries kept as they are), each with
gemmx.py merge: a variant timed at a shape the part already has keeps the part's time, a new
shape becomes a new entry, and no row at a shape of the acceptance sweep (sweep.py shapes
2027) is taken (the sweep is judged on shapes the table never saw). Then the gemm and
gemm_fp8 entries of bench/device/sweep_table_h200.json are those of the parts: an entry at
the same shape is replaced where it stands, a new one appended, every other op's entry left
in its place (the set table_merge.py makes with the two parts, in a diff that touches only
the GEMM entries).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gemmx import merge_table   # noqa: E402

def write(path, table):
    open(path, "w").write(json.dumps(table, indent=1) + "\n")


def substitute(entries, part, ops):
    """entries with those of OPS replaced in order by PART's (which keeps the old ones in
    their order, then the new ones: gemmx.py merge), the rest of PART appended"""
    part = list(part)
    out = []
    for e in entries:
        if e["op"] not in ops:
            out.append(e)
            continue
        n = part.pop(0)
        if (n["op"], n["shape"]) != (e["op"], e["shape"]):
            sys.exit(f"gemm3_fold: {e['op']} {e['shape']} not where the part has it")
        out.append(n)
    return out + part, len(part)


def checked(paths, checks_path):
    """the rows of paths in a scratch file, less the variants whose check failed at their shape"""
    import tempfile
    bad = {}
    for l in open(checks_path):
        if l.startswith("{"):
            r = json.loads(l)
            if r.get("check_ok") is False and r.get("variant"):
                bad.setdefault((r["op"], r["shape"]), set()).add(r["variant"])
    fd, out = tempfile.mkstemp(suffix=".jsonl")
    with os.fdopen(fd, "w") as f:
        for p in paths:
            for l in open(p):
                if not l.startswith("{"):
                    continue
                r = json.loads(l)
                for v in bad.get((r.get("op"), r.get("shape")), ()):
                    if v in (r.get("bench_all") or {}):
                        del r["bench_all"][v]
                        r.setdefault("failed_all", {})[v] = "its check failed (run_gemm3.sh best_checks)"
                f.write(json.dumps(r) + "\n")
    return [out]


def main(paths):
    if "--checks" in paths:
        i = paths.index("--checks")
        paths = checked(paths[:i] + paths[i + 2:], paths[i + 1])
    gemm_path = os.path.join(HERE, "gemm_table_h200.json")
    fp8_path = os.path.join(HERE, "fp8_table_h200.json")
    sweep_path = os.path.join(HERE, "sweep_table_h200.json")
    gemm = merge_table(gemm_path, paths, op="gemm")
    fp8 = merge_table(fp8_path, paths, op="gemm_fp8")
    fp8_table = json.load(open(fp8_path))
    fp8_table["entries"], _ = substitute(fp8_table["entries"], fp8["entries"], ("gemm_fp8",))
    write(gemm_path, gemm)
    write(fp8_path, fp8_table)
    sw = json.load(open(sweep_path))
    by_op = {"gemm": gemm["entries"], "gemm_fp8": fp8["entries"]}
    added = 0
    for op, part in by_op.items():
        sw["entries"], n = substitute(sw["entries"], part, (op,))
        added += n
    write(sweep_path, sw)
    print(f"gemm3_fold: gemm {len(gemm['entries'])} entries, gemm_fp8 {len(fp8['entries'])}; "
          f"{added} new in the sweep's table", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
