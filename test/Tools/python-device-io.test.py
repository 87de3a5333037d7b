import ctypes
import os
import sys

import numpy as np

tmp, src = sys.argv[1], sys.argv[2]
sys.path[:0] = [os.path.join(src, "runtime", "python"), os.path.join(src, "scripts")]
import fp8rt  # noqa: E402
from fp8rt import _RunOptions, _TensorEx  # noqa: E402
from onnx_tensor import read_tensor  # noqa: E402

m = fp8rt.Model(os.path.join(tmp, "gpt2.so"))
print("abi", m.abi_version)
ids = read_tensor(os.path.join(src, "models/gpt2_tiny_dynamo/test_data_set_0/input_0.pb"))[1]
(ref,) = m(ids)


class DLPackOnly:
    """Only the DLPack protocol of a numpy array (as a torch CPU tensor
    offers it): the wrapper must read it in place."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class FakeDeviceArray:
    """A __cuda_array_interface__ that claims device memory (its data is a
    host array, which the CPU library must refuse before reading)."""

    def __init__(self, a, typestr=None):
        self.a = a
        self.__cuda_array_interface__ = {
            "shape": a.shape, "typestr": typestr or a.dtype.str,
            "data": (a.ctypes.data, False), "version": 3, "strides": None,
            "stream": None}


def err(label, fn):
    try:
        fn()
        print(label, "no error")
    except fp8rt.Error as e:
        print(f"{label}: {e}")


(got,) = m(DLPackOnly(ids))
print("dlpack host input: same bits", np.array_equal(got, ref))
buf = np.full(ref.shape, np.nan, np.float32)
res = m(ids, out=[buf])
print(f"out= buffer: same object {res[0] is buf}, same bits {np.array_equal(buf, ref)}")
buf2 = np.zeros_like(ref)
m(ids, out={"logits": buf2})
print("out= dict: same bits", np.array_equal(buf2, ref))
print("copies on the CPU:", m.last_run_copies())

wide = np.zeros((1, 64), np.int64)
wide[:, ::2] = ids
err("strided dlpack", lambda: m(DLPackOnly(wide[:, ::2])))
err("dlpack dtype", lambda: m(DLPackOnly(ids.astype(np.int32))))
err("out shape", lambda: m(ids, out=[np.zeros((1, 32, 511), np.float32)]))
ro = np.zeros(ref.shape, np.float32)
ro.flags.writeable = False
err("out read-only", lambda: m(ids, out=[ro]))
err("out count", lambda: m(ids, out=[buf, buf]))
err("out name", lambda: m(ids, out={"nope": buf}))
err("device input on CPU", lambda: m(FakeDeviceArray(ids), out=[buf]))
err("device cai dtype", lambda: m(FakeDeviceArray(ids.astype(np.float32))))
err("device outputs of an unknown library", lambda: m(FakeDeviceArray(ids)))
err("stream on CPU", lambda: m(ids, stream=12345))


# The C entry point directly: a memory kind it does not know, and options
# it cannot read.
def run_ex(memory=0, size=ctypes.sizeof(_RunOptions), flags=0):
    shape_in = (ctypes.c_int64 * 2)(*ids.shape)
    shape_out = (ctypes.c_int64 * 3)(*ref.shape)
    out = np.empty_like(ref)
    tin = (_TensorEx * 1)(_TensorEx(ids.ctypes.data, 7, 2, shape_in, memory, 0))
    tout = (_TensorEx * 1)(_TensorEx(out.ctypes.data, 1, 3, shape_out, 0, 0))
    opts = _RunOptions(size, flags, None)
    m._check(m._run_ex(m._m, tin, 1, tout, 1, ctypes.byref(opts)), "run")


err("memory kind", lambda: run_ex(memory=7))
err("options size", lambda: run_ex(size=4))
err("options flags", lambda: run_ex(flags=2))
# ... and the model is still usable, through version 1's entry point too.
out = np.empty_like(ref)
shape_in = (ctypes.c_int64 * 2)(*ids.shape)
shape_out = (ctypes.c_int64 * 3)(*ref.shape)
status = m._lib.fp8rt_model_run(
    m._m, (fp8rt._Tensor * 1)(fp8rt._Tensor(ids.ctypes.data, 7, 2, shape_in)), 1,
    (fp8rt._Tensor * 1)(fp8rt._Tensor(out.ctypes.data, 1, 3, shape_out)), 1)
print("v1 run still works:", status == 0 and np.array_equal(out, ref))

# A version-1 library (Inputs/fake-model.c): host arrays work, device
# arrays are refused by the wrapper; one that claims version 2 without its
# functions is not a model library.
v1 = fp8rt.Model(os.path.join(tmp, "fake.so"))
(y,) = v1()
try:
    v1(out=[FakeDeviceArray(np.zeros((2, 3), np.float32))])
    msg = "accepted"
except fp8rt.Error as e:
    msg = str(e)
print(f"version 1 library: abi {v1.abi_version}, outputs {y.shape}, device arrays: {msg}")
os.environ["FAKE_ABI"] = "2"
err("version 2 without run_ex", lambda: fp8rt.Model(os.path.join(tmp, "fake.so")))
