"""test_cake.py — the Python module without a GPU (ctest python.module): it builds
and imports, compiles from a path and from source text, compile errors are
CakeError with the diagnostics as attributes, and a call's arguments are bound
and checked — every error path — with fake tensors carrying fake device
pointers (duck typing and DLPack). Tests that need torch skip without it.

    PYTHONPATH=build/python python3 tests/python/test_cake.py
"""
import ctypes
import os
import sys
import unittest

import cake

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SIG = os.path.join(HERE, "sig.tir")
RMS = os.path.join(ROOT, "examples", "rmsnorm.tir")
ATTN = os.path.join(ROOT, "examples", "flash_attn_fwd.tir")


class T:
    """a fake tensor: torch's duck type with a made-up device address"""

    def __init__(self, shape, dtype="float32", ptr=0x7f0000000000, device="cuda:0",
                 stride=None):
        self.shape, self.dtype, self.ptr, self.device = tuple(shape), dtype, ptr, device
        self._stride = stride

    def data_ptr(self):
        return self.ptr

    def stride(self):
        if self._stride is not None:
            return self._stride
        st, s = [], 1
        for d in reversed(self.shape):
            st.insert(0, s)
            s *= max(d, 1)
        return tuple(st)


class Dev:
    """torch.device's duck type"""

    def __init__(self, type, index):
        self.type, self.index = type, index


def sig_args(M=16, N=32, **over):
    a = dict(x=T((M, N)), c=T((M, 64), "bfloat16"), s=T((M, N), stride=(2 * N, 1)),
             idx=T((M,), "torch.int32"), n=N, alpha=0.5)
    a.update(over)
    return a


class Build(unittest.TestCase):
    def test_import(self):
        self.assertTrue(cake._cake.__file__.endswith(".abi3.so"))
        self.assertEqual(cake.version, cake._cake.version)
        self.assertTrue(os.path.isfile(os.environ["CAKE_LLVM_PLUGIN"]))

    def test_load_path_and_source(self):
        k = cake.load(RMS, target="sm_90a")
        self.assertEqual(k.name, "rmsnorm")
        self.assertEqual(k.target, "sm_90a")
        self.assertEqual([a for a, _ in k.args], ["x", "w", "y", "eps"])
        self.assertEqual(k.args[3], ("eps", "f32"))
        self.assertEqual(k.params, {"VEC": 8, "THREADS": 256, "ITERS": 4})
        self.assertIn(b".target sm_90a", k.image)
        self.assertIs(cake.load(RMS, target="sm_90a"), k)       # cached
        with open(RMS) as f:
            k2 = cake.load(f.read(), target="sm_80", ITERS=2)
        self.assertEqual(k2.params["ITERS"], 2)
        self.assertIn("rmsnorm(x: global bf16[M, N] align 16", repr(k2))

    def test_target_for_a_device(self):
        t = cake._cake.target_for_arch
        self.assertEqual((t("sm_90"), t("sm_86"), t("gfx942")), ("sm_90a", "sm_80", "gfx942"))
        with self.assertRaisesRegex(ValueError, "runs on sm_70"):
            t("sm_70")
        compile_ = cake._cake.compile
        gemm80 = os.path.join(ROOT, "examples", "gemm_sm80.tir")
        self.assertEqual(compile_(gemm80, True, None, None, None, "x", "sm_90").target, "sm_80")
        self.assertEqual(compile_(RMS, True, None, None, None, "x", "sm_90").target, "sm_90a")
        with self.assertRaisesRegex(ValueError, "no target of the kernel runs on sm_80"):
            compile_(ATTN, True, None, None, None, "x", "sm_80")

    def test_load_errors(self):
        with self.assertRaises(FileNotFoundError):
            cake.load("no/such/file.tir", target="sm_90a")
        with self.assertRaisesRegex(ValueError, "unknown target `sm_99`"):
            cake.load(RMS, target="sm_99")
        with self.assertRaises(cake.CakeError) as e:
            cake.load(RMS, target="sm_90a", kernel="nope")
        self.assertEqual(e.exception.code, "E0970")
        with self.assertRaises(cake.CakeError) as e:
            cake.load(RMS, target="sm_90a", NOPE=3)
        self.assertIn("E0002", str(e.exception))

    def test_cake_error_attributes(self):
        src = ("kernel bad\n  target sm_90a\n  arg x: global f32[N]\n  grid [1]\n"
               "  threads 32\n{\n  let acc: f32 = 0.0\n  acc += 1.0\n}\n")
        with self.assertRaises(cake.CakeError) as cm:
            cake.load(src, target="sm_90a")
        e = cm.exception
        self.assertEqual(e.code, "E0206")
        self.assertEqual((e.file, e.line, e.col), ("<string>", 8, 3))
        self.assertIn("cannot assign to `acc`", e.message)
        self.assertTrue(e.help and "var acc" in e.help[0])
        self.assertEqual(e.rc, 1)
        self.assertIn("<string>:8:3: error[E0206]", str(e))
        self.assertIn("help:", str(e))
        d = e.diagnostics[0]
        self.assertEqual(d["severity"], "error")
        self.assertEqual(d["notes"][0]["line"], 7)
        self.assertIsInstance(e, Exception)


class Binding(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.k = cake.load(SIG, target="sm_90a")

    def call(self, **over):
        a = sig_args(**over)
        return self.k.bind(*a.values())

    def err(self, exc, pattern, **over):
        with self.assertRaisesRegex(exc, pattern):
            self.call(**over)

    def test_binds_dims(self):
        self.assertEqual(self.call(), {"M": 16, "N": 32})
        self.assertEqual(self.k.bind(**sig_args(M=3, N=8)), {"M": 3, "N": 8})

    def test_launch_config(self):
        cfg = self.k.launch_config(*sig_args(M=7).values())
        self.assertEqual(cfg["grid"], (7, 1, 1))
        self.assertEqual(cfg["block"], (64, 1, 1))
        rms = cake.load(RMS, target="sm_90a", ITERS=1)
        x, w = T((5, 1024), "bfloat16"), T((1024,), "bfloat16")
        self.assertEqual(rms.launch_config(x, w, x, 1e-6)["grid"], (5, 1, 1))

    def test_argument_count_and_names(self):
        a = list(sig_args().values())
        with self.assertRaisesRegex(TypeError, r"takes 6 arguments \(x, c, s, idx, n, alpha\), got 5"):
            self.k.bind(*a[:5])
        with self.assertRaisesRegex(TypeError, "got 7"):
            self.k.bind(*a, 1)
        with self.assertRaisesRegex(TypeError, "no argument `zz`"):
            self.k.bind(*a[:5], zz=1)
        with self.assertRaisesRegex(TypeError, "`x` given twice"):
            self.k.bind(*a, x=a[0])

    def test_kinds(self):
        self.err(TypeError, "argument `x`: expected a tensor .* got float", x=1.5)
        self.err(TypeError, "argument `n`: expected a number .* got a tensor", n=T((1,)))
        self.err(TypeError, "argument `alpha`: expected a number .* got str", alpha="a")
        self.err(TypeError, r"argument `n`: got a float \(3.5\), but the kernel declares it i32",
                 n=3.5)
        self.assertEqual(self.call(alpha=2), {"M": 16, "N": 32})     # an int for a float

    def test_dtype(self):
        self.err(TypeError, "argument `x`: dtype float16, but the kernel declares global f32",
                 x=T((16, 32), "float16"))
        self.err(TypeError, "argument `c`: dtype torch.float32, but .* bf16",
                 c=T((16, 64), "torch.float32"))
        self.err(TypeError, "argument `x`: dtype complex64", x=T((16, 32), "complex64"))
        self.assertEqual(self.call(c=T((16, 64), "bf16")), {"M": 16, "N": 32})

    def test_device(self):
        self.err(ValueError, "argument `x` is on the CPU", x=T((16, 32), device="cpu"))
        self.err(ValueError, "argument `c` is on cuda:1, but the earlier tensors are on cuda:0",
                 c=T((16, 64), "bfloat16", device=Dev("cuda", 1)))
        self.err(ValueError, "argument `x` is on the wrong device",
                 x=T((16, 32), device=Dev("meta", None)))
        self.assertEqual(self.call(x=T((16, 32), device=Dev("cuda", None))), {"M": 16, "N": 32})

    def test_rank(self):
        self.err(ValueError, r"argument `idx`: rank 2 \(shape \(16, 1\)\), but the kernel "
                 r"declares global i32\[M\] \(rank 1\)", idx=T((16, 1), "int32"))
        self.err(ValueError, "rank 5, but CAKE tensors have at most 4", x=T((1, 1, 1, 1, 1)))

    def test_negative_extent(self):
        self.err(ValueError, r"argument `x`: dim 0 of its shape is -1", x=T((-1, 32)))

    def test_dims_agree(self):
        self.err(ValueError, r"argument `c`: dim 0 is 15, but M = 16 from `x` dim 0",
                 c=T((15, 64), "bfloat16"))
        self.err(ValueError, r"argument `idx`: dim 0 is 17, but M = 16", idx=T((17,), "int32"))

    def test_constant_extent(self):
        self.err(ValueError, r"argument `c`: shape \(16, 128\), but the kernel declares "
                 r"global bf16\[M, 64\], which is \(16, 64\)", c=T((16, 128), "bfloat16"))

    def test_strides(self):
        self.err(ValueError, r"argument `x`: strides \(1, 16\) \(in elements\), but the kernel "
                 r"needs \(32, 1\) \(row-major contiguous", x=T((16, 32), stride=(1, 16)))
        self.err(ValueError, r"argument `s`: strides \(32, 1\) .* needs \(64, 1\) \(its "
                 r"`strides` clause\)", s=T((16, 32)))
        # a size-1 dim may have any stride, as torch gives it
        self.assertEqual(self.call(M=1, x=T((1, 32), stride=(999, 1)), c=T((1, 64), "bfloat16"),
                                   s=T((1, 32), stride=(5, 1)), idx=T((1,), "int32")),
                         {"M": 1, "N": 32})

    def test_alignment(self):
        self.err(ValueError, r"argument `x`: its address 0x7f0000000004 is not a multiple of 16 "
                 r"bytes, which global f32\[M, N\] align 16 requires", x=T((16, 32), ptr=0x7f0000000004))
        # no `align` clause: the kernel ABI's 16 bytes still hold (the proofs count on them)
        self.err(ValueError, r"argument `c`: its address 0x7f0000000001 is not a multiple of 16 .*"
                 r"\(the kernel ABI: every tensor's base is 16-byte aligned",
                 c=T((16, 64), "bfloat16", ptr=0x7f0000000001))
        self.err(ValueError, r"argument `c`: its address 0x7f0000000008 is not a multiple of 16",
                 c=T((16, 64), "bfloat16", ptr=0x7f0000000008))

    def test_assumes(self):
        self.err(ValueError, r"the shape M=16, N=30, n=30 breaks `assume N % 4 == 0` of kernel `sig` "
                 r"\(.*sig.tir:14\)", N=30)
        self.err(ValueError, r"breaks `assume n <= N`", n=33)

    def test_dim_range(self):
        big = 1 << 31
        self.err(ValueError, r"dim M = 2147483648 does not fit the kernel's 32-bit dims",
                 M=big)

    def test_stride_forms(self):
        class AttrStride(T):          # strides as an attribute, not a method
            stride = (32, 1)
        class NoStride:               # no strides at all: row-major
            shape, dtype, device = (16, 32), "float32", "cuda"

            def data_ptr(self):
                return 0x7f0000000000
        self.assertEqual(self.call(x=AttrStride((16, 32))), {"M": 16, "N": 32})
        self.assertEqual(self.call(x=NoStride()), {"M": 16, "N": 32})

    def test_junk_never_crashes(self):
        class Raises(T):
            def data_ptr(self):
                raise RuntimeError("boom")
        bad_shape = T((16, 32))
        bad_shape.shape = ("a", 2)
        junk = [None, [1, 2], object(), T((-1, 32)), Raises((16, 32)), bad_shape,
                T((16, 32), stride=(1,)), T((16, 32), dtype=None),
                T((16, 32), device=None), T((1 << 62, 32)), T((16, 32), stride=("x", 1))]
        for j in junk:
            with self.assertRaises((TypeError, ValueError, RuntimeError, OverflowError)):
                self.call(x=j)
        for j in (None, [1], T((1,)), 1 << 70, float("nan")):
            with self.assertRaises((TypeError, ValueError, OverflowError)):
                self.call(n=j)

    def test_dlpack(self):
        x = DLPackFake((16, 32), device_type=2)
        self.assertEqual(self.call(x=x), {"M": 16, "N": 32})
        self.err(ValueError, "argument `x` is on the CPU", x=DLPackFake((16, 32), device_type=1))
        self.err(TypeError, "argument `x`: dtype f16", x=DLPackFake((16, 32), bits=16))

    def test_call_without_gpu(self):
        if os.path.exists("/dev/nvidia0"):
            self.skipTest("a GPU is present")
        with self.assertRaisesRegex(RuntimeError, "no GPU to run on"):
            self.k(*sig_args().values())
        with self.assertRaises(ValueError):      # the checks come first
            self.k(*sig_args(N=30).values())
        self.assertEqual(self.k.cache_info()["used"], 0)


FAKE_CALLS = r"""
import sys
import cake
k = cake.load(sys.argv[1], target="gfx942")
class T:
    def __init__(s, shape, ptr):
        s.shape, s.dtype, s.ptr, s.device = shape, "bfloat16", ptr, "cuda:0"
    def data_ptr(s):
        return s.ptr
    def stride(s):
        return (s.shape[1], 1) if len(s.shape) == 2 else (1,)
for base in (0x10000, 0x20000, 0x10000):
    k(T((64, 1024), base), T((1024,), base + 0x40000), T((64, 1024), base + 0x80000), 1e-6)
try:
    k(T((64, 1024), 0x10001), T((1024,), 0x50000), T((64, 1024), 0x90000), 1e-6)
except ValueError as e:
    print("misaligned:", e)
print(k.cache_info())
"""


class LaunchCache(unittest.TestCase):
    """a kept launch rebound to a call's tensors, through the fake HIP runtime"""

    def test_rebind_on_moved_tensors(self):
        fake = os.environ.get("CAKE_FAKE_HIP")
        if not fake or not os.path.exists(fake):
            self.skipTest("the fake HIP library is not built (CAKE_FAKE_HIP)")
        import subprocess
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            log = os.path.join(tmp, "log")
            env = dict(os.environ, CAKE_LIBHIP=fake, FAKE_HIP_LOG=log, FAKE_HIP_ARG_SIZES="8,8,8,4,4,4")
            r = subprocess.run([sys.executable, "-c", FAKE_CALLS, os.path.join(ROOT, "examples", "rmsnorm.tir")],
                               env=env, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(log) as f:
                lines = f.read().splitlines()
        # three calls at one shape: one prepared, two rebound (the misaligned one refused)
        self.assertIn("'hits': 2, 'misses': 1", r.stdout)
        self.assertIn("misaligned: argument `x`", r.stdout)
        x = [int(l.split()[3]) for l in lines if l.startswith("param 0 int")]
        y = [int(l.split()[3]) for l in lines if l.startswith("param 2 int")]
        self.assertEqual(x, [0x10000, 0x20000, 0x10000])
        self.assertEqual(y, [0x90000, 0xA0000, 0x90000])


class Library(unittest.TestCase):
    """the kernel library's dispatch (cake.ops goes through it), without a GPU"""

    @classmethod
    def setUpClass(cls):
        cls.opened = [cake._cake.open_library(os.path.join(ROOT, "library"))]   # the folder
        art = os.path.join(os.path.dirname(cake.__file__), "cake.cakelib")
        if os.path.exists(art):
            cls.opened.append(cake._cake.open_library(art))                   # the artifact

    def libs(self):
        return iter(self.opened)

    def test_ops_and_select(self):
        for lib in self.libs():
            ops = lib.ops()
            self.assertIn("gemm", ops)
            self.assertEqual([a["name"] for a in ops["gemm"]["args"]], ["A", "B", "C"])
            self.assertEqual(ops["gemm"]["args"][0]["dims"], ["M", "K"])
            self.assertEqual(ops["attention_fwd"]["args"][0]["dims"], ["BH", "S", 128])
            c = lib.select("rmsnorm", {"M": 64, "N": 1024})
            self.assertIn("rmsnorm", c["kernel"])
            self.assertIn(c["why"], ("tuned", "model", "order"))
            self.assertIn(c["name"], [v["name"] for v in ops["rmsnorm"]["variants"]])

    def test_avoid(self):
        for lib in self.libs():
            d = {"M": 4096, "N": 4096, "K": 4096}
            first = lib.select("gemm", d)["name"]
            second = lib.select("gemm", d, (first,))["name"]
            self.assertNotEqual(first, second)
            everything = [v["name"] for v in lib.ops()["gemm"]["variants"]]
            with self.assertRaisesRegex(ValueError, "not avoided"):
                lib.select("gemm", d, everything)

    def test_select_errors(self):
        lib = next(self.libs())
        with self.assertRaisesRegex(ValueError, "E1201"):
            lib.select("nope", {})
        with self.assertRaisesRegex(TypeError, "dims: expected a dict"):
            lib.select("gemm", [1, 2])
        with self.assertRaisesRegex(ValueError, "E120"):
            lib.select("gemm", {"M": 1, "N": 8, "K": 64, "Q": 3})

    def test_kernel_needs_a_gpu(self):
        if os.path.exists("/dev/nvidia0"):
            self.skipTest("a GPU is present")
        with self.assertRaisesRegex(RuntimeError, "no GPU to run on"):
            next(self.libs()).kernel("rmsnorm", {"M": 64, "N": 1024}, 0)

    def test_open_errors(self):
        with self.assertRaises(cake.CakeError):
            cake._cake.open_library("/no/such/folder")
        with self.assertRaises(cake.CakeError):
            cake._cake.open_library(__file__ + ".cakelib")


# ---- a DLPack producer in ctypes (no numpy here) -----------------------------------------

class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32),
                ("device_id", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManaged(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackFake:
    def __init__(self, shape, device_type=2, bits=32, ptr=0x7f0000001000):
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._m = DLManaged()
        t = self._m.dl_tensor
        t.data, t.device_type, t.device_id, t.ndim = ptr, device_type, 0, len(shape)
        t.code, t.bits, t.lanes = 2, bits, 1
        t.shape = self._shape
        t.strides = None

    def __dlpack__(self, stream=None):
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self._m), b"dltensor", None)


class WithTorch(unittest.TestCase):
    def setUp(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            self.skipTest("no torch")

    def test_cpu_tensors_are_refused(self):
        import torch
        k = cake.load(RMS, target="sm_90a")
        x = torch.zeros(4, 1024, dtype=torch.bfloat16)
        w = torch.zeros(1024, dtype=torch.bfloat16)
        with self.assertRaisesRegex(ValueError, "argument `x` is on the CPU"):
            k(x, w, x, 1e-6)
        with self.assertRaisesRegex(TypeError, "dtype torch.float32"):
            k(x.float(), w, x, 1e-6)
        with self.assertRaisesRegex(ValueError, "strides"):
            k.bind(torch.zeros(1024, 4, dtype=torch.bfloat16).t(), w, x, 1e-6)

    def test_ops_register(self):
        import torch
        import cake.ops  # noqa: F401
        for name in ("gemm", "rms_norm", "softmax", "cross_entropy", "attention", "swiglu"):
            self.assertTrue(hasattr(torch.ops.cake, name), name)
        a = torch.empty(8, 16, dtype=torch.bfloat16, device="meta")
        b = torch.empty(24, 16, dtype=torch.bfloat16, device="meta")
        self.assertEqual(torch.ops.cake.gemm(a, b).shape, (8, 24))


if __name__ == "__main__":
    unittest.main(verbosity=1)
