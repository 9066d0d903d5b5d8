"""table_merge.py — one tuned table from per-op parts (the format of `cakec lib tune -o`).

    table_merge.py BASE.json PART.json ... [-o OUT.json]

Every op that a PART has entries for takes its entries from the PARTs only: BASE's entries
of that op are dropped, BASE's other ops are kept as they are, in their order. So each
owner of an op keeps its measurements in a file of its own (bench/device/rows_table_h200.json:
the row ops) and the sweep's table (bench/device/sweep_table_h200.json) is rebuilt from
them without touching the others' entries. The parts must name BASE's device (a table never
mixes kinds of device: `cakec lib tune` refuses that too, E1213).
"""
import json
import sys


def main(argv):
    out = None
    if "-o" in argv:
        i = argv.index("-o")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) < 2:
        sys.exit(__doc__)
    base = json.load(open(argv[0]))
    parts = [json.load(open(p)) for p in argv[1:]]
    for path, part in zip(argv[1:], parts):
        if part.get("device") != base.get("device"):
            sys.exit(f"table_merge: {path} was measured on {part.get('device')!r}, "
                     f"the base on {base.get('device')!r}")
    taken = {e["op"] for part in parts for e in part.get("entries", [])}
    entries = [e for e in base.get("entries", []) if e["op"] not in taken]
    for part in parts:
        entries += part.get("entries", [])
    base["entries"] = entries
    text = json.dumps(base, indent=1) + "\n"
    if out:
        open(out, "w").write(text)
    else:
        sys.stdout.write(text)
    counts = {}
    for e in entries:
        counts[e["op"]] = counts.get(e["op"], 0) + 1
    print("table_merge: " + ", ".join(f"{op} {n}{' (new)' if op in taken else ''}"
                                      for op, n in counts.items()), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
