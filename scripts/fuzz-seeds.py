#!/usr/bin/env python3
"""Collects the seed corpus and the dictionary of the ONNX fuzz target.

usage: scripts/fuzz-seeds.py OUT_DIR [--dict FILE] [--max-len BYTES]

Seeds (nothing large is committed; this script rebuilds them):
  node-*.onnx     ONNX's backend node tests (Debian's libonnx-testdata,
                  /usr/share/libonnx-testdata/data/node/*/model.onnx)
  node13-*.onnx   those pinned to an opset below 13 (which the importer
                  refuses at once), with the opset raised to 13 so that
                  their nodes reach the op handlers
  import-*.onnxtext
                  test/Import/*.onnxtext, and every `#--- x.onnxtext` part of
                  the split-file tests under test/ ('//' lines dropped)
  model-*.onnx    models/ and test/models/ exports, as skeletons: every
                  floating-point initializer of more than 16 elements
                  becomes a ConstantOfShape splat, so the 0.4-2 MB exports
                  shrink to a few tens of KB (below --max-len) while keeping
                  their graphs (attention, KV caches, dynamic axes)
  extdata-*.onnx  models whose weights are external data naming `data.bin`,
                  the one file in the fuzz target's external-data directory
  regress-*       test/Import/fuzz-regressions inputs
Files over --max-len (default 65536) are left out: libFuzzer would truncate
them. Needs python3-onnx (scripts/setup.sh installs it) for the skeletons
and external-data seeds; without it those are skipped.

The dictionary holds the op types and attribute names the importer handles
(read from the op handlers, lib/Import/Ops/*.cpp, and the rest of
lib/Import) and the text
format's keywords and type names.
"""

import argparse
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NODE_TESTS = "/usr/share/libonnx-testdata/data/node"


def strip_slash_comments(text):
    return "\n".join(
        l for l in text.splitlines() if not l.lstrip().startswith("//")
    ).strip() + "\n"


def split_file_parts(path):
    """Yields (name, text) of the `#--- name` parts of a split-file test."""
    name, lines = None, []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^(?:#|//)--- (\S+)", line)
            if m:
                if name:
                    yield name, "".join(lines)
                name, lines = m.group(1), []
            elif name:
                lines.append(line)
    if name:
        yield name, "".join(lines)


# Input shapes for exports whose dynamic axes must agree with each other
# (the fuzz target pins every symbolic dimension to 2): as in test/Models.
PINNED_INPUTS = {
    "llama_kv_dynamo": {
        "input_ids": [1, 1], "attention_mask": [1, 5],
        "past_key_values.0.key": [1, 2, 4, 16],
        "past_key_values.0.value": [1, 2, 4, 16],
        "past_key_values.1.key": [1, 2, 4, 16],
        "past_key_values.1.value": [1, 2, 4, 16],
    },
}


def skeleton(path):
    """The model with large float initializers replaced by splats."""
    import onnx
    from onnx import helper, numpy_helper, TensorProto

    m = onnx.load(path, load_external_data=False)
    g = m.graph
    pinned = PINNED_INPUTS.get(os.path.basename(os.path.dirname(path)), {})
    for vi in g.input:
        if vi.name in pinned:
            dims = vi.type.tensor_type.shape.dim
            for d, v in zip(dims, pinned[vi.name]):
                d.Clear()
                d.dim_value = v
    float_types = {TensorProto.FLOAT, TensorProto.FLOAT16,
                   TensorProto.BFLOAT16, TensorProto.DOUBLE}
    keep, nodes = [], []
    for t in g.initializer:
        n = 1
        for d in t.dims:
            n *= d
        if t.data_type not in float_types or n <= 16:
            keep.append(t)
            continue
        shape = numpy_helper.from_array(
            __import__("numpy").array(list(t.dims), dtype="int64"),
            t.name + "__shape")
        keep.append(shape)
        value = helper.make_tensor("value", t.data_type, [1], [0.02])
        nodes.append(helper.make_node("ConstantOfShape", [shape.name],
                                      [t.name], value=value))
    del g.initializer[:]
    g.initializer.extend(keep)
    old = list(g.node)
    del g.node[:]
    g.node.extend(nodes + old)
    # Exporters' per-node metadata (source locations, module paths: fields
    # newer than libonnx 1.12's schema, which the importer is built against
    # and so never reads) and the intermediate value_info are most of what
    # is left.
    m.DiscardUnknownFields()
    for n in g.node:
        n.ClearField("doc_string")
    g.ClearField("value_info")
    m.ClearField("metadata_props")
    return m.SerializeToString()


def extdata_seeds():
    """Small models whose initializers live in `data.bin`."""
    import onnx
    from onnx import helper, TensorProto

    def external(dims):
        w = TensorProto()
        w.name = "w"
        w.data_type = TensorProto.FLOAT
        w.dims.extend(dims)
        w.data_location = TensorProto.EXTERNAL
        return w

    out = []
    for i, (offset, length) in enumerate([(0, 64), (16, 32), (200, 56)]):
        w = external([length // 4])
        for k, v in (("location", "data.bin"), ("offset", str(offset)),
                     ("length", str(length))):
            e = w.external_data.add()
            e.key, e.value = k, v
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                          [length // 4])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                          [length // 4])
        g = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])],
                              "g", [x], [y], [w])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        out.append(("extdata-%d.onnx" % i, m.SerializeToString()))
    # A MatMul whose weight is external: the quantize path with real data.
    w = external([8, 8])
    for k, v in (("location", "data.bin"), ("offset", "0"), ("length", "256")):
        e = w.external_data.add()
        e.key, e.value = k, v
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])],
                          "g", [x], [y], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    out.append(("extdata-matmul.onnx", m.SerializeToString()))
    return out


def dictionary():
    words = set()
    sources = sorted(glob.glob(os.path.join(ROOT, "lib/Import/**/*.cpp"),
                               recursive=True))
    for path in sources:
        src = open(path).read()
        # Op types: the strings of each op family's registration function.
        reg = src.find("void onnx_import::register")
        if reg >= 0 and "/Ops/" in path:
            words.update(re.findall(r'"([A-Z][A-Za-z0-9]*)"', src[reg:]))
        words.update(re.findall(
            r'attr(?:Int|Float|String|Ints|Floats|Tensor)?\w*\(\s*"([a-z_A-Z]+)"',
            src))
    words.update([
        "<", ">", "=>", "ir_version", "opset_import", "producer_name",
        "domain", "\"\"", "\"ai.onnx\"", "float", "double", "float16",
        "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool",
        "float8e4m3fn", "float8e5m2", "string", "seq", "value", "to",
        "axis", "axes", "perm", "split", "NaN", "inf", "-inf",
        "9223372036854775807",
        "-9223372036854775808", "2147483648", "4294967296", "1e38", "1e-45",
    ])
    lines = []
    for w in sorted(words):
        esc = w.replace("\\", "\\\\").replace('"', '\\"')
        lines.append('"%s"' % esc)
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--dict", help="write the libFuzzer dictionary here")
    ap.add_argument("--max-len", type=int, default=65536)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    counts = {}
    skipped = 0

    def put(name, data):
        nonlocal skipped
        if isinstance(data, str):
            data = data.encode()
        if len(data) > args.max_len:
            skipped += 1
            return
        kind = name.split("-", 1)[0]
        counts[kind] = counts.get(kind, 0) + 1
        with open(os.path.join(args.out, name), "wb") as f:
            f.write(data)

    try:
        import onnx  # noqa: F401
        have_onnx = True
    except ImportError:
        have_onnx = False
        print("fuzz-seeds: no python3-onnx: model skeletons, external-data "
              "and opset-13 seeds skipped", file=sys.stderr)

    for p in sorted(glob.glob(os.path.join(NODE_TESTS, "*", "model.onnx"))):
        test = os.path.basename(os.path.dirname(p))
        put("node-%s.onnx" % test, open(p, "rb").read())
        if have_onnx:
            m = onnx.load(p)
            old = [o for o in m.opset_import if o.domain in ("", "ai.onnx")]
            if old and old[0].version < 13:
                old[0].version = 13
                put("node13-%s.onnx" % test, m.SerializeToString())

    for p in sorted(glob.glob(os.path.join(ROOT, "test/Import/*.onnxtext"))):
        put("import-%s" % os.path.basename(p),
            strip_slash_comments(open(p).read()))
    for p in sorted(glob.glob(os.path.join(ROOT, "test/**/*.test"),
                              recursive=True)):
        for name, text in split_file_parts(p):
            if name.endswith((".onnxtext", ".onnxtxt")):
                stem = os.path.splitext(os.path.basename(p))[0]
                put("import-%s-%s" % (stem, name), strip_slash_comments(text))

    if have_onnx:
        models = sorted(glob.glob(os.path.join(ROOT, "models/*/model.onnx")) +
                        glob.glob(os.path.join(ROOT, "test/models/*/model.onnx")))
        for p in models:
            put("model-%s.onnx" % os.path.basename(os.path.dirname(p)),
                skeleton(p))
        for name, data in extdata_seeds():
            put(name, data)

    for p in sorted(glob.glob(os.path.join(ROOT, "test/Import/fuzz-regressions/*"))):
        if p.endswith((".test", ".cfg", ".md")):
            continue
        put("regress-%s" % os.path.basename(p), open(p, "rb").read())

    if args.dict:
        with open(args.dict, "w") as f:
            f.write(dictionary())
    total = sum(counts.values())
    print("fuzz-seeds: %d seeds in %s (%s); %d over %d bytes left out" % (
        total, args.out,
        ", ".join("%s %d" % kv for kv in sorted(counts.items())),
        skipped, args.max_len))


if __name__ == "__main__":
    main()
