"""afwd4.py — session 10's attention forward probe at short sequences (issue 15): the SKIP
forms of flash_attn_fwd_pp3.tir and flash_attn_fwd_pp.tir (a warpgroup whose 64 rows see
none of a causal tile's last KV blocks skips their softmax and P V; SKIP = 2 also their
Q K^T), D = 128 non-causal at BN = 160 (QST = 1: 224 KiB), and a few existing parameter forms
beside the library's variants, at the shapes where the library loses to cuDNN.

    python3 afwd4.py manifest DIR      DIR/manifest.json: four ops, every variant, no `when`
    python3 afwd4.py lines OUT.txt     the `lib bench --all` lines (losers and neighbours)
    python3 afwd4.py peers OUT.jsonl [--deadline S]
                                       cuDNN and flash SDPA per line (attn_r2.py's method)
    python3 afwd4.py table ALL.jsonl PEERS.jsonl OUT.md
                                       per line every variant's ms, cuDNN ms, cuDNN / best
                                       variant and cuDNN / the library's variant
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
PP, PP3, PPX = "flash_attn_fwd_pp.tir", "flash_attn_fwd_pp3.tir", "flash_attn_fwd_ppx.tir"

# op -> (name, file, set); "lib:" marks the library's variants (library/manifest.json)
VARIANTS = {
    "attention_fwd_gqa_d64_causal": [
        ("lib:pp3", PP3, "CAUSAL=1"),
        ("pp3_skip1", PP3, "CAUSAL=1,SKIP=1"),
        ("pp3_skip2", PP3, "CAUSAL=1,SKIP=2"),
        ("pp3_bn64_skip1", PP3, "CAUSAL=1,BN=64,SKIP=1"),
        ("pp3_bn64_skip2", PP3, "CAUSAL=1,BN=64,SKIP=2"),
        ("pp3_bn64_skip2_st5", PP3, "CAUSAL=1,BN=64,SKIP=2,STAGES=5"),
        ("lib:pp128", PP, "D=64,CAUSAL=1"),
        ("pp128_pair", PP, "D=64,CAUSAL=1,PAIR=1"),
        ("pp128x64_skip2", PP, "D=64,CAUSAL=1,BN=64,SKIP=2"),
        ("pp128x64_skip2_st5", PP, "D=64,CAUSAL=1,BN=64,SKIP=2,STAGES=5"),
        ("ppx128", PPX, "D=64,CAUSAL=1"),
    ],
    "attention_fwd_gqa_d64": [
        ("lib:pp3", PP3, "CAUSAL=0"),
        ("lib:pp128", PP, "D=64,CAUSAL=0"),
        ("ppx128", PPX, "D=64,CAUSAL=0"),
    ],
    "attention_fwd_gqa_causal": [
        ("lib:pp128_pair", PP, "D=128,CAUSAL=1,PAIR=1"),
        ("lib:pp128", PP, "D=128,CAUSAL=1"),
        ("pp128x64_skip2", PP, "D=128,CAUSAL=1,BN=64,SKIP=2"),
        ("pp128x64_skip2_pair", PP, "D=128,CAUSAL=1,BN=64,SKIP=2,PAIR=1"),
        ("ppx128_pair", PPX, "D=128,CAUSAL=1,PAIR=1"),
    ],
    "attention_fwd_gqa": [
        ("lib:ppx128", PPX, "D=128,CAUSAL=0"),
        ("lib:pp128", PP, "D=128,CAUSAL=0"),
        ("pp128_q1", PP, "D=128,CAUSAL=0,QST=1"),
        ("ppx128_q1", PPX, "D=128,CAUSAL=0,QST=1"),
        ("pp128x160_q1", PP, "D=128,CAUSAL=0,BN=160,QST=1"),
        ("ppx128x160_q1", PPX, "D=128,CAUSAL=0,BN=160,QST=1"),
    ],
}

# (op, B, H, Hkv, S): the losers of 2026-12-04-s10/call1 and 2026-12-03-s9/attnx, neighbours
LINES = [("attention_fwd_gqa_d64_causal", 4, 32, 32, 1024), ("attention_fwd_gqa_d64_causal", 16, 16, 16, 512),
         ("attention_fwd_gqa_d64_causal", 8, 32, 32, 1000), ("attention_fwd_gqa_d64_causal", 8, 32, 8, 2048),
         ("attention_fwd_gqa_d64_causal", 1, 8, 8, 1537), ("attention_fwd_gqa_d64_causal", 2, 32, 32, 4096),
         ("attention_fwd_gqa_d64_causal", 8, 32, 32, 1536), ("attention_fwd_gqa_d64_causal", 4, 64, 64, 768),
         ("attention_fwd_gqa_d64", 4, 32, 32, 1024), ("attention_fwd_gqa_d64", 16, 16, 16, 512),
         ("attention_fwd_gqa_causal", 16, 16, 16, 512), ("attention_fwd_gqa_causal", 4, 32, 32, 1024),
         ("attention_fwd_gqa_causal", 8, 32, 8, 2048),
         ("attention_fwd_gqa", 4, 32, 32, 1024), ("attention_fwd_gqa", 16, 16, 16, 512),
         ("attention_fwd_gqa", 8, 32, 8, 2048), ("attention_fwd_gqa", 2, 32, 4, 4096)]


def dim(op):
    return 64 if "_d64" in op else 128


def causal(op):
    return 1 if op.endswith("_causal") else 0


def shape(B, H, Hk, S):
    return f"BH={B * H},BHK={B * Hk},S={S}"


def manifest(out_dir):
    root = os.path.normpath(os.path.join(HERE, "..", ".."))
    m = json.load(open(os.path.join(root, "library", "manifest.json")))
    ops = []
    for o in m["ops"]:
        if o["op"] in VARIANTS:
            o["variants"] = [{"name": n.replace("lib:", "lib_"), "file": os.path.join(root, "examples", f),
                              "set": s, "target": "sm_90a"} for n, f, s in VARIANTS[o["op"]]]
            ops.append(o)
    os.makedirs(out_dir, exist_ok=True)
    json.dump({"library": "afwd4", "ops": ops, "gaps": []},
              open(os.path.join(out_dir, "manifest.json"), "w"), indent=1)


def lines(out):
    with open(out, "w") as f:
        for op, B, H, Hk, S in LINES:
            f.write(f"{op} {shape(B, H, Hk, S)}\n")


def peers(out, deadline):
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel
    import gated
    t0 = time.time()
    timer = gated.Timer(torch)
    timer.warm(0.5)

    def mk(backend, q, k, v, c):
        gqa = k.shape[1] != q.shape[1]

        def call(kk, vv, g):
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, kk, vv, is_causal=bool(c), enable_gqa=g)
        if gqa:
            try:
                call(k, v, True)
                torch.cuda.synchronize()
                return lambda: call(k, v, True)
            except Exception:  # noqa: BLE001
                rep = q.shape[1] // k.shape[1]
                ke, ve = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
                return lambda: call(ke, ve, False)
        return lambda: call(k, v, False)

    with open(out, "w") as f:
        for op, B, H, Hk, S in LINES:
            if time.time() - t0 > deadline:
                print(f"peers: out of time before {op} {shape(B, H, Hk, S)}", flush=True)
                break
            row = {"op": op, "shape": shape(B, H, Hk, S)}
            try:
                D, c = dim(op), causal(op)
                q = torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16)
                k = torch.randn(B, Hk, S, D, device="cuda", dtype=torch.bfloat16)
                v = torch.randn(B, Hk, S, D, device="cuda", dtype=torch.bfloat16)
                fns = [(t, mk(be, q, k, v, c)) for t, be in
                       (("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION))]
                got = {}
                for _ in range(2):
                    for tag, fn in fns:
                        got.setdefault(tag, []).append(gated.fastest(timer.best(fn))[1]["median_ms"])
                for tag, ms in got.items():
                    row[tag + "_ms"] = min(ms)
            except Exception as e:  # noqa: BLE001
                row["error"] = repr(e)[:300]
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(op, row["shape"], {k: v for k, v in row.items() if k.endswith("_ms")}, flush=True)


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


def table(all_path, peers_path, out):
    peer = {(r.get("op"), r.get("shape")): r for r in jsonl(peers_path)}
    md = []
    for r in jsonl(all_path):
        if "line" not in r and "bench_all" not in r:
            continue
        op, sh = r.get("op"), r.get("shape")
        t = r.get("bench_all") or {}
        cu = peer.get((op, sh), {}).get("cudnn_ms")
        fl = peer.get((op, sh), {}).get("flash_ms")
        md.append(f"\n### {op} {sh}  (cuDNN {cu if cu else '-'} ms, flash {fl if fl else '-'} ms)\n")
        md.append("| variant | ms | cuDNN/ours |\n|---|---|---|")
        ms = {n: x for n, x in t.items() if isinstance(x, (int, float)) and x > 0}
        for n, _, _ in VARIANTS.get(op, []):
            n = n.replace("lib:", "lib_")
            x = ms.get(n)
            md.append(f"| {n} | {'-' if x is None else f'{x:.4f}'} | "
                      f"{f'{cu / x:.3f}' if cu and x else '-'} |")
        if ms:
            b = min(ms, key=ms.get)
            libs = [v for n, v in ms.items() if n.startswith("lib_")]
            lb = min(libs) if libs else None
            md.append(f"best {b} {ms[b]:.4f} ms: cuDNN/best {f'{cu / ms[b]:.3f}' if cu else '-'}, "
                      f"best library variant {f'{lb:.4f}' if lb else '-'} ms, lib/best "
                      f"{f'{lb / ms[b]:.3f}' if lb else '-'}")
    text = "\n".join(md) + "\n"
    open(out, "w").write(text)
    print(text)


def main():
    a = sys.argv[1:]
    if a and a[0] == "manifest":
        manifest(a[1])
    elif a and a[0] == "lines":
        lines(a[1])
    elif a and a[0] == "peers":
        peers(a[1], float(a[a.index("--deadline") + 1]) if "--deadline" in a else 60)
    elif a and a[0] == "table":
        table(a[1], a[2], a[3])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
