#!/usr/bin/env python3
"""bitexact.py — the fp8 conversions of cakec's SIMT code on the GPU against the
oracle's rounding, bit for bit (tests/gpu/fp8/conv.tir, oracle_bits.c).

Every bf16 and f16 bit pattern (65536 each) and a dense f32 sample (every fp8
value, every tie between two neighbours and the f32 values either side of
both, the saturation edges, subnormals, 2M in all with random patterns) are
converted to e4m3 and e5m2 by cakec-generated kernels (cvt.rn.satfinite), and
every e4m3/e5m2 pattern back to f32, f16, bf16 and the other fp8 format. A
finite or infinite input must give exactly the oracle's bits; a NaN input
must give a NaN (how many differ from the oracle's canonical NaN is printed).
Plain Python and libcuda through ctypes: no numpy, no torch.

usage: bitexact.py ORACLE_DIR PTX [--json OUT.json]
exit 0 all equal, 1 a mismatch, 77 no GPU here."""
import array, ctypes, json, sys

odir, ptx = sys.argv[1], sys.argv[2]
jout = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--json" else None
try:
    cu = ctypes.CDLL("libcuda.so.1")
    if cu.cuInit(0) != 0:
        raise OSError("cuInit failed")
    ndev = ctypes.c_int()
    if cu.cuDeviceGetCount(ctypes.byref(ndev)) != 0 or ndev.value == 0:
        raise OSError("no CUDA device")
except OSError as e:
    print(f"bitexact.py: skipped ({e})")
    sys.exit(77)


def ck(err, what):
    if err != 0:
        raise SystemExit(f"bitexact.py: {what} failed ({err})")


devh, ctx, mod = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
ck(cu.cuDeviceGet(ctypes.byref(devh), 0), "cuDeviceGet")
ck(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), devh), "cuDevicePrimaryCtxRetain")
ck(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
ck(cu.cuModuleLoadData(ctypes.byref(mod), open(ptx, "rb").read() + b"\0"), "cuModuleLoadData")


class Buf:
    """a device buffer of n elements of an array typecode"""
    def __init__(self, code, n, init=None):
        self.code, self.n = code, n
        self.bytes = n * array.array(code).itemsize
        self.ptr = ctypes.c_uint64()
        ck(cu.cuMemAlloc_v2(ctypes.byref(self.ptr), ctypes.c_size_t(self.bytes)), "cuMemAlloc")
        if init is not None:
            b = init.tobytes()
            ck(cu.cuMemcpyHtoD_v2(self.ptr, b, ctypes.c_size_t(len(b))), "cuMemcpyHtoD")
        else:
            ck(cu.cuMemsetD8_v2(self.ptr, ctypes.c_ubyte(0xA5), ctypes.c_size_t(self.bytes)), "cuMemsetD8")

    def get(self):
        raw = ctypes.create_string_buffer(self.bytes)
        ck(cu.cuMemcpyDtoH_v2(raw, self.ptr, ctypes.c_size_t(self.bytes)), "cuMemcpyDtoH")
        a = array.array(self.code)
        a.frombytes(raw.raw)
        return a


def launch(name, blocks, bufs, n):
    fn = ctypes.c_void_p()
    ck(cu.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), f"cuModuleGetFunction {name}")
    vals = [b.ptr for b in bufs] + [ctypes.c_int32(n)]
    argv = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
    ck(cu.cuLaunchKernel(fn, blocks, 1, 1, 256, 1, 1, 0, None, argv, None), f"launch {name}")
    ck(cu.cuCtxSynchronize(), f"{name} (synchronize)")


def oracle(name, code):
    a = array.array(code)
    with open(f"{odir}/{name}.bin", "rb") as f:
        a.frombytes(f.read())
    return a


NAN_TEST = {
    "e4m3": lambda b: (b & 0x7F) == 0x7F,
    "e5m2": lambda b: (b & 0x7C) == 0x7C and (b & 3) != 0,
    "f16": lambda b: (b & 0x7C00) == 0x7C00 and (b & 0x3FF) != 0,
    "bf16": lambda b: (b & 0x7F80) == 0x7F80 and (b & 0x7F) != 0,
    "f32": lambda b: (b & 0x7F800000) == 0x7F800000 and (b & 0x7FFFFF) != 0,
}
results = []


def compare(label, src, src_fmt, got, want, fmt):
    src_nan, out_nan = NAN_TEST[src_fmt], NAN_TEST[fmt]
    bad = nan_bad = nan_other = 0
    first = ""
    for i, (g, w) in enumerate(zip(got, want) if got != want else ()):
        if g == w:
            continue
        if src_nan(src[i]):
            nan_other += 1
            nan_bad += not out_nan(g)
            continue
        if not bad:
            first = f"first at input {src[i]:#x}: got {g:#x}, oracle {w:#x}"
        bad += 1
    ok = bad == 0 and nan_bad == 0 and len(got) == len(want)
    results.append({"case": label, "n": len(want), "mismatches": bad, "nan_not_nan": nan_bad,
                    "nan_other_pattern": nan_other, "ok": ok, "first": first})
    print(f"{'ok  ' if ok else 'FAIL'} {label:18s} {len(want):8d} values, {bad} mismatches"
          f"{f', {nan_other} NaN inputs give another NaN pattern' if nan_other else ''}"
          f"{f', {nan_bad} NaN inputs give a number' if nan_bad else ''} {first}")


pat16 = array.array("H", range(65536))
for src, kern in (("bf16", "from_bf16"), ("f16", "from_f16")):
    x, y4, y5 = Buf("H", 65536, pat16), Buf("B", 65536), Buf("B", 65536)
    launch(kern, 65536 // 2048, [x, y4, y5], 65536)
    compare(f"{src}->e4m3", pat16, src, y4.get(), oracle(f"{src}_e4m3", "B"), "e4m3")
    compare(f"{src}->e5m2", pat16, src, y5.get(), oracle(f"{src}_e5m2", "B"), "e5m2")

f32 = oracle("f32_in", "I")
n = len(f32)
for kern, per, tag in (("from_f32", 1024, "f32x4"), ("from_f32_scalar", 256, "f32")):
    x, y4, y5 = Buf("I", n, f32), Buf("B", n), Buf("B", n)
    launch(kern, (n + per - 1) // per, [x, y4, y5], n)
    compare(f"{tag}->e4m3", f32, "f32", y4.get(), oracle("f32_e4m3", "B"), "e4m3")
    compare(f"{tag}->e5m2", f32, "f32", y5.get(), oracle("f32_e5m2", "B"), "e5m2")

pat8 = array.array("B", range(256))
outs = [Buf(c, 256) for c in ("I", "H", "H", "I", "H", "H", "B", "B")]
launch("to_wide", 1, [Buf("B", 256, pat8), Buf("B", 256, pat8)] + outs, 256)
for o, (label, sf, name, code, fmt) in zip(outs, (
        ("e4m3->f32", "e4m3", "e4m3_f32", "I", "f32"),
        ("e4m3->f16", "e4m3", "e4m3_f16", "H", "f16"),
        ("e4m3->bf16", "e4m3", "e4m3_bf16", "H", "bf16"),
        ("e5m2->f32", "e5m2", "e5m2_f32", "I", "f32"),
        ("e5m2->f16", "e5m2", "e5m2_f16", "H", "f16"),
        ("e5m2->bf16", "e5m2", "e5m2_bf16", "H", "bf16"),
        ("e4m3->e5m2", "e4m3", "e4m3_e5m2", "B", "e5m2"),
        ("e5m2->e4m3", "e5m2", "e5m2_e4m3", "B", "e4m3"))):
    compare(label, pat8, sf, o.get(), oracle(name, code), fmt)

allok = all(r["ok"] for r in results)
total = sum(r["n"] for r in results)
print(f"fp8 bit-exact: {'PASS' if allok else 'FAIL'} ({total} conversions, {len(results)} cases)")
if jout:
    with open(jout, "w") as f:
        json.dump({"pass": allok, "conversions": total, "cases": results}, f, indent=1)
sys.exit(0 if allok else 1)
