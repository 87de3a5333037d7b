"""Writes a hand-made (possibly malformed) TensorProto file for fp8-run's
tests: pb.py OUT EXPR, where EXPR is a Python expression over the helpers
below that evaluates to the file's bytes, e.g.
    dims(2, 3) + dtype(1) + raw(b"\0" * 24)
"""
import struct
import sys

inf, nan = float("inf"), float("nan")


def v(n):
    """A varint (negative numbers as ten-byte two's complement)."""
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return v(field << 3 | wire)


def ld(field, payload):
    """A length-delimited field."""
    return key(field, 2) + v(len(payload)) + payload


def dims(*ds):
    return b"".join(key(1, 0) + v(d) for d in ds)


def dtype(t):
    return key(2, 0) + v(t)


def name(s):
    return ld(8, s.encode())


def raw(data):
    return ld(9, data)


def floats(*fs):
    """float_data, packed."""
    return ld(4, struct.pack(f"<{len(fs)}f", *fs))


def int64s(*xs):
    """int64_data, packed."""
    return ld(7, b"".join(v(x) for x in xs))


def int32s(*xs):
    """int32_data, packed."""
    return ld(5, b"".join(v(x) for x in xs))


if __name__ == "__main__":
    with open(sys.argv[1], "wb") as f:
        f.write(eval(sys.argv[2]))
