"""rows2_fold.py — session 8's tuning rows into the row ops' table part and the sweep's table.

    python3 bench/device/rows2_fold.py TUNE.jsonl ...

TUNE.jsonl: `lib bench --json` rows of run_rows2.sh (the tuning lines, rows2_s8_*tune_lines.txt).
Per shape the times of the variants whose check passed become an entry (rows2_table.py
entries); an entry at a shape of the acceptance sweep (sweep.py shapes 2027) is dropped
(the sweep is judged on shapes the table never saw). The entries go into
bench/device/rows_table_h200.json (an entry of the same op and shape is replaced); the
fp8_row_quantize entries of the sweep's table that bench/device/fp8_table_h200.json does not
hold (its 38 of the earlier kernels) move there too, so that the merge below keeps them. Then
bench/device/sweep_table_h200.json takes the same entries (the set table_merge.py makes with
rows_table_h200.json and fp8_table_h200.json as parts, every other entry left in its place).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sweep         # noqa: E402
from rows2_table import group, jsonl, ms   # noqa: E402


def key(e):
    return (e["op"], ",".join(f"{k}={v}" for k, v in e["shape"].items()))


def entries(paths):
    out = {}
    for path in paths:
        shapes, by = group(jsonl(path))
        for k in shapes:
            times = {}
            for r in by[k]:
                t, v = ms(r), r.get("variant")
                if t and v and r.get("check_ok") and (v not in times or t < times[v]):
                    times[v] = t
            if times:
                shape = {a: int(b) for a, b in (kv.split("=") for kv in k[1].split(","))}
                e = out.setdefault(k, {"op": k[0], "shape": shape, "times_ms": {}, "failed": {}})
                e["times_ms"].update(times)
    return out


def main(paths):
    new = entries(paths)
    held_out = {tuple(s.split(None, 1)) for s in sweep.shapes(2027)}
    dropped = [k for k in new if k in held_out]
    for k in dropped:
        del new[k]
    rows_path = os.path.join(HERE, "rows_table_h200.json")
    fp8_path = os.path.join(HERE, "fp8_table_h200.json")
    sweep_path = os.path.join(HERE, "sweep_table_h200.json")
    rows, fp8, sw = (json.load(open(p)) for p in (rows_path, fp8_path, sweep_path))
    have = {key(e) for e in rows["entries"]}
    in_fp8 = {key(e) for e in fp8["entries"]}
    legacy = [e for e in sw["entries"] if e["op"] == "fp8_row_quantize"
              and key(e) not in in_fp8 and key(e) not in have and key(e) not in new]
    kept = [e for e in rows["entries"] if key(e) not in new]
    replaced = len(rows["entries"]) - len(kept)
    rows["entries"] = kept + legacy + list(new.values())
    open(rows_path, "w").write(json.dumps(rows, indent=1) + "\n")
    print(f"rows2_fold: {len(new)} entries ({replaced} replaced, {len(dropped)} at sweep shapes dropped), "
          f"{len(legacy)} fp8_row_quantize entries of the sweep's table moved into rows_table_h200.json",
          file=sys.stderr)
    # the sweep's table: each new entry replaces its shape's or is appended; every other
    # entry stays where it is (the same entries as table_merge.py with rows_table_h200.json
    # and fp8_table_h200.json as parts, in a diff that touches only the new ones)
    at = {key(e): i for i, e in enumerate(sw["entries"])}
    for k, e in new.items():
        if k in at:
            sw["entries"][at[k]] = e
        else:
            sw["entries"].append(e)
    open(sweep_path, "w").write(json.dumps(sw, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
