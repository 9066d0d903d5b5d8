"""table.py — turns the JSON documents of run_all.sh into the results table.

Ratios are against peers measured in the same run: the torch device-to-device
copy bandwidth for memory-bound kernels, Triton's fused softmax for softmax.
"""
import glob
import json
import os
import sys

raw = sys.argv[1]


def load(name):
    try:
        with open(os.path.join(raw, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


peers = load("peers.json") or {}
copy_gbps = peers.get("copy", {}).get("gbps")
print(f"device: {peers.get('device', '?')}")
print()
print("| check | shapes | passed | worst max_rel_err |")
print("|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(raw, "check_*.json")) + glob.glob(os.path.join(raw, "wrong_*.json"))):
    doc = json.load(open(path)) if os.path.getsize(path) else {}
    reps = doc.get("check", [])
    worst = max((r.get("max_rel_err") or 0 for r in reps), default=0)
    name = os.path.basename(path)[:-5]
    print(f"| {name} | {len(reps)} | {sum(1 for r in reps if r.get('ok'))} | {worst:.3g} |")
print()
print(f"peer copy bandwidth (torch, same run): {copy_gbps and round(copy_gbps, 1)} GB/s")
print()
print("| kernel | shape | median ms | GB/s | TFLOP/s | vs copy | vs peer | regs |")
print("|---|---|---|---|---|---|---|---|")
peer_ms = {"softmax": peers.get("softmax_triton", {}).get("ms")}
for n in (4096, 8192):
    peer_ms[f"rmsnorm_{n}"] = peers.get(f"rmsnorm_torch_{n}", {}).get("ms")
    peer_ms[f"layernorm_{n}"] = peers.get(f"layernorm_torch_{n}", {}).get("ms")
for path in sorted(glob.glob(os.path.join(raw, "bench_*.json"))):
    name = os.path.basename(path)[6:-5]
    doc = load(os.path.basename(path)) or {}
    b = doc.get("bench")
    if not b:
        msgs = "; ".join(d.get("message", "") for d in doc.get("diagnostics", []))
        print(f"| {name} | failed: {msgs} | | | | | | |")
        continue
    vs_copy = b["gbps"] / copy_gbps if copy_gbps else float("nan")
    pm = peer_ms.get(name)
    vs_peer = f"{pm / b['median_ms']:.3f}" if pm else ""
    print(f"| {name} | {b['shape']} | {b['median_ms']:.4f} | {b['gbps']:.0f} | {b['tflops']:.3f} "
          f"| {vs_copy:.3f} | {vs_peer} | {b['registers']} |")
print()
print("vs copy: achieved GB/s over the torch copy's GB/s; vs peer: peer time over ours "
      "(softmax: Triton fused softmax; norms: torch.nn.functional) — above 1 is faster than the peer.")
