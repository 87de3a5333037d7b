#!/usr/bin/env python3
"""Writes seeded random weights for every initializer that MODEL.onnx keeps
in external data, at the files, offsets and lengths the graph references
(tests and benchmarks cannot download weights; graphs exported elsewhere
travel without theirs). Matrices get N(0, 0.02), vectors (norm weights)
1 + N(0, 0.02); a tensor is a pure function of the seed and its name.

usage: fill_external_data.py MODEL.onnx [--seed 0] [--constants C.npz]
                             [--jobs N]

--constants: the real bytes of some initializers (masks, rotary tables,
norm weights: what bench/export_llama8b.py saves as constants.npz, every
external initializer under 1 MiB), written as they are; the rest random.
Booleans without real bytes get a causal (lower-triangular) pattern over
their last two axes.
Files are created (or overwritten) beside MODEL.onnx, chunk by chunk: a
3 GB model needs a few MB of memory per process. --jobs N processes write
tensors in parallel (default: one per core; the bytes do not depend on N).
"""
import argparse
import hashlib
import multiprocessing
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

p = argparse.ArgumentParser()
p.add_argument("model")
p.add_argument("--seed", type=int, default=0)
p.add_argument("--constants")
p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
               help="processes writing tensors (default: one per core)")
a = p.parse_args()
model = onnx.load(a.model, load_external_data=False)
root = os.path.dirname(os.path.abspath(a.model))
dtypes = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16,
          TensorProto.BFLOAT16: None, TensorProto.INT64: np.int64,
          TensorProto.BOOL: np.bool_}
constants = dict(np.load(a.constants)) if a.constants else {}


def write(job):
    """Writes one initializer at its place (each a pure function of the
    seed and its name: any order, any number of processes)."""
    path, offset, name, dims, data_type = job
    n = int(np.prod(dims)) if len(dims) else 1
    fd = os.open(path, os.O_WRONLY)
    try:
        at = offset

        def put(raw):
            nonlocal at
            os.pwrite(fd, raw, at)
            at += len(raw)

        if name in constants:
            put(constants[name].tobytes())
            return n, 1
        if data_type == TensorProto.BOOL:
            shape = list(dims) or [1]
            rows, cols = (shape[-2], shape[-1]) if len(shape) >= 2 else (1, shape[-1])
            tri = np.tril(np.ones((rows, cols), np.bool_))
            put(np.broadcast_to(tri, shape).tobytes())
            return n, 0
        digest = hashlib.sha256(f"{a.seed}:{name}".encode()).digest()
        rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
        chunk = 1 << 22
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            if data_type == TensorProto.INT64:
                v = np.zeros(m, np.int64)
            else:
                v = rng.standard_normal(m, dtype=np.float32) * 0.02
                if len(dims) == 1:
                    v += 1.0
            if data_type == TensorProto.BFLOAT16:
                put((v.astype(np.float32).view(np.uint32) >> 16)
                    .astype(np.uint16).tobytes())
            else:
                put(v.astype(dtypes[data_type]).tobytes())
        return n, 0
    finally:
        os.close(fd)


jobs = []
files = set()
for t in model.graph.initializer:
    if t.data_location != TensorProto.EXTERNAL:
        continue
    info = {e.key: e.value for e in t.external_data}
    loc = info["location"]
    if os.path.isabs(loc) or ".." in loc.split("/"):
        sys.exit(f"{t.name}: location {loc!r} outside the model's folder")
    if t.data_type not in dtypes:
        sys.exit(f"{t.name}: data type {t.data_type} not handled")
    path = os.path.join(root, loc)
    if path not in files:
        open(path, "wb").close()  # created (or truncated) once
        files.add(path)
    jobs.append((path, int(info.get("offset", 0)), t.name, list(t.dims),
                 t.data_type))
# Largest first, on every core (--jobs): the file is the same either way.
jobs.sort(key=lambda j: -(int(np.prod(j[3])) if j[3] else 1))
if a.jobs > 1 and len(jobs) > 1:
    with multiprocessing.get_context("fork").Pool(a.jobs) as pool:
        done = pool.map(write, jobs, chunksize=1)
else:
    done = [write(j) for j in jobs]
total = sum(n for n, _ in done)
real = sum(r for _, r in done)
print(f"{len(files)} file(s), {total} elements written, {real} tensors from "
      "--constants")
