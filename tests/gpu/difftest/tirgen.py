#!/usr/bin/env python3
"""tirgen.py — a random generator of well-typed SIMT TIR kernels with reference blocks,
for differential testing of cakec's code generation (`cakec run --check`).

  tirgen.py --seed N [--size small|medium] [-o FILE]     one kernel (stdout by default)
  tirgen.py --program FILE.json [-o FILE]                 render a saved program

Every kernel has the same frame: one row of its inputs per block (grid [M]), T threads,
each thread owning an L-lane chunk of the row per iteration of a uniform loop over the
row (`for c0 in 0 .. N step T * L`), masked by `ok` on the ragged end (assume
N % L == 0; `--size` medium also makes N % (T * L) != 0 shapes likely). In that frame
it draws a straight-line program of values, one `let` per operation: loads (masked,
`as`), arithmetic, math builtins, casts, select, per-lane masks, horizontal reductions
(hsum, hmax, hmin, dot), shuffles (xor, down, up, idx), warp and block reductions,
shared memory with barriers, `if`, and `for` accumulation loops; then it stores some
values to outputs. The reference block simulates the same program per row in fp64
over arrays indexed by lane (n) or by thread chunk (q), so each operation has a
one-line reference. Values keep interval bounds so that integers never overflow,
floats stay O(1), and comparisons / float-to-int casts only see exactly computed
values (a one-ulp difference there would be a false alarm, not a bug). Approximate
math (tanh) is only stored through a 16-bit float.

The program model (a JSON-able dict) is embedded in the kernel as a `# tirgen:`
comment, so reduce.py can shrink the model and render it again. Python 3 stdlib only.
"""
import argparse
import json
import random
import sys

FLOATS = ["f32", "f16", "bf16", "f64"]
SINTS = ["i32", "i8", "i16", "i64"]
UINTS = ["u32", "u8", "u16", "u64"]
SIZE = {"f32": 4, "f16": 2, "bf16": 2, "f64": 8, "i32": 4, "i8": 1, "i16": 2, "i64": 8,
        "u32": 4, "u8": 1, "u16": 2, "u64": 8}
RANGE = {"i8": (-128, 127), "i16": (-32768, 32767), "i32": (-2**31, 2**31 - 1),
         "i64": (-2**63, 2**63 - 1), "u8": (0, 255), "u16": (0, 65535), "u32": (0, 2**32 - 1),
         "u64": (0, 2**64 - 1)}
REDUCIBLE = ["f32", "i32", "u32"]        # reduce.warp/block value types drawn
FMAX = 64.0                              # floats stay within [-FMAX, FMAX]


def is_float(dt):
    return dt in FLOATS


def is_signed(dt):
    return dt in SINTS


def small_float(dt):
    return dt in ("f16", "bf16")


def coarser(a, b):
    """the coarser of two lowp formats (None < f16 < bf16)"""
    order = [None, "f16", "bf16"]
    return a if order.index(a) >= order.index(b) else b


def flit(x):
    """a float literal for kernel and reference text"""
    s = repr(float(x))
    return s if "e" in s or "." in s else s + ".0"


class Gen:
    """draws one program (a dict) from a seed"""

    def __init__(self, seed, size):
        self.r = random.Random(seed)
        self.seed = seed
        self.size = size
        self.vals = []          # the values: dicts with id, kind (v|s), dt, lo, hi, exact, approx
        self.ops = []

    # ---- value bookkeeping ----
    def new(self, op, kind, dt, lo, hi, exact, approx=False, **kw):
        v = {"id": len(self.ops), "op": op, "kind": kind, "dt": dt, "lo": lo, "hi": hi,
             "exact": exact, "approx": approx}
        v.update(kw)
        # lowp: the coarsest 16-bit float an inexact operation rounded this value (or one it
        # is computed from) to. The reference rounds at the same points, but a one-ulp flip
        # there (approximate math, double rounding) is an error of that format's size: such
        # a value may only be stored to an output of that format, never compared in f32.
        lp = None
        for a in kw.get("args", []):
            lp = coarser(lp, self.ops[a].get("lowp"))
        if small_float(dt) and not exact:
            lp = coarser(lp, dt)
        v["lowp"] = lp
        self.ops.append(v)
        return v

    def pick(self, pred):
        c = [v for v in self.ops if v["op"] != "store" and pred(v)]
        return self.r.choice(c) if c else None

    def fits(self, dt, lo, hi):
        if is_float(dt):
            return -FMAX <= lo and hi <= FMAX
        a, b = RANGE[dt]
        return a <= lo and hi <= b

    # ---- the program ----
    def program(self):
        r = self.r
        L = r.choice([2, 4, 4, 8]) if self.size == "small" else r.choice([2, 4, 8, 16])
        T = r.choice([32, 64, 128]) if self.size == "small" else r.choice([32, 64, 128, 256])
        dts = [d for d in FLOATS + SINTS + UINTS if L * SIZE[d] <= 16 and SIZE[d] * L >= 2]
        self.L, self.T = L, T
        nin = r.randint(1, 3)
        inputs = []
        for i in range(nin):
            dt = r.choice(dts + ["f32", "f32", "i32"] if L * 4 <= 16 else dts)
            inputs.append({"name": "x%d" % i, "dt": dt})
        self.inputs = inputs
        self.scalar_arg = r.random() < 0.5
        n_ops = r.randint(4, 10) if self.size == "small" else r.randint(8, 24)
        for x in inputs:
            self.load(x)
        if self.scalar_arg:     # a uniform f32 argument, drawn in [0.1, 1) by the checker
            self.new("sarg", "s", "f32", 0.1, 1.0, True, src="s0")
        for _ in range(n_ops):
            self.step()
        self.stores()
        return {"seed": self.seed, "size": self.size, "T": T, "L": L, "inputs": inputs,
                "scalar_arg": self.scalar_arg, "ops": self.ops,
                "ragged": r.random() < 0.7}

    def load(self, x):
        dt = x["dt"]
        as_dt = None
        if small_float(dt) and self.r.random() < 0.6 and self.L * 4 <= 64:
            as_dt = "f32"
        elif dt in ("i8", "i16", "u8", "u16") and self.r.random() < 0.5:
            as_dt = "i32"
        rd = as_dt or dt
        if is_float(dt):
            lo, hi = -1.0, 1.0
        elif is_signed(dt):
            lo, hi = -8, 8
        else:
            lo, hi = 0, 16
        return self.new("load", "v", rd, lo, hi, True, src=x["name"], src_dt=dt, as_dt=as_dt)

    def step(self):
        r = self.r
        kinds = ["bin", "bin", "bin", "un", "math", "cast", "select", "lit", "hred", "hred",
                 "shfl", "wred", "bred", "smem", "loop", "ifv", "lmask", "dot"]
        for _ in range(20):
            k = r.choice(kinds)
            if getattr(self, "op_" + k)():
                return

    # ---- operations (each returns the new value or None when it does not fit) ----
    def op_lit(self):
        a = self.pick(lambda v: True)
        if not a:
            return None
        if is_float(a["dt"]):
            c = self.r.choice([0.5, 0.25, 2.0, 1.5, -0.75, 3.0])
            op = self.r.choice(["+", "*", "-"])
        else:
            c = self.r.randint(1, 5)
            op = self.r.choice(["+", "*", "-", "/", "%", "<<", ">>", "&", "|", "~"])
            if not is_signed(a["dt"]) and op == "-":
                op = "+"
        return self.binary(a, None, op, c)

    def op_bin(self):
        a = self.pick(lambda v: True)
        if not a:
            return None
        b = self.pick(lambda v: v["dt"] == a["dt"] and v["id"] != a["id"] and
                      (a["kind"] == "v" or v["kind"] == "s"))
        if not b:
            return None
        if is_float(a["dt"]):
            ops = ["+", "-", "*", "max", "min", "div", "fma"]
        else:
            ops = ["+", "-", "*", "max", "min", "&", "|", "~"]
            if not is_signed(a["dt"]):
                ops.remove("-")
        return self.binary(a, b, self.r.choice(ops), None)

    def binary(self, a, b, op, c):
        """a op b, or a op constant c"""
        dt = a["dt"]
        alo, ahi = a["lo"], a["hi"]
        blo, bhi = (b["lo"], b["hi"]) if b else (c, c)
        kind = a["kind"] if not b or b["kind"] == a["kind"] else "v"
        exact = a["exact"] and (b is None or b["exact"])
        if op == "+":
            lo, hi = alo + blo, ahi + bhi
            exact = exact and not is_float(dt)
        elif op == "-":
            lo, hi = alo - bhi, ahi - blo
            exact = exact and not is_float(dt)
        elif op == "*":
            ps = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
            lo, hi = min(ps), max(ps)
            exact = exact and (not is_float(dt) or (b is None and c in (0.5, 0.25, 2.0)))
        elif op in ("max", "min"):
            lo, hi = (max(alo, blo), max(ahi, bhi)) if op == "max" else (min(alo, blo), min(ahi, bhi))
        elif op == "div":     # a / (abs(b) + 1)
            m = max(abs(alo), abs(ahi))
            lo, hi, exact = -m, m, False
        elif op == "fma":
            cc = self.pick(lambda v: v["dt"] == dt and v["kind"] == kind)
            if not cc:
                return None
            ps = [alo * blo, alo * bhi, ahi * blo, ahi * bhi]
            lo, hi, exact = min(ps) + cc["lo"], max(ps) + cc["hi"], False
            if not self.fits(dt, lo, hi):
                return None
            return self.new("fma", kind, dt, lo, hi, False, a["approx"] or b["approx"] or cc["approx"],
                            args=[a["id"], b["id"], cc["id"]])
        elif op in ("/", "%"):
            if op == "/":
                lo, hi = (min(alo, 0) // c if alo >= 0 else -(-alo // c)), ahi // c if ahi >= 0 else 0
                lo, hi = min(lo, 0, -abs(alo) // c), max(hi, 0, abs(ahi) // c)
            else:
                lo, hi = (-(c - 1) if alo < 0 else 0), (c - 1 if ahi > 0 else 0)
        elif op in ("<<", ">>"):
            if op == "<<":
                lo, hi = alo << c, ahi << c
            else:
                lo, hi = alo >> c, ahi >> c
                lo, hi = min(lo, 0), max(hi, 0)
        elif op in ("&", "|", "~"):
            bits = max(abs(alo), abs(ahi), abs(blo), abs(bhi)).bit_length()
            neg = alo < 0 or blo < 0
            lo, hi = (-(1 << bits), (1 << bits) - 1) if neg else (0, (1 << bits) - 1)
        else:
            return None
        if not self.fits(dt, lo, hi):
            return None
        approx = a["approx"] or bool(b and b["approx"])
        args = [a["id"]] + ([b["id"]] if b else [])
        return self.new("bin", kind, dt, lo, hi, exact, approx, bop=op, args=args, c=c)

    def op_un(self):
        a = self.pick(lambda v: is_float(v["dt"]) or is_signed(v["dt"]))
        if not a:
            return None
        op = self.r.choice(["neg", "abs"])
        lo, hi = (-a["hi"], -a["lo"]) if op == "neg" else (0 if a["lo"] < 0 < a["hi"] else
                                                             min(abs(a["lo"]), abs(a["hi"])),
                                                             max(abs(a["lo"]), abs(a["hi"])))
        if not self.fits(a["dt"], lo, hi):
            return None
        return self.new("un", a["kind"], a["dt"], lo, hi, a["exact"], a["approx"], uop=op, args=[a["id"]])

    def op_math(self):
        a = self.pick(lambda v: is_float(v["dt"]))
        if not a:
            return None
        m = max(abs(a["lo"]), abs(a["hi"]))
        if a["dt"] == "f64":
            fs = ["sqrt", "rsqrt"]
        else:
            fs = ["sqrt", "rsqrt", "log", "tanh", "sin", "cos", "exp", "exp2"]
        f = self.r.choice(fs)
        if f in ("exp", "exp2", "sin", "cos") and m > 4:
            return None
        if f in ("exp", "exp2"):
            lo, hi = 0.0, (2.0 ** m if f == "exp2" else 2.72 ** m)
        elif f in ("sin", "cos", "tanh"):
            lo, hi = -1.0, 1.0
        elif f == "sqrt":
            lo, hi = 0.0, m ** 0.5 + 1
        elif f == "rsqrt":
            lo, hi = 0.0, 1.0
        else:
            lo, hi = 0.0, m
        if not self.fits(a["dt"], lo, hi):
            return None
        return self.new("math", a["kind"], a["dt"], lo, hi, False, a["approx"] or f == "tanh",
                        fn=f, args=[a["id"]])

    def op_cast(self):
        a = self.pick(lambda v: True)
        if not a:
            return None
        L = self.L
        dts = [d for d in FLOATS + SINTS + UINTS if d != a["dt"] and (a["kind"] == "s" or L * SIZE[d] <= 16)]
        to = self.r.choice(dts)
        lo, hi = a["lo"], a["hi"]
        if is_float(a["dt"]) and not is_float(to):
            if not a["exact"]:
                return None
            lo, hi = int(lo) if lo > 0 else -int(-lo), int(hi) if hi > 0 else -int(-hi)
        if not is_float(to) and not self.fits(to, lo, hi):
            return None
        if is_float(to) and not self.fits(to, lo, hi):
            return None
        if to == "f64" and is_float(a["dt"]) and a["dt"] != "f64" and not a["exact"]:
            return None     # an f32 rounding error is far past f64's tolerance
        if is_float(a["dt"]) and is_float(to) and SIZE[to] < SIZE[a["dt"]]:
            a_exact = False  # a narrowing rounds (an f64 input just below 1 may round to 1)
        else:
            a_exact = a["exact"]
        exact = a_exact and (is_float(a["dt"]) == is_float(to) or not is_float(to) or
                                max(abs(lo), abs(hi)) <= 256) and not small_float(to)
        return self.new("cast", a["kind"], to, lo, hi, exact, a["approx"], args=[a["id"]])

    def op_select(self):
        c = self.pick(lambda v: v["exact"])
        if not c:
            return None
        a = self.pick(lambda v: v["kind"] == c["kind"] or c["kind"] == "s")
        if not a:
            return None
        b = self.pick(lambda v: v["dt"] == a["dt"] and v["kind"] == a["kind"])
        th = 0 if not is_float(c["dt"]) else 0.0
        if not is_float(c["dt"]) and not is_signed(c["dt"]):
            th = 8
        cmp = self.r.choice(["<", ">", "<=", ">=", "==", "!="] if not is_float(c["dt"]) else ["<", ">"])
        kind = a["kind"]
        return self.new("select", kind, a["dt"], min(a["lo"], b["lo"]), max(a["hi"], b["hi"]),
                        a["exact"] and b["exact"], a["approx"] or b["approx"],
                        cmp=cmp, th=th, args=[c["id"], a["id"], b["id"]])

    def op_lmask(self):
        """a per-lane masked load (mask: a boolxL comparison of an exact vector) — full-row
        kernels only (the access is unmasked by `ok`), rendered as select in ragged ones"""
        c = self.pick(lambda v: v["exact"] and v["kind"] == "v")
        if not c:
            return None
        x = self.r.choice(self.inputs)
        ld = self.load(x)
        th = 0 if not is_float(c["dt"]) else 0.0
        if not is_float(c["dt"]) and not is_signed(c["dt"]):
            th = 8
        ld["lmask"] = c["id"]
        ld["th"] = th
        return ld

    def op_hred(self):
        a = self.pick(lambda v: v["kind"] == "v")
        if not a:
            return None
        f = self.r.choice(["hsum", "hmax", "hmin"])
        L = self.L
        dt = a["dt"]
        if f == "hsum":
            lo, hi = a["lo"] * L, a["hi"] * L
            if small_float(dt):
                dt = "f32"
            exact = a["exact"] and not is_float(dt)
        else:
            lo, hi, exact = a["lo"], a["hi"], a["exact"]
            if small_float(dt):
                pass
        if not self.fits(dt, lo, hi):
            return None
        return self.new("hred", "s", dt, lo, hi, exact, a["approx"], fn=f, args=[a["id"]])

    def op_dot(self):
        a = self.pick(lambda v: v["kind"] == "v" and v["dt"] in ("f32", "f64"))
        if not a:
            return None
        b = self.pick(lambda v: v["kind"] == "v" and v["dt"] == a["dt"])
        m = max(abs(a["lo"]), abs(a["hi"])) * max(abs(b["lo"]), abs(b["hi"])) * self.L
        if m > FMAX:
            return None
        return self.new("dot", "s", a["dt"], -m, m, False, a["approx"] or b["approx"],
                        args=[a["id"], b["id"]])

    def op_shfl(self):
        a = self.pick(lambda v: True)
        if not a:
            return None
        f = self.r.choice(["xor", "down", "up", "idx"])
        k = self.r.choice([1, 2, 4, 8, 16]) if f == "xor" else self.r.randint(1, 31) if f != "idx" \
            else self.r.randint(0, 31)
        return self.new("shfl", a["kind"], a["dt"], a["lo"], a["hi"], a["exact"], a["approx"],
                        fn=f, k=k, args=[a["id"]])

    def red(self, scope):
        a = self.pick(lambda v: v["kind"] == "s" and v["dt"] in REDUCIBLE)
        if not a:
            return None
        f = self.r.choice(["add", "max", "min"])
        n = 32 if scope == "warp" else self.T
        lo, hi = (a["lo"] * n, a["hi"] * n) if f == "add" else (a["lo"], a["hi"])
        if not self.fits(a["dt"], lo, hi):
            return None
        return self.new("red", "s", a["dt"], lo, hi, a["exact"] and (f != "add" or not is_float(a["dt"])),
                        a["approx"], scope=scope, fn=f, args=[a["id"]])

    def op_wred(self):
        return self.red("warp")

    def op_bred(self):
        return self.red("block")

    def op_smem(self):
        a = self.pick(lambda v: v["kind"] == "s" or self.L * SIZE[v["dt"]] <= 16)
        if not a:
            return None
        k = self.r.randint(1, self.T - 1)
        return self.new("smem", a["kind"], a["dt"], a["lo"], a["hi"], a["exact"], a["approx"],
                        k=k, args=[a["id"]])

    def op_loop(self):
        """var w = a; for i in 0 .. R { w = w * h + b } with |h| <= 0.5 keeps w bounded"""
        a = self.pick(lambda v: is_float(v["dt"]) and not small_float(v["dt"]))
        if not a:
            return None
        b = self.pick(lambda v: v["dt"] == a["dt"] and (a["kind"] == "v" or v["kind"] == "s"))
        R = self.r.randint(1, 5)
        m = max(abs(a["lo"]), abs(a["hi"])) + 2 * max(abs(b["lo"]), abs(b["hi"]))
        if m > FMAX:
            return None
        return self.new("loop", a["kind"], a["dt"], -m, m, False, a["approx"] or b["approx"],
                        R=R, h=self.r.choice([0.5, -0.5, 0.25]), args=[a["id"], b["id"]])

    def op_ifv(self):
        """var w = a; if c OP th { w = b }"""
        c = self.pick(lambda v: v["exact"] and v["kind"] == "s")
        if not c:
            return None
        a = self.pick(lambda v: True)
        b = self.pick(lambda v: v["dt"] == a["dt"] and v["kind"] == a["kind"])
        th = 0 if not is_float(c["dt"]) else 0.0
        if not is_float(c["dt"]) and not is_signed(c["dt"]):
            th = 8
        e = self.pick(lambda v: v["dt"] == a["dt"] and v["kind"] == a["kind"]) if self.r.random() < 0.5 else None
        args = [c["id"], a["id"], b["id"]] + ([e["id"]] if e else [])
        vs = [a, b] + ([e] if e else [])
        return self.new("ifv", a["kind"], a["dt"], min(v["lo"] for v in vs), max(v["hi"] for v in vs),
                        all(v["exact"] for v in vs), any(v["approx"] for v in vs),
                        cmp=self.r.choice(["<", ">"]), th=th, args=args)

    def stores(self):
        """1 to 3 outputs: late values first; approximate f32/f64 values through f16"""
        cands = [v for v in self.ops][::-1]
        n = self.r.randint(1, min(3, len(cands)))
        chosen = []
        for v in cands:
            if len(chosen) == n:
                break
            if v["id"] in [c["id"] for c in chosen]:
                continue
            if self.r.random() < 0.7 or v is cands[-1]:
                chosen.append(v)
        for v in chosen:
            if v["kind"] == "v" and self.L * SIZE[v["dt"]] > 16:
                continue
            # the output format: one whose tolerance covers the value's error
            want = v["lowp"] or ("f16" if v["approx"] else None)
            if want and v["dt"] != "bf16" and v["dt"] != want:
                if not is_float(v["dt"]) or (v["kind"] == "v" and self.L * 2 > 16):
                    continue
                v = self.new("cast", v["kind"], want, v["lo"], v["hi"], False, v["approx"], args=[v["id"]])
            self.new("store", v["kind"], v["dt"], 0, 0, True, args=[v["id"]],
                     cond=self.r.random() < 0.2)


# ---- rendering ----------------------------------------------------------------------

def typ(dt, kind, L):
    return dt if kind == "s" else "%sx%d" % (dt, L)


def zero(dt):
    return "0.0" if is_float(dt) else "0"


class Render:
    def __init__(self, p):
        self.p = p
        self.L, self.T = p["L"], p["T"]
        self.ops = {o["id"]: o for o in p["ops"]}

    def val(self, i):
        return self.ops[i]

    def lit(self, dt, c):
        return flit(c) if is_float(dt) else str(c)

    # kernel-side expression of operation o
    def kexpr(self, o):
        L = self.L
        a = [("v%d" % i) for i in o.get("args", [])]
        A = [self.val(i) for i in o.get("args", [])]
        t = typ(o["dt"], o["kind"], L)
        op = o["op"]
        if op == "load":
            s = "load %s[block.x, c : +%d]" % (o["src"], L)
            if o.get("as_dt"):
                s += " as %s" % typ(o["as_dt"], "v", L)
            if o.get("lmask") is not None and not self.p["ragged"] and self.p.get("lane_masks"):
                return s + " mask v%d > %s" % (o["lmask"], self.lit(self.val(o["lmask"])["dt"], o["th"]))
            s += " mask c + %d <= N" % L
            if o.get("lmask") is not None:
                return "select(v%d > %s, %s, %s)" % (o["lmask"], self.lit(self.val(o["lmask"])["dt"], o["th"]),
                                                     s, zero(o["dt"]))
            return s
        if op == "bin":
            b = o["bop"]
            rhs = a[1] if len(a) > 1 else self.lit(o["dt"], o["c"])
            if b in ("max", "min"):
                return "%s(%s, %s)" % (b, a[0], rhs)
            if b == "div":
                return "%s / (abs(%s) + 1.0)" % (a[0], rhs)
            return "%s %s %s" % (a[0], b, rhs)
        if op == "fma":
            return "fma(%s, %s, %s)" % tuple(a)
        if op == "un":
            return "-%s" % a[0] if o["uop"] == "neg" else "abs(%s)" % a[0]
        if op == "math":
            f, x = o["fn"], a[0]
            if f in ("sqrt", "log"):
                return "%s(abs(%s) + 1.0)" % (f, x) if f == "log" else "sqrt(abs(%s))" % x
            if f == "rsqrt":
                return "rsqrt(abs(%s) + 1.0)" % x
            return "%s(%s)" % (f, x)
        if op == "cast":
            return "%s(%s)" % (t, a[0])
        if op == "select":
            c = A[0]
            cond = "%s %s %s" % (a[0], o["cmp"], self.lit(c["dt"], o["th"]))
            return "select(%s, %s, %s)" % (cond, a[1], a[2])
        if op == "hred":
            return "%s(%s)" % (o["fn"], a[0])
        if op == "dot":
            return "dot(%s, %s)" % (a[0], a[1])
        if op == "shfl":
            return "shfl.%s(%s, %d)" % (o["fn"], a[0], o["k"])
        if op == "red":
            return "reduce.%s.%s(%s)" % (o["scope"], o["fn"], a[0])
        if op == "sarg":
            return o["src"]
        raise ValueError(op)

    def kstmt(self, o, out):
        L, T = self.L, self.T
        i = o["id"]
        t = typ(o["dt"], o["kind"], L)
        a = [("v%d" % j) for j in o.get("args", [])]
        op = o["op"]
        if op == "smem":
            if o["kind"] == "v":
                out.append("store sh%d[thread.x * %d : +%d] <- %s" % (i, L, L, a[0]))
                out.append("sync")
                out.append("let v%d = load sh%d[(thread.x + %d) %% %d * %d : +%d]" % (i, i, o["k"], T, L, L))
            else:
                out.append("store sh%d[thread.x] <- %s" % (i, a[0]))
                out.append("sync")
                out.append("let v%d = load sh%d[(thread.x + %d) %% %d]" % (i, i, o["k"], T))
            out.append("sync")
        elif op == "loop":
            out.append("var v%d: %s = %s" % (i, t, a[0]))
            out.append("for k%d in 0 .. %d {" % (i, o["R"]))
            out.append("  v%d = v%d * %s + %s" % (i, i, flit(o["h"]), a[1]))
            out.append("}")
        elif op == "ifv":
            c = self.val(o["args"][0])
            out.append("var v%d: %s = %s" % (i, t, a[1]))
            out.append("if %s %s %s {" % (a[0], o["cmp"], self.lit(c["dt"], o["th"])))
            out.append("  v%d = %s" % (i, a[2]))
            if len(a) > 3:
                out.append("} else {")
                out.append("  v%d = %s" % (i, a[3]))
            out.append("}")
        elif op == "store":
            v = self.val(o["args"][0])
            if v["kind"] == "v":
                s = "store y%d[block.x, c : +%d] <- %s mask c + %d <= N" % (i, L, a[0], L)
            else:
                s = "store y%d[block.x, c] <- %s mask c + %d <= N" % (i, a[0], L)
            if o.get("cond") and self.cond_of(v):
                out.append("if %s {" % self.cond_of(v))
                out.append("  " + s)
                out.append("}")
            else:
                out.append(s)
        else:
            out.append("let v%d: %s = %s" % (i, t, self.kexpr(o)))

    def cond_of(self, v):
        """a per-thread condition for a conditional store: the first exact scalar"""
        for o in self.p["ops"]:
            if o["op"] != "store" and o["kind"] == "s" and o["exact"] and o["id"] < v["id"] + 1000:
                self._cond = o
                th = 0 if is_float(o["dt"]) or is_signed(o["dt"]) else 8
                return "v%d > %s" % (o["id"], self.lit(o["dt"], th))
        return None

    # reference-side expression of op o at lane n (kind v) or chunk q (kind s)
    def ridx(self, src, kind, at):
        """read value src from a context of kind `kind` at index expr `at`"""
        if src["kind"] == kind:
            return "t%d[%s]" % (src["id"], at)
        if src["kind"] == "s":      # scalar read in a lane context: its thread's chunk
            return "t%d[(%s) / %d]" % (src["id"], at, self.L)
        raise ValueError("a vector read in a scalar context")

    def rexpr(self, o, at):
        L, T = self.L, self.T
        K = o["kind"]
        A = [self.val(i) for i in o.get("args", [])]
        op = o["op"]
        R = lambda j, where=at: self.ridx(A[j], K, where)
        lane0 = at if K == "v" else "(%s) * %d" % (at, L)
        ok = "(%s) / %d * %d + %d <= N" % (lane0, L, L, L)
        if op == "load":
            s = "select(%s, %s[m, %s], 0)" % (ok, o["src"], at)
            if o.get("lmask") is not None:
                c = self.val(o["lmask"])
                s = "select(%s > %s, %s, 0)" % (self.ridx(c, "v", at), self.lit(c["dt"], o["th"]), s)
            return s
        # `abs(x) + 1.0` is one operation of its own in the kernel: rounded to a 16-bit type
        rnd = (lambda e: "%s(%s)" % (o["dt"], e)) if small_float(o["dt"]) else (lambda e: e)
        if op == "bin":
            b = o["bop"]
            rhs = R(1) if len(A) > 1 else self.lit(o["dt"], o["c"])
            if b in ("max", "min"):
                return "%s(%s, %s)" % (b, R(0), rhs)
            if b == "div":
                return "%s / (%s)" % (R(0), rnd("abs(%s) + 1.0" % rhs))
            if b in ("/", "%"):
                return "%s %s %s" % (R(0), b, rhs)
            return "(%s %s %s)" % (R(0), b, rhs)
        if op == "fma":
            return "%s * %s + %s" % (R(0), R(1), R(2))
        if op == "un":
            return "-%s" % R(0) if o["uop"] == "neg" else "abs(%s)" % R(0)
        if op == "math":
            f, x = o["fn"], R(0)
            if f == "log":
                return "log(%s)" % rnd("abs(%s) + 1.0" % x)
            if f == "sqrt":
                return "sqrt(abs(%s))" % x
            if f == "rsqrt":
                return "rsqrt(%s)" % rnd("abs(%s) + 1.0" % x)
            return "%s(%s)" % (f, x)
        if op == "cast":
            return "%s(%s)" % (o["dt"], R(0))
        if op == "select":
            c = A[0]
            cs = self.ridx(c, K, at) if c["kind"] == K or c["kind"] == "s" else None
            return "select(%s %s %s, %s, %s)" % (cs, o["cmp"], self.lit(c["dt"], o["th"]), R(1), R(2))
        if op == "hred":
            f = {"hsum": "sum", "hmax": "max", "hmin": "min"}[o["fn"]]
            return "%s(j in 0 .. %d, t%d[(%s) * %d + j])" % (f, L, A[0]["id"], at, L)
        if op == "dot":
            return "sum(j in 0 .. %d, t%d[(%s) * %d + j] * t%d[(%s) * %d + j])" % (
                L, A[0]["id"], at, L, A[1]["id"], at, L)
        if op in ("shfl", "smem"):
            # the partner thread chunk of thread chunk q (or the lane n's chunk)
            q = "(%s)" % at if K == "s" else "((%s) / %d)" % (at, L)
            t = "%s %% %d" % (q, T)
            base = "%s / %d * %d" % (q, T, T)
            ln = "%s %% 32" % q
            if op == "smem":
                pq = "%s + (%s + %d) %% %d" % (base, t, o["k"], T)
            elif o["fn"] == "xor":
                pq = "%s + (%s ~ %d)" % (base, t, o["k"])
            elif o["fn"] == "idx":
                pq = "%s + %s / 32 * 32 + %d" % (base, t, o["k"])
            elif o["fn"] == "down":
                pq = "select(%s + %d < 32, %s + %d, %s)" % (ln, o["k"], q, o["k"], q)
            else:
                pq = "select(%s >= %d, %s - %d, %s)" % (ln, o["k"], q, o["k"], q)
            pos = pq if K == "s" else "(%s) * %d + (%s) %% %d" % (pq, L, at, L)
            return "t%d[%s]" % (A[0]["id"], pos)
        if op == "red":
            f = {"add": "sum", "max": "max", "min": "min"}[o["fn"]]
            n = 32 if o["scope"] == "warp" else T
            return "%s(w in 0 .. %d, t%d[(%s) / %d * %d + w])" % (f, n, A[0]["id"], at, n, n)
        if op == "ifv":
            c = A[0]
            return "select(%s %s %s, %s, %s)" % (self.ridx(c, K, at), o["cmp"], self.lit(c["dt"], o["th"]),
                                                 R(2), R(3) if len(A) > 3 else R(1))
        if op == "sarg":
            return o["src"]
        raise ValueError(op)

    def rdt(self, o):
        """the reference array's dtype: 16-bit floats round per operation like the kernel"""
        if small_float(o["dt"]):
            return o["dt"]
        return "f64" if is_float(o["dt"]) else "i64" if is_signed(o["dt"]) else "u64"

    def reference(self):
        L, T = self.L, self.T
        out = ["  reference {", "    for m in 0 .. M {"]
        NP = "cdiv(N, %d) * %d" % (T * L, T * L)
        NQ = "cdiv(N, %d) * %d" % (T * L, T)
        for o in self.p["ops"]:
            i = o["id"]
            if o["op"] == "store":
                v = self.val(o["args"][0])
                rd = "t%d" % v["id"]
                cond = ""
                cv = lambda ix: "%s(%s[%s])" % (v["dt"], rd, ix)
                if o.get("cond") and self.cond_of(v):
                    c = self._cond
                    th = 0 if is_float(c["dt"]) or is_signed(c["dt"]) else 8
                    idx = "n / %d" % L if v["kind"] == "v" else "q"
                    cond = "if t%d[%s] > %s " % (c["id"], idx, self.lit(c["dt"], th))
                if v["kind"] == "v":
                    out.append("      for n in 0 .. N { %s{ y%d[m, n] = %s } }" % (cond, i, cv("n")) if cond else
                               "      for n in 0 .. N { y%d[m, n] = %s }" % (i, cv("n")))
                else:
                    out.append("      for q in 0 .. N / %d { %s{ y%d[m, q * %d] = %s } }" % (L, cond, i, L, cv("q"))
                               if cond else "      for q in 0 .. N / %d { y%d[m, q * %d] = %s }" % (L, i, L, cv("q")))
                continue
            ext, ix = (NP, "n") if o["kind"] == "v" else (NQ, "q")
            out.append("      var t%d: %s[%s]" % (i, self.rdt(o), ext))
            if o["op"] == "loop":
                A = [self.val(j) for j in o["args"]]
                out.append("      for %s in 0 .. %s {" % (ix, ext))
                out.append("        var w: f64 = %s" % self.ridx(A[0], o["kind"], ix))
                out.append("        for i in 0 .. %d { w = w * %s + %s }" % (o["R"], flit(o["h"]),
                                                                          self.ridx(A[1], o["kind"], ix)))
                out.append("        t%d[%s] = w" % (i, ix))
                out.append("      }")
            else:
                out.append("      for %s in 0 .. %s { t%d[%s] = %s }" % (ix, ext, i, ix, self.rexpr(o, ix)))
        out += ["    }", "  }"]
        return out

    def kernel(self):
        p, L, T = self.p, self.L, self.T
        name = "g%d" % p["seed"]
        h = ["# generated by tests/gpu/difftest/tirgen.py --seed %d --size %s" % (p["seed"], p["size"]),
             "# tirgen: " + json.dumps(p, separators=(",", ":")),
             "kernel %s" % name, "  target sm_90a, sm_80"]
        for x in p["inputs"]:
            h.append("  arg %s: global %s[M, N] align 16" % (x["name"], x["dt"]))
        for o in p["ops"]:
            if o["op"] == "sarg" and "  arg %s: f32" % o["src"] not in h:
                h.append("  arg %s: f32" % o["src"])
        for o in p["ops"]:
            if o["op"] == "store":
                h.append("  arg y%d: global %s[M, N] align 16" % (o["id"], self.val(o["args"][0])["dt"]))
        h += ["  grid [M]", "  threads %d" % T, "  assume N %% %d == 0" % (L if p["ragged"] else T * L),
              "  assume N <= %d" % (T * L * 4), "  shape M = 5, N = %d" % (T * L * 2)]
        h.append("{")
        h += self.reference()
        body = []
        for o in p["ops"]:
            if o["op"] == "smem":
                body.append("shared sh%d: %s[%d]" % (o["id"], o["dt"], T * L if o["kind"] == "v" else T))
        body.append("for c0 in 0 .. N step %d {" % (T * L))
        inner = ["let c = c0 + thread.x * %d" % L]
        for o in p["ops"]:
            self.kstmt(o, inner)
        body += ["  " + s for s in inner]
        body.append("}")
        return "\n".join(h + ["  " + s for s in body] + ["}"]) + "\n"


def generate(seed, size="small", lane_masks=False):
    p = Gen(seed, size).program()
    p["lane_masks"] = lane_masks
    return p


def render(p):
    return Render(p).kernel()


def main():
    ap = argparse.ArgumentParser(description="random well-typed SIMT TIR kernels with references")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--size", choices=["small", "medium"], default="small")
    ap.add_argument("--program", help="render this saved program (JSON) instead")
    ap.add_argument("--lane-masks", action="store_true",
                    help="per-lane (boolxL) load masks where the row is whole (code generation "
                         "reports E0902 for them today; without this flag they are selects)")
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    if a.program:
        with open(a.program) as f:
            p = json.load(f)
    else:
        p = generate(a.seed, a.size, a.lane_masks)
    text = render(p)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
