#!/usr/bin/env python3
"""Writes seeded random weights for every initializer that MODEL.onnx keeps
in external data, at the files, offsets and lengths the graph references
(tests and benchmarks cannot download weights; graphs exported elsewhere
travel without theirs). Matrices get N(0, 0.02), vectors (norm weights)
1 + N(0, 0.02); a tensor is a pure function of the seed and its name.

usage: fill_external_data.py MODEL.onnx [--seed 0] [--constants C.npz]

--constants: the real bytes of some initializers (masks, rotary tables,
norm weights: what bench/export_llama8b.py saves as constants.npz, every
external initializer under 1 MiB), written as they are; the rest random.
Booleans without real bytes get a causal (lower-triangular) pattern over
their last two axes.
Files are created (or overwritten) beside MODEL.onnx, chunk by chunk: a
3 GB model needs a few MB of memory.
"""
import argparse
import hashlib
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

p = argparse.ArgumentParser()
p.add_argument("model")
p.add_argument("--seed", type=int, default=0)
p.add_argument("--constants")
a = p.parse_args()
model = onnx.load(a.model, load_external_data=False)
root = os.path.dirname(os.path.abspath(a.model))
dtypes = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16,
          TensorProto.BFLOAT16: None, TensorProto.INT64: np.int64,
          TensorProto.BOOL: np.bool_}
constants = dict(np.load(a.constants)) if a.constants else {}
real = 0
files = {}
total = 0
for t in model.graph.initializer:
    if t.data_location != TensorProto.EXTERNAL:
        continue
    info = {e.key: e.value for e in t.external_data}
    loc = info["location"]
    if os.path.isabs(loc) or ".." in loc.split("/"):
        sys.exit(f"{t.name}: location {loc!r} outside the model's folder")
    offset = int(info.get("offset", 0))
    n = int(np.prod(t.dims)) if len(t.dims) else 1
    if t.data_type not in dtypes:
        sys.exit(f"{t.name}: data type {t.data_type} not handled")
    path = os.path.join(root, loc)
    if path not in files:
        files[path] = open(path, "wb")
    f = files[path]
    digest = hashlib.sha256(f"{a.seed}:{t.name}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    f.seek(offset)
    if t.name in constants:
        f.write(constants[t.name].tobytes())
        real += 1
        total += n
        continue
    if t.data_type == TensorProto.BOOL:
        shape = list(t.dims) or [1]
        rows, cols = (shape[-2], shape[-1]) if len(shape) >= 2 else (1, shape[-1])
        tri = np.tril(np.ones((rows, cols), np.bool_))
        f.write(np.broadcast_to(tri, shape).tobytes())
        total += n
        continue
    chunk = 1 << 22
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        if t.data_type == TensorProto.INT64:
            v = np.zeros(m, np.int64)
        else:
            v = rng.standard_normal(m, dtype=np.float32) * 0.02
            if len(t.dims) == 1:
                v += 1.0
        if t.data_type == TensorProto.BFLOAT16:
            raw = (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
            f.write(raw.tobytes())
        else:
            f.write(v.astype(dtypes[t.data_type]).tobytes())
    total += n
for f in files.values():
    f.close()
print(f"{len(files)} file(s), {total} elements written, {real} tensors from "
      "--constants")
