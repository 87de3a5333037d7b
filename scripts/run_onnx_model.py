#!/usr/bin/env python3
"""Compile an ONNX model with fp8-compile and run it with fp8-run on an ONNX
test-data folder, comparing with the stored reference outputs.

    run_onnx_model.py MODEL_DIR [--data DIR] [--rtol R] [--recipe R] [--build BUILD] [--work DIR]

MODEL_DIR holds model.onnx and test_data_set_0/ (input_N.pb, output_N.pb).
Input shapes are pinned from the test data (`--input-shape name=...`), so
models exported with dynamic axes compile too. Prints a header line
"<model>: N inputs, M outputs" and then fp8-run's per-output table (max abs
error, relative L2 error, cosine); exits non-zero when fp8-compile fails or
an output is beyond --rtol (default 1e-5).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_tensor import input_shape_args, read_test_inputs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--data", help="test data folder (default MODEL_DIR/test_data_set_0)")
    ap.add_argument("--rtol", type=float, default=1e-5,
                    help="largest relative L2 error accepted per output")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--work", default=None, help="where the model library goes")
    ap.add_argument("--recipe", default="none",
                    help="FP8 recipe for fp8-compile (none, delayed, current, rowwise, block, mxfp8)")
    ap.add_argument("--target", default="cpu",
                    help="fp8-compile target: cpu, or sm_90a (runs with --device=cuda)")
    ap.add_argument("--compile-only", action="store_true",
                    help="compile, do not run (e.g. no GPU on this machine)")
    args = ap.parse_args()

    name = os.path.basename(os.path.abspath(args.model_dir))
    model = os.path.join(args.model_dir, "model.onnx")
    data = args.data or os.path.join(args.model_dir, "test_data_set_0")
    work = args.work or os.path.join(args.build, "run-model", name)
    os.makedirs(work, exist_ok=True)
    bindir = os.path.join(args.build, "bin")

    inputs = read_test_inputs(data)
    outputs = 0
    while os.path.exists(os.path.join(data, f"output_{outputs}.pb")):
        outputs += 1
    if not inputs:
        raise SystemExit(f"error: {data} has no input_N.pb files")
    print(f"{name}: {len(inputs)} inputs, {outputs} outputs", flush=True)

    library = os.path.join(work, f"model-{args.recipe}-{args.target}.so")
    cmd = [os.path.join(bindir, "fp8-compile"), model, "-o", library, "--recipe", args.recipe,
           "--target", args.target]
    cmd += input_shape_args(inputs)
    if subprocess.run(cmd).returncode != 0:
        raise SystemExit("error: fp8-compile failed: " + " ".join(cmd))
    sys.stdout.flush()
    if args.compile_only:
        print(f"compiled {library} (not run)")
        return 0
    device = "cpu" if args.target == "cpu" else "cuda"
    run = subprocess.run([os.path.join(bindir, "fp8-run"), library, "--data", data,
                          "--device", device, "--rtol", str(args.rtol), "--top1"])
    return run.returncode


if __name__ == "__main__":
    sys.exit(main())
