#!/usr/bin/env python3
"""Compares a GPU run of an fp8-compile model library with the CPU run of
the same recipe, with onnxruntime's FP32 reference and with the FP8 spec;
prints one `PASS|FAIL <model>/<recipe> <details>` line (the format
scripts/gpu-check tabulates). Exit status 0 iff PASS.

usage: compare_outputs.py NAME RECIPE GPU_DIR CPU_DIR DATA_DIR [FP8REF_DIR]

GPU_DIR/CPU_DIR: `fp8-run --save` folders (output_N.pb). DATA_DIR: the
model's test_data_set_0 (onnxruntime's outputs as output_N.pb).
FP8REF_DIR: where fp8ref.py (test/reference) is; default: next to this
script, else ../test/reference.

Libraries built with --expose-quantized also return, per quantization, its
input x, FP8 result q and scale s (outputs named fp8:x<i>/q<i>/s<i>:node:
layout=..;fmt=..;scale=..). Checks, with the bounds of docs/GPU.md:
  * spec: q == fp8ref.quantize(x, s) bit for bit, and, when the scale came
    from x's own amax (current, block, mxfp8), s == the recipe's scale of
    fp8ref.amax(x) bit for bit -- for the GPU run and the CPU run alike;
  * GPU vs CPU: NaN/inf in the same places (except in the probe, whose
    inputs hold infinities: an overflowing sum is inf or NaN depending on
    its order; reported); FP32 ('none') outputs within relative L2 1e-5; FP8 recipes
    within 5e-2 (the GEMMs sum in different orders, and after the first
    layer the two runs quantize slightly different activations: the share
    of equal quantized bytes is reported, not required, except for the
    probe model, whose quantizations all read graph inputs and must be
    identical);
  * accuracy: GPU vs onnxruntime at most 1.25 x the CPU's error + 1e-3.
"""
import glob
import os
import re
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from onnx_tensor import read_tensor  # noqa: E402

NAME = re.compile(r"fp8:([xqs])(\d+):(.*):layout=([^;]*);fmt=([^;]*);scale=(.*)$")


def load(folder):
    out = {}
    for path in glob.glob(os.path.join(folder, "output_*.pb")):
        index = int(os.path.basename(path)[len("output_"):-len(".pb")])
        out[index] = read_tensor(path)
    return out


def rel(a, b):
    """(relative L2 over the elements finite in both, number of elements
    whose NaN/inf status or infinity sign differs)."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    same_special = (np.isnan(a) & np.isnan(b)) | (np.isinf(a) & (a == b))
    mismatched = int((~ok & ~same_special).sum())
    d = np.linalg.norm(a[ok] - b[ok])
    n = np.linalg.norm(b[ok])
    return (float(d / n) if n > 0 else float(d)), mismatched


def layout_arg(text):
    if text.startswith("block"):
        return tuple(int(v) for v in text.split()[1].split("x"))
    return text


def quantizations(outputs):
    """index i -> {'x','q','s': arrays, 'layout','fmt','scale'}"""
    groups = {}
    for _, (name, array, dtype) in outputs.items():
        m = NAME.match(name)
        if not m:
            continue
        kind, i, _, layout, fmt, scale = m.groups()
        g = groups.setdefault(int(i), {"layout": layout, "fmt": fmt,
                                       "scale": scale})
        g[kind] = array
        if kind == "s":
            g["s_e8m0"] = dtype == 2
    return groups


def spec_check(ref, groups):
    """(tensors checked, tensors wrong, description of the first wrong)."""
    checked = wrong = 0
    first = ""
    for i, g in sorted(groups.items()):
        layout, fmt = layout_arg(g["layout"]), g["fmt"]
        x, q, s = g["x"], g["q"], g["s"]
        scale_fmt = "e8m0" if g["s_e8m0"] else "f32"
        want_q = ref.quantize(x, s, layout, fmt, scale_fmt)
        checked += 1
        bad = int((np.asarray(want_q, np.uint8) != q).sum())
        how = g["scale"].split()
        want_s = None
        if how[0] in ("current", "block"):
            eps = float(how[1].split("=")[1])
            pow2 = how[2].split("=")[1] == "1"
            want_s = ref.current_scale(ref.amax(x, layout), fmt, eps, pow2)
        elif how[0] == "mxfp8":
            want_s = ref.mx_scale(ref.amax(x, layout), fmt, how[1])
        bad_s = 0
        if want_s is not None:
            checked += 1
            a = np.ascontiguousarray(np.asarray(want_s).astype(s.dtype))
            bad_s = int((a.view(np.uint8) !=
                         np.ascontiguousarray(s).view(np.uint8)).sum())
        if bad or bad_s:
            wrong += (bad > 0) + (bad_s > 0)
            if not first:
                first = (f"quantization {i} ({g['layout']}, {fmt}, "
                         f"{g['scale']}): {bad} FP8 bytes and {bad_s} scale "
                         "bytes differ from fp8ref")
    return checked, wrong, first


def main():
    if len(sys.argv) not in (6, 7):
        sys.exit(__doc__)
    name, recipe, gpu_dir, cpu_dir, data_dir = sys.argv[1:6]
    ref_dirs = [sys.argv[6]] if len(sys.argv) == 7 else [
        here, os.path.join(here, "..", "test", "reference")]
    sys.path[:0] = ref_dirs
    import fp8ref  # noqa: E402

    gpu, cpu, ref = load(gpu_dir), load(cpu_dir), load(data_dir)
    label = f"{name}/{recipe}"
    if not gpu or sorted(gpu) != sorted(cpu):
        print(f"FAIL {label} GPU outputs {sorted(gpu)} vs CPU {sorted(cpu)}")
        return 1
    problems, worst_gc, worst_go, worst_co = [], 0.0, 0.0, 0.0
    b_total = b_same = q_total = q_same = 0
    special_gc = special_ref = 0
    for i in sorted(gpu):
        gname, g, _ = gpu[i]
        c = cpu[i][1]
        if g.shape != c.shape:
            problems.append(f"{gname}: shape {g.shape} vs {c.shape}")
            continue
        if gname.startswith("fp8:"):
            if gname.startswith("fp8:q"):
                q_total += 1
                q_same += int(np.array_equal(g, c))
                b_total += g.size
                b_same += int((g == c).sum())
            continue
        gc, gc_bad = rel(g, c)
        worst_gc = max(worst_gc, gc)
        special_gc += gc_bad
        if i in ref:
            go, go_bad = rel(g, ref[i][1])
            co, co_bad = rel(c, ref[i][1])
            worst_go, worst_co = max(worst_go, go), max(worst_co, co)
            special_ref += max(0, go_bad - co_bad)
    n_spec = n_bad = 0
    for who, outputs in (("GPU", gpu), ("CPU", cpu)):
        checked, wrong, first = spec_check(fp8ref, quantizations(outputs))
        if who == "GPU":
            n_spec, n_bad = checked, wrong
        if wrong:
            problems.append(f"{who}: {wrong}/{checked} tensors differ from "
                            f"the spec; {first}")
    # Non-finite outputs must match, except in the probe, whose inputs hold
    # infinities on purpose: there an overflowing product is inf or NaN
    # depending on the summation order (documented, reported).
    if special_gc and name != "fp8_probe":
        problems.append(f"{special_gc} outputs are NaN/inf on one target "
                        "and not (or differently) on the other")
    if special_ref:
        problems.append(f"{special_ref} more NaN/inf mismatches against "
                        "onnxruntime than the CPU has")
    bound = 1e-5 if recipe == "none" else 5e-2
    if worst_gc > bound:
        problems.append(f"GPU vs CPU rel L2 {worst_gc:.2e} > {bound:g}")
    if recipe != "none" and ref and worst_go > 1.25 * worst_co + 1e-3:
        problems.append(f"GPU vs ORT {worst_go:.2e} > 1.25 x CPU's "
                        f"{worst_co:.2e} + 1e-3")
    if name == "fp8_probe" and q_same != q_total:
        problems.append(f"probe: {q_total - q_same} quantized tensors differ "
                        "from the CPU's")
    detail = f"gpu-vs-cpu {worst_gc:.1e}" + (
        f" ({special_gc} NaN/inf differ)" if special_gc else "") + "; " + (
        f"gpu-vs-ort {worst_go:.1e} (cpu {worst_co:.1e})" if ref
        else "no onnxruntime reference")
    if q_total:
        detail += (f"; spec {n_spec - n_bad}/{n_spec} exact; same as CPU "
                   f"{q_same}/{q_total} tensors, "
                   f"{100.0 * b_same / max(b_total, 1):.2f}% bytes")
    if problems:
        print(f"FAIL {label} {detail}; " + "; ".join(problems))
        return 1
    print(f"PASS {label} {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
