#!/usr/bin/env python3
"""Compile an ONNX model with fp8-opt for the CPU, run it on the inputs of an
ONNX test-data folder, and compare with the stored reference outputs.

    run_onnx_model.py MODEL_DIR [--data DIR] [--rtol R] [--build BUILD] [--work DIR]

MODEL_DIR holds model.onnx and test_data_set_0/ (input_N.pb, output_N.pb).
Stages: fp8-translate --import-onnx, a generated @fp8_entry that feeds the
inputs (bit-exact constants) and prints every output's raw bits, fp8-opt
--fp8-cpu-lowering-pipeline, mlir-runner (JIT). Per output it prints max abs
error, relative L2 error and cosine similarity, and exits 1 when a relative
L2 error exceeds --rtol (default 1e-5) or a shape differs.

This JIT runner is the CPU path until fp8-compile/fp8-run (shared library
with a C ABI) exist.
"""
import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_tensor import DTYPES, read_tensor  # noqa: E402

LLVM = "/usr/lib/llvm-22"


def ttype(shape, elt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elt + ">"


def dense(array, elt):
    flat = array.reshape(-1)
    if elt == "f32":
        items = [f"0x{int(b):08X}" for b in flat.view(np.uint32)]
    elif elt == "i1":
        items = ["true" if v else "false" for v in flat]
    else:
        items = [str(int(v)) for v in flat]
    if array.ndim == 0:
        return f"dense<{items[0]}>"

    def nest(xs, shape):
        if len(shape) == 1:
            return "[" + ", ".join(xs) + "]"
        step = len(xs) // shape[0]
        return "[" + ", ".join(nest(xs[k * step:(k + 1) * step], shape[1:])
                               for k in range(shape[0])) + "]"
    return f"dense<{nest(items, array.shape)}>"


def stage(msg, fn):
    start = time.time()
    result = fn()
    print(f"  {msg}: {time.time() - start:.1f} s", flush=True)
    return result


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"error: command failed: {' '.join(cmd)}")
    return proc.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--data", help="test data folder (default MODEL_DIR/test_data_set_0)")
    ap.add_argument("--rtol", type=float, default=1e-5,
                    help="largest relative L2 error accepted per output")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--work", default=None, help="keep intermediate files here")
    args = ap.parse_args()

    model = os.path.join(args.model_dir, "model.onnx")
    data = args.data or os.path.join(args.model_dir, "test_data_set_0")
    work = args.work or os.path.join(args.build, "run-model",
                                     os.path.basename(os.path.abspath(args.model_dir)))
    os.makedirs(work, exist_ok=True)
    bindir = os.path.join(args.build, "bin")

    inputs, outputs = [], []
    for kind, into in (("input", inputs), ("output", outputs)):
        k = 0
        while os.path.exists(os.path.join(data, f"{kind}_{k}.pb")):
            into.append(read_tensor(os.path.join(data, f"{kind}_{k}.pb")))
            k += 1
    if not inputs or not outputs:
        raise SystemExit(f"error: {data} has no input_N.pb/output_N.pb files")

    print(f"{os.path.basename(os.path.abspath(args.model_dir))}: "
          f"{len(inputs)} inputs, {len(outputs)} outputs", flush=True)
    imported = os.path.join(work, "model.mlir")
    shape_args = []
    for name, array, _ in inputs:
        if name:
            shape_args += ["--input-shape", f"{name}=" + "x".join(map(str, array.shape))]
    stage("import", lambda: run([os.path.join(bindir, "fp8-translate"), "--import-onnx",
                                 model, "-o", imported] + shape_args))

    text = open(imported).read()
    sig = re.search(r"func\.func @main\((.*?)\) -> \((.*?)\)\s*(?:attributes \{.*?\})?\s*\{",
                    text, re.S)
    if not sig:
        raise SystemExit("error: no func.func @main in the imported module")
    result_types = re.findall(r"tensor<[^>]*>", sig.group(2))
    arg_types = [ttype(a.shape, DTYPES[dt][1]) for _, a, dt in inputs]

    lines = ["func.func private @printMemrefI32(memref<*xi32>)",
             "func.func private @printMemrefI64(memref<*xi64>)",
             "func.func @fp8_entry() {"]
    for j, (_, array, dt) in enumerate(inputs):
        lines.append(f"  %in{j} = arith.constant {dense(array, DTYPES[dt][1])} : {arg_types[j]}")
    lines.append(f"  %r:{len(result_types)} = call @main({', '.join(f'%in{j}' for j in range(len(inputs)))})"
                 f" : ({', '.join(arg_types)}) -> ({', '.join(result_types)})")
    for j, rt in enumerate(result_types):
        shape_elt = rt[len("tensor<"):-1].split("x")
        shape, elt = [int(d) for d in shape_elt[:-1]], shape_elt[-1]
        mem = "memref<" + "".join(f"{d}x" for d in shape)
        if elt == "i64":
            lines.append(f"  %m{j} = bufferization.to_buffer %r#{j} : {rt} to {mem}i64>")
            lines.append(f"  %u{j} = memref.cast %m{j} : {mem}i64> to memref<*xi64>")
            lines.append(f"  call @printMemrefI64(%u{j}) : (memref<*xi64>) -> ()")
            continue
        if elt == "f32":
            lines.append(f"  %b{j} = arith.bitcast %r#{j} : {rt} to {ttype(shape, 'i32')}")
        elif elt == "i32":
            lines.append(f"  %b{j} = tensor.cast %r#{j} : {rt} to {rt}")
        else:
            lines.append(f"  %b{j} = arith.extui %r#{j} : {rt} to {ttype(shape, 'i32')}")
        lines.append(f"  %m{j} = bufferization.to_buffer %b{j} : {ttype(shape, 'i32')} to {mem}i32>")
        lines.append(f"  %u{j} = memref.cast %m{j} : {mem}i32> to memref<*xi32>")
        lines.append(f"  call @printMemrefI32(%u{j}) : (memref<*xi32>) -> ()")
    lines += ["  return", "}"]

    # Insert the entry into the module, before any resource section.
    cut = text.find("{-#")
    body, resources = (text, "") if cut < 0 else (text[:cut], text[cut:])
    end = body.rstrip().rfind("}")
    wrapped = body[:end] + "\n".join(lines) + "\n}\n" + resources
    wrapped_path = os.path.join(work, "entry.mlir")
    open(wrapped_path, "w").write(wrapped)
    lowered = os.path.join(work, "lowered.mlir")
    stage("lower (fp8-cpu-lowering-pipeline)",
          lambda: run([os.path.join(bindir, "fp8-opt"), wrapped_path,
                       "--fp8-cpu-lowering-pipeline", "-o", lowered]))
    libs = ",".join(os.path.join(LLVM, "lib", l) for l in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    out = stage("run (mlir-runner JIT)",
                lambda: run([os.path.join(LLVM, "bin", "mlir-runner"), lowered, "-e", "fp8_entry",
                             "-entry-point-result=void", "-shared-libs=" + libs]))

    blocks = out.split("Unranked Memref")[1:]
    if len(blocks) != len(result_types):
        raise SystemExit(f"error: {len(blocks)} outputs printed, {len(result_types)} expected")
    failed = False
    print(f"  {'output':<24}{'shape':<16}{'max abs err':>14}{'rel L2 err':>14}{'cosine':>12}")
    for j, (block, (name, ref, dt)) in enumerate(zip(blocks, outputs)):
        ints = np.array([int(t) for t in re.findall(r"-?\d+", block.split("data =", 1)[1])],
                        dtype=np.int64)
        if dt == 1:
            got = (ints & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
        else:
            got = ints
        if got.size != ref.size:
            print(f"  {name or j}: {got.size} values, reference has {ref.size}: FAIL")
            failed = True
            continue
        got = got.reshape(ref.shape).astype(np.float64)
        r = ref.astype(np.float64)
        diff = got - r
        max_abs = float(np.max(np.abs(diff))) if diff.size else 0.0
        norm = float(np.linalg.norm(r))
        rel = float(np.linalg.norm(diff)) / norm if norm else float(np.linalg.norm(diff))
        denom = float(np.linalg.norm(got)) * norm
        cos = float(np.dot(got.reshape(-1), r.reshape(-1))) / denom if denom else 1.0
        ok = np.isfinite(rel) and rel <= args.rtol
        failed |= not ok
        print(f"  {(name or str(j)):<24}{'x'.join(map(str, ref.shape)):<16}"
              f"{max_abs:>14.3e}{rel:>14.3e}{cos:>12.8f}  {'ok' if ok else 'FAIL'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
