"""Models and runs for index-checks-edge.test (onnx.helper; fp8rt)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

mode, tmp = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(here)), "runtime", "python")]


def save(name, nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(tmp, name + ".onnx"))


def tensor(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


D = numpy_helper.from_array(np.arange(4, dtype=np.float32) * 10, "D")
A = numpy_helper.from_array(np.array([0, 1, 2, 9], np.int64), "A")
if mode == "make":
    # 5000 constant indices (beyond the folder's 4096), one out of range.
    idx = np.zeros(5000, np.int64)
    idx[4321] = 99
    save("const_big", [helper.make_node("Gather", ["D", "C"], ["Y"], name="g")],
         [tensor("X", TensorProto.FLOAT, [1])], [tensor("Y", TensorProto.FLOAT, [5000])],
         [D, numpy_helper.from_array(idx, "C")])
    save("bool", [helper.make_node("Gather", ["D", "B"], ["Y"], name="g")],
         [tensor("B", TensorProto.BOOL, [3])], [tensor("Y", TensorProto.FLOAT, [3])], [D])
    save("unsigned", [helper.make_node("GatherElements", ["D", "U"], ["Y"], name="ge")],
         [tensor("U", TensorProto.UINT64, [1])], [tensor("Y", TensorProto.FLOAT, [1])], [D])
    # J = Gather(A, I) holds A's values (9 among them); the second Gather's
    # indices are J, not I: no graph input is named.
    save("chained", [helper.make_node("Gather", ["A", "I"], ["J"], name="g1"),
                     helper.make_node("Gather", ["D", "J"], ["Y"], name="g2")],
         [tensor("I", TensorProto.INT64, [3])], [tensor("Y", TensorProto.FLOAT, [3])], [A, D])
    save("newline", [helper.make_node("Gather", ["D", "I"], ["Y"], name="bad\nname")],
         [tensor("I", TensorProto.INT64, [2])], [tensor("Y", TensorProto.FLOAT, [2])], [D])
    save("scalar", [helper.make_node("Gather", ["D", "I"], ["Y"], name="g")],
         [tensor("I", TensorProto.INT64, [])], [tensor("Y", TensorProto.FLOAT, [])], [D])
    W = numpy_helper.from_array(np.ones((4, 4), np.float32), "W")
    C = numpy_helper.from_array(np.full((2, 4), 0.5, np.float32), "C")
    for name, order in (("sub_xc", ["X", "C"]), ("sub_cx", ["C", "X"])):
        save(name, [helper.make_node("Sub", order, ["S"]),
                    helper.make_node("MatMul", ["S", "W"], ["Y"])],
             [tensor("X", TensorProto.FLOAT, [2, 4])], [tensor("Y", TensorProto.FLOAT, [2, 4])],
             [W, C])
    sys.exit(0)

import fp8rt  # noqa: E402


def attempt(label, f):
    try:
        print(f"{label}: ok {f()}")
    except fp8rt.Error as e:
        print(f"{label}: {e}")


lib = lambda name: fp8rt.Model(os.path.join(tmp, name + ".so"))
m = lib("unsigned")
attempt("unsigned 3", lambda: m.run(np.array([3], np.uint64))[0].tolist())
attempt("unsigned 2^64-1", lambda: m.run(np.array([2**64 - 1], np.uint64)))
m = lib("chained")
attempt("chained", lambda: m.run(np.array([1, 2, 3], np.int64)))
m = lib("newline")
attempt("newline", lambda: m.run(np.array([0, 4], np.int64)))
m = lib("scalar")
attempt("scalar 2", lambda: m.run(np.array(2, np.int64))[0].item())
attempt("scalar 7", lambda: m.run(np.array(7, np.int64)))
a, b = lib("sub_xc"), lib("sub_cx")
x = np.ones((2, 4), np.float32)
b.run(x)
b.save_state(os.path.join(tmp, "sub_cx.state"))
attempt("state of Sub(C, X) into Sub(X, C)",
        lambda: a.load_state(os.path.join(tmp, "sub_cx.state")))
