#!/usr/bin/env python3
"""Execution tests of fp8-opt's CPU path against the spec reference.

    numerics.py gen CASE [--fold]   MLIR program for CASE on stdout (--fold:
                                    on constants, for the folders)
    numerics.py check CASE OUTPUT   compare mlir-runner's OUTPUT with the
                                    reference (test/reference/fp8ref.py)

The program computes each case with fp8 dialect ops on constant inputs and
prints every result as raw bits (printMemrefI32), so the comparison is
bit-exact; only scaled_matmul (FP32 accumulation order) uses a tolerance.
Inputs come from a fixed seed, so `gen` and `check` see the same data.
"""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "reference"))
import fp8ref as ref  # noqa: E402

F8 = {"e4m3": "f8E4M3FN", "e5m2": "f8E5M2"}


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def layout_str(layout):
    if isinstance(layout, str):
        return layout
    return "block " + "x".join(str(b) for b in layout)


def ttype(shape, elt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elt + ">"


class Program:
    """Accumulates the computation and what to print, then writes either

    * a kernel function `@compute` taking the inputs as arguments (so no
      constant folding can happen: the lowered code does the work), called
      by `@main`, which prints the results; or, with fold=True,
    * everything inline in `@main` on constants, so that the canonicalizer's
      folders (the C++ numerics) compute the results.
    """

    def __init__(self):
        self.consts = []    # (name, type, text)
        self.body = []
        self.results = []   # (value, shape, elt)
        self.n = 0
        self.expected = []  # (name, kind, reference array, options)

    def tmp(self):
        self.n += 1
        return f"%v{self.n}"

    def _const(self, body, shape, elt):
        v = self.tmp()
        self.consts.append((v, ttype(shape, elt),
                            f"{v} = arith.constant dense<{body}> : {ttype(shape, elt)}"))
        return v

    def const_f32(self, x):
        x = _f32(x)
        bits = x.reshape(-1).view(np.uint32)
        flat = [f"0x{int(b):08X}" for b in bits]
        body = _nest(flat, x.shape) if x.ndim else flat[0]
        return self._const(body, x.shape, "f32"), x.shape

    def const_bits(self, bits, shape, elt):
        bits = np.asarray(bits, np.uint8).reshape(shape)
        flat = [f"0x{int(b):02X}" for b in bits.reshape(-1)]
        body = _nest(flat, shape) if len(shape) else flat[0]
        return self._const(body, shape, elt)

    def op(self, text):
        v = self.tmp()
        self.body.append(f"{v} = {text}")
        return v

    def print_bits(self, v, shape, elt):
        self.results.append((v, tuple(shape), elt))

    def expect(self, name, kind, value, **kw):
        self.expected.append((name, kind, value, kw))

    @staticmethod
    def _print(lines, v, shape, elt, tag):
        """Prints a tensor's bit patterns as i32."""
        width = 32 if elt == "f32" else 8
        ity = f"i{width}"
        mem = "memref<" + "".join(f"{d}x" for d in shape) + "i32>"
        b = f"%b{tag}"
        lines.append(f"{b} = arith.bitcast {v} : {ttype(shape, elt)} to {ttype(shape, ity)}")
        if width != 32:
            lines.append(f"%w{tag} = arith.extui {b} : {ttype(shape, ity)} to {ttype(shape, 'i32')}")
            b = f"%w{tag}"
        lines.append(f"%m{tag} = bufferization.to_buffer {b} : {ttype(shape, 'i32')} to {mem}")
        lines.append(f"%u{tag} = memref.cast %m{tag} : {mem} to memref<*xi32>")
        lines.append(f"call @printMemrefI32(%u{tag}) : (memref<*xi32>) -> ()")

    def text(self, fold=False):
        head = "func.func private @printMemrefI32(memref<*xi32>)\n"
        main = [c[2] for c in self.consts]
        if fold:
            main += self.body
            for i, (v, shape, elt) in enumerate(self.results):
                self._print(main, v, shape, elt, i)
            return head + "func.func @main() {\n  " + "\n  ".join(main) + "\n  return\n}\n"
        args = ", ".join(f"{c[0]}: {c[1]}" for c in self.consts)
        rtypes = ", ".join(ttype(s, e) for _, s, e in self.results)
        rvals = ", ".join(v for v, _, _ in self.results)
        kernel = (f"func.func @compute({args}) -> ({rtypes}) {{\n  " +
                  "\n  ".join(self.body) +
                  f"\n  return {rvals} : {rtypes}\n}}\n")
        n = len(self.results)
        main.append(f"%r:{n} = call @compute({', '.join(c[0] for c in self.consts)}) : "
                    f"({', '.join(c[1] for c in self.consts)}) -> ({rtypes})")
        for i, (_, shape, elt) in enumerate(self.results):
            self._print(main, f"%r#{i}", shape, elt, i)
        return (head + kernel + "func.func @main() {\n  " + "\n  ".join(main) +
                "\n  return\n}\n")


def _nest(flat, shape):
    if len(shape) == 1:
        return "[" + ", ".join(flat) + "]"
    step = len(flat) // shape[0]
    return "[" + ", ".join(_nest(flat[i * step:(i + 1) * step], shape[1:])
                           for i in range(shape[0])) + "]"


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def cast_inputs(fmt, rng):
    """Every FP8 value, every midpoint and its neighbours, specials, and
    random magnitudes from far below the subnormals to far above max."""
    vals = ref.fp8_to_f32(np.arange(256, dtype=np.uint8), fmt)
    vals = np.sort(vals[np.isfinite(vals) & (vals >= 0)]).astype(np.float32)
    mids = ((vals[:-1].astype(np.float64) + vals[1:]) / 2).astype(np.float32)
    near = np.concatenate([np.nextafter(mids, np.float32(0)),
                           np.nextafter(mids, np.float32(np.inf))])
    top = np.float32(ref.fp8_max(fmt))
    special = _f32([0.0, np.inf, np.nan, top, np.nextafter(top, np.float32(np.inf)),
                    top * 1.0625, top * 1.5, 1e30, 3.4e38, 1e-45, 1e-40, 1.17549435e-38])
    rand = (rng.standard_normal(6000) *
            np.exp2(rng.uniform(-30, 22, 6000))).astype(np.float32)
    pos = np.concatenate([vals, mids, near, special]).astype(np.float32)
    return np.concatenate([pos, -pos, rand]).astype(np.float32)


def activations(rng, shape, outliers=True):
    x = rng.standard_normal(shape).astype(np.float32)
    if outliers:
        flat = x.reshape(-1)
        idx = rng.choice(flat.size, max(1, flat.size // 97), replace=False)
        flat[idx] *= np.float32(300.0)
    return x


# ---------------------------------------------------------------------------
# Cases: each builds the program and the expected results
# ---------------------------------------------------------------------------

def case_casts(p, rng):
    for fmt in ("e4m3", "e5m2"):
        x = cast_inputs(fmt, rng)
        one = p.const_f32(np.float32(1.0))[0]
        v, shape = p.const_f32(x)
        q = p.op(f"fp8.quantize {v}, {one} layout<tensor> : "
                 f"{ttype(shape, 'f32')}, tensor<f32> -> {ttype(shape, F8[fmt])}")
        p.print_bits(q, shape, F8[fmt])
        p.expect(f"cast {fmt}", "bits", ref.cast_to_fp8(x, fmt))
        # Decode all 256 bit patterns.
        allb = np.arange(256, dtype=np.uint8)
        c = p.const_bits(allb, (256,), F8[fmt])
        d = p.op(f"fp8.dequantize {c}, {one} layout<tensor> : "
                 f"{ttype((256,), F8[fmt])}, tensor<f32> -> {ttype((256,), 'f32')}")
        p.print_bits(d, (256,), "f32")
        p.expect(f"decode {fmt}", "f32", ref.fp8_to_f32(allb, fmt))


def _scaled_quantize(p, x, layout, fmt, recipe, scale_elt="f32", scale_ref=None,
                     name=""):
    """amax -> compute_scale -> quantize -> dequantize, printing each."""
    v, shape = p.const_f32(x)
    sshape = ref.scale_shape(shape, layout)
    lay = layout_str(layout)
    a = p.op(f"fp8.amax {v} layout<{lay}> : {ttype(shape, 'f32')} -> "
             f"{ttype(sshape, 'f32')}")
    s = p.op(f"fp8.compute_scale {a} recipe({recipe}) format({fmt}) : "
             f"{ttype(sshape, 'f32')} -> {ttype(sshape, scale_elt)}")
    q = p.op(f"fp8.quantize {v}, {s} layout<{lay}> : {ttype(shape, 'f32')}, "
             f"{ttype(sshape, scale_elt)} -> {ttype(shape, F8[fmt])}")
    d = p.op(f"fp8.dequantize {q}, {s} layout<{lay}> : {ttype(shape, F8[fmt])}, "
             f"{ttype(sshape, scale_elt)} -> {ttype(shape, 'f32')}")
    p.print_bits(a, sshape, "f32")
    p.print_bits(s, sshape, scale_elt)
    p.print_bits(q, shape, F8[fmt])
    p.print_bits(d, shape, "f32")
    amax = ref.amax(x, layout)
    sref = scale_ref(amax)
    sfmt = "e8m0" if scale_elt != "f32" else "f32"
    qref = ref.quantize(x, sref, layout, fmt, scale_fmt=sfmt)
    p.expect(f"{name} amax", "f32", amax)
    p.expect(f"{name} scale", "bits" if sfmt == "e8m0" else "f32", sref)
    p.expect(f"{name} q", "bits", qref)
    p.expect(f"{name} dequant", "f32",
             ref.dequantize(qref, sref, layout, fmt, scale_fmt=sfmt))


def case_current(p, rng):
    x = activations(rng, (16, 200))
    x[3, :] = 0.0                      # an all-zero row: amax 0 -> scale 1
    x[5, 7] = np.inf                   # an infinite row: scale 1, values saturate
    x[9, 1] = np.nan                   # NaN row
    for fmt in ("e4m3", "e5m2"):
        _scaled_quantize(p, x, "tensor", fmt, "#fp8.current",
                         scale_ref=lambda a, f=fmt: ref.current_scale(a, f),
                         name=f"current tensor {fmt}")
        _scaled_quantize(p, x, "row", fmt, "#fp8.current<eps = 1.0e-2, pow2 = true>",
                         scale_ref=lambda a, f=fmt: ref.current_scale(a, f, eps=1e-2, pow2=True),
                         name=f"current row {fmt}")
    x2 = activations(rng, (24, 8)) * np.float32(1e-3)
    _scaled_quantize(p, x2, "col", "e4m3", "#fp8.current",
                     scale_ref=lambda a: ref.current_scale(a, "e4m3"),
                     name="current col")


def case_block(p, rng):
    x = activations(rng, (130, 200))    # neither dimension divides 128
    x[0:1, 128:200] = 0.0               # an all-zero partial block
    for fmt in ("e4m3", "e5m2"):
        _scaled_quantize(p, x, (1, 128), fmt, "#fp8.block",
                         scale_ref=lambda a, f=fmt: ref.block_scale(a, f),
                         name=f"block 1x128 {fmt}")
        _scaled_quantize(p, x, (128, 128), fmt, "#fp8.block<pow2 = false>",
                         scale_ref=lambda a, f=fmt: ref.block_scale(a, f, pow2=False),
                         name=f"block 128x128 {fmt}")
    _scaled_quantize(p, x, (64,), "e4m3", "#fp8.block<eps = 1.0e-3>",
                     scale_ref=lambda a: ref.block_scale(a, "e4m3", eps=1e-3),
                     name="block 64 eps")


def case_mx(p, rng):
    x = activations(rng, (6, 100))      # 100 = 3 x 32 + 4: a partial block
    x[1, 0:32] = 0.0
    x[2, 40] = np.nan
    x[3, 70] = np.inf
    x[4, :] *= np.float32(1e-38)        # subnormal amaxes
    x[5, 33] = np.float32(3e38)
    for fmt in ("e4m3", "e5m2"):
        for rounding in ("rceil", "floor"):
            recipe = "#fp8.mxfp8" if rounding == "rceil" else "#fp8.mxfp8<rounding = floor>"
            _scaled_quantize(p, x, (1, 32), fmt, recipe, scale_elt="f8E8M0FNU",
                             scale_ref=lambda a, f=fmt, r=rounding: ref.mx_scale(a, f, r),
                             name=f"mx {rounding} {fmt}")


def case_delayed(p, rng):
    h = np.abs(rng.standard_normal((8, 6))).astype(np.float32) * np.float32(10)
    h[:, 0] = 0.0                       # never saw a value: keep previous
    h[2, 1] = np.nan                    # NaN in history: keep previous (max)
    h[0, 2] = np.inf                    # inf most recent
    h[0, 3] = 0.0                       # most recent zero, others not
    h[:, 4] = np.float32(1e-42)         # tiny amax: scale overflows to FLT_MAX
    prev = _f32([0.5, 0.25, 0.125, 1.0, 2.0, 3.0])
    amax_now = _f32([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    hv, hs = p.const_f32(h)
    pv, ps = p.const_f32(prev)
    av, _ = p.const_f32(amax_now)
    for algo, margin, pow2, fmt in (("max", 0, False, "e4m3"), ("most_recent", 2, False, "e4m3"),
                                    ("max", 1, True, "e5m2")):
        params = [f"history = 8"]
        if algo != "max":
            params.append(f"algo = {algo}")
        if margin:
            params.append(f"margin = {margin}")
        if pow2:
            params.append("pow2 = true")
        s = p.op(f"fp8.compute_scale {hv} previous {pv} recipe(#fp8.delayed<{', '.join(params)}>) "
                 f"format({fmt}) : {ttype(hs, 'f32')}, {ttype(ps, 'f32')} -> {ttype(ps, 'f32')}")
        p.print_bits(s, ps, "f32")
        p.expect(f"delayed {algo} m{margin} {fmt}", "f32",
                 ref.delayed_scale(h, prev, fmt, margin=margin, algo=algo, pow2=pow2))
    n = p.op(f"fp8.history_update {hv}, {av} : {ttype(hs, 'f32')}, {ttype(ps, 'f32')}")
    p.print_bits(n, hs, "f32")
    p.expect("history_update", "f32", ref.history_update(h, amax_now))


def case_matmul(p, rng, m=8, k=96, n=40):
    a = activations(rng, (m, k))
    w = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    for name, la, lw, recipe, selt, sfn in (
            ("tensor", "tensor", "tensor", "#fp8.current", "f32",
             lambda am, f: ref.current_scale(am, f)),
            ("block", (1, 32), (32, 32), "#fp8.block", "f32",
             lambda am, f: ref.block_scale(am, f)),
            ("mx", (1, 32), (1, 32), "#fp8.mxfp8", "f8E8M0FNU",
             lambda am, f: ref.mx_scale(am, f, "rceil"))):
        sfmt = "e8m0" if selt != "f32" else "f32"
        ops = []
        for x, lay in ((a, la), (w, lw)):
            v, shape = p.const_f32(x)
            sshape = ref.scale_shape(shape, lay)
            am = p.op(f"fp8.amax {v} layout<{layout_str(lay)}> : {ttype(shape, 'f32')} -> {ttype(sshape, 'f32')}")
            s = p.op(f"fp8.compute_scale {am} recipe({recipe}) format(e4m3) : {ttype(sshape, 'f32')} -> {ttype(sshape, selt)}")
            q = p.op(f"fp8.quantize {v}, {s} layout<{layout_str(lay)}> : {ttype(shape, 'f32')}, {ttype(sshape, selt)} -> {ttype(shape, F8['e4m3'])}")
            sr = sfn(ref.amax(x, lay), "e4m3")
            ops.append((q, s, shape, sshape, lay, ref.quantize(x, sr, lay, "e4m3", scale_fmt=sfmt), sr))
        (qa, sa, sha, ssa, lay_a, qar, sar), (qw, sw, shw, ssw, lay_w, qwr, swr) = ops
        bv, bs = p.const_f32(bias)
        y = p.op(f"fp8.scaled_matmul {qa}, {sa} layout<{layout_str(lay_a)}>, {qw}, {sw} layout<{layout_str(lay_w)}> "
                 f"bias {bv} transpose_rhs epilogue(gelu_erf) : ({ttype(sha, F8['e4m3'])}, {ttype(ssa, selt)}, "
                 f"{ttype(shw, F8['e4m3'])}, {ttype(ssw, selt)}, {ttype(bs, 'f32')}) -> {ttype((m, n), 'f32')}")
        p.print_bits(y, (m, n), "f32")
        da = ref.dequantize(qar, sar, lay_a, "e4m3", scale_fmt=sfmt).astype(np.float64)
        dw = ref.dequantize(qwr, swr, lay_w, "e4m3", scale_fmt=sfmt).astype(np.float64)
        z = da @ dw.T + bias
        from math import erf
        yref = 0.5 * z * (1 + np.vectorize(erf)(z / np.sqrt(2.0)))
        p.expect(f"scaled_matmul {name}", "close", yref.astype(np.float32), rtol=2e-5, atol=2e-5)


def case_matmul_odd(p, rng):
    """Shapes that no block divides (K = 100 with 32-blocks, N = 33)."""
    case_matmul(p, rng, m=7, k=100, n=33)


def case_transpose(p, rng):
    x = activations(rng, (192, 128))
    lay = (1, 128)
    v, shape = p.const_f32(x)
    sshape = ref.scale_shape(shape, lay)
    a = p.op(f"fp8.amax {v} layout<block 1x128> : {ttype(shape, 'f32')} -> {ttype(sshape, 'f32')}")
    s = p.op(f"fp8.compute_scale {a} recipe(#fp8.block) format(e4m3) : {ttype(sshape, 'f32')} -> {ttype(sshape, 'f32')}")
    q = p.op(f"fp8.quantize {v}, {s} layout<block 1x128> : {ttype(shape, 'f32')}, {ttype(sshape, 'f32')} -> {ttype(shape, F8['e4m3'])}")
    tshape = (128, 192)
    tss = ref.scale_shape(tshape, lay)
    t = p.op(f"fp8.transpose {q}, {s} layout<block 1x128> permutation = [1, 0] to layout<block 1x128> "
             f"recipe(#fp8.block) : {ttype(shape, F8['e4m3'])}, {ttype(sshape, 'f32')} -> "
             f"{ttype(tshape, F8['e4m3'])}, {ttype(tss, 'f32')}")
    p.print_bits(f"{t}#0", tshape, F8["e4m3"])
    p.print_bits(f"{t}#1", tss, "f32")
    # Reference: dequantize, transpose, re-quantize with fresh block scales.
    sref = ref.block_scale(ref.amax(x, lay), "e4m3")
    qref = ref.quantize(x, sref, lay, "e4m3")
    xt = np.ascontiguousarray(ref.dequantize(qref, sref, lay, "e4m3").T)
    st = ref.block_scale(ref.amax(xt, lay), "e4m3")
    p.expect("transpose q", "bits", ref.quantize(xt, st, lay, "e4m3"))
    p.expect("transpose scale", "f32", st)
    # A pass-through transpose (row -> col) only moves bytes.
    rs = ref.current_scale(ref.amax(x, "row"), "e4m3")
    rv, rshape = p.const_f32(rs)
    qr = p.op(f"fp8.quantize {v}, {rv} layout<row> : {ttype(shape, 'f32')}, {ttype(rshape, 'f32')} -> {ttype(shape, F8['e4m3'])}")
    t2 = p.op(f"fp8.transpose {qr}, {rv} layout<row> permutation = [1, 0] to layout<col> : "
              f"{ttype(shape, F8['e4m3'])}, {ttype(rshape, 'f32')} -> {ttype(tshape, F8['e4m3'])}, {ttype((1, 192), 'f32')}")
    p.print_bits(f"{t2}#0", tshape, F8["e4m3"])
    p.expect("transpose row->col", "bits",
             np.ascontiguousarray(ref.quantize(x, rs, "row", "e4m3").T))


def case_state(p, rng):
    """Delayed scaling across calls: the amax history and the previous scale
    live in ml_program globals, so each call of @step sees what the previous
    calls recorded (as a compiled model's state survives across runs)."""
    steps = [activations(rng, (64,)) * np.float32(f) for f in (1, 10, 0.1, 1, 1, 3)]
    steps[2][5] = np.inf      # an overflowing step: history holds inf
    steps[3][:] = 0.0         # an all-zero step
    steps[4][9] = np.nan      # NaN reaches the history
    hist_len = 4
    text = ["func.func private @printMemrefI32(memref<*xi32>)",
            f"ml_program.global private mutable @hist(dense<0.0> : tensor<{hist_len}xf32>) : tensor<{hist_len}xf32>",
            "ml_program.global private mutable @scale(dense<1.0> : tensor<f32>) : tensor<f32>",
            f"func.func @step(%x: tensor<64xf32>) -> (tensor<64xf8E4M3FN>, tensor<f32>, tensor<{hist_len}xf32>) {{",
            f"  %h = ml_program.global_load @hist : tensor<{hist_len}xf32>",
            "  %prev = ml_program.global_load @scale : tensor<f32>",
            f"  %s = fp8.compute_scale %h previous %prev recipe(#fp8.delayed<history = {hist_len}>) format(e4m3) "
            f": tensor<{hist_len}xf32>, tensor<f32> -> tensor<f32>",
            "  %q = fp8.quantize %x, %s layout<tensor> : tensor<64xf32>, tensor<f32> -> tensor<64xf8E4M3FN>",
            "  %a = fp8.amax %x layout<tensor> : tensor<64xf32> -> tensor<f32>",
            f"  %h2 = fp8.history_update %h, %a : tensor<{hist_len}xf32>, tensor<f32>",
            f"  ml_program.global_store @hist = %h2 : tensor<{hist_len}xf32>",
            "  ml_program.global_store @scale = %s : tensor<f32>",
            f"  return %q, %s, %h2 : tensor<64xf8E4M3FN>, tensor<f32>, tensor<{hist_len}xf32>",
            "}", "func.func @main() {"]
    h = np.zeros(hist_len, np.float32)
    prev = np.float32(1.0)
    for i, x in enumerate(steps):
        flat = ", ".join(f"0x{int(b):08X}" for b in x.view(np.uint32))
        text.append(f"  %x{i} = arith.constant dense<[{flat}]> : tensor<64xf32>")
        text.append(f"  %q{i}, %s{i}, %h{i} = call @step(%x{i}) : (tensor<64xf32>) -> "
                    f"(tensor<64xf8E4M3FN>, tensor<f32>, tensor<{hist_len}xf32>)")
        lines = []
        Program._print(lines, f"%q{i}", (64,), "f8E4M3FN", f"q{i}")
        Program._print(lines, f"%s{i}", (), "f32", f"s{i}")
        Program._print(lines, f"%h{i}", (hist_len,), "f32", f"h{i}")
        text += ["  " + l for l in lines]
        s_ref = ref.delayed_scale(h, prev, "e4m3")
        p.expect(f"step {i} q", "bits", ref.quantize(x, s_ref, "tensor", "e4m3"))
        p.expect(f"step {i} scale", "f32", s_ref)
        h = ref.history_update(h, ref.amax(x, "tensor"))
        p.expect(f"step {i} history", "f32", h)
        prev = s_ref
    text += ["  return", "}"]
    p.raw = "\n".join(text) + "\n"


def _bf16(x):
    """x rounded to BF16 (nearest even), as float32."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return b.astype(np.uint32).view(np.float32)


def attention_ref(q, k, v, scale, mask=None, causal=False, p_round=None):
    """fp8.attention's definition in float64 (docs/Dialect.md)."""
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    g = q.shape[1] // k.shape[1]
    k = np.repeat(k, g, axis=1)
    v = np.repeat(v, g, axis=1)
    s = scale * np.einsum("bhid,bhjd->bhij", q, k)
    if mask is not None:
        s = s + mask
    sq, skv = s.shape[2], s.shape[3]
    if causal:
        i = np.arange(sq)[:, None]
        j = np.arange(skv)[None, :]
        s = np.where(j > i + skv - sq, -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(m == -np.inf, 0.0, m)
    e = np.exp(s - m)
    l = e.sum(axis=-1, keepdims=True)
    p = np.where(l == 0, 0.0, e / np.where(l == 0, 1.0, l))
    if p_round is not None:
        p = p_round(p.astype(np.float32)).astype(np.float64)
    return np.einsum("bhij,bhjd->bhid", p, v)


def case_attention(p, rng):
    """fp8.attention lowered to linalg against its definition: grouped-query
    heads, a mask with -inf and a row that is all -inf (output 0), causal
    with Sq < Skv (a decode step), BF16 operands (probabilities rounded to
    BF16 before the P V product)."""
    b, hq, hkv, sq, skv, d, dv = 2, 4, 2, 5, 7, 16, 12
    q = rng.standard_normal((b, hq, sq, d)).astype(np.float32)
    k = rng.standard_normal((b, hkv, skv, d)).astype(np.float32)
    v = rng.standard_normal((b, hkv, skv, dv)).astype(np.float32)
    mask = (rng.standard_normal((b, 1, sq, skv)) * 2).astype(np.float32)
    mask[0, 0, 1, :] = -np.inf          # nothing to attend: 0
    mask[1, 0, 2, ::2] = -np.inf
    scale = np.float32(0.25)
    qv, qs = p.const_f32(q)
    kv, ks = p.const_f32(k)
    vv, vs = p.const_f32(v)
    mv, ms = p.const_f32(mask)
    t = lambda shape, elt="f32": ttype(shape, elt)
    out = (b, hq, sq, dv)
    o1 = p.op(f"fp8.attention {qv}, {kv}, {vv} mask {mv} scale(0.25) : "
              f"({t(qs)}, {t(ks)}, {t(vs)}, {t(ms)}) -> {t(out)}")
    p.print_bits(o1, out, "f32")
    p.expect("attention gqa mask", "close",
             attention_ref(q, k, v, scale, mask).astype(np.float32),
             rtol=2e-5, atol=2e-6)
    o2 = p.op(f"fp8.attention {qv}, {kv}, {vv} scale(0.25) causal : "
              f"({t(qs)}, {t(ks)}, {t(vs)}) -> {t(out)}")
    p.print_bits(o2, out, "f32")
    p.expect("attention causal decode", "close",
             attention_ref(q, k, v, scale, causal=True).astype(np.float32),
             rtol=2e-5, atol=2e-6)
    # sequence_major: the result is [B, Sq, Hq, Dv].
    out_sm = (b, sq, hq, dv)
    o4 = p.op(f"fp8.attention {qv}, {kv}, {vv} scale(0.25) causal sequence_major : "
              f"({t(qs)}, {t(ks)}, {t(vs)}) -> {t(out_sm)}")
    p.print_bits(o4, out_sm, "f32")
    p.expect("attention causal sequence-major", "close",
             attention_ref(q, k, v, scale, causal=True).transpose(0, 2, 1, 3)
             .astype(np.float32), rtol=2e-5, atol=2e-6)
    # BF16 operands (exact BF16 values) with an FP32 result.
    qb, kb, vb = _bf16(q), _bf16(k), _bf16(v)
    cq, _ = p.const_f32(qb)
    ck, _ = p.const_f32(kb)
    cv, _ = p.const_f32(vb)
    bq = p.op(f"arith.truncf {cq} : {t(qs)} to {t(qs, 'bf16')}")
    bk = p.op(f"arith.truncf {ck} : {t(ks)} to {t(ks, 'bf16')}")
    bv = p.op(f"arith.truncf {cv} : {t(vs)} to {t(vs, 'bf16')}")
    o3 = p.op(f"fp8.attention {bq}, {bk}, {bv} mask {mv} scale(0.25) causal : "
              f"({t(qs, 'bf16')}, {t(ks, 'bf16')}, {t(vs, 'bf16')}, {t(ms)}) -> {t(out)}")
    p.print_bits(o3, out, "f32")
    p.expect("attention bf16 causal mask", "close",
             attention_ref(qb, kb, vb, scale, mask, causal=True,
                           p_round=_bf16).astype(np.float32),
             rtol=2e-5, atol=2e-6)
    # The reference's own check that BF16 rounding matters here: without it
    # the result differs by more than FP32 rounding.
    assert np.abs(attention_ref(qb, kb, vb, scale, mask, causal=True) -
                  attention_ref(qb, kb, vb, scale, mask, causal=True,
                                p_round=_bf16)).max() > 1e-4


def case_attention_fp8(p, rng):
    """fp8.attention with FP8 operands: the definition on the dequantized
    q * sq, k * sk, v * sv (E4M3 bytes, decoded by the reference) with
    scales per tensor and per block of 4 positions of one (batch, head)
    (`scale_layout<block 4x16>`: 2 query blocks, 3 key/value blocks, the
    last ones partial), grouped-query heads, causal with Sq < Skv."""
    b, hq, hkv, sq, skv, d = 1, 4, 2, 6, 9, 16
    t = lambda shape, elt="f32": ttype(shape, elt)

    def fp8_bytes(shape):
        # Finite E4M3 codes (0x7F and 0xFF are NaN).
        bits = rng.randint(0, 0x7F, size=shape).astype(np.uint8)
        return bits | (rng.randint(0, 2, size=shape).astype(np.uint8) << 7)

    qb, kb, vb = fp8_bytes((b, hq, sq, d)), fp8_bytes((b, hkv, skv, d)), \
        fp8_bytes((b, hkv, skv, d))
    qf = ref.fp8_to_f32(qb, "e4m3").astype(np.float64)
    kf = ref.fp8_to_f32(kb, "e4m3").astype(np.float64)
    vf = ref.fp8_to_f32(vb, "e4m3").astype(np.float64)
    q8 = p.const_bits(qb, qb.shape, F8["e4m3"])
    k8 = p.const_bits(kb, kb.shape, F8["e4m3"])
    v8 = p.const_bits(vb, vb.shape, F8["e4m3"])
    out = (b, hq, sq, d)
    types = f"{t(qb.shape, F8['e4m3'])}, {t(kb.shape, F8['e4m3'])}, {t(vb.shape, F8['e4m3'])}"
    # Per tensor.
    scal = [np.float32(x) for x in (0.01, 0.02, 0.005)]
    cs = [p.const_f32(np.array(x, np.float32))[0] for x in scal]
    o1 = p.op(f"fp8.attention {q8}, {k8}, {v8} scales({cs[0]}, {cs[1]}, {cs[2]}) "
              f"scale(0.25) causal : ({types}, {t(())}, {t(())}, {t(())}) -> {t(out)}")
    p.print_bits(o1, out, "f32")
    p.expect("attention fp8 per tensor", "close",
             attention_ref(qf * scal[0], kf * scal[1], vf * scal[2], np.float32(0.25),
                           causal=True).astype(np.float32), rtol=2e-5, atol=2e-6)
    # Per block of 4 positions (scales differ by block and head).
    sqs = (rng.uniform(0.5, 2.0, (b, hq, 2, 1)) * 0.01).astype(np.float32)
    sks = (rng.uniform(0.5, 2.0, (b, hkv, 3, 1)) * 0.01).astype(np.float32)
    svs = (rng.uniform(0.5, 2.0, (b, hkv, 3, 1)) * 0.01).astype(np.float32)
    cq, _ = p.const_f32(sqs)
    ck, _ = p.const_f32(sks)
    cv, _ = p.const_f32(svs)
    o2 = p.op(f"fp8.attention {q8}, {k8}, {v8} scales({cq}, {ck}, {cv}) "
              f"scale_layout<block 4x16> scale(0.25) causal : ({types}, "
              f"{t(sqs.shape)}, {t(sks.shape)}, {t(svs.shape)}) -> {t(out)}")
    p.print_bits(o2, out, "f32")
    per_pos = lambda s, n: np.repeat(s, 4, axis=2)[:, :, :n, :].astype(np.float64)
    p.expect("attention fp8 per block", "close",
             attention_ref(qf * per_pos(sqs, sq), kf * per_pos(sks, skv),
                           vf * per_pos(svs, skv), np.float32(0.25),
                           causal=True).astype(np.float32), rtol=2e-5, atol=2e-6)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def build(case, fold=False):
    p = Program()
    CASES[case](p, np.random.RandomState(1234))
    # %vN#i names need the multi-result form in the op that defines them.
    text = getattr(p, "raw", None) or p.text(fold)
    text = re.sub(r"(%v\d+) = fp8\.transpose", r"\1:2 = fp8.transpose", text)
    return p, text


def parse_output(text):
    blocks = text.split("Unranked Memref")[1:]
    out = []
    for b in blocks:
        data = b.split("data =", 1)[1]
        out.append(np.array([int(t) for t in re.findall(r"-?\d+", data)], dtype=np.int64))
    return out


def check(case, path):
    p, _ = build(case)
    got = parse_output(open(path).read())
    if len(got) != len(p.expected):
        print(f"FAIL {case}: {len(got)} results printed, {len(p.expected)} expected")
        return 1
    failures = 0
    for raw, (name, kind, exp, kw) in zip(got, p.expected):
        exp = np.asarray(exp).reshape(-1)
        if kind == "bits":
            actual = raw.astype(np.uint8)
            bad = np.nonzero(actual != exp.astype(np.uint8))[0]
        else:
            actual = raw.astype(np.uint32).view(np.float32) if raw.dtype != np.uint32 else raw
            actual = (raw & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
            e = exp.astype(np.float32)
            if kind == "f32":
                same = (actual.view(np.uint32) == e.view(np.uint32)) | (np.isnan(actual) & np.isnan(e))
            else:
                same = np.isclose(actual, e, rtol=kw["rtol"], atol=kw["atol"])
            bad = np.nonzero(~same)[0]
        status = "ok" if bad.size == 0 else "FAIL"
        print(f"{status}: {case}: {name}: {exp.size} values, {bad.size} mismatches")
        if bad.size:
            failures += 1
            for i in bad[:8]:
                print(f"    [{i}] got {actual[i]!r} expected {exp[i]!r}")
    return 1 if failures else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "gen":
        sys.stdout.write(build(argv[1], fold="--fold" in argv)[1])
        return 0
    if len(argv) >= 3 and argv[0] == "check":
        return check(argv[1], argv[2])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
