"""Calibrates static FP8 KV-cache scales from FP32 runs.

    fp8-kv-scales RUN_DIR... [--outputs REGEX] [--margin M] -o scales.json
    (also: python3 -m fp8rt.kv_scales, scripts/kv_cache_scales.py)

Each RUN_DIR is what `fp8-run model.so --data DIR --save RUN_DIR` wrote for
a build with an FP32 cache (fp8-compile without --kv-cache): output_N.pb
files carrying their tensor names, or <name>.npy files
(`--save-format=npy`). For every output whose name matches --outputs
(default ^present) the largest |value| over all runs is its amax; the file
maps each name to {"amax": A * 2^margin}, which
`fp8-compile --kv-cache=e4m3 --kv-cache-scales scales.json` turns into the
static scale A / fp8_max (current scaling's rule; a past input shares the
scale of the present output built from it). A margin > 0 leaves headroom
for later tokens larger than any seen in calibration. The file is written
atomically (temporary file, then rename). Needs only numpy.
"""
import argparse
import json
import math
import os
import re
import sys

import numpy as np

from .tensors import read_tensor, tensor_files


def main(argv=None):
    ap = argparse.ArgumentParser(prog="fp8-kv-scales", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="fp8-run --save folders")
    ap.add_argument("--outputs", default="^present",
                    help="regular expression selecting the cache outputs")
    ap.add_argument("--margin", type=int, default=0,
                    help="multiply every amax by 2^margin (headroom)")
    ap.add_argument("-o", "--output", required=True, help="the scales JSON to write")
    args = ap.parse_args(argv)
    try:
        pattern = re.compile(args.outputs)
    except re.error as err:
        sys.exit(f"error: --outputs '{args.outputs}' is not a regular expression: {err}")
    amax = {}
    for run in args.runs:
        files = tensor_files(run)
        if not files:
            sys.exit(f"error: {run} has no output_N.pb files (write them with "
                     "fp8-run --save) and no .npy files")
        for path in files:
            try:
                name, arr, dtype = read_tensor(path)
            except (ValueError, OSError) as err:
                sys.exit(f"error: {err}")
            if not name or not pattern.search(name):
                continue
            if dtype not in (1, 10, 16):
                sys.exit(f"error: {path} ('{name}') has ONNX data type "
                         f"{dtype}: calibrate with an FP32-cache build (no --kv-cache)")
            a = arr.astype(np.float32)
            if dtype == 16:  # bfloat16 stored as uint16
                a = (arr.astype(np.uint32) << 16).view(np.float32)
            finite = np.abs(a[np.isfinite(a)])
            m = float(finite.max()) if finite.size else 0.0
            amax[name] = max(amax.get(name, 0.0), m)
    if not amax:
        sys.exit(f"error: no output matches '{args.outputs}' in {', '.join(args.runs)}")
    scales = {n: {"amax": a * math.ldexp(1.0, args.margin)} for n, a in sorted(amax.items())}
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        json.dump(scales, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.output)
    for n, a in sorted(amax.items()):
        print(f"{n}: amax {a:.6g}")
    print(f"kv_cache_scales: {len(amax)} tensors from {len(args.runs)} run(s) -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
