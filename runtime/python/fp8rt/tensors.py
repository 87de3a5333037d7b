"""Tensor files without onnx: ONNX TensorProto files (`input_N.pb`,
`output_N.pb`, what fp8-run reads and `--save` writes) and .npy files, as
numpy arrays. Needs only numpy.

    name, array, dtype = read_tensor("out/output_0.pb")   # dtype: ONNX code
    name, array, dtype = read_tensor("out/logits.npy")    # name from the file
    graph_inputs("model.onnx")   # [(name, dtype, dims)]: what --input-shape fills

bfloat16 (16) arrays hold the uint16 encodings and FLOAT8 E4M3FN (17) /
E5M2 (19) arrays the bytes, as ONNX stores them and as fp8rt exchanges them.
A file that is not what it claims raises ValueError naming the file.
"""
import os

import numpy as np

__all__ = ["read_tensor", "read_tensor_proto", "read_npy", "tensor_files",
           "graph_inputs", "NUMPY_DTYPES"]

# ONNX TensorProto.DataType -> numpy dtype (encodings for bf16 and FP8).
NUMPY_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16,
                5: np.int16, 6: np.int32, 7: np.int64, 9: np.bool_,
                10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
                16: np.uint16, 17: np.uint8, 19: np.uint8}
# numpy dtype -> ONNX code (bf16 and FP8 have no numpy type: their
# encodings read as uint16 / uint8).
_ONNX_CODES = {np.dtype(t): k for k, t in NUMPY_DTYPES.items()
               if k not in (16, 17, 19)}
# Types whose typed field (int32_data) holds bit patterns or narrow ints.
_INT32_FIELD = {2, 3, 4, 5, 6, 9, 10, 16, 17, 19}


def _varint(buf, at, path):
    value = shift = 0
    while True:
        if at >= len(buf) or shift > 63:
            raise ValueError(f"{path}: truncated or overlong varint")
        byte = buf[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(buf, path):
    """(field number, wire type, value) of one protobuf message; value is an
    int (varint, fixed) or bytes (length-delimited)."""
    at = 0
    while at < len(buf):
        key, at = _varint(buf, at, path)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(buf, at, path)
        elif wire == 1:
            if at + 8 > len(buf):
                raise ValueError(f"{path}: truncated fixed64 field {field}")
            value, at = buf[at:at + 8], at + 8
        elif wire == 2:
            n, at = _varint(buf, at, path)
            if at + n > len(buf):
                raise ValueError(f"{path}: field {field} runs past the end "
                                 f"({n} bytes at offset {at}, file has "
                                 f"{len(buf)})")
            value, at = buf[at:at + n], at + n
        elif wire == 5:
            if at + 4 > len(buf):
                raise ValueError(f"{path}: truncated fixed32 field {field}")
            value, at = buf[at:at + 4], at + 4
        else:
            raise ValueError(f"{path}: wire type {wire} (field {field}) is "
                             "not a TensorProto's")
        yield field, wire, value


def _signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _packed_varints(value, wire, path):
    if wire == 0:
        return [value]
    out, at = [], 0
    while at < len(value):
        v, at = _varint(value, at, path)
        out.append(v)
    return out


def read_tensor_proto(path):
    """(name, array, ONNX data type) of a TensorProto file (raw_data or the
    typed fields)."""
    with open(path, "rb") as f:
        buf = f.read()
    dims, dtype, name, raw = [], 0, "", None
    typed = {4: [], 5: [], 7: [], 10: [], 11: []}
    for field, wire, value in _fields(buf, path):
        if field == 1:
            dims += [_signed64(v) for v in _packed_varints(value, wire, path)]
        elif field == 2 and wire == 0:
            dtype = value
        elif field == 8 and wire == 2:
            name = value.decode("utf-8", "replace")
        elif field == 9 and wire == 2:
            raw = value
        elif field == 14 and wire == 0 and value == 1:
            raise ValueError(f"{path}: the tensor's data is external "
                             "(data_location EXTERNAL): not supported")
        elif field == 4:
            typed[4].append(np.frombuffer(value, "<f4") if wire in (2, 5)
                            else None)
        elif field == 10:
            typed[10].append(np.frombuffer(value, "<f8") if wire in (1, 2)
                             else None)
        elif field in (5, 7, 11):
            typed[field] += _packed_varints(value, wire, path)
    if dtype not in NUMPY_DTYPES:
        raise ValueError(f"{path}: unsupported ONNX data type {dtype}")
    if any(d < 0 for d in dims):
        raise ValueError(f"{path}: negative dimension in {dims}")
    count = int(np.prod(dims, dtype=np.int64)) if dims else 1
    np_type = np.dtype(NUMPY_DTYPES[dtype]).newbyteorder("<")
    if raw is not None:
        if len(raw) != count * np_type.itemsize:
            raise ValueError(f"{path}: raw_data has {len(raw)} bytes, shape "
                             f"{dims} of {np_type.name} needs "
                             f"{count * np_type.itemsize}")
        array = np.frombuffer(raw, np_type)
    elif dtype == 1:
        array = np.concatenate([np.zeros(0, "<f4")] + typed[4])
    elif dtype == 11:
        array = np.concatenate([np.zeros(0, "<f8")] + typed[10])
    elif dtype == 7:
        array = np.array([_signed64(v) for v in typed[7]], np.int64)
    elif dtype in (12, 13):
        array = np.array(typed[11], np.uint64).astype(np_type)
    elif dtype in _INT32_FIELD:
        values = np.array([_signed64(v) for v in typed[5]], np.int64)
        if dtype in (10,):  # float16: the bit patterns
            array = values.astype(np.uint16).view(np.float16)
        else:
            array = values.astype(np_type)
    else:
        array = np.zeros(0, np_type)
    if array.size != count:
        raise ValueError(f"{path}: {array.size} values, shape {dims} needs "
                         f"{count}")
    return name, array.astype(np_type.newbyteorder("="), copy=True).reshape(dims), dtype


def read_npy(path):
    """(name, array, ONNX data type) of a .npy file: the name is the file's
    (without .npy); object arrays are refused (never unpickled)."""
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as err:
        raise ValueError(f"{path}: not a readable .npy file: {err}") from None
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{path}: holds several arrays (an .npz?), not one")
    code = _ONNX_CODES.get(array.dtype.newbyteorder("="))
    if code is None:
        raise ValueError(f"{path}: numpy dtype {array.dtype} has no ONNX type")
    name = os.path.basename(path)[:-4] if path.endswith(".npy") else ""
    return name, np.ascontiguousarray(array, array.dtype.newbyteorder("=")), code


def read_tensor(path):
    """(name, array, ONNX data type) of a TensorProto (.pb) or .npy file,
    told apart by their contents."""
    with open(path, "rb") as f:
        magic = f.read(6)
    if magic == b"\x93NUMPY":
        return read_npy(path)
    return read_tensor_proto(path)


def tensor_files(folder):
    """The tensor files of an fp8-run --save folder, in order: output_N.pb
    (N = 0, 1, ...), then the .npy files (sorted)."""
    files, i = [], 0
    while os.path.exists(os.path.join(folder, f"output_{i}.pb")):
        files.append(os.path.join(folder, f"output_{i}.pb"))
        i += 1
    if os.path.isdir(folder):
        files += sorted(os.path.join(folder, f) for f in os.listdir(folder)
                        if f.endswith(".npy"))
    return files



def _messages(buf, path, field):
    """The length-delimited values of `field` in one protobuf message."""
    return [bytes(v) for k, w, v in _fields(buf, path) if k == field and w == 2]


def _dim(dim, path):
    """A TensorShapeProto.Dimension: dim_value (1), dim_param (2) or "?"."""
    value = "?"
    for f, w, v in _fields(dim, path):
        if f == 1 and w == 0:
            value = _signed64(v)
        elif f == 2 and w == 2:
            value = bytes(v).decode()
    return value


def _value_info(vi, path):
    """(name, ONNX data type, dims) of a ValueInfoProto (name = 1, type = 2;
    TypeProto.tensor_type = 1: elem_type = 1, shape = 2 with dims = 1)."""
    names = _messages(vi, path, 1)
    name = names[-1].decode() if names else ""
    dtype, dims = 0, []
    for tensor in (t for ty in _messages(vi, path, 2)
                   for t in _messages(ty, path, 1)):
        for f, w, v in _fields(tensor, path):
            if f == 1 and w == 0:
                dtype = v
        dims = [_dim(d, path) for shape in _messages(tensor, path, 2)
                for d in _messages(shape, path, 1)]
    return name, dtype, dims


def graph_inputs(path):
    """[(name, ONNX data type, dims)] of an ONNX model's graph inputs
    (initializers listed as inputs left out), in order; a dim is an int
    when static, else its dim_param (or "?"). Reads the ModelProto's graph
    (field 7; inputs 11, initializers 5 named by field 8) without onnx
    (weights in external data are never read)."""
    with open(path, "rb") as f:
        buf = f.read()
    graphs = _messages(buf, path, 7)
    if not graphs:
        raise ValueError(f"{path}: not an ONNX model (no graph)")
    graph = graphs[-1]
    initializers = {n.decode() for t in _messages(graph, path, 5)
                    for n in _messages(t, path, 8)}
    inputs = [_value_info(vi, path) for vi in _messages(graph, path, 11)]
    return [i for i in inputs if i[0] not in initializers]
