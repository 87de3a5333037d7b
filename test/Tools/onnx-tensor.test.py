import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

tmp, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "scripts"))
import onnx_tensor  # noqa: E402

# The file layout the C++ reader (runtime/tools/TensorProto.cpp) reads:
# dims, data_type, name, little-endian raw_data.
print(onnx_tensor.encode_tensor(np.array([[1.0, 2.0]], np.float32), "x").hex())
print(onnx_tensor.encode_tensor(np.float32(0.5)).hex())

# Round trip of every type, read back by onnx too; bf16/FP8 as encodings.
rng = np.random.default_rng(0)
for dtype, (np_type, mlir) in onnx_tensor.DTYPES.items():
    a = (rng.standard_normal((2, 3)) * 100).astype(np_type)
    path = os.path.join(tmp, f"t{dtype}.pb")
    onnx_tensor.write_tensor(path, a, f"t{dtype}", dtype)
    name, b, t = onnx_tensor.read_tensor(path)
    proto = onnx.load_tensor(path)
    same = name == f"t{dtype}" and t == dtype and b.dtype == a.dtype and np.array_equal(a, b)
    same = same and proto.data_type == dtype and proto.raw_data == a.tobytes()
    if dtype not in (16, 17, 19):  # no numpy type in ONNX 1.12
        same = same and np.array_equal(numpy_helper.to_array(proto), a)
    print(f"{mlir} {'ok' if same else 'MISMATCH'}")

# Tensors in the typed fields instead of raw_data, as other writers store
# them: float16 and bfloat16 bits in int32_data, negative integers.
cases = [
    (onnx.TensorProto.FLOAT16, np.array([1.5, -2.0, 65504.0], np.float16)),
    (onnx.TensorProto.INT8, np.array([-128, -1, 127], np.int8)),
    (onnx.TensorProto.INT32, np.array([-2**31, -5, 7], np.int32)),
    (onnx.TensorProto.INT64, np.array([-2**63, -1, 2**62], np.int64)),
    (onnx.TensorProto.DOUBLE, np.array([0.1, -1e300], np.float64)),
    (onnx.TensorProto.BOOL, np.array([True, False], np.bool_)),
]
for dtype, a in cases:
    proto = helper.make_tensor("v", dtype, a.shape, a.tolist())
    path = os.path.join(tmp, f"typed{dtype}.pb")
    open(path, "wb").write(proto.SerializeToString())
    _, b, t = onnx_tensor.read_tensor(path)
    print(f"typed {a.dtype} {'ok' if t == dtype and b.dtype == a.dtype and np.array_equal(a, b) else 'MISMATCH'}")
for dtype, codes in ((16, [0x3FC0, 0xC000]), (17, [0x38, 0xFE]), (19, [0x3C, 0x7B])):
    proto = onnx.TensorProto(dims=[2], data_type=dtype, int32_data=codes)
    path = os.path.join(tmp, f"typed{dtype}.pb")
    open(path, "wb").write(proto.SerializeToString())
    _, b, _ = onnx_tensor.read_tensor(path)
    print(f"typed {onnx_tensor.DTYPES[dtype][1]} {'ok' if b.tolist() == codes else 'MISMATCH'}")

# Errors name the file.
open(os.path.join(tmp, "bad.pb"), "wb").write(b"\xff\xff\xff")
for bad in ("bad.pb", "string.pb"):
    if bad == "string.pb":
        open(os.path.join(tmp, bad), "wb").write(
            helper.make_tensor("s", onnx.TensorProto.STRING, [1], [b"a"]).SerializeToString())
    try:
        onnx_tensor.read_tensor(os.path.join(tmp, bad))
    except ValueError as e:
        print("error:", str(e).replace(tmp, "TMP"))
