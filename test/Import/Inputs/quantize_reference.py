#!/usr/bin/env python3
"""Execution check of QuantizeLinear/DequantizeLinear (opset 21) against a
numpy reference written from the ONNX operator spec, independently of the
importer.

    quantize_reference.py gen DIR    writes DIR/model.txtpb, DIR/data/input_N.pb
                                     and DIR/ref/output_N.pb
    quantize_reference.py check DIR  compares DIR/out/output_N.pb (fp8-run
                                     --save) with DIR/ref/output_N.pb

Integers: y = saturate(round_half_even(x / scale) + zero_point).
float8 (E4M3FN, E5M2): y = cast(x / scale) by the Cast table: round to
nearest even; saturate=1 clamps to +-max (infinities too); saturate=0 gives
NaN (E4M3FN) or +-inf (E5M2) for infinities and values that round above the
largest finite one. NaN stays NaN (any NaN encoding matches).
Scales per tensor, per axis, and blocked (block_size, the scale's `axis` dim
is ceil(dim / block_size), so the last block may be partial).
"""
import os
import sys

import numpy as np
import onnx


E4M3FN, E5M2 = 17, 19


def f8_value(code, fmt):
    """float value of an FP8 encoding (NaN/inf as such)."""
    sign = -1.0 if code & 0x80 else 1.0
    if fmt == E4M3FN:
        e, m = (code >> 3) & 0xF, code & 7
        if e == 15 and m == 7:
            return np.nan
        v = m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)
    else:
        e, m = (code >> 2) & 0x1F, code & 3
        if e == 31:
            return sign * np.inf if m == 0 else np.nan
        v = m / 4 * 2.0 ** -14 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15)
    return sign * v


def f8_encode(x, fmt, saturate):
    """ONNX Cast float32 -> FP8 for one value; returns the code."""
    x = float(x)
    sign = 0x80 if np.signbit(x) else 0
    nan = 0x7F
    max_code = 0x7E if fmt == E4M3FN else 0x7B
    over = nan if fmt == E4M3FN else 0x7C  # NaN, or inf for E5M2
    if np.isnan(x):
        return nan
    mag = abs(x)
    if np.isinf(mag):
        return sign | (max_code if saturate else over)
    if saturate:
        mag = min(mag, f8_value(max_code, fmt))
    # Positive finite codes in order, plus the next step above the largest
    # (not representable: it stands for "overflow") for ties to even.
    codes = list(range(0, max_code + 1)) + [max_code + 1]
    vals = [f8_value(c, fmt) for c in codes[:-1]]
    m = f8_value(max_code, fmt)
    step = m - f8_value(max_code - 1, fmt)
    vals.append(m + step)
    best = None
    for c, v in zip(codes, vals):
        d = abs(mag - v)
        if best is None or d < best[0] or (d == best[0] and c % 2 == 0):
            best = (d, c, v)
    if mag > vals[-1] or best[1] == max_code + 1:
        return sign | over
    return sign | best[1]


def expand(scale, shape, axis, block):
    """The scale broadcast to `shape` (per tensor, per axis or blocked)."""
    scale = np.asarray(scale)
    if scale.ndim == 0:
        return np.broadcast_to(scale, shape)
    if not block:
        dims = [1] * len(shape)
        dims[axis] = scale.size
        return np.broadcast_to(scale.reshape(dims), shape)
    rep = np.repeat(scale, block, axis=axis)
    return np.take(rep, range(shape[axis]), axis=axis)


def quantize(x, scale, zp, qtype, axis=1, block=0, saturate=True):
    s = expand(scale, x.shape, axis, block).astype(np.float32)
    v = (x.astype(np.float32) / s).astype(np.float32)
    if qtype in (E4M3FN, E5M2):
        return np.vectorize(lambda t: f8_encode(t, qtype, saturate),
                            otypes=[np.uint8])(v)
    lo, hi, npt = {2: (0, 255, np.uint8), 3: (-128, 127, np.int8)}[qtype]
    r = np.rint(v).astype(np.float64)
    if zp is not None:
        r = r + expand(zp, x.shape, axis, block)
    return np.clip(r, lo, hi).astype(npt)


def dequantize(q, scale, zp, qtype, axis=1, block=0):
    s = expand(scale, q.shape, axis, block).astype(np.float32)
    if qtype in (E4M3FN, E5M2):
        v = np.vectorize(lambda c: f8_value(int(c), qtype))(q).astype(np.float32)
    else:
        v = q.astype(np.float32)
        if zp is not None:
            v = (v - expand(zp, q.shape, axis, block).astype(np.float32))
    return (v * s).astype(np.float32)


def initializer(name, a, dtype):
    field = "float_data" if dtype == 1 else "int32_data"
    vals = " ".join(f"{field}: {float(v) if dtype == 1 else int(v)!r}"
                    for v in a.ravel())
    shape = " ".join(f"dims: {d}" for d in a.shape)
    return f'  initializer {{ {shape} data_type: {dtype} name: "{name}" {vals} }}'


def node(op, ins, out, attrs):
    a = " ".join(f'attribute {{ name: "{k}" type: INT i: {v} }}' for k, v in attrs)
    i = " ".join(f'input: "{n}"' for n in ins)
    return f'  node {{ {i} output: "{out}" op_type: "{op}" name: "{out}" {a} }}'


def value_info(kind, name, shape, dtype=1):
    dims = " ".join(f"dim {{ dim_value: {d} }}" for d in shape)
    return (f'  {kind} {{ name: "{name}" type {{ tensor_type {{ elem_type: {dtype} '
            f'shape {{ {dims} }} }} }} }}')


# TensorProto files through onnx (not through scripts/onnx_tensor.py, so
# that the check does not depend on other scripts' internals). ONNX 1.12 has
# no float8 types: data_type and raw_data are set by hand.
NP_TYPES = {1: np.float32, 2: np.uint8, 3: np.int8, E4M3FN: np.uint8, E5M2: np.uint8}


def encode(array, name, dtype):
    """TensorProto bytes; float8 arrays hold the uint8 encodings."""
    raw = np.ascontiguousarray(array, dtype=NP_TYPES[dtype]).tobytes()
    tensor = onnx.TensorProto(dims=array.shape, data_type=dtype, name=name, raw_data=raw)
    return tensor.SerializeToString()


def cases():
    rng = np.random.default_rng(21)
    x = (rng.standard_normal((4, 10)) * 3).astype(np.float32)
    x[0, :4] = [0.5, 1.5, 2.5, -2.5]           # ties (scale 1 below)
    x[1, :3] = [1000.0, -1000.0, 0.0]          # clamps
    # Specials for FP8: overflow thresholds at scale 1, inf, NaN, -0, tiny.
    xs = np.array([[448.0, 463.9, 464.0, 464.1, 480.0, 1e6, -470.0, np.inf],
                   [-np.inf, np.nan, -0.0, 1e-9, 57344.0, 61439.0, 61440.0, -7e4],
                   [0.0013, -0.0019, 3.3, -17.25, 240.0, 250.0, 5e-3, 1.0]],
                  dtype=np.float32)
    one = np.array(1.0, np.float32)
    sb_i8 = (rng.uniform(0.05, 0.3, (4, 3))).astype(np.float32)      # axis 1, B 4
    zb_i8 = rng.integers(-10, 10, (4, 3)).astype(np.int8)
    sb_u8 = (rng.uniform(0.02, 0.1, (2, 10))).astype(np.float32)     # axis 0, B 3
    zb_u8 = rng.integers(100, 150, (2, 10)).astype(np.uint8)
    sb_f8 = np.array([[0.5, 2.0], [1.0, 0.25], [4.0, 1.0]], np.float32)  # xs axis 1, B 5
    sa_i8 = np.array([0.1, 0.2, 1.0, 0.05], np.float32)              # per axis 0
    za_i8 = np.array([1, -2, 0, 3], np.int8)
    # name, input, scale, zp, qtype, axis, block, saturate
    return dict(x=x, xs=xs), [
        ("QT_U8", "X", np.array(0.25, np.float32), np.array(128, np.uint8), 2, 1, 0, 1),
        ("QA_I8", "X", sa_i8, za_i8, 3, 0, 0, 1),
        ("QB_I8", "X", sb_i8, zb_i8, 3, 1, 4, 1),
        ("QB_U8", "X", sb_u8, zb_u8, 2, 0, 3, 1),
        ("QB_E4", "XS", sb_f8, None, E4M3FN, 1, 5, 1),
        ("QB_E4N", "XS", sb_f8, None, E4M3FN, 1, 5, 0),
        ("QT_E5", "XS", one, None, E5M2, 1, 0, 1),
        ("QT_E5N", "XS", one, None, E5M2, 1, 0, 0),
        ("QT_E4N", "XS", one, None, E4M3FN, 1, 0, 0),
        ("QB_E5", "X", sb_i8, None, E5M2, 1, 4, 1),
    ]


TYPE_NAMES = {2: "uint8", 3: "int8", E4M3FN: "float8e4m3fn", E5M2: "float8e5m2"}


def gen(out_dir):
    """DIR/model.txtpb (ModelProto text format, for protoc --encode: the
    ONNX text syntax of the installed parser has no float8 types), DIR/data
    with the inputs and the reference outputs, DIR/names.txt."""
    inputs, qs = cases()
    os.makedirs(os.path.join(out_dir, "data"), exist_ok=True)
    lines, outs, refs = [], [], []
    for name, src, scale, zp, qt, axis, block, sat in qs:
        x = inputs[src.lower()]
        lines.append(initializer(name + "_s", scale, 1))
        ins = [src, name + "_s"]
        attrs = [("axis", axis), ("saturate", sat)]
        if block:
            attrs.append(("block_size", block))
        if zp is not None:
            lines.append(initializer(name + "_z", zp, qt))
            ins.append(name + "_z")
        else:
            attrs.append(("output_dtype", qt))
        dq_attrs = [(k, v) for k, v in attrs if k in ("axis", "block_size")]
        lines.append(node("QuantizeLinear", ins, name, attrs))
        lines.append(node("DequantizeLinear", [name] + ins[1:], name + "_D", dq_attrs))
        outs += [(name, x.shape, qt), (name + "_D", x.shape, 1)]
        q = quantize(x, scale, zp, qt, axis, block, sat)
        refs.append((name, q, qt))
        refs.append((name + "_D", dequantize(q, scale, zp, qt, axis, block), 1))
    x, xs = inputs["x"], inputs["xs"]
    lines.append(value_info("input", "X", x.shape))
    lines.append(value_info("input", "XS", xs.shape))
    lines += [value_info("output", n, shp, dt) for n, shp, dt in outs]
    model = ('ir_version: 10\nopset_import { domain: "" version: 21 }\n'
             'graph {\n  name: "qdq"\n' + "\n".join(lines) + "\n}\n")
    with open(os.path.join(out_dir, "model.txtpb"), "w") as f:
        f.write(model)
    data = os.path.join(out_dir, "data")
    for i, (n, a) in enumerate([("X", x), ("XS", xs)]):
        with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
            f.write(encode(a, n, 1))
    ref = os.path.join(out_dir, "ref")
    os.makedirs(ref, exist_ok=True)
    for i, (n, a, qt) in enumerate(refs):
        blob = encode(a, n, qt)
        with open(os.path.join(ref, f"output_{i}.pb"), "wb") as f:
            f.write(blob)
    with open(os.path.join(out_dir, "names.txt"), "w") as f:
        f.write("\n".join(f"{n} {qt}" for n, _, qt in refs) + "\n")


def raw_of(path):
    """(dims, data_type, raw bytes) of a TensorProto file with raw_data."""
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return list(tensor.dims), tensor.data_type, tensor.raw_data


def decode(dtype, raw):
    if dtype in (E4M3FN, E5M2):
        return np.array([f8_value(c, dtype) for c in raw], np.float64)
    return np.frombuffer(raw, {1: np.float32, 2: np.uint8, 3: np.int8}[dtype]).astype(np.float64)


def check(out_dir):
    names = [line.split() for line in open(os.path.join(out_dir, "names.txt"))]
    bad = 0
    for i, (name, _) in enumerate(names):
        wd, wt, wraw = raw_of(os.path.join(out_dir, "ref", f"output_{i}.pb"))
        gd, gt, graw = raw_of(os.path.join(out_dir, "out", f"output_{i}.pb"))
        want, got = decode(wt, wraw), decode(gt, graw)
        same = (wd == gd and wt == gt and want.shape == got.shape and
                np.array_equal(want, got, equal_nan=True))
        if wt in (E4M3FN, E5M2) and same:
            # Bit-exact but for NaN payloads; the sign of zero counts.
            same = all(a == b or (np.isnan(f8_value(a, wt)) and np.isnan(f8_value(b, wt)))
                       for a, b in zip(wraw, graw))
        print(f"{name} {'x'.join(map(str, wd))} {'exact' if same else 'MISMATCH'}")
        if not same:
            bad += 1
            print("  want", want.tolist())
            print("  got ", got.tolist())
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("gen", "check"):
        raise SystemExit(__doc__)
    sys.exit(gen(sys.argv[2]) if sys.argv[1] == "gen" else check(sys.argv[2]))
