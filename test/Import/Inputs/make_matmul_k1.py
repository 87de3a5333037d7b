"""Writes a graph with a MatMul whose K is 1 (the rotary embedding's
inv_freq @ positions: y1 = a[2, 64, 1] @ b[1, 1, 300], broadcast batch)
and one with K = 2 (y2 = c[2, 64, 2] @ d[2, 2, 300]):
make_matmul_k1.py OUT.onnx."""
import sys

from onnx import TensorProto, helper

f = TensorProto.FLOAT
graph = helper.make_graph(
    [helper.make_node("MatMul", ["a", "b"], ["y1"]),
     helper.make_node("MatMul", ["c", "d"], ["y2"])],
    "matmul_k1",
    [helper.make_tensor_value_info("a", f, [2, 64, 1]),
     helper.make_tensor_value_info("b", f, [1, 1, 300]),
     helper.make_tensor_value_info("c", f, [2, 64, 2]),
     helper.make_tensor_value_info("d", f, [2, 2, 300])],
    [helper.make_tensor_value_info("y1", f, [2, 64, 300]),
     helper.make_tensor_value_info("y2", f, [2, 64, 300])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
with open(sys.argv[1], "wb") as out:
    out.write(model.SerializeToString())
