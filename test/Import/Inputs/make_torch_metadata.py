"""Writes torch-module-names.test's model: four MatMuls (x[2,8] times a
constant [8,8]) whose NodeProtos carry metadata_props as torch.onnx's
dynamo exporter writes them. ONNX 1.12 has no metadata_props (NodeProto
field 9, ONNX 1.16), so the entries are appended to each node's bytes as
that field, as a newer onnx would serialize them.

    make_torch_metadata.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number, payload):
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def with_metadata(node, props):
    data = node.SerializeToString()
    for key, value in props:
        entry = onnx.StringStringEntryProto(key=key, value=value)
        data += field(9, entry.SerializeToString())
    out = onnx.NodeProto()
    out.ParseFromString(data)
    return out


SCOPES, CLASSES = "pkg.torch.onnx.name_scopes", "pkg.torch.onnx.class_hierarchy"
nodes = [
    # A linear layer: its module path and class.
    ("mm_down", [(SCOPES, "['', 'model', 'model.layers.0', 'model.layers.0.mlp', "
                          "'model.layers.0.mlp.down_proj', 'linear']"),
                 (CLASSES, "['__main__.Wrap', 'x.LlamaModel', 'x.LlamaDecoderLayer', "
                           "'x.LlamaMLP', 'torch.nn.modules.linear.Linear', "
                           "'aten.linear.default']"),
                 ("pkg.torch.onnx.stack_trace", "File \"x.py\", line 1")]),
    # Quotes as repr() writes them; no class hierarchy.
    ("mm_quote", [(SCOPES, "['', \"m.it's\", 'matmul']")]),
    # Only the root module: nothing to keep.
    ("mm_root", [(SCOPES, "['', 'matmul_2']"), (CLASSES, "['M', 'aten.mm']")]),
    # Not a list; and class lists of another length are ignored.
    ("mm_bad", [(SCOPES, "model.layers.1")]),
    ("mm_mismatch", [(SCOPES, "['', 'a', 'a.b', 'mm']"), (CLASSES, "['A', 'mm']")]),
    # No metadata at all (an ONNX node from elsewhere).
    ("mm_plain", []),
]
w = numpy_helper.from_array(np.eye(8, dtype=np.float32), "W")
graph_nodes, prev = [], "x"
for i, (name, props) in enumerate(nodes):
    out = f"y{i}"
    graph_nodes.append(with_metadata(
        helper.make_node("MatMul", [prev, "W"], [out], name=name), props))
    prev = out
graph = helper.make_graph(
    graph_nodes, "torch_metadata",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
    [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [2, 8])], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
with open(sys.argv[1], "wb") as f:
    f.write(model.SerializeToString())
