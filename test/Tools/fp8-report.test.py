"""Checks of fp8-report.test.

    fp8-report.test.py check-report REPORT.json DECISIONS.json STATE...
        the --json report against its inputs: schema, modules, per-run
        figures, and pooling (the pooled figure lies within the runs'
        range; one state alone gives that run's own figures)
    fp8-report.test.py check-png FILE.png N
        FILE is a PNG that decodes, and shows the first N colours of
        matplotlib's cycle (one per report)
    fp8-report.test.py make-reports N DIR
        DIR/a.json and DIR/b.json: --json reports of N made-up products (a
        24-layer decoder's names, three runs), to plot a large model
"""
import json
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, os.pardir, "runtime", "python"))
from fp8rt import report as rep  # noqa: E402


def check_report(path, decisions_path, states):
    r = json.load(open(path))
    print(f"schema_version {r['schema_version']}, label {r['label']}, "
          f"{r['runs']} runs, {len(r['products'])} products")
    mods = [p.get("module") for p in r["products"]]
    print(f"modules: {sum(1 for m in mods if m)} of {len(mods)}, first {mods[0]}")
    ok = True
    for p in r["products"]:
        for key in ("lhs_sqnr_db", "rhs_sqnr_db", "output_rel_l2"):
            runs = p["per_run"][key]
            ok &= len(runs) == len(states) and min(runs) <= p[key] <= max(runs)
    print(f"per run: {len(states)} values each; pooled within the runs' range: {ok}")
    decisions = json.load(open(decisions_path))
    same = True
    for i, s in enumerate(states):
        alone = rep.analyze(decisions, [rep.read_state(s)], [s])
        for a, p in zip(alone["products"], r["products"]):
            for key in ("lhs_sqnr_db", "rhs_sqnr_db", "output_rel_l2"):
                same &= abs(a[key] - p["per_run"][key][i]) <= 1e-12 * max(1, abs(a[key]))
    print(f"one state alone gives that run's figures: {same}")


def check_png(path, n):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    width, height = struct.unpack(">II", data[16:24])
    # Every chunk's CRC, and the image data inflates.
    at, idat = 8, b""
    while at < len(data):
        (size,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + size]
        (crc,) = struct.unpack(">I", data[at + 8 + size:at + 12 + size])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind}"
        if kind == b"IDAT":
            idat += body
        at += 12 + size
    raw = zlib.decompress(idat)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    img = plt.imread(path)
    decodes = img.shape[:2] == (height, width) and len(raw) > 0
    print(f"PNG {width}x{height}, decodes: {decodes}")
    rgb = (img[..., :3] * 255).round().astype(int).reshape(-1, 3)
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"][:n]
    present = 0
    for c in cycle:
        want = np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)])
        # Markers of that colour, not a stray anti-aliased pixel.
        present += int((np.abs(rgb - want).max(axis=1) <= 8).sum() >= 50)
    print(f"series colours present: {present} of {n}")


def make_reports(n, folder):
    import random
    rnd = random.Random(1)
    names = ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
             "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"]
    for label, db in (("a", 31.0), ("b", 25.0)):
        products = []
        for i in range(n):
            runs = {"lhs_sqnr_db": [db + rnd.gauss(0, 0.5) for _ in range(3)],
                    "rhs_sqnr_db": [db - 0.5 + rnd.gauss(0, 0.3) for _ in range(3)],
                    "output_rel_l2": [10 ** (-db / 20) * (1 + rnd.gauss(0, 0.1))
                                      for _ in range(3)]}
            row = {k: sum(v) / 3 for k, v in runs.items()}
            row.update(node=f"node_linear_{i}", per_run=runs,
                       module=f"model.model.layers.{i // 7}.{names[i % 7]}")
            products.append(row)
        json.dump({"schema_version": 1, "label": label, "recipe": "current",
                   "format": "e4m3", "runs": 3, "products": products,
                   "high_precision": []},
                  open(os.path.join(folder, f"{label}.json"), "w"))


if sys.argv[1] == "check-report":
    check_report(sys.argv[2], sys.argv[3], sys.argv[4:])
elif sys.argv[1] == "check-png":
    check_png(sys.argv[2], int(sys.argv[3]))
elif sys.argv[1] == "make-reports":
    make_reports(int(sys.argv[2]), sys.argv[3])
