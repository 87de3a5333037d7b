"""Minimal reader and writer of ONNX TensorProto files (the backend-test
layout `input_N.pb` / `output_N.pb`), without the onnx or protobuf packages.

Only the fields a test tensor uses are decoded: dims (1), data_type (2),
float_data (4), int32_data (5), int64_data (7), name (8), raw_data (9),
double_data (10), uint64_data (11). write_tensor writes dims, data_type,
name and raw_data (little-endian), as onnx.numpy_helper.from_array does.
"""
import os
import struct

import numpy as np

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


def _varint(buf, i):
    result = shift = 0
    while True:
        byte = buf[i]
        i += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, i


def packed_varints(chunk):
    """The integers of a packed repeated varint field."""
    out, j = [], 0
    while j < len(chunk):
        v, j = _varint(chunk, j)
        out.append(v)
    return out


def iter_fields(buf):
    """Yields (field number, wire type, value) of one protobuf message; the
    value is an int for varint and fixed-width fields, bytes for
    length-delimited ones (nested messages, strings, packed arrays)."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
        elif wire == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wire == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        elif wire == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield field, wire, v


def read_tensor(path):
    """Returns (name, numpy array, onnx data_type)."""
    dims, dtype, name, raw = [], 1, "", None
    fields = {4: [], 5: [], 7: [], 10: [], 11: []}
    try:
        for field, wire, v in iter_fields(open(path, "rb").read()):
            if wire == 0:
                if field == 1:
                    dims.append(v)
                elif field == 2:
                    dtype = v
                elif field in fields:
                    fields[field].append(v)
            elif wire == 2:
                if field == 1:
                    dims += packed_varints(v)
                elif field == 8:
                    name = v.decode()
                elif field == 9:
                    raw = v
                elif field == 4:
                    fields[4] += struct.unpack(f"<{len(v) // 4}f", v)
                elif field == 10:
                    fields[10] += struct.unpack(f"<{len(v) // 8}d", v)
                elif field in (5, 7, 11):
                    fields[field] += packed_varints(v)
            elif wire == 5 and field == 4:
                fields[4].append(struct.unpack("<f", v.to_bytes(4, "little"))[0])
            elif wire == 1 and field == 10:
                fields[10].append(struct.unpack("<d", v.to_bytes(8, "little"))[0])
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    if dtype not in DTYPES:
        raise ValueError(f"{path}: unsupported ONNX data type {dtype}")
    np_type = DTYPES[dtype][0]
    if raw is not None:
        array = np.frombuffer(raw, dtype=np_type).copy()
    elif dtype == 1:
        array = np.array(fields[4], dtype=np.float32)
    elif dtype == 11:
        array = np.array(fields[10], dtype=np.float64)
    elif dtype == 7:
        array = np.array(fields[7], dtype=np.uint64).astype(np.int64)
    else:
        array = np.array(fields[5], dtype=np.int64).astype(np_type)
    return name, array.reshape(dims), dtype


def _put_varint(out, value):
    value &= (1 << 64) - 1  # negative int64 values are ten-byte varints
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def _put_bytes(out, field, data):
    _put_varint(out, (field << 3) | 2)
    _put_varint(out, len(data))
    out += data


def encode_tensor(array, name="", dtype=None):
    """TensorProto bytes of a numpy array: dims, data_type, name, raw_data.
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
    np_type = np.dtype(DTYPES[dtype][0]).newbyteorder("<")
    out = bytearray()
    for d in array.shape:
        _put_varint(out, 1 << 3)
        _put_varint(out, int(d))
    _put_varint(out, 2 << 3)
    _put_varint(out, dtype)
    if name:
        _put_bytes(out, 8, name.encode())
    _put_bytes(out, 9, np.ascontiguousarray(array, dtype=np_type).tobytes())
    return bytes(out)


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
