#!/usr/bin/env python3
"""CPU path vs onnxruntime (CPU), same machine, same run, same inputs.

    bench/cpu_vs_ort.py [--build BUILD] [--repeat N] [--threads T] MODEL_DIR...

For each model: fp8-compile (FP32, and FP8 block scaling), fp8-run --repeat N
(best time), and onnxruntime-node with --threads T intra-op threads (default
1: the CPU path is single-threaded) --repeat N (best time). Prints a markdown
table with the times and the ratio onnxruntime / fp8-opt (above 1: fp8-opt
is faster).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from onnx_tensor import input_shape_args, read_test_inputs  # noqa: E402


def best_ms(pattern, text):
    m = re.search(pattern, text)
    if not m:
        raise SystemExit("error: no timing in output:\n" + text)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    bindir = os.path.join(args.build, "bin")
    print(f"| model | onnxruntime FP32 ({args.threads} thread) | fp8-opt FP32 | ratio | "
          "fp8-opt FP8 block | ratio |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for model in args.models:
            data = os.path.join(model, "test_data_set_0")
            shapes = input_shape_args(read_test_inputs(data))
            times = {}
            for recipe in ("none", "block"):
                lib = os.path.join(work, f"{recipe}.so")
                subprocess.run([os.path.join(bindir, "fp8-compile"), os.path.join(model, "model.onnx"),
                                "-o", lib, "--recipe", recipe, "--quiet"] + shapes, check=True)
                out = subprocess.run([os.path.join(bindir, "fp8-run"), lib, "--data", data,
                                      "--repeat", str(args.repeat), "--rtol", "1"],
                                     capture_output=True, text=True, check=True).stdout
                times[recipe] = best_ms(r"run ([0-9.]+) ms", out)
            ort = subprocess.run(["node", os.path.join(ROOT, "scripts", "ort", "ort_run.js"),
                                  "--prefix", os.path.join(args.build, "ort"),
                                  "--repeat", str(args.repeat), "--threads", str(args.threads),
                                  os.path.join(model, "model.onnx"), data,
                                  os.path.join(work, "ort-out")],
                                 capture_output=True, text=True, check=True).stdout
            t_ort = best_ms(r"ort: best ([0-9.]+) ms", ort)
            print(f"| {os.path.basename(os.path.abspath(model))} | {t_ort:.3f} ms | "
                  f"{times['none']:.3f} ms | {t_ort / times['none']:.3f} | "
                  f"{times['block']:.3f} ms | {t_ort / times['block']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
