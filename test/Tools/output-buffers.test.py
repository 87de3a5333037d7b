"""output-buffers.test: `make OUT.onnx` writes a two-output element-wise
model; `run LIB SRC` runs its CPU library into the caller's buffers and
checks that overlapping output buffers are refused."""
import os
import sys

import numpy as np

if sys.argv[1] == "make":
    import onnx
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["s"], name="node_add"),
         helper.make_node("Mul", ["s", "x"], ["z"], name="node_mul"),
         helper.make_node("Sub", ["x", "y"], ["w"], name="node_sub")],
        "main_graph",
        [helper.make_tensor_value_info("x", f, [4, 64]),
         helper.make_tensor_value_info("y", f, [4, 64])],
        [helper.make_tensor_value_info("z", f, [4, 64]),
         helper.make_tensor_value_info("w", f, [4, 64])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, sys.argv[2])
    sys.exit(0)

lib, src = sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(src, "runtime", "python"))
import fp8rt  # noqa: E402

rng = np.random.default_rng(0)
x = rng.standard_normal((4, 64)).astype(np.float32)
y = rng.standard_normal((4, 64)).astype(np.float32)
x0, y0 = x.copy(), y.copy()
want_z = (x + y) * x
want_w = x - y
with fp8rt.Model(lib) as m:
    z, w = np.empty_like(x), np.empty_like(x)
    m.run(x, y, out=[z, w])
    print("outputs (x + y) * x and x - y, exact:",
          np.array_equal(z, want_z), np.array_equal(w, want_w))

    def refused(label, out, ins=(x, y)):
        try:
            m.run(*ins, out=out)
            print(label + ": accepted")
        except fp8rt.Error as e:
            print(f"{label}: {e}")

    refused("output 0 as input 0's buffer", [x, w])
    # A buffer that starts inside y (same size, one row further on).
    big = np.concatenate([y, y])
    refused("output 1 inside input 1", [z, big[1:5]], ins=(x, big[0:4]))
    refused("one buffer for both outputs", [z, z])
    print("inputs unchanged:", np.array_equal(x, x0) and np.array_equal(y, y0))
    z2, w2 = m.run(x, y)
    print("after the refusals:",
          np.array_equal(z2, want_z) and np.array_equal(w2, want_w))
