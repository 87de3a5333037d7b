"""Writes attention as the MatMul -> Mul(scale) -> Softmax -> MatMul chain
an exporter emits for scaled_dot_product_attention (4 heads, 128 tokens,
head dim 128: a shape the fused GPU kernel serves, in BF16 and FP8):
make_attention.py OUT.onnx."""
import sys

from onnx import TensorProto, helper, numpy_helper
import numpy as np

shape = [1, 4, 128, 128]
graph = helper.make_graph(
    [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
     helper.make_node("MatMul", ["q", "kt"], ["s"]),
     helper.make_node("Mul", ["s", "scale"], ["ss"]),
     helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
     helper.make_node("MatMul", ["p", "v"], ["o"])],
    "attention",
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
     for n in ("q", "k", "v")],
    [helper.make_tensor_value_info("o", TensorProto.FLOAT, shape)],
    [numpy_helper.from_array(np.array(0.125, dtype=np.float32), "scale")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
