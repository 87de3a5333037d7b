"""Writes the MLP of make_mlp.py in FP16 and in BF16 (activations and
weights), each with its weights in external data, for the packer's tests
(FP16/BF16 sources): make_mlp16.py OUTDIR -> OUTDIR/mlp-{f16,bf16}.onnx +
.data, OUTDIR/data-{f16,bf16}/{input_0,output_0}.pb. The reference output is
numpy's FP32 result rounded to the type (the tests compare builds with each
other bit for bit, and with it loosely)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(16)
w1 = (rng.standard_normal((64, 256)) * 0.1).astype(np.float32)
w2 = (rng.standard_normal((256, 96)) * 0.1).astype(np.float32)
x = rng.standard_normal((16, 64)).astype(np.float32)
# Values FP8 cannot scale from one amax: a large outlier and a tiny block.
w1[3, 5] = 40.0
w2[:128, :32] *= 1e-3


def bf16(a):
    """TensorProto holding `a` rounded to bfloat16 (to nearest even)."""
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    t = TensorProto()
    t.data_type = TensorProto.BFLOAT16
    t.dims.extend(a.shape)
    t.raw_data = rounded.tobytes()
    return t


for kind, elem in (("f16", TensorProto.FLOAT16), ("bf16", TensorProto.BFLOAT16)):
    def tensor(a, name):
        t = numpy_helper.from_array(a.astype(np.float16), name) \
            if kind == "f16" else bf16(a)
        t.name = name
        return t
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["h"]),
         helper.make_node("Relu", ["h"], ["r"]),
         helper.make_node("MatMul", ["r", "w2"], ["y"])],
        "mlp_" + kind,
        [helper.make_tensor_value_info("x", elem, [16, 64])],
        [helper.make_tensor_value_info("y", elem, [16, 96])],
        [tensor(w1, "w1"), tensor(w2, "w2")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out, f"mlp-{kind}.onnx"),
              save_as_external_data=True, all_tensors_to_one_file=True,
              location=f"mlp-{kind}.data", size_threshold=0)
    data = os.path.join(out, "data-" + kind)
    os.makedirs(data, exist_ok=True)
    y = np.maximum(x @ w1, 0) @ w2
    for name, value in (("input_0", x), ("output_0", y)):
        with open(os.path.join(data, name + ".pb"), "wb") as f:
            f.write(tensor(value, name).SerializeToString())
