"""fp8rt: call an fp8-compile model library from Python with numpy arrays.

A thin ctypes wrapper over the C ABI of runtime/include/fp8rt/fp8rt.h; the
same for CPU libraries (fp8-compile --target=cpu) and CUDA libraries
(--target=sm_90a: inputs and outputs are host arrays, the library copies
them to and from the GPU). Needs only numpy.

    import fp8rt
    model = fp8rt.Model("gpt2.so")
    print(model.device, model.inputs, model.outputs)
    (logits,) = model.run(input_ids)           # or model(input_ids)
    outs = model.run_named(input_ids=ids)      # {"logits": array}
    model.save_state("state.bin"); model.load_state("state.bin")

Errors from the library raise fp8rt.Error with its message (which names
the tensor, the CUDA error and the kernel where one is involved).

The package also holds the tools around a model (docs/RuntimeABI.md,
"Python"): fp8rt.report (`fp8-report`: the numerics report of an --analyze
build, calibration, fallback policies, plots), fp8rt.kv_scales
(`fp8-kv-scales`: static KV-cache scales) and fp8rt.tensors (TensorProto
and .npy files without onnx).
"""
import ctypes
import os

import numpy as np

__all__ = ["Model", "Error", "TensorInfo", "__version__"]

# fp8-opt's version (CMakeLists.txt's project(); test/Tools/python-package.test
# checks that they agree).
__version__ = "0.1.0"

# ONNX TensorProto.DataType (= fp8rt_dtype) -> numpy dtype. FP8 and bf16
# have no numpy type: such arrays are uint8 / uint16 holding the encodings.
_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
           6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16,
           11: np.float64, 12: np.uint32, 13: np.uint64, 16: np.uint16,
           17: np.uint8, 19: np.uint8}
_NAMES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
          6: "int32", 7: "int64", 9: "bool", 10: "float16", 11: "float64",
          12: "uint32", 13: "uint64", 16: "bfloat16", 17: "float8_e4m3fn",
          19: "float8_e5m2"}


class Error(RuntimeError):
    """A failure reported by the model library."""


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64))]


class TensorInfo:
    """Name, ONNX dtype code, numpy dtype and shape of a model tensor."""

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.numpy_dtype = np.dtype(_DTYPES[dtype])

    def __repr__(self):
        return (f"TensorInfo({self.name!r}, {_NAMES.get(self.dtype, self.dtype)}, "
                f"{self.shape})")


class Model:
    """One instance of a compiled model (fp8rt_model_create).

    `weights`: the weights file of a library compiled with external weights
    (docs/Weights.md); by default $FP8RT_WEIGHTS, else the file fp8-compile
    wrote beside the library."""

    def __init__(self, path, weights=None):
        path = os.path.abspath(path)
        try:
            self._lib = lib = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as err:
            raise Error(f"cannot load {path}: {err}") from None
        vp, i32, cp = ctypes.c_void_p, ctypes.c_int32, ctypes.c_char_p
        sigs = {
            "fp8rt_abi_version": (i32, []),
            "fp8rt_model_create": (vp, [ctypes.POINTER(cp)]),
            "fp8rt_model_destroy": (None, [vp]),
            "fp8rt_model_num_inputs": (i32, [vp]),
            "fp8rt_model_num_outputs": (i32, [vp]),
            "fp8rt_model_input_name": (cp, [vp, i32]),
            "fp8rt_model_output_name": (cp, [vp, i32]),
            "fp8rt_model_input_dtype": (i32, [vp, i32]),
            "fp8rt_model_output_dtype": (i32, [vp, i32]),
            "fp8rt_model_input_rank": (i32, [vp, i32]),
            "fp8rt_model_output_rank": (i32, [vp, i32]),
            "fp8rt_model_input_shape": (ctypes.POINTER(ctypes.c_int64), [vp, i32]),
            "fp8rt_model_output_shape": (ctypes.POINTER(ctypes.c_int64), [vp, i32]),
            "fp8rt_model_run": (i32, [vp, ctypes.POINTER(_Tensor), i32,
                                      ctypes.POINTER(_Tensor), i32]),
            "fp8rt_model_last_error": (cp, [vp]),
            "fp8rt_model_num_state_tensors": (i32, [vp]),
            "fp8rt_model_save_state": (i32, [vp, cp]),
            "fp8rt_model_load_state": (i32, [vp, cp]),
        }
        for name, (res, args) in sigs.items():
            try:
                fn = getattr(lib, name)
            except AttributeError:
                raise Error(f"{path} is not an fp8-compile model library "
                            f"(no {name})") from None
            fn.restype, fn.argtypes = res, args
        self.device = "cpu"
        if hasattr(lib, "fp8rt_model_device"):
            lib.fp8rt_model_device.restype = cp
            self.device = lib.fp8rt_model_device().decode()
        err = cp()
        if weights is None:
            self._m = lib.fp8rt_model_create(ctypes.byref(err))
        else:
            if not hasattr(lib, "fp8rt_model_create_with_weights"):
                raise Error(f"{path} predates external weights: it takes no "
                            "weights file")
            create = lib.fp8rt_model_create_with_weights
            create.restype, create.argtypes = vp, [cp, ctypes.POINTER(cp)]
            self._m = create(os.fsencode(weights), ctypes.byref(err))
        if not self._m:
            raise Error((err.value or b"fp8rt_model_create failed").decode())

        def info(kind, i):
            get = lambda what: getattr(lib, f"fp8rt_model_{kind}_{what}")(self._m, i)
            rank, shape = get("rank"), get("shape")
            return TensorInfo(get("name").decode(), get("dtype"),
                              [shape[d] for d in range(rank)])

        self.inputs = [info("input", i)
                       for i in range(lib.fp8rt_model_num_inputs(self._m))]
        self.outputs = [info("output", i)
                        for i in range(lib.fp8rt_model_num_outputs(self._m))]

    def close(self):
        if getattr(self, "_m", None):
            self._lib.fp8rt_model_destroy(self._m)
            self._m = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, status, what):
        if status != 0:
            msg = self._lib.fp8rt_model_last_error(self._m).decode()
            if not msg:
                msg = f"status {status}"
            # The library's state messages already say which call failed.
            raise Error(msg if msg.startswith(f"{what}:") else f"{what}: {msg}")

    @staticmethod
    def _describe(array, info, keep):
        shape = (ctypes.c_int64 * max(1, array.ndim))(*array.shape)
        keep.append(shape)
        return _Tensor(array.ctypes.data, info.dtype, array.ndim, shape)

    def run(self, *arrays):
        """Runs the model on one array per input (in order); returns a list
        of new arrays, one per output. Inputs must have the compiled shape;
        they are converted to the input's dtype only if that is lossless."""
        if self._m is None:
            raise Error("the model is closed")
        if len(arrays) != len(self.inputs):
            raise Error(f"{len(arrays)} inputs given, the model takes "
                        f"{len(self.inputs)} ({[i.name for i in self.inputs]})")
        keep, ins = [], []
        for a, info in zip(arrays, self.inputs):
            a = np.asarray(a)
            if a.dtype != info.numpy_dtype:
                if not np.can_cast(a.dtype, info.numpy_dtype, casting="safe"):
                    raise Error(f"input '{info.name}': {a.dtype} given, the "
                                f"model takes {_NAMES[info.dtype]}")
                a = a.astype(info.numpy_dtype)
            if a.shape != info.shape:
                raise Error(f"input '{info.name}': shape {a.shape} given, the "
                            f"model was compiled for {info.shape}")
            # Contiguous, and still rank 0 for scalars (unlike
            # np.ascontiguousarray, which makes them 1-D).
            a = np.require(a, requirements="C")
            keep.append(a)
            ins.append(self._describe(a, info, keep))
        outs = [np.empty(o.shape, o.numpy_dtype) for o in self.outputs]
        outd = [self._describe(o, info, keep) for o, info in zip(outs, self.outputs)]
        in_arr = (_Tensor * max(1, len(ins)))(*ins)
        out_arr = (_Tensor * max(1, len(outd)))(*outd)
        self._check(self._lib.fp8rt_model_run(self._m, in_arr, len(ins),
                                                out_arr, len(outd)), "run")
        return outs

    __call__ = run

    def run_named(self, **inputs):
        """run() with inputs by name; returns {output name: array}."""
        missing = [i.name for i in self.inputs if i.name not in inputs]
        extra = set(inputs) - {i.name for i in self.inputs}
        if missing or extra:
            raise Error(f"inputs missing {missing}, unknown {sorted(extra)}")
        outs = self.run(*(inputs[i.name] for i in self.inputs))
        return {info.name: o for info, o in zip(self.outputs, outs)}

    @property
    def num_state_tensors(self):
        return self._lib.fp8rt_model_num_state_tensors(self._m)

    def save_state(self, path):
        """Writes the FP8 state (delayed-scaling histories) atomically."""
        self._check(self._lib.fp8rt_model_save_state(
            self._m, os.fsencode(path)), "save_state")

    def load_state(self, path):
        """Reads a state file written by the same model; a corrupt or
        mismatched file raises Error and leaves the state unchanged."""
        self._check(self._lib.fp8rt_model_load_state(
            self._m, os.fsencode(path)), "load_state")
