"""Reader and writer of ONNX TensorProto files (the backend-test layout
`input_N.pb` / `output_N.pb`), on top of Debian's python3-onnx (ONNX 1.12).

Arrays follow onnx.numpy_helper, except for the types ONNX 1.12 has no
numpy type for: bfloat16 (16) arrays hold the uint16 encodings, FLOAT8
E4M3FN (17) and E5M2 (19) arrays the bytes, as ONNX stores them.
write_tensor writes dims, data_type, name and raw_data (little-endian),
as onnx.numpy_helper.from_array does.
"""
import os

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from onnx import numpy_helper

# ONNX TensorProto.DataType -> numpy dtype, MLIR element type
DTYPES = {
    1: (np.float32, "f32"), 2: (np.uint8, "i8"), 3: (np.int8, "i8"),
    5: (np.int16, "i16"), 6: (np.int32, "i32"), 7: (np.int64, "i64"),
    9: (np.bool_, "i1"), 10: (np.float16, "f16"), 11: (np.float64, "f64"),
    # No numpy type for these: arrays hold the encodings (bf16's upper
    # halves, FP8 bytes), as ONNX stores them.
    16: (np.uint16, "bf16"), 17: (np.uint8, "f8E4M3FN"),
    19: (np.uint8, "f8E5M2"),
}
# The types numpy_helper.to_array does not return as their encodings
# (bfloat16 becomes float32; 1.12 does not know FLOAT8).
ENCODED = (16, 17, 19)


def tensor_array(tensor):
    """Numpy array of a TensorProto of one of the DTYPES (writable, its own
    copy of the data)."""
    dtype = tensor.data_type
    if dtype not in DTYPES:
        raise ValueError(f"unsupported ONNX data type {dtype}")
    if dtype not in ENCODED:
        return np.array(numpy_helper.to_array(tensor))
    np_type = np.dtype(DTYPES[dtype][0])
    if tensor.HasField("raw_data"):
        array = np.frombuffer(tensor.raw_data, dtype=np_type.newbyteorder("<"))
    else:  # int32_data holds one encoding per element
        array = np.array(tensor.int32_data, dtype=np.int64)
    return array.astype(np_type).reshape(tensor.dims)


def read_tensor_proto(path):
    """onnx.TensorProto of a TensorProto file; a ValueError names the file
    when it is not one."""
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        data = f.read()
    try:
        tensor.ParseFromString(data)
    except DecodeError as err:
        raise ValueError(f"{path}: {err}") from None
    return tensor


def read_tensor(path):
    """Returns (name, numpy array, onnx data_type)."""
    tensor = read_tensor_proto(path)
    try:
        array = tensor_array(tensor)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return tensor.name, array, tensor.data_type


def make_tensor(array, name="", dtype=None):
    """onnx.TensorProto of a numpy array: dims, data_type, name, raw_data.
    dtype is the ONNX data type; by default it follows the array's dtype."""
    array = np.asarray(array)
    if dtype is None:
        matches = [k for k, (np_type, _) in DTYPES.items()
                   if np.dtype(np_type) == array.dtype]
        if not matches:
            raise ValueError(f"no ONNX data type for numpy dtype {array.dtype}")
        dtype = matches[0]
    elif dtype not in DTYPES:
        raise ValueError(f"unsupported ONNX data type {dtype}")
    # from_array picks the data type of the numpy one (uint16 for bf16,
    # uint8 for FP8); the bytes are the same, the type is set after.
    tensor = numpy_helper.from_array(
        np.asarray(array, dtype=DTYPES[dtype][0], order="C"), name)
    tensor.data_type = dtype
    return tensor


def encode_tensor(array, name="", dtype=None):
    """TensorProto bytes of a numpy array (see make_tensor)."""
    return make_tensor(array, name, dtype).SerializeToString()


def write_tensor(path, array, name="", dtype=None):
    """Writes a TensorProto file that read_tensor (and onnx) read back."""
    with open(path, "wb") as f:
        f.write(encode_tensor(array, name, dtype))


def read_test_inputs(data_dir):
    """(name, array, data_type) of every input_N.pb in an ONNX test-data
    folder, in order."""
    inputs = []
    while os.path.exists(os.path.join(data_dir, f"input_{len(inputs)}.pb")):
        inputs.append(read_tensor(os.path.join(data_dir, f"input_{len(inputs)}.pb")))
    return inputs


def input_shape_args(inputs):
    """fp8-compile's --input-shape arguments pinning every named input to
    the shape of its test data (models exported with dynamic axes)."""
    args = []
    for name, array, _ in inputs:
        if name:
            args += ["--input-shape", f"{name}=" + "x".join(map(str, array.shape))]
    return args


def load_model(path):
    """onnx.ModelProto of a model file, without its external data (the
    graph and the shapes of every initializer are enough for the scripts);
    a ValueError names the file when it is not a ModelProto."""
    try:
        return onnx.load(path, load_external_data=False)
    except DecodeError as err:
        raise ValueError(f"{path}: {err}") from None
