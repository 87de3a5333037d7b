"""Reads a weights file (runtime/include/fp8rt/fp8w.h, version 1) without
fp8-opt's reader: fp8w_tensors(path) -> {name: (dtype, dims, bytes)}."""
import struct


def fp8w_tensors(path):
    data = open(path, "rb").read()
    assert data[:8] == b"FP8OPTW\n", path + ": not a weights file"
    count = struct.unpack_from("<Q", data, 16)[0]
    out = {}
    for i in range(count):
        at = 64 + 128 * i
        name_offset, name_bytes, dtype, rank = struct.unpack_from(
            "<QIiI", data, at)
        offset, nbytes = struct.unpack_from("<QQ", data, at + 24)
        dims = struct.unpack_from("<%dq" % rank, data, at + 48)
        name = data[name_offset:name_offset + name_bytes].decode()
        out[name] = (dtype, tuple(dims), data[offset:offset + nbytes])
    return out
