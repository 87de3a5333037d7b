import ctypes
import os
import sys

import numpy as np

lib_path, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(src, "runtime", "python"))
import fp8rt  # noqa: E402

m = fp8rt.Model(lib_path)
print("inputs", m.inputs[2].name, tuple(m.inputs[2].shape))
print("outputs", m.outputs[1].name, tuple(m.outputs[1].shape))
ids = np.array([[7, 42, 130]], np.int64)
mask = np.ones((1, 3), np.int64)
empty = [np.zeros(i.shape, np.float32) for i in m.inputs[2:]]
ref = m(ids, mask, *empty)


def raw_run(null_inputs):
    """fp8rt_model_run through ctypes, with NULL data for some inputs."""
    keep, ins = [], []
    for k, (a, info) in enumerate(zip([ids, mask] + empty, m.inputs)):
        shape = (ctypes.c_int64 * max(1, a.ndim))(*a.shape)
        keep.append(shape)
        data = None if k in null_inputs else a.ctypes.data
        ins.append(fp8rt._Tensor(data, info.dtype, a.ndim, shape))
    outs = [np.empty(o.shape, o.numpy_dtype) for o in m.outputs]
    outd = []
    for o, info in zip(outs, m.outputs):
        shape = (ctypes.c_int64 * o.ndim)(*o.shape)
        keep.append(shape)
        outd.append(fp8rt._Tensor(o.ctypes.data, info.dtype, o.ndim, shape))
    status = m._lib.fp8rt_model_run(m._m, (fp8rt._Tensor * len(ins))(*ins), len(ins),
                                    (fp8rt._Tensor * len(outd))(*outd), len(outd))
    return status, outs


status, outs = raw_run({2, 3, 4, 5})
print("NULL for empty inputs: status", status, "same outputs:",
      all(np.array_equal(a, b) for a, b in zip(outs, ref)))
status, _ = raw_run({0})
print("NULL for input_ids: status", status,
      m._lib.fp8rt_model_last_error(m._m).decode())
