#!/usr/bin/env python3
"""Writes an opset-20 model of ReduceMax and ReduceMin over bool inputs
(ReduceMax-20: any, ReduceMin-20: all) and over uint8 inputs (compared
unsigned, and still unsigned after the reduction: a Cast to float),
and a template test-data folder for make_random_testdata.py (uint8 values
from --vocab 256).

    reduce_unsigned.py OUT_DIR    (writes OUT_DIR/model.onnx, OUT_DIR/test_data_set_0/)
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
    s = [3, 8]
    sb = [8, 2]  # rows of two bits: all of any/all's cases appear
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
    nodes = [
        helper.make_node("ReduceMax", ["B", "axes"], ["BMax"], keepdims=0),
        helper.make_node("ReduceMin", ["B", "axes"], ["BMin"], keepdims=0),
        helper.make_node("ReduceMax", ["B"], ["BMaxAll"], keepdims=0),
        helper.make_node("ReduceMax", ["U", "axes"], ["UMax"]),
        helper.make_node("ReduceMin", ["U", "axes"], ["UMin"]),
        helper.make_node("Cast", ["UMax"], ["UMaxF"], to=TensorProto.FLOAT),
    ]
    outputs = [
        helper.make_tensor_value_info("BMax", TensorProto.BOOL, [8]),
        helper.make_tensor_value_info("BMin", TensorProto.BOOL, [8]),
        helper.make_tensor_value_info("BMaxAll", TensorProto.BOOL, []),
        helper.make_tensor_value_info("UMax", TensorProto.UINT8, [3, 1]),
        helper.make_tensor_value_info("UMin", TensorProto.UINT8, [3, 1]),
        helper.make_tensor_value_info("UMaxF", TensorProto.FLOAT, [3, 1]),
    ]
    graph = helper.make_graph(
        nodes, "reduce_unsigned",
        [helper.make_tensor_value_info("B", TensorProto.BOOL, sb),
         helper.make_tensor_value_info("U", TensorProto.UINT8, s)],
        outputs, [axes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    with open(os.path.join(out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    write_tensor(os.path.join(out, "test_data_set_0", "input_0.pb"),
                 np.zeros(sb, np.bool_), name="B")
    write_tensor(os.path.join(out, "test_data_set_0", "input_1.pb"),
                 np.zeros(s, np.uint8), name="U")
    print("reduce_unsigned: %d nodes, %d outputs" % (len(nodes), len(outputs)))


if __name__ == "__main__":
    main()
