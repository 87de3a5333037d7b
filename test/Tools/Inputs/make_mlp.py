"""Writes a small two-layer MLP (MatMul-Relu-MatMul-Add, seeded random
weights of 8-32 KB, so that --weights=external moves them out) and an ONNX
test folder whose reference output is computed here in numpy:
make_mlp.py OUTDIR -> OUTDIR/mlp.onnx, OUTDIR/data/{input_0,output_0}.pb;
also OUTDIR/mlp-ext.onnx, the same model with its initializers in the
external data file OUTDIR/mlp-ext.data."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(12)
w1 = (rng.standard_normal((64, 128)) * 0.1).astype(np.float32)
w2 = (rng.standard_normal((128, 32)) * 0.1).astype(np.float32)
b2 = (rng.standard_normal(32) * 0.1).astype(np.float32)
x = rng.standard_normal((16, 64)).astype(np.float32)

graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w1"], ["h"]),
     helper.make_node("Relu", ["h"], ["r"]),
     helper.make_node("MatMul", ["r", "w2"], ["y0"]),
     helper.make_node("Add", ["y0", "b2"], ["y"])],
    "mlp",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 32])],
    [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"),
     numpy_helper.from_array(b2, "b2")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, os.path.join(out, "mlp.onnx"))
onnx.save(model, os.path.join(out, "mlp-ext.onnx"), save_as_external_data=True,
          all_tensors_to_one_file=True, location="mlp-ext.data",
          size_threshold=0)
os.makedirs(os.path.join(out, "data"), exist_ok=True)
y = np.maximum(x @ w1, 0) @ w2 + b2
for name, value in (("input_0", x), ("output_0", y)):
    with open(os.path.join(out, "data", name + ".pb"), "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())
