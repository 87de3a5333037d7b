#!/usr/bin/env python3
"""Runs small attention models (ONNX text) through fp8-compile and fp8-run
on random inputs against onnxruntime-node on the same inputs.

    ort_check.py --build BUILD --work DIR [--ort-prefix P] [--node N]
                 [--rtol R] MODEL.onnxtext...

For each model: the binary model and a template of its inputs go to
DIR/<name>/, scripts/make_random_testdata.py draws the inputs (seed 1) and
has onnxruntime-node compute the outputs, fp8-compile builds the library
(attention fused by default) and fp8-run compares. Prints
"<name>: <n> fp8.attention" and fp8-run's table; exits non-zero when an
output is beyond --rtol.
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.parser

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from onnx_tensor import DTYPES, write_tensor  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--ort-prefix", default=None)
    ap.add_argument("--node", default="node")
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    failed = 0
    for path in args.models:
        name = os.path.splitext(os.path.basename(path))[0]
        text = "".join(line for line in open(path)
                       if not line.lstrip().startswith("//"))
        model = onnx.parser.parse_model(text)
        mdir = os.path.join(args.work, name)
        template = os.path.join(mdir, "template")
        os.makedirs(template, exist_ok=True)
        onnx.save(model, os.path.join(mdir, "model.onnx"))
        for i, vi in enumerate(model.graph.input):
            tt = vi.type.tensor_type
            shape = [d.dim_value for d in tt.shape.dim]
            write_tensor(os.path.join(template, f"input_{i}.pb"),
                         np.zeros(shape, DTYPES[tt.elem_type][0]), vi.name,
                         tt.elem_type)
        data = os.path.join(mdir, "seed1")
        gen = [sys.executable, os.path.join(ROOT, "scripts", "make_random_testdata.py"),
               mdir, "--seed", "1", "--out", data, "--template", template,
               "--node", args.node]
        if args.ort_prefix:
            gen += ["--ort-prefix", args.ort_prefix]
        subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
        bindir = os.path.join(args.build, "bin")
        ir = os.path.join(mdir, "model.mlir")
        subprocess.run([os.path.join(bindir, "fp8-compile"), path, "--emit=mlir",
                        "-o", ir, "--quiet"], check=True)
        fused = open(ir).read().count("fp8.attention ")
        print(f"{name}: {fused} fp8.attention", flush=True)
        lib = os.path.join(mdir, "model.so")
        subprocess.run([os.path.join(bindir, "fp8-compile"), path, "-o", lib, "--quiet"],
                       check=True)
        run = subprocess.run([os.path.join(bindir, "fp8-run"), lib, "--data", data,
                              "--rtol", str(args.rtol)])
        failed |= run.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
