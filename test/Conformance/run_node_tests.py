#!/usr/bin/env python3
"""Runs ONNX's backend node tests (libonnx-testdata) through fp8-opt's CPU
path and classifies every test as PASS, FAIL or SKIP.

    run_node_tests.py [--data DIR] [--build BUILD] [--work DIR] [-j N]
                      [--filter REGEX] [--min-pass N] [--markdown FILE]

For every folder DIR/<test>/ (model.onnx, test_data_set_0/{input,output}_N.pb):

  1. fp8-translate --import-onnx model.onnx. A refusal is a SKIP whose reason
     is the importer's diagnostic (opset outside 1-21, unsupported op,
     shape input that is not a constant, sequence input, ...). When the
     refusal is a shape-determining input (Reshape shape, Slice starts,
     Reduce axes, ...; SHAPE_INPUTS) fed from a graph input, the test's
     value is bound as an initializer and the import retried; the PASS line
     then says "shape inputs bound as constants: ...".
  2. A generated @fp8_entry feeds the test inputs as bit-exact constants,
     calls @main and prints every output's raw bits; inputs or outputs of a
     type this harness cannot feed or print are a SKIP naming the type.
  3. fp8-opt --fp8-cpu-lowering-pipeline, mlir-runner (JIT).
  4. Per element comparison with output_N.pb: shapes must be equal; integers
     and bools exactly; floats |got - ref| <= atol + rtol * |ref| (TOLERANCES
     below), NaN matches NaN, infinities must match exactly.

A test that imports but fails to lower or run, or computes a wrong value,
is a FAIL (except for REFERENCE_ISSUES: known wrong references, a SKIP
with the reason and the mismatch). The exit status is 1 if any test FAILs or fewer than --min-pass
tests pass. Output: one line per test (sorted), then the summary line

    node tests: T total, P passed, F failed, S skipped

--markdown FILE writes the per-op-family report (docs/Conformance.md).
Everything the run writes goes under --work (default BUILD/conformance).
"""
import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from onnx_tensor import load_model, read_tensor_proto  # noqa: E402

LLVM = "/usr/lib/llvm-22"
DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"
OPSET_MIN, OPSET_MAX = 1, 21
STEP_TIMEOUT = 120  # seconds per tool invocation

# ONNX data type -> (name, numpy dtype of the values, MLIR element type).
# Types missing here (string, bfloat16, float8, int4, complex) are skipped
# by name (onnx.numpy_helper.to_array reads every type here).
ONNX_TYPES = {
    1: ("float32", np.float32, "f32"), 2: ("uint8", np.uint8, "i8"),
    3: ("int8", np.int8, "i8"), 4: ("uint16", np.uint16, "i16"),
    5: ("int16", np.int16, "i16"), 6: ("int32", np.int32, "i32"),
    7: ("int64", np.int64, "i64"), 9: ("bool", np.bool_, "i1"),
    10: ("float16", np.float16, "f16"), 11: ("float64", np.float64, "f64"),
    12: ("uint32", np.uint32, "i32"), 13: ("uint64", np.uint64, "i64"),
}
ONNX_TYPE_NAMES = {
    0: "undefined", 1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16",
    6: "int32", 7: "int64", 8: "string", 9: "bool", 10: "float16", 11: "float64",
    12: "uint32", 13: "uint64", 14: "complex64", 15: "complex128",
    16: "bfloat16", 17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
    20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1",
}

# Per-element float tolerance: |got - ref| <= atol + rtol * |ref|.
TOLERANCES = {np.dtype(np.float32): (1e-4, 1e-5),
              np.dtype(np.float64): (1e-9, 1e-12),
              np.dtype(np.float16): (2e-3, 1e-3)}

# Tests whose stored reference disagrees with the ONNX spec that fp8-opt
# follows. They still run; only a mismatch becomes a SKIP with this reason
# (and the mismatch), a pass stays a pass.
_BF16 = ("reference truncates float32 to bfloat16 (ONNX 1.12 test data); "
         "fp8-opt rounds to nearest even (arith.truncf)")
REFERENCE_ISSUES = {
    "test_cast_FLOAT_to_BFLOAT16": _BF16,
    "test_castlike_FLOAT_to_BFLOAT16": _BF16,
    "test_castlike_FLOAT_to_BFLOAT16_expanded": _BF16,
}

#===----------------------------------------------------------------------===#
# model.onnx, read with onnx (python3-onnx).
#===----------------------------------------------------------------------===#


def _graph(graph, out):
    """Collects the (domain, op type, inputs) of every node, subgraphs' nodes
    (before the node that holds them) included."""
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                _graph(sub, out)
        out.append((node.domain, node.op_type, list(node.input)))


def read_model(path):
    """opsets {domain: version}, the top graph's input and initializer
    names, and the nodes of every graph (_graph)."""
    model = load_model(path)
    nodes = []
    _graph(model.graph, nodes)
    return {"opsets": {o.domain: o.version for o in model.opset_import},
            "inputs": [v.name for v in model.graph.input],
            "initializers": {t.name for t in model.graph.initializer},
            "nodes": nodes}


def bind_inputs(model_path, tensors, out_path):
    """Writes a copy of the model whose graph inputs named in `tensors`
    (name -> onnx.TensorProto) are initializers instead."""
    model = load_model(model_path)
    kept = [v for v in model.graph.input if v.name not in tensors]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    model.graph.initializer.extend(tensors.values())
    onnx.save(model, out_path)


# Node inputs that must be constants for static shapes. When a test feeds
# one from a graph input, the harness binds that input's test value as an
# initializer (what shape subgraphs fold to in exported models) and says so.
SHAPE_INPUTS = {
    "Reshape": [1], "Expand": [1], "Slice": [1, 2, 3, 4], "Squeeze": [1],
    "Unsqueeze": [1], "Split": [1], "Trilu": [1], "Tile": [1], "Pad": [1, 2, 3],
    "ConstantOfShape": [0], "Range": [0, 1, 2], "TopK": [1], "OneHot": [1],
    "CumSum": [1], "Resize": [1, 2, 3],
    **{r: [1] for r in ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin",
                        "ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2",
                        "ReduceLogSum", "ReduceLogSumExp")},
}


def shape_inputs(model):
    graph_inputs = set(model["inputs"]) - model["initializers"]
    names = []
    for domain, op, ins in model["nodes"]:
        for k in SHAPE_INPUTS.get(op, []) if domain in ("", "ai.onnx") else []:
            if k < len(ins) and ins[k] in graph_inputs and ins[k] not in names:
                names.append(ins[k])
    return names


#===----------------------------------------------------------------------===#
# Test data
#===----------------------------------------------------------------------===#

def read_data(path):
    """(name, array, onnx type) of a TensorProto file; arrays of the types in
    ONNX_TYPES only (a ValueError names any other)."""
    tensor = read_tensor_proto(path)
    if tensor.data_type not in ONNX_TYPES:
        raise ValueError(ONNX_TYPE_NAMES.get(tensor.data_type, f"type {tensor.data_type}"))
    return tensor.name, np.array(numpy_helper.to_array(tensor)), tensor.data_type


def _hex_items(flat, uint, digits):
    return [f"0x{int(b):0{digits}X}" for b in flat.view(uint)]


def dense(array, elt):
    """A dense<> literal with the exact bits of `array`."""
    flat = np.ascontiguousarray(array).reshape(-1)
    if elt == "f32":
        items = _hex_items(flat, np.uint32, 8)
    elif elt == "f64":
        items = _hex_items(flat, np.uint64, 16)
    elif elt in ("f16", "bf16"):
        items = _hex_items(flat, np.uint16, 4)
    elif elt == "i1":
        items = ["true" if v else "false" for v in flat]
    else:  # unsigned values as their signed bit pattern of the same width
        signed = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[flat.dtype.itemsize]
        items = [str(int(v)) for v in flat.view(signed)]
    if flat.size == 0:
        return "dense<>"
    if array.ndim == 0:
        return f"dense<{items[0]}>"

    def nest(xs, shape):
        if len(shape) == 1:
            return "[" + ", ".join(xs) + "]"
        step = len(xs) // shape[0]
        return "[" + ", ".join(nest(xs[k * step:(k + 1) * step], shape[1:])
                               for k in range(shape[0])) + "]"
    return f"dense<{nest(items, array.shape)}>"


def ttype(shape, elt):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elt + ">"


# How each MLIR result element type is printed: (bits type, printer).
PRINT = {"f32": ("i32", "I32"), "i32": ("i32", "I32"),
         "f64": ("i64", "I64"), "i64": ("i64", "I64"),
         "f16": ("i16", "I32"), "bf16": ("i16", "I32"),
         "i16": ("i16", "I32"), "i8": ("i8", "I32"), "i1": ("i1", "I32")}


def entry_function(args, inputs, result_types):
    lines = ["func.func private @printMemrefI32(memref<*xi32>)",
             "func.func private @printMemrefI64(memref<*xi64>)",
             "func.func @fp8_entry() {"]
    for j, ((_, at), (_, array, _)) in enumerate(zip(args, inputs)):
        lines.append(f"  %in{j} = arith.constant {dense(array, at[1])} : {ttype(*at)}")
    arg_types = ", ".join(ttype(*at) for _, at in args)
    res_types = ", ".join(ttype(*rt) for rt in result_types)
    lines.append(f"  %r:{len(result_types)} = call @main("
                 f"{', '.join(f'%in{j}' for j in range(len(args)))})"
                 f" : ({arg_types}) -> ({res_types})")
    for j, (shape, elt) in enumerate(result_types):
        bits, printer = PRINT[elt]
        rt, v = ttype(shape, elt), f"%r#{j}"
        if elt != bits:
            lines.append(f"  %b{j} = arith.bitcast {v} : {rt} to {ttype(shape, bits)}")
            v = f"%b{j}"
        wide = "i64" if printer == "I64" else "i32"
        if bits != wide:
            lines.append(f"  %w{j} = arith.extui {v} : {ttype(shape, bits)} to {ttype(shape, wide)}")
            v = f"%w{j}"
        mem = "memref<" + "".join(f"{d}x" for d in shape) + wide + ">"
        lines.append(f"  %m{j} = bufferization.to_buffer {v} : {ttype(shape, wide)} to {mem}")
        lines.append(f"  %u{j} = memref.cast %m{j} : {mem} to memref<*x{wide}>")
        lines.append(f"  call @printMemref{printer}(%u{j}) : (memref<*x{wide}>) -> ()")
    lines += ["  return", "}"]
    return "\n".join(lines)


def parse_tensor_type(text):
    body = text[len("tensor<"):-1].split("x")
    return [int(d) for d in body[:-1]], body[-1]


#===----------------------------------------------------------------------===#
# One test
#===----------------------------------------------------------------------===#

class Result:
    def __init__(self, name, status, reason="", family="", seconds=0.0):
        self.name, self.status, self.reason = name, status, reason
        self.family, self.seconds = family, seconds


def importer_reason(stderr):
    """A short, stable skip reason from the importer's first diagnostic."""
    line = next((l for l in stderr.splitlines() if "error:" in l), stderr.strip())
    msg = line.split("error:", 1)[1].strip() if "error:" in line else line
    m = re.match(r"unsupported ai\.onnx opset (\d+)", msg)
    if m:
        return f"opset {m.group(1)} outside {OPSET_MIN}-{OPSET_MAX}"
    # Models below opset 13 go through ONNX's version converter first, which
    # the importer refuses subgraphs and non-tensor inputs for: the same
    # reasons as at opset 13 and later, said earlier.
    m = re.match(r"ai\.onnx opset (\d+) could not be upgraded to 13 by ONNX's "
                 r"version converter: (.*)", msg)
    if m:
        m2 = re.match(r"node '[^']*' \((\w+)\) has a subgraph", m.group(2))
        if m2:
            return (f"op {m2.group(1)} not supported (a subgraph, refused before "
                    f"the version converter runs at opset {m.group(1)})")
        if re.match(r"graph input '[^']*' is not a typed tensor", m.group(2)):
            return "graph input is a sequence/map/optional (tensors only)"
    m = re.match(r"'(\w+)' node \"[^\"]*\": (.*)", msg)
    if m:
        op, rest = m.groups()
        m2 = re.match(r"unsupported op type '(\w+)'", rest)
        if m2:
            return f"op {m2.group(1)} not supported"
        m2 = re.match(r"input '(\w+)' must be an integer constant", rest)
        if m2:
            return (f"{op} input '{m2.group(1)}' is a graph input, not a constant "
                    "(the importer needs static shapes)")
        return f"{op}: {rest}"
    m = re.match(r"graph input '([^']*)' is not a tensor", msg)
    if m:
        return "graph input is a sequence/map/optional (tensors only)"
    m = re.match(r"graph input '([^']*)' has unsupported element type (\w+)", msg)
    if m:
        return f"input type {m.group(2).lower()} not supported by the importer"
    if msg.startswith("model imports no default-domain"):
        return "no ai.onnx opset (other domain only)"
    return "import: " + msg


def run_tool(cmd, stdin=None):
    try:
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True,
                              timeout=STEP_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {STEP_TIMEOUT} s", ""
    if proc.returncode != 0:
        err = next((l for l in proc.stderr.splitlines() if "error" in l.lower()),
                   proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "")
        return None, f"exit {proc.returncode}: {err.strip()[:300]}", proc.stderr
    return proc.stdout, None, proc.stderr


def compare(got_bits, ref):
    """None if equal within tolerance, else a description."""
    w = ref.dtype.itemsize
    bits = (got_bits.astype(np.uint64) & np.uint64((1 << (8 * w)) - 1))
    got = bits.astype({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[w]).view(
        ref.dtype if ref.dtype != np.bool_ else np.uint8)
    if ref.dtype == np.bool_:
        got = got.astype(np.bool_)
    got = got.reshape(ref.shape)
    if ref.dtype.kind != "f":
        bad = got != ref
        if not bad.any():
            return None
        k = int(np.flatnonzero(bad)[0])
        return (f"{int(bad.sum())} of {ref.size} elements differ "
                f"(first at {k}: got {got.reshape(-1)[k]}, want {ref.reshape(-1)[k]})")
    rtol, atol = TOLERANCES[ref.dtype]
    g, r = got.astype(np.float64), ref.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        ok = (g == r) | (np.isnan(g) & np.isnan(r)) | \
             (np.isfinite(g) & np.isfinite(r) & (np.abs(g - r) <= atol + rtol * np.abs(r)))
    if ok.all():
        return None
    k = int(np.flatnonzero(~ok)[0])
    return (f"{int((~ok).sum())} of {ref.size} elements off "
            f"(first at {k}: got {g.reshape(-1)[k]:.8g}, want {r.reshape(-1)[k]:.8g})")


def run_test(name, data_dir, build, work):
    try:
        r = run_one(name, data_dir, build, work)
    except Exception as e:  # a harness error is a failure, never a crash
        r = Result(name, "FAIL", f"harness error: {type(e).__name__}: {e}")
    if r.status == "FAIL" and name in REFERENCE_ISSUES:
        r.status, r.reason = "SKIP", f"{REFERENCE_ISSUES[name]}; {r.reason}"
    return r


def run_one(name, data_dir, build, work):
    start = time.time()
    test_dir = os.path.join(data_dir, name)

    def result(status, reason=""):
        return Result(name, status, reason, seconds=time.time() - start)

    model_path = os.path.join(test_dir, "model.onnx")
    try:
        model = read_model(model_path)
    except ValueError as e:
        return result("SKIP", f"model.onnx unreadable: {e}")
    opset = model["opsets"].get("", model["opsets"].get("ai.onnx"))
    # The importer says the same; checking here saves a process per test.
    if opset is not None and not OPSET_MIN <= opset <= OPSET_MAX:
        return result("SKIP", f"opset {opset} outside {OPSET_MIN}-{OPSET_MAX}")

    out_dir = os.path.join(work, name)
    os.makedirs(out_dir, exist_ok=True)
    bindir = os.path.join(build, "bin")
    imported = os.path.join(out_dir, "model.mlir")
    _, err, stderr = run_tool([os.path.join(bindir, "fp8-translate"), "--import-onnx",
                               model_path, "-o", imported])
    if err and "timed out" in err:
        return result("FAIL", f"fp8-translate {err}")
    bound = []
    data = os.path.join(test_dir, "test_data_set_0")
    if err and "not a constant" in importer_reason(stderr):
        bound = shape_inputs(model)
        tensors = {}
        for k in range(len(model["inputs"])):
            path = os.path.join(data, f"input_{k}.pb")
            if os.path.exists(path):
                tensor = read_tensor_proto(path)
                if tensor.name in bound:
                    tensors[tensor.name] = tensor
        if bound and len(tensors) == len(bound):
            model_path = os.path.join(out_dir, "model_bound.onnx")
            bind_inputs(os.path.join(test_dir, "model.onnx"), tensors, model_path)
            _, err, stderr = run_tool([os.path.join(bindir, "fp8-translate"),
                                       "--import-onnx", model_path, "-o", imported])
    if err:
        return result("SKIP", importer_reason(stderr))
    note = f"shape inputs bound as constants: {', '.join(bound)}" if bound else ""

    inputs, outputs = [], []
    for kind, into in (("input", inputs), ("output", outputs)):
        k = 0
        while os.path.exists(os.path.join(data, f"{kind}_{k}.pb")):
            try:
                into.append(read_data(os.path.join(data, f"{kind}_{k}.pb")))
            except ValueError as e:
                return result("SKIP", f"{kind} type {e} not supported by the runner")
            k += 1

    text = open(imported).read()
    sig = re.search(r"func\.func @main\((.*?)\) -> \((.*?)\)\s*(?:attributes \{.*?\})?\s*\{",
                    text, re.S)
    sig_args = re.search(r"func\.func @main\((.*?)\)", text, re.S)
    if sig:
        arg_text, res_text = sig.group(1), sig.group(2)
    elif sig_args:  # no results
        arg_text, res_text = sig_args.group(1), ""
    else:
        return result("FAIL", "no func.func @main in the imported module")
    args = [(n, parse_tensor_type(t)) for t, n in
            re.findall(r"(tensor<[^>]*>) \{(?:onnx\.dtype = [^,]*, )?onnx\.name = \"([^\"]*)\"\}",
                       arg_text)]
    result_types = [parse_tensor_type(t) for t in re.findall(r"tensor<[^>]*>", res_text)]
    if "fp8.check_status" in res_text:
        # The run-time index checks' status (last): in-range test data must
        # leave it {0, 0}.
        outputs.append(("fp8.check_status", np.zeros(2, np.int64), 7))
    if len(result_types) != len(outputs):
        return result("FAIL", f"@main returns {len(result_types)} values, "
                              f"the test data has {len(outputs)} outputs")
    # Feed by name (input_N.pb carry the graph input names), else by position.
    by_name = {n: t for t in inputs for n in [t[0]] if n}
    fed = []
    for j, (arg_name, (shape, elt)) in enumerate(args):
        t = by_name.get(arg_name) or (inputs[j] if j < len(inputs) else None)
        if t is None:
            return result("SKIP", f"graph input '{arg_name}' has no value in the test data")
        if list(t[1].shape) != shape:
            return result("SKIP", f"test data feeds '{arg_name}' with shape "
                                  f"{list(t[1].shape)}, the model declares {shape}")
        if elt == "bf16" and t[2] == 4:
            # ONNX 1.12 stores bfloat16 test tensors as their uint16 bits.
            pass
        elif ONNX_TYPES[t[2]][2] != elt:
            return result("FAIL", f"input '{arg_name}' is {ONNX_TYPES[t[2]][0]}, "
                                  f"@main takes {elt}")
        fed.append(t)
    for (shape, elt) in result_types:
        if elt not in PRINT:
            return result("SKIP", f"output element type {elt} not supported by the runner")

    cut = text.find("{-#")
    body, resources = (text, "") if cut < 0 else (text[:cut], text[cut:])
    end = body.rstrip().rfind("}")
    wrapped = body[:end] + entry_function(args, fed, result_types) + "\n}\n" + resources
    entry = os.path.join(out_dir, "entry.mlir")
    open(entry, "w").write(wrapped)
    lowered = os.path.join(out_dir, "lowered.mlir")
    _, err, _ = run_tool([os.path.join(bindir, "fp8-opt"), entry,
                       "--fp8-cpu-lowering-pipeline", "-o", lowered])
    if err:
        return result("FAIL", f"fp8-opt lowering failed ({err})")
    libs = ",".join(os.path.join(LLVM, "lib", l) for l in
                    ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so"))
    out, err, _ = run_tool([os.path.join(LLVM, "bin", "mlir-runner"), lowered, "-e", "fp8_entry",
                         "-entry-point-result=void", "-shared-libs=" + libs])
    if err:
        return result("FAIL", f"mlir-runner failed ({err})")

    blocks = out.split("Unranked Memref")[1:]
    if len(blocks) != len(outputs):
        return result("FAIL", f"{len(blocks)} outputs printed, {len(outputs)} expected")
    for j, (block, (oname, ref, _), (shape, elt)) in enumerate(zip(blocks, outputs, result_types)):
        label = oname or f"#{j}"
        if list(ref.shape) != shape:
            return result("FAIL", f"output {label}: shape {shape}, reference {list(ref.shape)}")
        if ref.dtype.itemsize * 8 != (1 if elt == "i1" else int(re.sub(r"\D", "", elt))) and \
                not (elt == "i1" and ref.dtype == np.bool_):
            return result("FAIL", f"output {label}: element type {elt}, reference {ref.dtype}")
        if ref.size == 0:  # nothing to compare; the static shape matched
            continue
        ints = np.array([int(t) for t in re.findall(r"-?\d+", block.split("data =", 1)[1])],
                        dtype=np.int64)
        if ints.size != ref.size:
            return result("FAIL", f"output {label}: {ints.size} values printed, want {ref.size}")
        diff = compare(ints, ref)
        if diff:
            return result("FAIL", f"output {label}: {diff}")
    return result("PASS", note)


#===----------------------------------------------------------------------===#
# Op families and the report
#===----------------------------------------------------------------------===#

def families(data_dir, names):
    """Test -> the ONNX op it tests. From its model's node when it has one
    (the `_expanded` variant takes its base test's op), else from its name."""
    ops = {}
    for n in set(names) | {n[:-len("_expanded")] for n in names if n.endswith("_expanded")}:
        if not os.path.isfile(os.path.join(data_dir, n, "model.onnx")):
            continue
        try:
            nodes = read_model(os.path.join(data_dir, n, "model.onnx"))["nodes"]
        except (OSError, ValueError):
            nodes = []
        ops[n] = nodes
    out = {}
    for n in names:
        base = n[:-len("_expanded")] if n.endswith("_expanded") and \
            n[:-len("_expanded")] in ops else n
        nodes = [op for _, op, _ in ops[base]]
        key = base[len("test_"):].replace("_", "").lower()
        cands = [op for op in set(nodes) if key.startswith(op.lower())]
        if len(set(nodes)) == 1:
            out[n] = nodes[0]
        elif cands:
            out[n] = max(cands, key=len)
        elif nodes:
            out[n] = nodes[-1]
        else:
            out[n] = base[len("test_"):]
    return out


# Skip categories: (long label for the counts table, short one per family).
CATEGORIES = {
    "opset": ("opset outside 1-21", "opset"),
    "op": ("op not supported by the importer", "op not supported"),
    "shape": ("shape-determining value computed at run time", "runtime shape input"),
    "seq": ("sequence/map/optional values", "sequence/optional"),
    "dtype": ("element type not supported (string)", "string type"),
    "domain": ("other domain (ai.onnx.preview.training)", "training domain"),
    "data": ("test data disagrees with the model or the spec", "test-data issue"),
    "mode": ("attribute/mode not supported", "mode not supported"),
}


def reason_category(reason):
    if reason.startswith("opset "):
        return "opset"
    if reason.startswith("op ") and (reason.endswith("not supported")
                                     or " not supported (" in reason):
        return "op"
    if "is a graph input, not a constant" in reason or "must be constants" in reason:
        return "shape"
    if "sequence/map/optional" in reason:
        return "seq"
    if "not supported by the importer" in reason or "not supported by the runner" in reason \
            or "unsupported target type" in reason:
        return "dtype"
    if reason.startswith("no ai.onnx opset"):
        return "domain"
    if reason.startswith("test data feeds") or reason.startswith("reference "):
        return "data"
    return "mode"


def markdown(results, fam, args):
    counts = collections.Counter(r.status for r in results)
    by_fam = collections.defaultdict(list)
    for r in results:
        by_fam[fam[r.name]].append(r)
    cats = collections.Counter(reason_category(r.reason) for r in results if r.status == "SKIP")
    bound = [r for r in results if r.status == "PASS" and r.reason]
    rt = "; ".join(f"{np.dtype(k).name} rtol {v[0]:g}, atol {v[1]:g}" for k, v in TOLERANCES.items())
    L = []
    L += ["# ONNX backend node tests",
          "",
          "<!-- Generated by test/Conformance/run_node_tests.py --markdown; do not edit. -->",
          "",
          "ONNX's own operator tests (`/usr/share/libonnx-testdata/data/node`, the",
          "Debian package `libonnx-testdata`, ONNX 1.12: one model per test with its",
          "inputs and reference outputs) run through the whole CPU path: import",
          "with `fp8-translate --import-onnx`, a generated entry that feeds the inputs",
          "bit-exactly, `fp8-opt --fp8-cpu-lowering-pipeline`, `mlir-runner`, and a",
          "per-element comparison with the reference outputs: integers and bools",
          f"exactly, floats with |got - ref| <= atol + rtol·|ref| ({rt}); NaN must",
          "be NaN and infinities exact.",
          "",
          "```sh",
          "/usr/bin/python3 test/Conformance/run_node_tests.py --build build   # 70-100 s on 2 cores",
          "/usr/lib/llvm-22/bin/lit -v build/test/Conformance                 # the same, as a lit test",
          "/usr/bin/python3 test/Conformance/run_node_tests.py --filter 'test_(add|sub)' -j 2",
          "/usr/bin/python3 test/Conformance/run_node_tests.py --markdown docs/Conformance.md",
          "```",
          "",
          "The lit test (`test/Conformance/node-tests.test`) fails when any test",
          "FAILs (imports but lowers, runs or computes wrong) or when fewer tests",
          "pass than its floor; raise the floor (`--min-pass`) when support grows,",
          "and regenerate this page.",
          "",
          "## Counts",
          "",
          f"**{len(results)} tests: {counts['PASS']} pass, {counts['FAIL']} fail, "
          f"{counts['SKIP']} skipped.**",
          "",
          "| why skipped | tests |",
          "|---|---:|"]
    for c, n in cats.most_common():
        L.append(f"| {CATEGORIES[c][0]} | {n} |")
    L += ["",
          "A test is skipped when the importer refuses its model (the reason is the",
          "importer's diagnostic) or when the harness cannot feed or print one of",
          "its tensors; nothing is dropped silently. The test data is ONNX 1.12's,",
          "whose newest opset is 17; tests that pin an opset below 13 are",
          "upgraded to 13 by ONNX's own version converter in the importer.",
          "",
          f"{len(bound)} of the passing tests feed a shape-determining input (Reshape",
          "`shape`, Slice `starts`, Reduce `axes`, Trilu `k`, ...) from a graph input.",
          "The importer keeps shapes static and needs those as constants, so the",
          "harness binds the test's value as an initializer, which is what such",
          "inputs fold to in exported models; the per-test output of the script",
          "names the bound inputs (`shape inputs bound as constants: ...`):",
          ", ".join(f"{f} ({n})" for f, n in sorted(collections.Counter(
              fam[r.name] for r in bound).items())) + ".",
          "",
          "## By op family",
          "",
          "| op | pass | skip | why skipped |",
          "|---|---:|---:|---|"]
    for f in sorted(by_fam, key=str.lower):
        rs = by_fam[f]
        p = sum(r.status == "PASS" for r in rs)
        s = sum(r.status == "SKIP" for r in rs)
        x = sum(r.status == "FAIL" for r in rs)
        why = sorted({CATEGORIES[reason_category(r.reason)][1]
                      for r in rs if r.status == "SKIP"})
        note = "all pass" if p == len(rs) else ", ".join(why)
        if x:
            note = f"**{x} FAIL**"
        L.append(f"| {f} | {p} | {s} | {note} |")
    L += ["", "## Skipped tests", "",
          "Grouped by op family; the reason is what the importer or the harness",
          "reports for the test.", ""]
    for f in sorted(by_fam, key=str.lower):
        skipped = [r for r in by_fam[f] if r.status != "PASS"]
        if not skipped:
            continue
        n = len(by_fam[f])
        L += [f"### {f} ({len(skipped)} of {n} skipped)", "", "| test | reason |", "|---|---|"]
        for r in sorted(skipped, key=lambda r: r.name):
            reason = r.reason.replace("|", "\\|")
            tag = "**FAIL** " if r.status == "FAIL" else ""
            L.append(f"| `{r.name}` | {tag}{reason} |")
        L.append("")
    return "\n".join(L).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DEFAULT_DATA, help="node-test folder (%(default)s)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", help="scratch folder (default BUILD/conformance)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--filter", help="only tests whose name matches this regex")
    ap.add_argument("--min-pass", type=int, default=0,
                    help="fail unless at least this many tests pass")
    ap.add_argument("--markdown", help="write the per-family report here")
    args = ap.parse_args()
    work = args.work or os.path.join(args.build, "conformance")
    if not os.path.isdir(args.data):
        print(f"error: no node tests at {args.data} (install libonnx-testdata)")
        return 1
    names = sorted(n for n in os.listdir(args.data)
                   if os.path.isfile(os.path.join(args.data, n, "model.onnx")))
    if args.filter:
        names = [n for n in names if re.search(args.filter, n)]
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda n: run_test(n, args.data, args.build, work), names))
    fam = families(args.data, names)
    for r in results:
        print(f"{r.status:<5} {r.name:<64} {fam[r.name]:<28} {r.reason}".rstrip())
    counts = collections.Counter(r.status for r in results)
    print(f"node tests: {len(results)} total, {counts['PASS']} passed, "
          f"{counts['FAIL']} failed, {counts['SKIP']} skipped "
          f"({time.time() - start:.0f} s, {args.jobs} jobs)")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(results, fam, args))
    status = 0
    if counts["FAIL"]:
        print(f"error: {counts['FAIL']} tests FAIL")
        status = 1
    if counts["PASS"] < args.min_pass:
        print(f"error: {counts['PASS']} tests pass, fewer than the floor {args.min_pass}")
        status = 1
    elif args.min_pass:
        print(f"pass floor: {counts['PASS']} >= {args.min_pass}")
    return status


if __name__ == "__main__":
    sys.exit(main())
