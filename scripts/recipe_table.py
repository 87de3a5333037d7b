#!/usr/bin/env python3
"""Tabulates FP8 recipe accuracy: every model x recipe compiled with
fp8-compile and run with fp8-run on the model's test data, against the
stored FP32 onnxruntime outputs.

    recipe_table.py [--build BUILD] MODEL_DIR...

Prints a markdown table (relative L2 error, cosine similarity and, for
outputs with a vocabulary axis, top-1 agreement of the first output).
Delayed scaling runs twice so that the second run uses the first run's
amax history.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_tensor import input_shape_args, read_test_inputs  # noqa: E402

RECIPES = ["none", "current", "delayed", "rowwise", "block", "mxfp8"]


def run(build, model_dir, recipe, work):
    data = os.path.join(model_dir, "test_data_set_0")
    lib = os.path.join(work, f"{recipe}.so")
    cmd = [os.path.join(build, "bin", "fp8-compile"), os.path.join(model_dir, "model.onnx"),
           "-o", lib, "--recipe", recipe, "--quiet"]
    cmd += input_shape_args(read_test_inputs(data))
    if subprocess.run(cmd, capture_output=True).returncode:
        return None
    out = subprocess.run([os.path.join(build, "bin", "fp8-run"), lib, "--data", data,
                          "--rtol", "1", "--top1", "--repeat", "2" if recipe == "delayed" else "1"],
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(ok|FAIL)(?:\s+top1 (\d+)/(\d+))?", line)
        if m and m.group(2) != "shape":
            return dict(rel=float(m.group(4)), cos=float(m.group(5)),
                        top1=(m.group(7), m.group(8)) if m.group(7) else None,
                        output=m.group(1), shape=m.group(2))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    print("| model | output | " + " | ".join(RECIPES) + " |")
    print("|---|---|" + "---|" * len(RECIPES))
    with tempfile.TemporaryDirectory() as work:
        for model in args.models:
            cells, output = [], ""
            for recipe in RECIPES:
                r = run(args.build, model, recipe, work)
                if r is None:
                    cells.append("—")
                    continue
                output = f"{r['output']} {r['shape']}"
                cell = f"{r['rel']:.2e} / {r['cos']:.5f}"
                if r["top1"] and int(r["top1"][1]) > 1 and "logits" in r["output"]:
                    cell += f" / {r['top1'][0]}/{r['top1'][1]}"
                cells.append(cell)
            print(f"| {os.path.basename(os.path.abspath(model))} | {output} | " + " | ".join(cells) + " |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
