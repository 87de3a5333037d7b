#!/usr/bin/env python3
"""Writes an opset-12 model of Softmax, LogSoftmax and Hardmax (versions 11:
the input coerced to 2-D at `axis`) on every axis, between ops that ONNX's
version converter rewrites for opset 13 (Unsqueeze's and ReduceSum's axes
attributes), and a template test-data folder for make_random_testdata.py.

    opset12_softmax.py OUT_DIR    (writes OUT_DIR/model.onnx, OUT_DIR/test_data_set_0/)
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
from onnx_tensor import write_tensor  # noqa: E402


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
    nodes, outputs = [], []

    def out_of(op, name, inp, shape, **attrs):
        nodes.append(helper.make_node(op, [inp], [name], **attrs))
        if shape is not None:
            outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))

    s = [2, 3, 4]
    # Every axis of a rank-3 input, negative ones and the defaults (axis 1).
    for op in ("Softmax", "LogSoftmax", "Hardmax"):
        for axis in (0, 1, 2, -1, -2, None):
            name = "%s_%s" % (op, "default" if axis is None else str(axis).replace("-", "m"))
            attrs = {} if axis is None else {"axis": axis}
            out_of(op, name, "X", s, **attrs)
    # Between converted ops: Unsqueeze <axes> -> Softmax -> ReduceSum <axes>,
    # and a Softmax of a Softmax.
    nodes.append(helper.make_node("Unsqueeze", ["X"], ["U"], axes=[1]))
    out_of("Softmax", "SU", "U", None, axis=2)
    nodes.append(helper.make_node("ReduceSum", ["SU"], ["R"], axes=[1], keepdims=0))
    outputs.append(helper.make_tensor_value_info("R", TensorProto.FLOAT, s))
    out_of("Softmax", "SS1", "X", None, axis=1)
    out_of("LogSoftmax", "SS2", "SS1", s, axis=0)

    graph = helper.make_graph(nodes, "opset12_softmax",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, s)],
                              outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 7
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    write_tensor(os.path.join(out, "test_data_set_0", "input_0.pb"),
                 np.zeros(s, np.float32), name="X")
    print("opset12_softmax: %d nodes, %d outputs" % (len(nodes), len(outputs)))


if __name__ == "__main__":
    main()
