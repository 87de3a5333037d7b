"""Saves the external-data initializers of MODEL.onnx smaller than 1 MiB
(masks, rotary tables, norm weights) into OUT.npz, as raw bytes by name,
for scripts/fill_external_data.py --constants: the small non-weight
constants travel, the weights are regenerated.

usage: extract_constants.py MODEL.onnx OUT.npz
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto

model_path, out = sys.argv[1], sys.argv[2]
model = onnx.load(model_path, load_external_data=False)
root = os.path.dirname(os.path.abspath(model_path))
keep = {}
for t in model.graph.initializer:
    if t.data_location != TensorProto.EXTERNAL:
        continue
    info = {e.key: e.value for e in t.external_data}
    length = int(info.get("length", 0))
    if length >= 1 << 20:
        continue
    with open(os.path.join(root, info["location"]), "rb") as f:
        f.seek(int(info.get("offset", 0)))
        keep[t.name] = np.frombuffer(f.read(length), np.uint8)
np.savez(out, **keep)
print(f"{len(keep)} constants, {sum(v.size for v in keep.values())} bytes")
