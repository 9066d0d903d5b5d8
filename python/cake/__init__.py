"""cake — CAKE kernels from Python (docs/python.md).

    import torch, cake
    rms = cake.load("examples/rmsnorm.tir")            # a path, or TIR source text
    x = torch.randn(4096, 8192, device="cuda", dtype=torch.bfloat16)
    w = torch.ones(8192, device="cuda", dtype=torch.bfloat16)
    y = cake.empty_like(x)
    rms(x, w, y, 1e-6)                                  # on torch's current stream

    cake.ops.rms_norm(x, w, 1e-6)                       # the library, as torch custom ops

A call binds the kernel's dims from the tensors' shapes and checks dtype, rank,
extents, strides, device, alignment and the kernel's assumes (TypeError or
ValueError naming the argument) before it launches; compile errors raise
CakeError with the diagnostics. torch is optional: without it, tensors are any
objects with data_ptr(), shape, stride(), dtype and device (or __dlpack__).
"""
import os
import sys

__all__ = ["load", "CakeError", "Kernel", "empty_like", "empty", "device_info", "target_of",
           "ops", "version"]


def _find_plugin():
    """The code generator plugin libcake-llvm.so: $CAKE_LLVM_PLUGIN, else beside
    the package, in the build folder that holds it, or on LD_LIBRARY_PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [here, os.path.dirname(os.path.dirname(here))]
    dirs += [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    for d in dirs:
        p = os.path.join(d, "libcake-llvm.so")
        if os.path.isfile(p):
            return p
    return None


if not os.environ.get("CAKE_LLVM_PLUGIN"):
    _plugin = _find_plugin()
    if _plugin:
        os.environ["CAKE_LLVM_PLUGIN"] = _plugin

from . import _cake  # noqa: E402
from ._cake import CakeError, Kernel  # noqa: E402

version = _cake.version
KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")    # swiglu.tir
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples")  # examples/*.tir

_compiled = {}        # (source key, kernel, target, set) -> Kernel
_targets = {}         # device ordinal -> target name
_torch_ready = False


def _torch():
    """torch if the program has imported it (cake never imports it first)."""
    return sys.modules.get("torch")


def _use_torch_streams():
    """Launch on torch's current stream from now on (once torch is imported)."""
    global _torch_ready
    t = _torch()
    if _torch_ready or t is None:
        return
    raw = getattr(getattr(t, "_C", None), "_cuda_getCurrentRawStream", None)
    if raw is None:
        def raw(index):
            return t.cuda.current_stream(index).cuda_stream
    _cake.set_stream_getter(raw)
    _torch_ready = True


def device_info(device=0):
    """The GPU's properties (name, arch, cc_major, sm_count, ...); opens it."""
    return _cake.device_info(_ordinal(device))


def _ordinal(device):
    if device is None:
        t = _torch()
        if t is not None and t.cuda.is_available():
            return t.cuda.current_device()
        return 0
    if isinstance(device, int):
        return device
    index = getattr(device, "index", None)
    if index is not None:
        return index
    text = str(device)
    return int(text.split(":")[1]) if ":" in text else 0


def target_of(device=None):
    """The CAKE target for a device: sm_90a on Hopper, sm_100a on Blackwell,
    sm_80 on other NVIDIA GPUs from Ampere on, the gfx name on AMD."""
    ordinal = _ordinal(device)
    if ordinal not in _targets:
        info = _cake.device_info(ordinal)
        if info["backend"] == "hip":
            _targets[ordinal] = info["arch"]
        elif info["cc_major"] == 9:
            _targets[ordinal] = "sm_90a"
        elif info["cc_major"] >= 10:
            _targets[ordinal] = "sm_100a"
        else:
            _targets[ordinal] = "sm_80"
    return _targets[ordinal]


def _source_of(src):
    """(is_path, text or path, cache key)"""
    if isinstance(src, os.PathLike) or ("\n" not in src and os.path.exists(src)):
        path = os.path.abspath(os.fspath(src))
        return True, path, ("path", path, os.stat(path).st_mtime_ns)
    if "kernel" not in src:
        raise FileNotFoundError(f"cake.load: no such file: {src!r} (and it is not TIR source)")
    return False, src, ("text", src)


def load(path_or_source, kernel=None, target=None, device=None, **params):
    """Compile a kernel of a .tir file (or of TIR source text) and return it as
    a callable cake.Kernel. kernel: its name (default: the first kernel that
    lists the target); target: sm_90a, sm_80, ... (default: the device's);
    params: compile-time parameters (BM=64, CAUSAL=1). Compiled kernels are
    cached: the same arguments return the same Kernel."""
    _use_torch_streams()
    tgt = target or target_of(device)
    is_path, text, key = _source_of(path_or_source)
    spec = ",".join(f"{k}={int(v)}" for k, v in sorted(params.items())) or None
    full = (key, kernel, tgt, spec)
    k = _compiled.get(full)
    if k is None:
        name = text if is_path else "<string>"
        k = _cake.compile(text, is_path, kernel, tgt, spec, name)
        _compiled[full] = k
    return k


def empty_like(t):
    """An uninitialized tensor like t (torch.empty_like)."""
    return _torch().empty_like(t)


def empty(shape, dtype, device="cuda"):
    """An uninitialized torch tensor (torch.empty)."""
    return _torch().empty(shape, dtype=dtype, device=device)


def __getattr__(name):
    if name == "ops":  # imports torch: only when asked for
        from . import ops
        return ops
    raise AttributeError(f"module 'cake' has no attribute {name!r}")


_use_torch_streams()
if not _torch_ready:   # torch may come later: the first launch after that sets it up
    _cake.set_stream_setup(_use_torch_streams)
