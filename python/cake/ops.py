"""cake.ops — the kernel library from PyTorch: each op allocates its output with
torch, picks a kernel by shape and launches it on torch's current stream. Each
is a torch.library custom op (torch.ops.cake.NAME, with a fake implementation),
so torch.compile keeps it as one node and CUDA graphs capture it.

Dispatch goes through the kernel library (lib/cake_lib.h, library/manifest.json):
the file or folder $CAKE_LIBRARY names, else the package's artifact cake.cakelib
(`cakec lib build`: prebuilt images, the sources, the dispatch table), else the
repository's library/ folder (variants compiled on first use, in the manifest's
order) when the package sits in a build folder of the repository. An op the
library does not have (swiglu) or a shape none of its variants covers goes to
a MINIMAL selection over the example kernels instead (the select_* functions
below); `stats` counts which path each new shape took. The kernel for one
(op, dims, device) is looked up once and kept.

    gemm(a, b)                 a @ b.T: a [M, K], b [N, K] (nn.Linear's weight), bf16
    rms_norm(x, w, eps)        bf16, x [..., N], N % 8 == 0
    layer_norm(x, w, b, eps)   bf16, as rms_norm
    softmax(x)                 f32 over the last dim, N % 4 == 0
    cross_entropy(logits, t)   f32 logits [B, V], integer targets [B]: per-row loss
    attention(q, k, v, causal) bf16 q [B, H, S, D], k, v [B, Hkv, S, D] (Hkv divides H: GQA,
                               MQA), D in {64, 128}, q, k, v of one S
    attention_lse(q, k, v, causal)   (O, LSE): the same, and the f32 [B, H, S] natural-log
                               log-sum-exp of every row (what the backward pass reads)
    attention_varlen(q, k, v, cu_seqlens, causal)   packed sequences: q [T, H, D], k, v
                               [T, Hkv, D], cu_seqlens int32 [B + 1]; (O [T, H, D], LSE f32 [H, T])
    swiglu(g, u)               silu(g) * u, bf16, numel % 8 == 0
    gemm_bias_silu(a, b, bias) silu(a @ b.T + bias): bf16 a, b, f32 bias [N]
    gemm_fp8(a, b, sa, sb)     sa * sb * (a @ b.T): float8_e4m3fn a [M, K], b [N, K], bf16 out
    fp8_row_quantize(x)        (y, scale): scale = amax(|row|) / 448 (f32 [M]), y = e4m3(x / scale),
                               bf16 x [..., N], any N
"""
import math
import os

import torch

from . import _cake, _use_torch_streams, load

_use_torch_streams()   # torch is imported now: launch on its current stream

__all__ = ["gemm", "rms_norm", "layer_norm", "softmax", "cross_entropy", "attention", "attention_lse",
           "attention_varlen", "swiglu",
           "gemm_bias_silu", "gemm_fp8", "fp8_row_quantize", "library", "kernel_for", "stats"]

PKG = os.path.dirname(os.path.abspath(__file__))
stats = {"library": 0, "minimal": 0}
errors = []        # the library's failures to prepare a variant (then the minimal selection ran)


def _avoid_from_env():
    """CAKE_OPS_AVOID="gemm/persistent_128x128,softmax/warp_rows": variants never picked"""
    out = {}
    for item in os.environ.get("CAKE_OPS_AVOID", "").split(","):
        if "/" in item:
            op, name = item.strip().split("/", 1)
            out.setdefault(op, set()).add(name)
    return out


avoid = _avoid_from_env()   # {library op: {variant names}}: the dispatch skips them
_lib = []          # [Library] once opened, [None] when there is none
_chosen = {}       # (op, dims, device) -> (Kernel, "op/variant")
last_pick = [None]  # "op/variant" (or "op/minimal") of the latest op call


def library():
    """The kernel library cake.ops dispatches through (a cake.Library), or None."""
    if not _lib:
        paths = [os.environ.get("CAKE_LIBRARY"), os.path.join(PKG, "cake.cakelib"),
                 os.path.join(PKG, "..", "..", "..", "library")]   # the repository's folder
        path = next((p for p in paths if p and os.path.exists(p)), None)
        _lib.append(_cake.open_library(path) if path else None)
    return _lib[0]


def kernel_for(op, dims, minimal):
    """The kernel for op at dims on the current device: the library's choice, else
    minimal() (a Kernel). Kept per (op, dims, device)."""
    dev = torch.cuda.current_device()
    key = (op, tuple(sorted(dims.items())), dev)
    hit = _chosen.get(key)
    if hit is None:
        lib = library()
        name = f"{op}/minimal"
        try:
            if lib is None:
                raise ValueError("no library")
            skip = tuple(avoid[op]) if op in avoid else ()
            pick = lib.select(op, dims, skip or None)
            while "+" in pick["kernel"] or pick.get("launches", 0):   # a sequence (with its
                # workspace), not one Kernel: the next best
                skip += (pick["name"],)
                pick = lib.select(op, dims, skip)
            k = lib.kernel(op, dims, dev, skip or None)
            name = f"{op}/{pick['name']}"
            stats["library"] += 1
        except (ValueError, _cake.CakeError) as e:   # no such op, no variant covers the shape
            if isinstance(e, _cake.CakeError):
                errors.append(f"{op} {dims}: {e}")
            k = minimal()
            stats["minimal"] += 1
        if len(_chosen) > 4096:
            _chosen.clear()
        hit = _chosen[key] = (k, name)
    last_pick[0] = hit[1]
    return hit[0]


def _kernel(file, kernel=None, **params):
    sub = "kernels" if file == "swiglu" else "examples"
    return load(os.path.join(PKG, sub, file + ".tir"), kernel=kernel, device=None, **params)


def _target():
    from . import target_of
    return target_of(torch.cuda.current_device())


def _pow2_at_least(n):
    return 1 << max(0, math.ceil(math.log2(max(1, n))))


def _dense(x):
    """x contiguous and at a 16-byte aligned address (the kernel ABI: a view that
    starts inside an allocation, x[1:] of odd rows, is copied)"""
    x = x.contiguous()
    return x if x.data_ptr() % 16 == 0 else x.clone()


def _rows(x):
    """x as a dense [rows, last] tensor"""
    x = _dense(x)
    return x.view(-1, x.shape[-1]) if x.dim() != 2 else x


# ---- the MINIMAL selection: (op, shape) -> an example kernel ---------------------------

def select_gemm():
    return _kernel("gemm_sm90" if _target() == "sm_90a" else "gemm_sm80")


def select_row(file, N, per_iter, kernel=None):
    """a one-row-per-block kernel with ITERS vectors per thread: the fewest that hold N"""
    return _kernel(file, kernel=kernel, ITERS=_pow2_at_least(math.ceil(N / per_iter)))


def select_softmax(N):
    if N <= 1024:
        return _kernel("softmax", kernel="softmax_warp", ITERS=_pow2_at_least(math.ceil(N / 128)))
    return select_row("softmax", N, 256 * 4, kernel="softmax")


def select_attention(D, causal, varlen=False):
    if D not in (64, 128) and (varlen or D != 256):
        raise ValueError(f"cake.ops.attention: head dim {D}; the kernels have 64 and 128"
                         f"{'' if varlen else ' and 256'}")
    if D == 256:
        return _kernel("flash_attn_fwd_pp_d256", CAUSAL=int(bool(causal)))
    file = "flash_attn_varlen_fwd" if varlen else "flash_attn_fwd_pp"
    return _kernel(file, D=D, CAUSAL=int(bool(causal)))


def _attention_op(base, D, causal):
    """the library op: attention_fwd_gqa[_d64|_d256][_causal], attention_varlen_fwd[...]"""
    return base + ({64: "_d64", 256: "_d256"}.get(D, "")) + ("_causal" if causal else "")


# ---- the ops, eager ------------------------------------------------------------------

def _gemm(a, b):
    a, b = _dense(a), _dense(b)
    M, K, N = a.shape[0], a.shape[1], b.shape[0]
    c = a.new_empty((M, N))
    kernel_for("gemm", {"M": M, "N": N, "K": K}, select_gemm)(a, b, c)
    return c


def _rms_norm(x, w, eps):
    x2 = _rows(x)
    y = torch.empty_like(x2)
    M, N = x2.shape
    k = kernel_for("rmsnorm", {"M": M, "N": N}, lambda: select_row("rmsnorm", N, 256 * 8))
    k(x2, _dense(w), y, float(eps))
    return y.view(x.shape)


def _layer_norm(x, w, b, eps):
    x2 = _rows(x)
    y = torch.empty_like(x2)
    M, N = x2.shape
    k = kernel_for("layernorm", {"M": M, "N": N}, lambda: select_row("layernorm", N, 256 * 8))
    k(x2, _dense(w), _dense(b), y, float(eps))
    return y.view(x.shape)


def _softmax(x):
    x2 = _rows(x)
    y = torch.empty_like(x2)
    M, N = x2.shape
    kernel_for("softmax", {"M": M, "N": N}, lambda: select_softmax(N))(x2, y)
    return y.view(x.shape)


def _cross_entropy(logits, target):
    logits = _dense(logits)
    B, V = logits.shape
    loss = logits.new_empty((B,))
    k = kernel_for("cross_entropy", {"B": B, "V": V}, lambda: _kernel("cross_entropy"))
    k(logits, _dense(target.to(torch.int32)), loss)
    return loss


def _attention_lse(q, k, v, causal):
    B, H, S, D = q.shape
    Hkv = k.shape[1]
    if H % Hkv:
        raise ValueError(f"cake.ops.attention: {Hkv} KV heads do not divide {H} query heads")
    q3 = _dense(q).view(B * H, S, D)
    k3, v3 = (_dense(t).view(B * Hkv, S, D) for t in (k, v))
    o = torch.empty_like(q3)
    lse = torch.empty((B * H, S), dtype=torch.float32, device=q.device)
    kern = kernel_for(_attention_op("attention_fwd_gqa", D, causal), {"BH": B * H, "BHK": B * Hkv, "S": S},
                      lambda: select_attention(D, causal))
    kern(q3, k3, v3, o, lse, 1.0 / math.sqrt(D))
    return o.view(B, H, S, D), lse.view(B, H, S)


def _attention(q, k, v, causal):
    return _attention_lse(q, k, v, causal)[0]


def _attention_varlen(q, k, v, cu_seqlens, causal):
    T, H, D = q.shape
    Hkv = k.shape[1]
    q, k, v = _dense(q), _dense(k), _dense(v)
    o = torch.empty_like(q)
    lse = torch.empty((H, T), dtype=torch.float32, device=q.device)
    cu = _dense(cu_seqlens.to(torch.int32))
    kern = kernel_for(_attention_op("attention_varlen_fwd", D, causal),
                      {"H": H, "HK": Hkv, "T": T, "B1": cu.shape[0]},
                      lambda: select_attention(D, causal, varlen=True))
    # the kernel's [H, T, D] views of the token-major tensors (strides [D, H * D, 1])
    kern(q.permute(1, 0, 2), k.permute(1, 0, 2), v.permute(1, 0, 2), o.permute(1, 0, 2), lse, cu,
         1.0 / math.sqrt(D))
    return o, lse


def _gemm_bias_silu(a, b, bias):
    a, b = _dense(a), _dense(b)
    M, K, N = a.shape[0], a.shape[1], b.shape[0]
    c = a.new_empty((M, N))
    k = kernel_for("gemm_bias_act", {"M": M, "N": N, "K": K}, lambda: _kernel("gemm_bias_act"))
    k(a, b, _dense(bias.to(torch.float32)), c)
    return c


def _gemm_fp8(a, b, scale_a, scale_b):
    a, b = _dense(a), _dense(b)
    M, K, N = a.shape[0], a.shape[1], b.shape[0]
    c = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    k = kernel_for("gemm_fp8", {"M": M, "N": N, "K": K}, lambda: _kernel("gemm_fp8"))
    k(a, b, float(scale_a), float(scale_b), c)
    return c


def _fp8_row_quantize(x):
    x2 = _rows(x)
    M, N = x2.shape
    y = torch.empty((M, N), dtype=torch.float8_e4m3fn, device=x.device)
    scale = torch.empty((M,), dtype=torch.float32, device=x.device)
    k = kernel_for("fp8_row_quantize", {"M": M, "N": N}, lambda: _kernel("fp8_quant"))
    k(x2, y, scale)
    return y.view(x.shape), scale


def _swiglu(g, u):
    g, u = _dense(g), _dense(u)
    h = torch.empty_like(g)
    kernel_for("swiglu", {"N": g.numel()}, lambda: _kernel("swiglu"))(g.view(-1), u.view(-1),
                                                                      h.view(-1))
    return h


# ---- as torch custom ops (torch.ops.cake.*) -----------------------------------------------

Tensor = torch.Tensor


@torch.library.custom_op("cake::gemm", mutates_args=())
def gemm(a: Tensor, b: Tensor) -> Tensor:
    return _gemm(a, b)


@gemm.register_fake
def _(a, b):
    return a.new_empty((a.shape[0], b.shape[0]))


@torch.library.custom_op("cake::rms_norm", mutates_args=())
def rms_norm(x: Tensor, w: Tensor, eps: float = 1e-6) -> Tensor:
    return _rms_norm(x, w, eps)


@rms_norm.register_fake
def _(x, w, eps=1e-6):
    return torch.empty_like(x)


@torch.library.custom_op("cake::layer_norm", mutates_args=())
def layer_norm(x: Tensor, w: Tensor, b: Tensor, eps: float = 1e-5) -> Tensor:
    return _layer_norm(x, w, b, eps)


@layer_norm.register_fake
def _(x, w, b, eps=1e-5):
    return torch.empty_like(x)


@torch.library.custom_op("cake::softmax", mutates_args=())
def softmax(x: Tensor) -> Tensor:
    return _softmax(x)


@softmax.register_fake
def _(x):
    return torch.empty_like(x)


@torch.library.custom_op("cake::cross_entropy", mutates_args=())
def cross_entropy(logits: Tensor, target: Tensor) -> Tensor:
    return _cross_entropy(logits, target)


@cross_entropy.register_fake
def _(logits, target):
    return logits.new_empty((logits.shape[0],))


@torch.library.custom_op("cake::attention", mutates_args=())
def attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> Tensor:
    return _attention(q, k, v, causal)


@attention.register_fake
def _(q, k, v, causal=False):
    return torch.empty_like(q)


@torch.library.custom_op("cake::attention_lse", mutates_args=())
def attention_lse(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> tuple[Tensor, Tensor]:
    return _attention_lse(q, k, v, causal)


@attention_lse.register_fake
def _(q, k, v, causal=False):
    return torch.empty_like(q), q.new_empty(q.shape[:3], dtype=torch.float32)


@torch.library.custom_op("cake::attention_varlen", mutates_args=())
def attention_varlen(q: Tensor, k: Tensor, v: Tensor, cu_seqlens: Tensor,
                     causal: bool = False) -> tuple[Tensor, Tensor]:
    return _attention_varlen(q, k, v, cu_seqlens, causal)


@attention_varlen.register_fake
def _(q, k, v, cu_seqlens, causal=False):
    return torch.empty_like(q), q.new_empty((q.shape[1], q.shape[0]), dtype=torch.float32)


@torch.library.custom_op("cake::swiglu", mutates_args=())
def swiglu(g: Tensor, u: Tensor) -> Tensor:
    return _swiglu(g, u)


@swiglu.register_fake
def _(g, u):
    return torch.empty_like(g)


@torch.library.custom_op("cake::gemm_bias_silu", mutates_args=())
def gemm_bias_silu(a: Tensor, b: Tensor, bias: Tensor) -> Tensor:
    return _gemm_bias_silu(a, b, bias)


@gemm_bias_silu.register_fake
def _(a, b, bias):
    return a.new_empty((a.shape[0], b.shape[0]))


@torch.library.custom_op("cake::gemm_fp8", mutates_args=())
def gemm_fp8(a: Tensor, b: Tensor, scale_a: float, scale_b: float) -> Tensor:
    return _gemm_fp8(a, b, scale_a, scale_b)


@gemm_fp8.register_fake
def _(a, b, scale_a, scale_b):
    return torch.empty((a.shape[0], b.shape[0]), dtype=torch.bfloat16, device=a.device)


@torch.library.custom_op("cake::fp8_row_quantize", mutates_args=())
def fp8_row_quantize(x: Tensor) -> tuple[Tensor, Tensor]:
    return _fp8_row_quantize(x)


@fp8_row_quantize.register_fake
def _(x):
    rows = x.numel() // x.shape[-1] if x.dim() else 1
    return (torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device),
            torch.empty((rows,), dtype=torch.float32, device=x.device))
