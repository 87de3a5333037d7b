"""fp8rt: call an fp8-compile model library from Python.

A thin ctypes wrapper over the C ABI of runtime/include/fp8rt/fp8rt.h; the
same for CPU libraries (fp8-compile --target=cpu) and CUDA libraries
(--target=sm_90a). Needs only numpy.

    import fp8rt
    model = fp8rt.Model("gpt2.so")
    print(model.device, model.inputs, model.outputs)
    (logits,) = model.run(input_ids)           # or model(input_ids)
    outs = model.run_named(input_ids=ids)      # {"logits": array}
    model.save_state("state.bin"); model.load_state("state.bin")

Arrays: numpy arrays (host memory, copied to the GPU by a CUDA library),
and any object with `__cuda_array_interface__` or `__dlpack__` (torch
tensors, CuPy arrays): a CUDA library reads device arrays in place and,
when inputs are torch or CuPy device arrays, returns its outputs as new
device arrays of the same library (no copy through the host). `out=`
names the output buffers (host or device); `stream=` (a torch/CuPy stream
or a CUstream handle) is the stream whose queued work the run waits for,
by default the stream the inputs' producer names. Device arrays are used
as they are: dtype and shape must match exactly (no conversion on the
device), and they must be C-contiguous. `model.last_run_copies()` counts
the bytes a run copied between host and device.

A library with dynamic dimensions (ABI 3, fp8-compile --input-shape
ids=1..8x1..64) takes inputs of any shape within the bounds
(`TensorInfo.bounds`, `.dim_names`; -1 in `.shape`) and returns outputs of
the shapes they imply (`model.output_shapes(input_shapes)`); an input
outside its bounds raises fp8rt.Error naming it and its bounds.

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
import sys

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


class _TensorEx(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32),
                ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("memory", ctypes.c_int32), ("reserved", ctypes.c_int32)]


class _RunOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("flags", ctypes.c_uint32),
                ("stream", ctypes.c_void_p)]


class _CopyStats(ctypes.Structure):
    _fields_ = [("host_to_device", ctypes.c_uint64),
                ("device_to_host", ctypes.c_uint64),
                ("device_to_device", ctypes.c_uint64),
                ("copies", ctypes.c_uint64)]


_HOST, _DEVICE = 0, 1  # fp8rt_memory

# DLPack (dlpack.h): the legacy "dltensor" capsule's DLManagedTensor.
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13
# (type code, bits) -> ONNX dtype codes such an array may feed.
_DL_DTYPES = {(0, 8): (3,), (0, 16): (5,), (0, 32): (6,), (0, 64): (7,),
              (1, 8): (2, 17, 19), (1, 16): (4, 16), (1, 32): (12,),
              (1, 64): (13,), (2, 16): (10,), (2, 32): (1,), (2, 64): (11,),
              (4, 16): (16,), (6, 8): (9,)}


def _capsule_tensor(capsule):
    """The DLTensor inside a legacy DLPack capsule (borrowed: the capsule
    stays unconsumed and its own destructor releases the tensor)."""
    api = ctypes.pythonapi
    api.PyCapsule_GetPointer.restype = ctypes.c_void_p
    api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    if not api.PyCapsule_IsValid(capsule, b"dltensor"):
        raise Error("__dlpack__ returned something other than an unconsumed "
                    "'dltensor' capsule")
    return _DLTensor.from_address(api.PyCapsule_GetPointer(capsule, b"dltensor"))


def _c_contiguous(shape, strides, itemsize):
    """Whether `strides` describe a dense row-major layout (size-1 dims
    ignored), in units where one element is `itemsize`: byte strides with
    the element size (__cuda_array_interface__), element strides with 1
    (DLPack)."""
    want = itemsize
    for dim, stride in reversed(list(zip(shape, strides))):
        if dim != 1 and stride != want:
            return False
        want *= dim
    return True


def _stream_handle(stream):
    """A CUstream handle (int) from None, an int, or a torch/CuPy stream."""
    if stream is None or isinstance(stream, int):
        return stream
    for attr in ("cuda_stream", "ptr", "handle"):
        if hasattr(stream, attr):
            return int(getattr(stream, attr))
    raise Error(f"stream: {type(stream).__name__} is not a CUDA stream (give "
                "a torch.cuda.Stream, a cupy Stream or a CUstream handle)")


class _View:
    """Where an argument's data is: pointer, memory kind, shape, and the
    objects that must stay alive during the run."""

    def __init__(self, ptr, memory, shape, keep=(), stream=None):
        self.ptr, self.memory, self.shape = ptr, memory, tuple(shape)
        self.keep, self.stream = keep, stream


def _torch_fp8_as_bytes(a):
    """torch float8 tensors as uint8 views (the ABI's FP8 encoding)."""
    if type(a).__module__.split(".")[0] == "torch" and "float8" in str(
            getattr(a, "dtype", "")):
        # (torch is loaded: `a` is one of its tensors.)
        return a.view(sys.modules["torch"].uint8)
    return a


def _cuda_array_view(a, cai, info, what, writable):
    shape = tuple(int(d) for d in cai["shape"])
    dt = np.dtype(cai["typestr"])
    if dt != info.numpy_dtype:
        raise Error(f"{what}: device array of {dt} given, the model takes "
                    f"{_NAMES[info.dtype]} (device arrays are not converted)")
    strides = cai.get("strides")
    if strides is not None and not _c_contiguous(shape, strides, dt.itemsize):
        raise Error(f"{what}: the device array is not C-contiguous")
    ptr, readonly = cai["data"]
    if writable and readonly:
        raise Error(f"{what}: the device array is read-only")
    return _View(ptr, _DEVICE, shape, keep=(a,), stream=cai.get("stream"))


def _dlpack_view(a, info, what, stream):
    dev_type, dev_id = a.__dlpack_device__()
    on_device = dev_type in (_DL_CUDA, _DL_CUDA_MANAGED)
    if dev_type not in (_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED):
        raise Error(f"{what}: DLPack device type {dev_type} is neither the "
                    "host nor CUDA")
    # For CUDA data the producer makes `stream` wait for its own work (1:
    # the legacy default stream, what the run then waits for).
    capsule = a.__dlpack__(stream=(stream or 1)) if on_device else a.__dlpack__()
    t = _capsule_tensor(capsule)
    shape = tuple(t.shape[d] for d in range(t.ndim))
    code = (t.dtype.code, t.dtype.bits)
    if t.dtype.lanes != 1 or info.dtype not in _DL_DTYPES.get(code, ()):
        raise Error(f"{what}: DLPack dtype (code {code[0]}, {code[1]} bits, "
                    f"{t.dtype.lanes} lanes) given, the model takes "
                    f"{_NAMES[info.dtype]} (such arrays are not converted)")
    if t.strides and not _c_contiguous(
            shape, [t.strides[d] for d in range(t.ndim)], 1):
        raise Error(f"{what}: the array is not C-contiguous")
    ptr = (t.data or 0) + t.byte_offset
    return _View(ptr, _DEVICE if on_device else _HOST, shape,
                 keep=(a, capsule), stream=(stream or 1) if on_device else None)


def _empty_like_library(proto, info, shape):
    """A new device array of `shape` for output `info` from the library of
    the device array `proto` (torch or CuPy), or None."""
    lib = type(proto).__module__.split(".")[0]
    # (The library is loaded: `proto` is one of its arrays.)
    if lib == "torch":
        torch = sys.modules["torch"]
        names = {17: "uint8", 19: "uint8", 4: "uint16", 12: "uint32",
                 13: "uint64", 9: "bool", 16: "bfloat16"}
        dtype = getattr(torch, names.get(info.dtype, str(info.numpy_dtype)))
        return torch.empty(tuple(shape), dtype=dtype, device=proto.device)
    if lib == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(proto.device.id):
            return cupy.empty(tuple(shape), dtype=info.numpy_dtype)
    return None


class TensorInfo:
    """Name, ONNX dtype code, numpy dtype and shape of a model tensor.

    A dynamic dimension (ABI 3) is -1 in `shape`; for inputs, `bounds` has
    each dimension's inclusive (lo, hi) (lo == hi for a static one) and
    `dim_names` its name (None for a static one)."""

    def __init__(self, name, dtype, shape, bounds=None, dim_names=None):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.numpy_dtype = np.dtype(_DTYPES[dtype])
        self.bounds = tuple(bounds) if bounds is not None else tuple(
            (d, d) for d in self.shape)
        self.dim_names = (tuple(dim_names) if dim_names is not None
                          else (None,) * len(self.shape))

    @property
    def dynamic(self):
        return any(d < 0 for d in self.shape)

    def shape_text(self):
        """The shape as text, a dynamic dimension as its bounds: "(1, 32)",
        "(1..8, 1..64)"."""
        if not self.dynamic:
            return str(self.shape)
        # Outputs have no bounds of their own: "?" (Model.output_shapes).
        dims = [str(d) if d >= 0 else f"{lo}..{hi}" if lo >= 0 else "?"
                for d, (lo, hi) in zip(self.shape, self.bounds)]
        return "(" + ", ".join(dims) + ")"

    def __repr__(self):
        return (f"TensorInfo({self.name!r}, {_NAMES.get(self.dtype, self.dtype)}, "
                f"{self.shape_text()})")


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
        self.abi_version = lib.fp8rt_abi_version()
        self._run_ex = None
        if self.abi_version >= 2:
            if not hasattr(lib, "fp8rt_model_run_ex"):
                raise Error(f"{path} says ABI version {self.abi_version} but "
                            "has no fp8rt_model_run_ex: not an fp8-compile "
                            "model library")
            self._run_ex = lib.fp8rt_model_run_ex
            self._run_ex.restype = i32
            self._run_ex.argtypes = [vp, ctypes.POINTER(_TensorEx), i32,
                                     ctypes.POINTER(_TensorEx), i32,
                                     ctypes.POINTER(_RunOptions)]
            lib.fp8rt_model_last_run_copies.restype = i32
            lib.fp8rt_model_last_run_copies.argtypes = [
                vp, ctypes.POINTER(_CopyStats)]
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

        self._shape_for = None
        if self.abi_version >= 3:
            for name in ("fp8rt_model_input_bounds", "fp8rt_model_input_dim_name",
                         "fp8rt_model_output_shape_for"):
                if not hasattr(lib, name):
                    raise Error(f"{path} says ABI version {self.abi_version} "
                                f"but has no {name}: not an fp8-compile model "
                                "library")
            lib.fp8rt_model_input_bounds.restype = i32
            lib.fp8rt_model_input_bounds.argtypes = [
                vp, i32, ctypes.POINTER(ctypes.c_int64),
                ctypes.POINTER(ctypes.c_int64)]
            lib.fp8rt_model_input_dim_name.restype = cp
            lib.fp8rt_model_input_dim_name.argtypes = [vp, i32, i32]
            self._shape_for = lib.fp8rt_model_output_shape_for
            self._shape_for.restype = i32
            self._shape_for.argtypes = [vp, ctypes.POINTER(_Tensor), i32, i32,
                                        ctypes.POINTER(ctypes.c_int64)]

        def info(kind, i):
            get = lambda what: getattr(lib, f"fp8rt_model_{kind}_{what}")(self._m, i)
            rank, shape = get("rank"), get("shape")
            shape = [shape[d] for d in range(rank)]
            bounds = names = None
            if kind == "input" and self._shape_for is not None and rank > 0:
                lo, hi = (ctypes.c_int64 * rank)(), (ctypes.c_int64 * rank)()
                self._check(lib.fp8rt_model_input_bounds(self._m, i, lo, hi),
                            "input_bounds")
                bounds = list(zip(lo, hi))
                names = [lib.fp8rt_model_input_dim_name(self._m, i, d)
                         for d in range(rank)]
                names = [n.decode() if n else None for n in names]
            return TensorInfo(get("name").decode(), get("dtype"), shape,
                              bounds, names)

        self.inputs = [info("input", i)
                       for i in range(lib.fp8rt_model_num_inputs(self._m))]
        self.outputs = [info("output", i)
                        for i in range(lib.fp8rt_model_num_outputs(self._m))]

        # ABI 4: the input each output updates in place (-1: none).
        self.tied_inputs = [-1] * len(self.outputs)
        if self.abi_version >= 4 and hasattr(lib, "fp8rt_model_output_tied_input"):
            lib.fp8rt_model_output_tied_input.restype = i32
            lib.fp8rt_model_output_tied_input.argtypes = [vp, i32]
            self.tied_inputs = [lib.fp8rt_model_output_tied_input(self._m, k)
                                for k in range(len(self.outputs))]

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

    def _view(self, a, info, what, stream, writable):
        """A _View of argument `a` for tensor `info`: numpy (and anything
        np.asarray takes) as host memory, converted only when lossless for
        inputs; device or DLPack arrays as they are."""
        a = _torch_fp8_as_bytes(a)
        if not isinstance(a, np.ndarray):
            cai = None
            try:
                cai = a.__cuda_array_interface__
            except (AttributeError, TypeError, RuntimeError):
                pass  # none, or not for this dtype (torch's bf16): DLPack
            if cai is not None:
                return _cuda_array_view(a, cai, info, what, writable)
            if hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__"):
                return _dlpack_view(a, info, what, stream)
        if writable:
            if (not isinstance(a, np.ndarray) or a.dtype != info.numpy_dtype
                    or not a.flags.c_contiguous or not a.flags.writeable):
                raise Error(f"{what}: give a writable C-contiguous numpy "
                            f"array of {info.numpy_dtype} (or a device array)")
        elif (type(a) is np.ndarray and a.dtype == info.numpy_dtype
              and a.flags.c_contiguous):
            pass  # the common case, as it is
        else:
            a = np.asarray(a)
            if a.dtype != info.numpy_dtype:
                if not np.can_cast(a.dtype, info.numpy_dtype, casting="safe"):
                    raise Error(f"{what}: {a.dtype} given, the model takes "
                                f"{_NAMES[info.dtype]}")
                a = a.astype(info.numpy_dtype)
            # Contiguous, and still rank 0 for scalars (unlike
            # np.ascontiguousarray, which makes them 1-D).
            a = np.require(a, requirements="C")
        return _View(a.ctypes.data, _HOST, a.shape, keep=(a,))

    def run(self, *arrays, out=None, stream=None):
        """Runs the model on one array per input (in order); returns a list
        with one array per output: the `out` buffers when given (a sequence,
        or a dict by output name), new device arrays when inputs are torch or
        CuPy device arrays, else new numpy arrays. Inputs must have the
        compiled shape; numpy inputs are converted to the input's dtype only
        if that is lossless. `stream`: see the module's docstring."""
        if self._m is None:
            raise Error("the model is closed")
        if len(arrays) != len(self.inputs):
            raise Error(f"{len(arrays)} inputs given, the model takes "
                        f"{len(self.inputs)} ({[i.name for i in self.inputs]})")
        stream = _stream_handle(stream)
        ins = [self._view(a, info, f"input '{info.name}'", stream, False)
               for a, info in zip(arrays, self.inputs)]
        for v, info in zip(ins, self.inputs):
            if len(v.shape) != len(info.shape) or any(
                    g != w for g, w in zip(v.shape, info.shape) if w >= 0):
                raise Error(f"input '{info.name}': shape {v.shape} given, the "
                            f"model was compiled for {info.shape_text()}")
        # Dynamic dimensions: the outputs' shapes for these inputs (the
        # library checks the inputs' bounds here).
        out_shapes = [info.shape for info in self.outputs]
        if any(info.dynamic for info in self.outputs):
            out_shapes = self.output_shapes([v.shape for v in ins])
        device_in = [a for a, v in zip(arrays, ins) if v.memory == _DEVICE]
        if stream is None:  # the producer's stream, if it names one
            stream = next((v.stream for v in ins if v.stream is not None), None)
        if isinstance(out, dict):
            unknown = set(out) - {o.name for o in self.outputs}
            if unknown:
                raise Error(f"out: unknown outputs {sorted(unknown)}")
            out = [out.get(o.name) for o in self.outputs]
        elif out is not None and len(out) != len(self.outputs):
            raise Error(f"out: {len(out)} buffers given, the model has "
                        f"{len(self.outputs)} outputs")
        results = []
        for k, info in enumerate(self.outputs):
            buf = out[k] if out is not None else None
            if buf is None and device_in:
                buf = _empty_like_library(device_in[0], info, out_shapes[k])
                if buf is None:
                    raise Error(f"inputs are device arrays of "
                                f"{type(device_in[0]).__name__}: give the "
                                f"outputs' buffers with out=")
            if buf is None:
                buf = np.empty(out_shapes[k], info.numpy_dtype)
            results.append(buf)
        outs = [self._view(b, info, f"output '{info.name}'", stream, True)
                for b, info in zip(results, self.outputs)]
        for v, info, want in zip(outs, self.outputs, out_shapes):
            if v.shape != tuple(want):
                raise Error(f"output '{info.name}': buffer of shape {v.shape} "
                            f"given, the output has {tuple(want)}")
        uses_device = any(v.memory == _DEVICE for v in ins + outs)
        if self._run_ex is None and (uses_device or stream is not None):
            raise Error(f"this library has ABI version {self.abi_version}: it "
                        "takes host (numpy) arrays only")
        # The tensor descriptions are built once per handle (shapes are the
        # signature's, checked above); a run only sets data and memory kind.
        in_arr, out_arr = self._descriptors()
        for arr, views in ((in_arr, ins), (out_arr, outs)):
            for k, v in enumerate(views):
                arr[k].data = v.ptr
                if self._run_ex is not None:
                    arr[k].memory = v.memory
        if self._shape_for is not None:  # this run's sizes
            for shape, v in zip(self._shapes, ins + outs):
                for d, size in enumerate(v.shape):
                    shape[d] = size
        if self._run_ex is None:
            status = self._lib.fp8rt_model_run(self._m, in_arr, len(ins),
                                               out_arr, len(outs))
        else:
            self._options.stream = stream or None
            status = self._run_ex(self._m, in_arr, len(ins), out_arr,
                                  len(outs), ctypes.byref(self._options))
        self._check(status, "run")
        return results

    def output_shapes(self, input_shapes):
        """The outputs' shapes for a run on inputs of `input_shapes` (one
        tuple per input); raises Error naming the input when a dynamic
        dimension is outside its bounds (ABI 3; a static model's shapes
        otherwise)."""
        if self._shape_for is None:
            return [info.shape for info in self.outputs]
        if len(input_shapes) != len(self.inputs):
            raise Error(f"{len(input_shapes)} input shapes given, the model "
                        f"takes {len(self.inputs)}")
        keep = [(ctypes.c_int64 * max(1, len(s)))(*s) for s in input_shapes]
        arr = (_Tensor * max(1, len(keep)))()
        for k, (shape, info) in enumerate(zip(keep, self.inputs)):
            arr[k].dtype, arr[k].rank = info.dtype, len(input_shapes[k])
            arr[k].shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        result = []
        for i, info in enumerate(self.outputs):
            out = (ctypes.c_int64 * max(1, len(info.shape)))()
            self._check(self._shape_for(self._m, arr, len(keep), i, out), "run")
            result.append(tuple(out[d] for d in range(len(info.shape))))
        return result

    def _descriptors(self):
        """The handle's input and output tensor arrays (fp8rt_tensor or
        fp8rt_tensor_ex), with dtype, rank and shape from the signature."""
        if getattr(self, "_arrays", None) is None:
            kind = _Tensor if self._run_ex is None else _TensorEx
            self._shapes = [(ctypes.c_int64 * max(1, len(i.shape)))(*i.shape)
                            for i in self.inputs + self.outputs]
            arrays = []
            for infos, shapes in ((self.inputs, self._shapes[:len(self.inputs)]),
                                  (self.outputs, self._shapes[len(self.inputs):])):
                arr = (kind * max(1, len(infos)))()
                for k, (info, shape) in enumerate(zip(infos, shapes)):
                    arr[k].dtype, arr[k].rank = info.dtype, len(info.shape)
                    arr[k].shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
                arrays.append(arr)
            self._arrays = tuple(arrays)
            self._options = _RunOptions(ctypes.sizeof(_RunOptions), 0, None)
        return self._arrays

    def last_run_copies(self):
        """Bytes the last successful run copied around the model's own work:
        {"host_to_device", "device_to_host", "device_to_device", "copies"}
        (all 0 on the CPU, and for a library older than ABI 2: None)."""
        if self._run_ex is None:
            return None
        stats = _CopyStats()
        self._check(self._lib.fp8rt_model_last_run_copies(
            self._m, ctypes.byref(stats)), "last_run_copies")
        return {name: getattr(stats, name) for name, _ in _CopyStats._fields_}

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
