"""Saves the external-data initializers of MODEL.onnx that are not weights
(masks, rotary tables, norm weights) into OUT.npz, as raw bytes by name,
compressed, for scripts/fill_external_data.py --constants: the non-weight
constants travel, the weights are regenerated. Kept: every initializer
under 1 MiB, and larger ones of rank other than 2 (a long sequence's
causal mask [1, 1, S, S]: 128 MiB of FP16 at S = 8192, a few KiB
compressed); the rank-2 ones over 1 MiB are the weight matrices.

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
    if length >= 1 << 20 and len(t.dims) == 2:
        continue
    with open(os.path.join(root, info["location"]), "rb") as f:
        f.seek(int(info.get("offset", 0)))
        keep[t.name] = np.frombuffer(f.read(length), np.uint8)
np.savez_compressed(out, **keep)
print(f"{len(keep)} constants, {sum(v.size for v in keep.values())} bytes")
