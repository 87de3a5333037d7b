"""Writes an FP16 gated MLP whose three products read one input (a decoder
layer's gate, up and v projections: sibling products that
fp8-merge-sibling-products makes one GEMM), weights in external data:
make_siblings.py OUTDIR -> OUTDIR/siblings.onnx + siblings.data,
OUTDIR/data/{input_0,output_0}.pb. N = 256, 256 and 128: whole 128-row
blocks. The reference output is numpy's FP32 result rounded to FP16 (the
tests compare builds with each other bit for bit, and with it loosely)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)
w = {name: (rng.standard_normal(shape) * 0.05).astype(np.float16)
     for name, shape in (("wg", (256, 256)), ("wu", (256, 256)),
                         ("wv", (256, 128)), ("wd", (256, 128)))}
# An outlier and a tiny block: the weights' scales differ per channel and
# per block, so a part's scales in the wrong place would show.
w["wu"][3, 5] = 4.0
w["wv"][:128, :64] *= np.float16(1e-3)
x = rng.standard_normal((32, 256)).astype(np.float16)

graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "wg"], ["g"]),
     helper.make_node("MatMul", ["x", "wu"], ["u"]),
     helper.make_node("MatMul", ["x", "wv"], ["v"]),
     helper.make_node("Sigmoid", ["g"], ["sg"]),
     helper.make_node("Mul", ["g", "sg"], ["silu"]),
     helper.make_node("Mul", ["silu", "u"], ["h"]),
     helper.make_node("MatMul", ["h", "wd"], ["d"]),
     helper.make_node("Add", ["d", "v"], ["y"])],
    "siblings",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [32, 256])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [32, 128])],
    [numpy_helper.from_array(v, k) for k, v in w.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, os.path.join(out, "siblings.onnx"),
          save_as_external_data=True, all_tensors_to_one_file=True,
          location="siblings.data", size_threshold=0)
f = {k: v.astype(np.float32) for k, v in w.items()}
xf = x.astype(np.float32)
g = xf @ f["wg"]
y = ((g / (1 + np.exp(-g))) * (xf @ f["wu"])) @ f["wd"] + xf @ f["wv"]
data = os.path.join(out, "data")
os.makedirs(data, exist_ok=True)
for name, value in (("input_0", x), ("output_0", y.astype(np.float16))):
    with open(os.path.join(data, name + ".pb"), "wb") as fh:
        fh.write(numpy_helper.from_array(value, name).SerializeToString())
