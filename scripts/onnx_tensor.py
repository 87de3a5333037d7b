"""Minimal reader of ONNX TensorProto files (the backend-test layout
`input_N.pb` / `output_N.pb`), without the onnx or protobuf packages.

Only the fields a test tensor uses are decoded: dims (1), data_type (2),
float_data (4), int32_data (5), int64_data (7), name (8), raw_data (9),
double_data (10), uint64_data (11).
"""
import struct

import numpy as np

# ONNX TensorProto.DataType -> numpy dtype, MLIR element type
DTYPES = {
    1: (np.float32, "f32"), 2: (np.uint8, "i8"), 3: (np.int8, "i8"),
    5: (np.int16, "i16"), 6: (np.int32, "i32"), 7: (np.int64, "i64"),
    9: (np.bool_, "i1"), 10: (np.float16, "f16"), 11: (np.float64, "f64"),
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


def _packed_varints(chunk):
    out, j = [], 0
    while j < len(chunk):
        v, j = _varint(chunk, j)
        out.append(v)
    return out


def read_tensor(path):
    """Returns (name, numpy array, onnx data_type)."""
    buf = open(path, "rb").read()
    i, dims, dtype, name, raw = 0, [], 1, "", None
    fields = {4: [], 5: [], 7: [], 10: [], 11: []}
    while i < len(buf):
        key, i = _varint(buf, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(buf, i)
            if field == 1:
                dims.append(v)
            elif field == 2:
                dtype = v
            elif field in fields:
                fields[field].append(v)
        elif wire == 2:
            n, i = _varint(buf, i)
            chunk = buf[i:i + n]
            i += n
            if field == 1:
                dims += _packed_varints(chunk)
            elif field == 8:
                name = chunk.decode()
            elif field == 9:
                raw = chunk
            elif field == 4:
                fields[4] += struct.unpack(f"<{len(chunk) // 4}f", chunk)
            elif field == 10:
                fields[10] += struct.unpack(f"<{len(chunk) // 8}d", chunk)
            elif field in (5, 7, 11):
                fields[field] += _packed_varints(chunk)
        elif wire == 5:
            if field == 4:
                fields[4].append(struct.unpack("<f", buf[i:i + 4])[0])
            i += 4
        elif wire == 1:
            if field == 10:
                fields[10].append(struct.unpack("<d", buf[i:i + 8])[0])
            i += 8
        else:
            raise ValueError(f"{path}: unsupported protobuf wire type {wire}")
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
