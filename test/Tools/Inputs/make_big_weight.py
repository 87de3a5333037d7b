"""Writes big.onnx: y = x @ W with W an 8192x16384 float16 initializer (256
MiB) in the external data file big.data, which is sparse (all zeros, no
disk blocks): make_big_weight.py OUTDIR. For the test that the compiler
never reads weights larger than --weights-read-limit."""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
n, m = 8192, 16384
w = onnx.TensorProto()
w.name, w.data_type = "W", TensorProto.FLOAT16
w.dims.extend([n, m])
w.data_location = TensorProto.EXTERNAL
for key, value in (("location", "big.data"), ("offset", "0"),
                   ("length", str(n * m * 2))):
    entry = w.external_data.add()
    entry.key, entry.value = key, value
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "W"], ["y"])], "big",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, n])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, m])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, os.path.join(out, "big.onnx"))
with open(os.path.join(out, "big.data"), "wb") as f:
    f.truncate(n * m * 2)
