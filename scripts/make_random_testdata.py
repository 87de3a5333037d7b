#!/usr/bin/env python3
"""Write a test-data folder of fresh random inputs for an ONNX model, with the
reference outputs that onnxruntime-node (CPU) computes for them.

    make_random_testdata.py MODEL_DIR --seed N --out DIR [--vocab V]
                            [--template DIR] [--ort-prefix DIR] [--node NODE]

The inputs copy the names, data types and shapes of the template folder's
input_N.pb (default MODEL_DIR/test_data_set_0):
  * integer token ids: uniform in [0, V), V from --vocab or else the row count
    of the embedding table the input indexes (a Gather on an initializer,
    found in model.onnx); no table and no --vocab is an error;
  * attention masks (a name with "mask"): ones with a random tail of zeros
    along the last axis (1 to half of its length, per row);
  * floats: standard normal; booleans: random.
All draws come from numpy's default_rng(--seed). Then scripts/ort/ort_run.js
runs model.onnx with onnxruntime-node on them and writes DIR/output_N.pb, so
DIR is a test-data folder for run_onnx_model.py --data DIR.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from onnx_tensor import DTYPES, load_model, read_tensor, write_tensor  # noqa: E402

INT_TYPES = (2, 3, 5, 6, 7)
FLOAT_TYPES = (1, 10, 11)
# Ops through which an id input reaches its embedding Gather unchanged.
PASS_THROUGH = {"Cast", "Identity", "Reshape", "Unsqueeze", "Squeeze", "Flatten"}


def embedding_bounds(model_path):
    """{graph input name: rows of the initializer table a Gather indexes with it}."""
    graph = load_model(model_path).graph
    nodes = [(n.op_type, list(n.input), list(n.output)) for n in graph.node]
    tables = {t.name: list(t.dims) for t in graph.initializer}
    inputs = {v.name for v in graph.input}
    bounds = {}
    for source in inputs:
        frontier, seen = {source}, set()
        while frontier:
            value = frontier.pop()
            seen.add(value)
            for op, ins, outs in nodes:
                if value not in ins:
                    continue
                if (op == "Gather" and len(ins) > 1 and ins[1] == value
                        and ins[0] in tables and tables[ins[0]]):
                    rows = tables[ins[0]][0]
                    bounds[source] = min(bounds.get(source, rows), rows)
                elif op in PASS_THROUGH and ins[0] == value:
                    frontier.update(o for o in outs if o not in seen)
    return bounds


def random_input(rng, name, like, dtype, bound):
    shape = like.shape
    np_type = DTYPES[dtype][0]
    if "mask" in name.lower():
        mask = np.ones(shape, dtype=np.float64)
        if mask.ndim:
            n = shape[-1]
            rows = mask.reshape(-1, n)
            for row in rows:
                zeros = int(rng.integers(1, max(1, n // 2) + 1)) if n > 1 else 0
                if zeros:
                    row[n - zeros:] = 0
            mask = rows.reshape(shape)
        return mask.astype(np_type), "ones, random tail of zeros"
    if dtype in INT_TYPES:
        if bound is None:
            raise SystemExit(f"error: no embedding table found for integer input '{name}'; "
                             "give its bound with --vocab")
        return rng.integers(0, bound, size=shape).astype(np_type), f"uniform in [0, {bound})"
    if dtype in FLOAT_TYPES:
        return rng.standard_normal(size=shape).astype(np_type), "standard normal"
    if dtype == 9:
        return rng.integers(0, 2, size=shape).astype(np.bool_), "random bits"
    raise SystemExit(f"error: input '{name}': no random generator for ONNX data type {dtype}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", required=True, help="test-data folder to write (emptied first)")
    ap.add_argument("--vocab", type=int, default=None,
                    help="token ids are drawn from [0, VOCAB), capped at the embedding table's "
                         "rows (default: those rows)")
    ap.add_argument("--template", default=None,
                    help="folder whose input_N.pb give names/types/shapes "
                         "(default MODEL_DIR/test_data_set_0)")
    root = os.path.dirname(HERE)
    ap.add_argument("--ort-prefix",
                    default=os.environ.get("FP8_ORT_PREFIX", os.path.join(root, "build", "ort")),
                    help="where scripts/ort/install.sh put onnxruntime-node (default build/ort)")
    ap.add_argument("--node", default="node", help="Node.js binary")
    args = ap.parse_args()

    model = os.path.join(args.model_dir, "model.onnx")
    template = args.template or os.path.join(args.model_dir, "test_data_set_0")
    likes = []
    while os.path.exists(os.path.join(template, f"input_{len(likes)}.pb")):
        likes.append(read_tensor(os.path.join(template, f"input_{len(likes)}.pb")))
    if not likes:
        raise SystemExit(f"error: {template} has no input_N.pb files")

    bounds = embedding_bounds(model)
    rng = np.random.default_rng(args.seed)
    os.makedirs(args.out, exist_ok=True)
    for old in glob.glob(os.path.join(args.out, "*_[0-9]*.pb")):
        os.remove(old)
    for k, (name, like, dtype) in enumerate(likes):
        bound = bounds.get(name)
        if args.vocab is not None and (bound is None or args.vocab < bound):
            bound = args.vocab
        array, how = random_input(rng, name, like, dtype, bound)
        write_tensor(os.path.join(args.out, f"input_{k}.pb"), array, name, dtype)
        print(f"input_{k} {name or '?'} {'x'.join(map(str, array.shape))} "
              f"{array.dtype}: {how} (seed {args.seed})")

    node = shutil.which(args.node) or args.node
    cmd = [node, os.path.join(HERE, "ort", "ort_run.js"), "--prefix", args.ort_prefix,
           model, args.out, args.out]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise SystemExit(f"error: Node.js not found ({args.node})")
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit("error: onnxruntime-node failed: " + " ".join(cmd))
    k = 0
    while os.path.exists(os.path.join(args.out, f"output_{k}.pb")):
        name, array, _ = read_tensor(os.path.join(args.out, f"output_{k}.pb"))
        print(f"output_{k} {name or '?'} {'x'.join(map(str, array.shape))} {array.dtype}: "
              "onnxruntime-node")
        k += 1
    if k == 0:
        raise SystemExit("error: onnxruntime-node wrote no outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
