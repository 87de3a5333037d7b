"""Writes the .npy files of fp8-run-npy.test into DIR: good ones for
div.onnxtext (X / Y, float[8]) written by numpy itself, in every .npy
version, and hand-made bad ones (each named after what is wrong).

    npy_files.py DIR
"""
import os
import struct
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
x = np.array([1, -1, 0, 2, 3, 0, 5, 6], np.float32)
y = np.array([0, 0, 0, 1, 1, 4, 2, -2], np.float32)


def path(name):
    return os.path.join(out, name)


def header(text, version=(1, 0)):
    """Magic, version, length and the header text padded as numpy pads it."""
    size = 4 if version[0] > 1 else 2
    pad = (64 - (6 + 2 + size + len(text) + 1) % 64) % 64
    text = text + " " * pad + "\n"
    return (b"\x93NUMPY" + bytes(version)
            + struct.pack("<H" if size == 2 else "<I", len(text)) + text.encode())


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)


np.save(path("x.npy"), x)
np.save(path("y.npy"), y)
# numpy writes version 2.0 / 3.0 when asked (or for huge headers / unicode
# field names); fp8-run reads them as well.
for version in ((2, 0), (3, 0)):
    with open(path(f"x-v{version[0]}.npy"), "wb") as f:
        np.lib.format.write_array(f, x, version=version)
np.save(path("x-f64.npy"), x.astype(np.float64))
np.save(path("x-short4.npy"), x[:4])
np.save(path("x-rank2.npy"), x.reshape(2, 4))
np.save(path("x-big-endian.npy"), x.astype(">f4"))
np.save(path("x-object.npy"), np.array([1, "a"], dtype=object), allow_pickle=True)
np.save(path("x-structured.npy"), np.zeros(8, dtype=[("a", "<f4")]))
np.save(path("x-complex.npy"), x.astype(np.complex64))
np.save(path("d-fortran.npy"), np.asfortranarray(np.zeros((3, 4, 5), np.float32)))
good = open(path("x.npy"), "rb").read()
write("x-truncated.npy", good[:-16])
write("x-trailing.npy", good + b"\0\0\0\0")
write("x-empty.npy", b"")
write("x-magic.npy", b"\x93NUMPZ" + good[6:])
write("x-version9.npy", good[:6] + b"\x09\x00" + good[8:])
write("x-header-length.npy", good[:8] + struct.pack("<H", 60000) + good[10:])
write("x-unknown-key.npy", header("{'descr': '<f4', 'fortran_order': False, "
                                  "'shape': (8,), 'extra': 1, }")
      + x.tobytes())
write("x-no-shape.npy", header("{'descr': '<f4', 'fortran_order': False, }")
      + x.tobytes())
write("x-negative-dim.npy", header("{'descr': '<f4', 'fortran_order': False, "
                                   "'shape': (-8,), }") + x.tobytes())
write("x-overflow.npy", header("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (4294967296, 4294967296, 4), }"))
write("x-code.npy", header("__import__('os').system('false')") + x.tobytes())
write("b-two.npy", header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }")
      + b"\x01\x02")
