"""libkernels_peers.py — the torch peers of the library kernels (issue 13), timed in
the same device call as `cakec run --bench`, and the table that puts them side by side.

  peers:  python3 libkernels_peers.py peers CASES.tsv OUT.json [--go FILE] [--deadline S]
  table:  python3 libkernels_peers.py table CASES.tsv PEERS.json RAW_DIR

CASES.tsv: one bench case per line, tab-separated: name, op, shape (D=V,...), the
cakec bench documents of the case (comma-separated bench_*.json names: a two-launch
op sums its launches), and its check documents (check_*.json, the same launches). Ops: rmsnorm, layernorm (bf16), softmax (f32), cross_entropy
(f32 logits, i32 targets), gemm (bf16, C = A B^T).

Peers per case: torch eager, torch.compile (compiled once per shape, dynamic=False,
before timing; a shape left without time to compile is timed eager only), and for
gemm cuBLAS through torch.matmul. Every time is the median of
triton.testing.do_bench (CUDA events, L2 cleared before each run). With --go the
timing waits until FILE exists (the shell's own benches are done), so the compile
work (CPU) overlaps the checks but no timing overlaps another GPU job.
"""
import json
import os
import sys
import time


def parse_shape(s):
    return {k: int(v) for k, v in (kv.split("=") for kv in s.split(","))}


def read_cases(path):
    cases = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) >= 4 and not line.startswith("#"):
                cases.append({"name": parts[0], "op": parts[1], "shape": parts[2],
                              "docs": [d for d in parts[3].split(",") if d],
                              "checks": [d for d in (parts[4] if len(parts) > 4 else "").split(",") if d]})
    return cases


def make_fn(torch, op, d):
    """(eager callable, inputs) for one op at one shape"""
    dev = "cuda"
    F = torch.nn.functional
    if op in ("rmsnorm", "layernorm"):
        M, N = d["M"], d["N"]
        x = torch.randn(M, N, device=dev, dtype=torch.bfloat16)
        w = torch.randn(N, device=dev, dtype=torch.bfloat16)
        b = torch.randn(N, device=dev, dtype=torch.bfloat16)
        if op == "rmsnorm":
            return (lambda x, w, b: F.rms_norm(x, (N,), w, 0.5)), (x, w, b)
        return (lambda x, w, b: F.layer_norm(x, (N,), w, b, 0.5)), (x, w, b)
    if op == "softmax":
        x = torch.randn(d["M"], d["N"], device=dev, dtype=torch.float32)
        return (lambda x: torch.softmax(x, dim=1)), (x,)
    if op == "cross_entropy":
        B, V = d["B"], d["V"]
        x = torch.randn(B, V, device=dev, dtype=torch.float32)
        t = torch.randint(0, V, (B,), device=dev, dtype=torch.int64)
        return (lambda x, t: F.cross_entropy(x, t, reduction="none")), (x, t)
    if op == "gemm":
        a = torch.randn(d["M"], d["K"], device=dev, dtype=torch.bfloat16)
        b = torch.randn(d["N"], d["K"], device=dev, dtype=torch.bfloat16)
        return (lambda a, b: torch.matmul(a, b.t())), (a, b)
    raise ValueError(op)


def peers(cases_path, out_path, go=None, deadline=94.0):
    """deadline: seconds from the start by which the timing must be over; compiling
    stops at 40% of it, the timing starts when GO exists (or at 80% of it)"""
    t0 = time.time()
    import torch
    from triton.testing import do_bench
    torch.manual_seed(0)
    cases = read_cases(cases_path)
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cases": {}}
    prepared = []
    for c in cases:
        d = parse_shape(c["shape"])
        try:
            fn, args = make_fn(torch, c["op"], d)
        except Exception as e:  # out of memory, an unknown op: reported, never fatal
            res["cases"][c["name"]] = {"error": repr(e)[:200]}
            continue
        comp = None
        # compile while there is time (about 3 s a shape), cuBLAS needs none
        if c["op"] != "gemm" and time.time() - t0 < deadline * 0.4:
            try:
                comp = torch.compile(fn, dynamic=False)
                comp(*args)
                torch.cuda.synchronize()
            except Exception as e:
                res["cases"].setdefault(c["name"], {})["compile_error"] = repr(e)[:200]
                comp = None
        prepared.append((c, fn, comp, args))
    res["compile_s"] = time.time() - t0
    res["go_wait_from_s"] = res["compile_s"]
    if go:
        while not os.path.exists(go) and time.time() - t0 < deadline * 0.8:
            time.sleep(0.2)
    res["timing_from_s"] = time.time() - t0
    for c, fn, comp, args in prepared:
        r = res["cases"].setdefault(c["name"], {})
        if time.time() - t0 > deadline:
            r["skipped"] = "out of time"
            continue
        rep = 40
        try:
            r["eager_ms"] = float(do_bench(lambda: fn(*args), warmup=5, rep=rep, return_mode="median"))
            if comp is not None:
                r["compile_ms"] = float(do_bench(lambda: comp(*args), warmup=5, rep=rep, return_mode="median"))
        except Exception as e:  # reported in the table, the other cases still run
            r["error"] = repr(e)[:200]
        times = [v for k, v in r.items() if k.endswith("_ms")]
        if not times:
            continue
        best = min(times)
        r["best_ms"] = best
        r["best"] = [k for k, v in r.items() if k.endswith("_ms") and v == best][0][:-3]
    res["total_s"] = time.time() - t0
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1)


def cake_ms(raw, docs, checks=()):
    """sum of the launches' median ms, and whether every check passed (those of the bench
    documents, if they checked, and the separate check documents)"""
    total, ok, why = 0.0, True, ""
    for name in checks:
        try:
            with open(os.path.join(raw, name)) as f:
                j = json.load(f)
        except (OSError, ValueError):
            ok, why = False, "no check"
            continue
        runs = j.get("check", [])
        if not runs:
            ok, why = False, "check: " + "; ".join(d.get("code", "") for d in j.get("diagnostics", []))[:60]
        for ch in runs:
            if ch.get("status") != "pass":
                ok, why = False, ch.get("status", "?")
    timed = True
    for name in docs:
        try:
            with open(os.path.join(raw, name)) as f:
                j = json.load(f)
        except (OSError, ValueError):
            timed = False
            continue
        b = j.get("bench")
        if not b:
            timed = False
            continue
        total += b["median_ms"]
        for ch in j.get("check", []):
            if ch.get("status") != "pass":
                ok, why = False, ch.get("status", "?")
    return (total if timed else None), ok, why


def check_summary(raw):
    """the separate checks' verdicts, one line: how many passed of how many"""
    n = bad = 0
    for name in sorted(os.listdir(raw)):
        if not (name.startswith("check_") and name.endswith(".json")):
            continue
        n += 1
        try:
            with open(os.path.join(raw, name)) as f:
                runs = json.load(f).get("check", [])
        except (OSError, ValueError):
            runs = []
        if not runs or any(r.get("status") != "pass" for r in runs):
            bad += 1
    print("checks: %d of %d documents pass" % (n - bad, n))
    print()


def table(cases_path, peers_path, raw):
    check_summary(raw)
    try:
        with open(peers_path) as f:
            pj = json.load(f)
    except (OSError, ValueError):
        pj = {"cases": {}}
    rows = []
    print("| case | op | shape | cake ms | check | peer | peer ms | ratio (peer / cake) |")
    print("|---|---|---|---|---|---|---|---|")
    for c in read_cases(cases_path):
        ms, ok, why = cake_ms(raw, c["docs"], c["checks"])
        p = pj["cases"].get(c["name"], {})
        pms = p.get("best_ms")
        ratio = pms / ms if ms and pms else None
        if ratio:
            rows.append(ratio)
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            c["name"], c["op"], c["shape"], "%.4f" % ms if ms else "-",
            ("pass" if ok else "FAIL " + why) if c["checks"] or ms else "-", p.get("best", p.get("error", "-")),
            "%.4f" % pms if pms else "-", "%.2f" % ratio if ratio else "-"))
    if rows:
        import math
        g = math.exp(sum(math.log(r) for r in rows) / len(rows))
        print("\n%d cases timed; geomean ratio %.3f; >= 1.0 on %d; below 0.9 on %d" % (
            len(rows), g, sum(r >= 1.0 for r in rows), sum(r < 0.9 for r in rows)))


if __name__ == "__main__":
    a = sys.argv[1:]
    if a and a[0] == "peers":
        go = a[a.index("--go") + 1] if "--go" in a else None
        dl = float(a[a.index("--deadline") + 1]) if "--deadline" in a else 94.0
        peers(a[1], a[2], go, dl)
    elif a and a[0] == "table":
        table(a[1], a[2], a[3])
    else:
        sys.exit(__doc__)
