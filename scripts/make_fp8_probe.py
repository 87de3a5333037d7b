#!/usr/bin/python3
"""Writes the FP8 probe model: products whose FP8 operands are quantized
straight from the graph inputs, so that every target must compute exactly
the same FP8 bytes and scales for them (scripts/gpu-check compares the CPU
and GPU libraries' exposed quantized tensors bit for bit; see
fp8-compile --expose-quantized).

usage: make_fp8_probe.py OUT_DIR
  OUT_DIR/model.onnx            (protoc --encode of a ModelProto text)
  OUT_DIR/test_data_set_0/input_*.pb

Shapes do not divide the 128/32 blocks (but the long rows of "e" and "f"); the inputs hold zeros, FP8
subnormals, values beyond 448 and 57344, +-inf, NaN, and rows of wildly
different scales, so that amax, scale and saturation edge cases all occur.
Compile with --keep-first-last=false (every product is first or last).
"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_tensor import write_tensor  # noqa: E402

# (name, M, K, N, op): op is MatMul (weight K x N) or Gemm (transB, bias).
PRODUCTS = [
    ("a", 37, 200, 72, "MatMul"),
    ("b", 64, 256, 128, "MatMul"),
    ("c", 5, 96, 40, "Gemm"),
    ("d", 130, 160, 96, "MatMul"),
    # Few long rows (a decode step's FFN activation): the GPU gives each
    # row 16 warps of one block (wide rows), whose totals meet in shared
    # memory.
    ("e", 3, 14336, 16, "MatMul"),
    # A decode step's norm output: 1 row of 4096, wide too; M = 1 pads the
    # M-major scales to 4 (undefined padding, written in the row's kernel).
    ("f", 1, 4096, 24, "MatMul"),
]


def special_input(rng, m, k, variant):
    x = rng.standard_normal((m, k)).astype(np.float32)
    # Row scales from 2^-20 to 2^20: per-row/block scales must differ.
    x *= np.exp2(rng.integers(-20, 21, size=(m, 1))).astype(np.float32)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=min(flat.size, 64), replace=False)
    specials = np.array([0.0, -0.0, 1e-9, -3e-8, 2.0**-9, 447.9, 448.0, 464.0,
                         500.0, -1e6, 57344.0, 61440.0, 7e4], np.float32)
    flat[picks[: len(specials)]] = specials
    if variant == "b":  # inf and NaN make amax NaN/inf: the scale falls back
        flat[picks[-1]] = np.inf
        flat[picks[-2]] = -np.inf
    if variant == "d":
        flat[picks[-1]] = np.nan
    return x


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    data = os.path.join(out, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    rng = np.random.default_rng(8)
    lines = []
    for i, (name, m, k, n, op) in enumerate(PRODUCTS):
        x = special_input(rng, m, k, name)
        write_tensor(os.path.join(data, f"input_{i}.pb"), x, f"x_{name}")
        w = (rng.standard_normal((n, k) if op == "Gemm" else (k, n)) * 0.05)
        w = w.astype(np.float32)
        lines.append(
            f'  initializer {{ {" ".join(f"dims: {d}" for d in w.shape)} '
            f'data_type: 1 name: "w_{name}" raw_data: "'
            + "".join(f"\\{b:03o}" for b in w.tobytes()) + '" }')
        ins = f'input: "x_{name}" input: "w_{name}"'
        attrs = ""
        if op == "Gemm":
            bias = rng.standard_normal(n).astype(np.float32)
            lines.append(
                f'  initializer {{ dims: {n} data_type: 1 name: "b_{name}" '
                'raw_data: "' + "".join(f"\\{b:03o}" for b in bias.tobytes())
                + '" }')
            ins += f' input: "b_{name}"'
            attrs = 'attribute { name: "transB" type: INT i: 1 }'
        lines.append(f'  node {{ {ins} output: "y_{name}" op_type: "{op}" '
                     f'name: "{op.lower()}_{name}" {attrs} }}')
        lines.append(f'  input {{ name: "x_{name}" type {{ tensor_type {{ '
                     f'elem_type: 1 shape {{ dim {{ dim_value: {m} }} '
                     f'dim {{ dim_value: {k} }} }} }} }} }}')
        lines.append(f'  output {{ name: "y_{name}" type {{ tensor_type {{ '
                     f'elem_type: 1 shape {{ dim {{ dim_value: {m} }} '
                     f'dim {{ dim_value: {n} }} }} }} }} }}')
    text = ('ir_version: 8\nopset_import { domain: "" version: 17 }\n'
            'graph {\n  name: "fp8_probe"\n' + "\n".join(lines) + "\n}\n")
    model = subprocess.run(
        ["protoc", "--encode=onnx.ModelProto", "-I/usr/include",
         "/usr/include/onnx/onnx.proto"],
        input=text.encode(), capture_output=True, check=True).stdout
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model)


if __name__ == "__main__":
    main()
