"""Checks that the weights packer's bytes are the constant folders': for
every packed tensor (data and scales, and each part of a concatenation) of
a weights file, the tensor-level
module of the same model compiled with every weight read (fp8-compile
--emit=mlir --weights-read-limit=0) holds a folded constant with the same
values: compare_packed.py MODULE.mlir WEIGHTS.fp8w MANIFEST.json.
A padded data tensor must hold the folded constant in its leading corner
and zeros elsewhere. Prints one line per packed tensor; exits 1 on any
mismatch or a packed tensor without a folded twin."""
import json
import re
import sys

import numpy as np

from fp8w_tensors import fp8w_tensors

module = open(sys.argv[1]).read()
weights = fp8w_tensors(sys.argv[2])
manifest = json.load(open(sys.argv[3]))

NP = {"f8E4M3FN": np.uint8, "f8E5M2": np.uint8, "f8E8M0FNU": np.uint8,
      "f32": np.float32}
constants = []  # (element type, shape, array of raw values)
for value, shape, elt in re.findall(
        r'arith\.constant dense<(.*?)> : tensor<([0-9x]*?)x?(f8E4M3FN|f8E5M2|'
        r'f8E8M0FNU|f32)>', module):
    dims = tuple(int(d) for d in shape.split("x") if d)
    dtype = NP[elt]
    if value.startswith('"0x'):
        raw = bytes.fromhex(value[3:-1])
        arr = np.frombuffer(raw, dtype)
    elif elt == "f32":
        arr = np.array([float(v) for v in re.findall(r"[-+0-9.eEinfa]+", value)],
                       np.float32)
    else:
        continue
    size = int(np.prod(dims)) if dims else 1
    if arr.size == 1 and size > 1:
        arr = np.full(size, arr[0], dtype)
    if arr.size != size:
        continue
    constants.append((elt, dims, arr.reshape(dims)))

def folded_twin(packed):
    """The folded constant `packed` holds in its leading corner (zeros
    elsewhere), as (element type, dims), or None."""
    for elt, cdims, arr in constants:
        if (arr.dtype != packed.dtype or len(cdims) != packed.ndim or
                any(c > d for c, d in zip(cdims, packed.shape))):
            continue
        corner = packed[tuple(slice(0, c) for c in cdims)]
        rest = packed.copy()
        rest[tuple(slice(0, c) for c in cdims)] = 0
        if corner.tobytes() == arr.tobytes() and not rest.any():
            return elt, cdims
    return None


failed = False
for t in manifest["tensors"]:
    if t["kind"] not in ("data", "scale", "concat"):
        continue
    _, dims, raw = weights[t["name"]]
    packed = np.frombuffer(raw, np.float32 if t["dtype"] == 1 else np.uint8)
    packed = packed.reshape(dims)
    # A concatenation (fp8-merge-sibling-products): each part, in order
    # along dimension 0, is a packed tensor of its own.
    parts = t.get("parts", [t])
    row = 0
    for part in parts:
        rows = part["shape"][0] if "parts" in t else None
        match = folded_twin(packed[row:row + rows] if rows else packed)
        row += rows or 0
        print(t["name"], part["kind"], "x".join(map(str, part["shape"])),
              "equals the folded constant" if match else "HAS NO FOLDED TWIN",
              "" if not match else "x".join(map(str, match[1])))
        failed |= match is None
    failed |= "parts" in t and row != dims[0]
sys.exit(1 if failed else 0)
