"""Helpers of dynamic-shapes-abi.test (the model: Y = reshape(reshape(X) @
W), K = concat(P, X) along dimension 1).

    write DIR B S P     input_N.pb for batch B, sequence S, past P
    check DATA OUT      fp8-run --save's outputs against numpy
    wrapper LIB SRC     the Python wrapper (runtime/python/fp8rt)
    signature LIB       the library's signature text (__fp8_model_signature)
    append LIB SRC      Inputs/dynamic-append-one.onnxtext's library (K =
                        concat(P, N) of 1+past rows, R = K[:, 1:]) through
                        the wrapper at past = 0 and 5
"""
import os
import sys

import numpy as np


def main():
    mode = sys.argv[1]
    if mode == "signature-bytes":
        # A CUDA library, which needs libcuda to load: the signature text
        # from the file's bytes (the one "fp8rt-signature" string).
        data = open(sys.argv[2], "rb").read()
        at = data.index(b"fp8rt-signature ")
        print(data[at:data.index(b"\0", at)].decode(), end="")
        return
    if mode == "signature":
        import ctypes
        lib = ctypes.CDLL(os.path.abspath(sys.argv[2]))
        # A NUL-terminated char array: read from its address up to the NUL.
        first = ctypes.c_char.in_dll(lib, "__fp8_model_signature")
        text = ctypes.cast(ctypes.addressof(first), ctypes.c_char_p).value
        print(text.decode(), end="")
        return
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(os.path.dirname(here))
    sys.path.insert(0, os.path.join(src, "scripts"))
    from onnx_tensor import read_tensor, write_tensor
    if mode == "write":
        d, b, s, p = sys.argv[2], *map(int, sys.argv[3:6])
        r = np.random.default_rng(0)
        for i, (name, shape) in enumerate([("X", (b, s, 8)), ("P", (b, p, 8)), ("W", (8, 4))]):
            write_tensor(f"{d}/input_{i}.pb", r.standard_normal(shape).astype(np.float32), name)
    elif mode == "check":
        data, out = sys.argv[2:4]
        x, p, w = (read_tensor(f"{data}/input_{i}.pb")[1] for i in range(3))
        y, k = (read_tensor(f"{out}/output_{i}.pb")[1] for i in range(2))
        print("Y", y.shape, bool(np.abs(y - x @ w).max() < 1e-5),
              "K", k.shape, bool(np.array_equal(k, np.concatenate([p, x], 1))))
    elif mode == "wrapper":
        sys.path.insert(0, os.path.join(sys.argv[3], "runtime", "python"))
        import fp8rt
        m = fp8rt.Model(sys.argv[2])
        print("inputs: " + ", ".join(f"{i.name} {i.shape_text()}" for i in m.inputs))
        print("outputs: " + ", ".join(f"{i.name} {i.shape_text()}" for i in m.outputs))
        print("dim names of P:", m.inputs[1].dim_names)
        r = np.random.default_rng(1)
        x = r.standard_normal((2, 3, 8)).astype(np.float32)
        p = r.standard_normal((2, 5, 8)).astype(np.float32)
        w = r.standard_normal((8, 4)).astype(np.float32)
        print("output_shapes:", m.output_shapes([x.shape, p.shape, w.shape]))
        y, k = m.run(x, p, w)
        shared = np.zeros(80, np.float32)
        shared[:80] = p.ravel()
        print(f"run: Y {y.shape} {bool(np.abs(y - x @ w).max() < 1e-5)}, "
              f"K {k.shape} {bool(np.array_equal(k, np.concatenate([p, x], 1)))}")
        for label, fn in [
                ("too long", lambda: m.run(np.zeros((2, 65, 8), np.float32), p, w)),
                ("wrong out", lambda: m.run(x, p, w, out={"K": np.zeros((2, 7, 8), np.float32)})),
                ("static dimension", lambda: m.run(x, p, np.zeros((8, 5), np.float32))),
                # Y's buffer 64 bytes into P's (2 x 5 x 8 floats this run;
                # 8 of them are its static part): they overlap.
                ("output inside a dynamic input",
                 lambda: m.run(x, shared[:80].reshape(2, 5, 8), w,
                               out={"Y": shared[16:40].reshape(2, 3, 4)}))]:
            try:
                fn()
                print(label, "ran")
            except fp8rt.Error as e:
                print(f"{label}: {e}")
        y2, k2 = m.run(x, p, w)
        print("still runs:", bool(np.array_equal(y, y2) and np.array_equal(k, k2)))
    elif mode == "append":
        sys.path.insert(0, os.path.join(sys.argv[3], "runtime", "python"))
        import fp8rt
        m = fp8rt.Model(sys.argv[2])
        print("outputs: " + ", ".join(f"{i.name} {i.shape_text()}" for i in m.outputs))
        r = np.random.default_rng(2)
        n = r.standard_normal((1, 1, 4)).astype(np.float32)
        for past in (0, 5):
            p = r.standard_normal((1, past, 4)).astype(np.float32)
            k, rest = m.run(p, n)
            want = np.concatenate([p, n], 1)
            print(f"past {past}: K {k.shape} {bool(np.array_equal(k, want))}, "
                  f"R {rest.shape} {bool(np.array_equal(rest, want[:, 1:]))}")


if __name__ == "__main__":
    main()
