"""attn_r2.py — session 9's round 2 of attention forward at head dim 64 (issue 15): the
library's pick (`cakec lib bench`, flash_attn_fwd_pp3 where BH * cdiv(S, 192) >= 512) beside
torch SDPA with the cuDNN and the flash backend, at the 22 D = 64 dense shapes of
bench/device/run_afwd3.sh (attnfwd_peers.shapes(): the same names).

    python3 attn_r2.py lines OUT.txt
        the `lib bench --shapes` lines: per shape the op (attention_fwd_gqa_d64[_causal]) at
        BH = B * H, BHK = B * Hkv, S (the pick)
    python3 attn_r2.py peers OUT.jsonl [--deadline S]
        cuDNN and flash SDPA per shape (attnfwd_peers.py's method: gated.py, the faster of the
        stream time and a CUDA graph replay, 2 trials A B A B, the best median), one row a shape
    python3 attn_r2.py manifest DIR [old]
        DIR/manifest.json: library/manifest.json's two ops alone (old: their variants and
        `when` before pp3, session 8's dispatch), for a `lib build` of a few seconds
    python3 attn_r2.py table LIB.jsonl PEERS.jsonl OUT.md [OLD.jsonl]
        per shape the pick, its ms, the peers' ms, cuDNN / ours and flash / ours, the check,
        and (OLD.jsonl: the same lines benched on the old library) the old pick and its ms,
        new / old; geomeans and counts per causal value
"""
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

BASE = [(4, 32, 32, 1024), (2, 32, 32, 4096), (1, 32, 32, 8192), (1, 16, 16, 16384),
        (16, 16, 16, 512), (8, 32, 8, 2048), (2, 32, 4, 4096), (4, 8, 8, 3000),
        (2, 16, 2, 5000), (1, 8, 8, 1537), (8, 32, 32, 1000)]   # attnfwd_peers.shapes()' base


def shapes():
    """(name, B, H, Hkv, S, causal), D = 64"""
    return [(f"d64_c{c}_b{B}h{H}k{Hk}_s{S}", B, H, Hk, S, c) for c in (0, 1) for B, H, Hk, S in BASE]


def op_of(c):
    return "attention_fwd_gqa_d64" + ("_causal" if c else "")


def lib_shape(B, H, Hk, S):
    return f"BH={B * H},BHK={B * Hk},S={S}"


OLD_WHEN = {("attention_fwd_gqa_d64", "sm90_pingpong_128x192"): ["S >= 2048"],
            ("attention_fwd_gqa_d64", "sm90_pingpong_128x128"): ["S < 2048"],
            ("attention_fwd_gqa_d64_causal", "sm90_pingpong_128x192"): ["S > 4096"],
            ("attention_fwd_gqa_d64_causal", "sm90_pingpong_128x128"): ["S <= 4096"]}


# the cut's neighbourhood (BH * cdiv(S, 192) tiles of pp3 from 176 to 576; causal at S >= 2048)
PROBES = [(0, 16, 2112), (0, 24, 2112), (0, 32, 2112), (0, 40, 2112), (0, 48, 2112), (0, 64, 1152),
          (0, 96, 1024), (0, 128, 576), (0, 256, 256), (0, 4, 16384), (0, 8, 8192), (0, 8, 12288),
          (1, 16, 4096), (1, 24, 4096), (1, 8, 8192), (1, 12, 8192), (1, 256, 1536), (1, 64, 2048)]


def probe_lines(out):
    """the 22 shapes and PROBES, for `lib bench --all` on the library without `when`"""
    lines(out)
    with open(out, "a") as f:
        for c, bh, S in PROBES:
            f.write(f"{op_of(c)} BH={bh},BHK={bh},S={S}\n")


def manifest(out_dir, old):
    """out_dir/manifest.json: library/manifest.json's two head-dim-64 GQA forward ops alone
    (files by absolute path); old "old": their variants before pp3 (session 8's `when`);
    "all": every kernel of them without `when` (for `lib bench --all`)"""
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    m = json.load(open(os.path.join(root, "library", "manifest.json")))
    ops = []
    for o in m["ops"]:
        if o["op"] not in (op_of(0), op_of(1)):
            continue
        vs = []
        for v in o["variants"]:
            v["file"] = os.path.normpath(os.path.join(root, "library", v["file"]))
            if old == "old" and (o["op"], v["name"]) not in OLD_WHEN:
                continue   # the old library had no pp3
            if old == "all" and v["name"].endswith("_few"):
                continue   # sm90_pingpong_128x128 again
            if old == "old":
                v["when"] = OLD_WHEN[(o["op"], v["name"])]
            elif old == "all":
                v.pop("when", None)
            vs.append(v)
        o["variants"] = vs
        ops.append(o)
    os.makedirs(out_dir, exist_ok=True)
    json.dump({"library": "attn_r2_" + (old or "new"), "ops": ops, "gaps": []},
              open(os.path.join(out_dir, "manifest.json"), "w"), indent=1)


def lines(out):
    with open(out, "w") as f:
        for name, B, H, Hk, S, c in shapes():
            f.write(f"{op_of(c)} {lib_shape(B, H, Hk, S)}\n")


def peers(out, deadline):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import gated
    t0 = time.time()
    timer = gated.Timer(torch)
    timer.warm(0.5)

    def peer(backend, q, k, v, c, gqa):
        def call(kk, vv, g):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, kk, vv, is_causal=bool(c), enable_gqa=g)
        if gqa:
            try:
                call(k, v, True)
                torch.cuda.synchronize()
                return (lambda: call(k, v, True)), False
            except Exception:  # noqa: BLE001
                rep = q.shape[1] // k.shape[1]
                ke, ve = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
                return (lambda: call(ke, ve, False)), True
        return (lambda: call(k, v, False)), False

    with open(out, "w") as f:
        for name, B, H, Hk, S, c in shapes():
            if time.time() - t0 > deadline:
                print(f"peers: out of time before {name}", flush=True)
                break
            row = {"name": name, "op": op_of(c), "shape": lib_shape(B, H, Hk, S)}
            try:
                q = torch.randn(B, H, S, 64, device="cuda", dtype=torch.bfloat16)
                k = torch.randn(B, Hk, S, 64, device="cuda", dtype=torch.bfloat16)
                v = torch.randn(B, Hk, S, 64, device="cuda", dtype=torch.bfloat16)
                got = {}
                fns = []
                for tag, be in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)):
                    fn, x = peer(be, q, k, v, c, Hk != H)
                    row[tag + "_expanded"] = x
                    fns.append((tag, fn))
                for _ in range(2):
                    for tag, fn in fns:
                        ms = gated.fastest(timer.best(fn))[1]["median_ms"]
                        got.setdefault(tag, []).append(ms)
                for tag, ms in got.items():
                    row[tag + "_ms"] = min(ms)
                    row[tag + "_spread"] = max(ms) / min(ms) - 1
            except Exception as e:  # noqa: BLE001
                row["error"] = repr(e)[:300]
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(name, {k: v for k, v in row.items() if k.endswith("_ms")}, flush=True)


def jsonl(path):
    rows = []
    if path and os.path.exists(path):
        for line in open(path):
            line = line.strip()
            if line.startswith("{"):
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    return rows


def gm(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def table(lib_path, peers_path, out, old_path=None):
    lib = {(r.get("op"), r.get("shape")): r for r in jsonl(lib_path)}
    peer = {(r.get("op"), r.get("shape")): r for r in jsonl(peers_path)}
    old = {(r.get("op"), r.get("shape")): r for r in jsonl(old_path)}
    md = ["| shape | pick | ours ms | cuDNN ms | flash ms | cuDNN/ours | flash/ours | check | "
          "old pick ms | new/old |", "|---|---|---|---|---|---|---|---|---|---|"]
    ratios = {0: [], 1: []}
    gains = {0: [], 1: []}
    for name, B, H, Hk, S, c in shapes():
        key = (op_of(c), lib_shape(B, H, Hk, S))
        r, p = lib.get(key, {}), peer.get(key, {})
        ms = (r.get("bench") or {}).get("median_ms")
        ok = r.get("check_ok")
        cu, fl = p.get("cudnn_ms"), p.get("flash_ms")
        rc = cu / ms if cu and ms else None
        rf = fl / ms if fl and ms else None
        o = old.get(key, {})
        oms = (o.get("bench") or {}).get("median_ms")
        g = oms / ms if oms and ms else None
        if rc:
            ratios[c].append(rc)
        if g:
            gains[c].append(g)
        f = (lambda x, d=3: "-" if x is None else f"{x:.{d}f}")
        md.append(f"| {name} | {r.get('variant', '-')} | {f(ms, 4)} | {f(cu, 4)} | {f(fl, 4)} | {f(rc)} | "
                  f"{f(rf)} | {'ok' if ok else ('-' if ok is None else 'FAIL')} | "
                  f"{o.get('variant', '-')} {f(oms, 4)} | {f(g)} |")
    for c in (0, 1):
        rs = ratios[c]
        md.append(f"\ncausal {c}: {len(rs)} shapes timed, cuDNN/ours >= 1.05 at {sum(x >= 1.05 for x in rs)}, "
                  f">= 1.0 at {sum(x >= 1.0 for x in rs)}, geomean {gm(rs):.3f}, min "
                  f"{min(rs) if rs else float('nan'):.3f}; new/old pick geomean {gm(gains[c]):.3f} "
                  f"(n={len(gains[c])})")
    text = "\n".join(md) + "\n"
    open(out, "w").write(text)
    print(text)


def probe_table(all_path, out):
    """per line of `lib bench --all` rows: pp3's tiles, every variant's ms, the fastest, and
    the fastest 128-row variant / pp3 (> 1: pp3 faster)"""
    md = ["| op | shape | pp3 tiles | " + " | ".join(["pp3", "pp 128x128", "pp 128x192"]) +
          " | fastest | pp ms / pp3 ms |", "|---|---|---|---|---|---|---|---|"]
    names = ["sm90_pingpong3_192x128", "sm90_pingpong_128x128", "sm90_pingpong_128x192"]
    for r in jsonl(all_path):
        if "line" not in r:   # a batch's error row or a diagnostic document
            continue
        t = r.get("bench_all") or {}
        d = dict(kv.split("=") for kv in r.get("shape", "").split(",") if "=" in kv)
        tiles = int(d.get("BH", 0)) * -(-int(d.get("S", 0)) // 192)
        ms = [t.get(n) if isinstance(t.get(n), (int, float)) and t.get(n) > 0 else None for n in names]
        have = [(m, n) for m, n in zip(ms, names) if m]
        best = min(have)[1] if have else "-"
        pp = [m for m in ms[1:] if m]
        ratio = f"{min(pp) / ms[0]:.3f}" if pp and ms[0] else "-"
        cells = " | ".join("-" if m is None else f"{m:.4f}" for m in ms)
        md.append(f"| {r.get('op', '-').replace('attention_fwd_gqa_', '')} | {r.get('shape')} | {tiles} | "
                  f"{cells} | {best} | {ratio} |")
    text = "\n".join(md) + "\n"
    open(out, "w").write(text)
    print(text)


def main():
    a = sys.argv[1:]
    if a and a[0] == "lines":
        lines(a[1])
    elif a and a[0] == "peers":
        dl = float(a[a.index("--deadline") + 1]) if "--deadline" in a else 120
        peers(a[1], dl)
    elif a and a[0] == "table":
        table(a[1], a[2], a[3], a[4] if len(a) > 4 else None)
    elif a and a[0] == "manifest":
        manifest(a[1], a[2] if len(a) > 2 else None)
    elif a and a[0] == "probes":
        probe_lines(a[1])
    elif a and a[0] == "probe_table":
        probe_table(a[1], a[2])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
