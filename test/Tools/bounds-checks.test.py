"""Drives bounds-checks.test: writes ONNX test data for Inputs/gathers.onnxtext,
runs the compiled library with fp8-run and through fp8rt, and compares
in-range results with numpy (the ONNX definitions written out below).

    bounds-checks.test.py DIR GPT2_INPUT_PB FP8_RUN [--state] [--device=cuda]

DIR holds gathers.so (or, with --state, delayed.so: GPT-2 with delayed
scaling, fed GPT2_INPUT_PB). scripts/gpu-check runs the same checks on the
H200 with CUDA libraries (--device=cuda), from its bundle's bin/."""
import os
import subprocess
import sys

import numpy as np

tmp, gpt2_input, fp8_run_exe = sys.argv[1], sys.argv[2], sys.argv[3]
device = [a for a in sys.argv[4:] if a.startswith("--device")]
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.dirname(os.path.dirname(here))
# fp8rt.py and onnx_tensor.py: from the checkout, or beside this file in
# gpu-check's bundle.
sys.path[:0] = [here, os.path.join(root, "scripts"),
                os.path.join(root, "runtime", "python")]
import fp8rt  # noqa: E402
import onnx_tensor  # noqa: E402


def fp8_run(*args):
    p = subprocess.run([fp8_run_exe, *args, *device], capture_output=True,
                       text=True)
    return p.returncode, (p.stderr.strip().splitlines() or [""])[-1]


if "--state" in sys.argv:
    ids = onnx_tensor.read_tensor(gpt2_input)[1]
    m = fp8rt.Model(os.path.join(tmp, "delayed.so"))
    m.run(ids)
    m.save_state(os.path.join(tmp, "before.state"))
    bad = ids.copy()
    bad[0, 3] = 512
    try:
        m.run(bad)
        print("token 512: accepted")
    except fp8rt.Error as e:
        print("token 512: Error:", e)
    # Several bad ids (GPT-2's 32 tokens are one row that a GPU reduces a
    # warp at a time): the first by position is the one reported.
    bad = ids.copy()
    bad[0, 20], bad[0, 5], bad[0, 31] = 600, -513, 700
    try:
        m.run(bad)
        print("tokens 600, -513, 700: accepted")
    except fp8rt.Error as e:
        print("tokens 600, -513, 700: Error:", e)
    m.save_state(os.path.join(tmp, "after.state"))
    same = lambda a, b: open(os.path.join(tmp, a), "rb").read() == \
        open(os.path.join(tmp, b), "rb").read()
    print("state unchanged by the refused run:", same("before.state", "after.state"))
    m.run(ids)
    m.save_state(os.path.join(tmp, "good.state"))
    print("state changed by a good run:", not same("before.state", "good.state"))
    sys.exit(0)

rng = np.random.default_rng(0)
D = rng.standard_normal((3, 4, 5)).astype(np.float32)
W = np.arange(55, dtype=np.float32).reshape(11, 5)
good = {
    "I": np.array([3, -1], np.int32),
    "E": rng.integers(-5, 5, (3, 4, 2)).astype(np.int64),
    "N": np.array([[0, 0], [2, 3], [-1, -4], [1, 2], [-3, 0], [0, -1]], np.int64),
    "T": rng.integers(-11, 11, (2, 7)).astype(np.int64),
}


def reference(x):
    wrap = lambda i, n: np.where(i < 0, i + n, i)
    G = np.take(D, wrap(x["I"], 4), axis=1)
    GE = np.take_along_axis(D, wrap(x["E"], 5), axis=2)
    n = x["N"]
    GN = D[wrap(n[:, 0], 3), wrap(n[:, 1], 4)]
    EMB = W[wrap(x["T"], 11)]
    return {"G": G, "GE": GE, "GN": GN, "EMB": EMB}


def write(folder, x, outputs=None):
    os.makedirs(folder, exist_ok=True)
    for k, name in enumerate(["D", "I", "E", "N", "T"]):
        onnx_tensor.write_tensor(os.path.join(folder, f"input_{k}.pb"),
                                 D if name == "D" else x[name], name)
    for k, (name, array) in enumerate((outputs or {}).items()):
        onnx_tensor.write_tensor(os.path.join(folder, f"output_{k}.pb"), array, name)


m = fp8rt.Model(os.path.join(tmp, "gathers.so"))
got = m.run_named(D=D, **good)
want = reference(good)
print("in range:", ", ".join(
    f"{k} {'ok' if np.array_equal(got[k], want[k]) else 'DIFFERS'}" for k in want))
write(os.path.join(tmp, "good"), good, want)
rc, _ = fp8_run(os.path.join(tmp, "gathers.so"), "--data", os.path.join(tmp, "good"))
print("fp8-run in range: exit", rc)

cases = [("I", (0,), 4, "4"), ("I", (1,), -5, "-5"),
         ("I", (0,), 2**31 - 1, "2147483647"),
         ("E", (2, 3, 1), 5, "5"), ("N", (4, 1), 4, "(0,4)"),
         ("N", (1, 0), 3, "(3,0)"), ("T", (1, 6), 11, "11"),
         ("T", (0, 0), 10**12, "1000000000000"),
         ("T", (1, 2), -2**63, "-9223372036854775808")]
for k, (name, at, value, label) in enumerate(cases):
    x = {k: v.copy() for k, v in good.items()}
    if name == "N" and label == "(0,4)":
        x["N"][4] = [0, 4]
    else:
        x[name][at] = value
    folder = os.path.join(tmp, f"bad_{k}_{name}")
    write(folder, x)
    rc, msg = fp8_run(os.path.join(tmp, "gathers.so"), "--data", folder)
    print(f"{name}={label}: fp8-run exit {rc}: {msg}")

x = {k: v.copy() for k, v in good.items()}
x["T"][0, 1] = 12
try:
    m.run_named(D=D, **x)
    print("python: accepted")
except fp8rt.Error as e:
    print("python: Error:", e)
got = m.run_named(D=D, **good)
print("python: the next good run:",
      "ok" if all(np.array_equal(got[k], want[k]) for k in want) else "DIFFERS")
