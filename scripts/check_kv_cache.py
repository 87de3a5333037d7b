#!/usr/bin/env python3
"""Checks fp8-compile --kv-cache on a decoder exported with a KV cache, over
two chained decode steps, against references that do not use our code.

    check_kv_cache.py MODEL_DIR [--format e4m3|e5m2] [--scale S | --calibrate]
                      [--target cpu|sm_90a] [--recipe R] [--flags "..."] [--build BUILD] [--work DIR]

MODEL_DIR holds model.onnx, test_data_set_0 (a decode step after a prefill)
and test_data_set_1 (the next step; its cache is onnxruntime's present of
step 0), as scripts/export_models.py writes them (llama_kv_dynamo). Cache
tensors are the inputs named past* and the outputs named present*.

For each step it compiles the graph twice for that step's shapes: with an
FP32 cache (reference) and with the FP8 cache, both with --recipe/--flags.
Step 0's FP8 cache input is the spec
quantization (test/reference/fp8ref.py) of the FP32 cache; step 1's is the
FP8 present that *our* step 0 returned (the cache really round-trips).
Checked per step:

  verbatim   the cached part of every present output is the past input's
             bytes, unchanged;
  new        the new tokens' part against fp8ref.quantize of what the
             FP32-cache build computes for them from the same (dequantized) cache:
             byte for byte in layer 0 (its new K/V do not depend on the
             cache); in later layers, whose inputs went through attention
             over the FP8-rounded current tokens, relative L2 of the
             dequantized values <= 0.05 (E4M3) / 0.1 (E5M2);
  logits     against onnxruntime with an FP32 cache: cosine >= --min-cosine,
             relative L2 <= --max-rel-l2, same top-1 token.

--calibrate runs an FP32-cache CPU build on step 0 (fp8-run --save), makes
a scales file from it with scripts/kv_cache_scales.py and compiles with
--kv-cache-scales; the check derives each scale from the file's amax with
fp8ref.current_scale. Exits 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))
import fp8ref  # noqa: E402
import fp8rt  # noqa: E402
from onnx_tensor import input_shape_args, read_tensor  # noqa: E402


def read_set(folder):
    def files(prefix):
        out, i = [], 0
        while os.path.exists(os.path.join(folder, f"{prefix}_{i}.pb")):
            name, arr, _ = read_tensor(os.path.join(folder, f"{prefix}_{i}.pb"))
            out.append((name, arr))
            i += 1
        return out
    return files("input"), files("output")


def compile_lib(args, inputs, out, extra):
    cmd = [os.path.join(args.build, "bin", "fp8-compile"), args.model, "-o", out,
           "--target", args.target, "--quiet", "--recipe", args.recipe]
    cmd += input_shape_args((n, a, None) for n, a in inputs)
    cmd += args.flags.split() + extra
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{r.stderr}")
    return out


def stats(a, b):
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    rel = float(np.linalg.norm(a - b) / np.linalg.norm(b))
    return cos, rel


def _pasts(present):
    """Cache input names a present output may feed (the exporters' names:
    present... -> past_key_values... or past...)."""
    return [present.replace("present", p, 1) for p in ("past_key_values", "past")]


def past_of(present, inputs):
    names = [getattr(i, "name", i) for i in inputs]
    for cand in _pasts(present):
        if cand in names:
            return cand
    sys.exit(f"error: no cache input matches output '{present}' (inputs: {names})")


def present_of(past, outputs):
    for name in outputs:
        if name.startswith("present") and past in _pasts(name):
            return name
    sys.exit(f"error: no present output matches cache input '{past}'")


def prefill_inputs(steps, is_past, new, past_len):
    """Inputs of a step with `new` tokens after `past_len` cached ones: the
    4 + 1 stored token ids, and the stored cache shapes with another
    length (0: the first step of a generation, an empty cache)."""
    ids = np.concatenate([steps[0][0][0][1], steps[1][0][0][1]], axis=1)
    out = [("input_ids", ids[:, past_len:past_len + new]),
           ("attention_mask", np.ones((1, past_len + new), np.int64))]
    for name, arr in steps[0][0][2:]:
        assert is_past(name)
        shape = list(arr.shape)
        shape[2] = past_len
        out.append((name, np.zeros(shape, np.float32)))
    return out


PREFILL = {"p4": (4, 0), "d1": (1, 4), "p5": (5, 0)}


def prefill_libs(args, work, steps, extra, is_past):
    for tag, (new, past_len) in PREFILL.items():
        inputs = prefill_inputs(steps, is_past, new, past_len)
        compile_lib(args, inputs, os.path.join(work, f"{tag}_fp32.so"), [])
        compile_lib(args, inputs, os.path.join(work, f"{tag}_kv.so"), extra)


def prefill_check(args, work, steps, extra, scale, is_past, is_present):
    """First steps from an empty cache: prefill 4 tokens (past length 0),
    then decode 1 token on the returned cache, must give what prefilling
    all 5 at once gives — for the FP32 cache (to 1e-5) and for the FP8
    cache, whose attention already reads the quantized K/V of every token
    (the same bytes either way, up to FP32 summation order)."""
    failures = 0
    for kind in ("fp32", "kv"):
        libs = {t: fp8rt.Model(os.path.join(work, f"{t}_{kind}.so")) for t in PREFILL}
        def feed(tag, cache=None):
            arrs = []
            for (name, arr), info in zip(prefill_inputs(steps, is_past, *PREFILL[tag]),
                                         libs[tag].inputs):
                if is_past(name):
                    if cache is not None:
                        arr = cache[name]
                    elif kind == "kv":
                        arr = np.zeros(arr.shape, np.uint8)
                arrs.append(arr)
            return libs[tag](*arrs)
        p4 = feed("p4")
        names = [i.name for i in libs["p4"].outputs]
        cache = {past_of(n, libs["d1"].inputs): o
                 for n, o in zip(names, p4) if is_present(n)}
        d1 = feed("d1", cache)
        p5 = feed("p5")
        for name, a, b in zip(names, d1, p5):
            if is_present(name):
                if kind == "kv":
                    diff = int(np.count_nonzero(a != b))
                    fmt = args.format
                    deq = lambda q: fp8ref.dequantize(q, scale(name), "tensor", fmt)
                    _, rel = stats(deq(a), deq(b))
                    ok = diff <= a.size // 100
                    detail = (f"{diff}/{a.size} FP8 bytes differ (<= 1 %), "
                              f"rel L2 {rel:.2e}")
                else:
                    _, rel = stats(a, b)
                    ok = rel <= 1e-5
                    detail = f"rel L2 {rel:.2e} (<= 1e-5)"
            else:
                a, b = a[:, -1], b[:, -1]
                _, rel = stats(a, b)
                top1 = np.array_equal(np.argmax(a, -1), np.argmax(b, -1))
                bound = 1e-5 if kind == "fp32" else 1e-3
                ok = rel <= bound and top1
                detail = f"last token rel L2 {rel:.2e} (<= {bound:g}), top-1 {'same' if top1 else 'DIFFERS'}"
            failures += not ok
            print(f"  step p {kind + ':' + name:22s} {kind} cache: prefill 4 from an empty "
                  f"cache + decode 1 vs prefill 5: {detail}  {'ok' if ok else 'FAIL'}")
        for m in libs.values():
            m.close()
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--format", default="e4m3", choices=["e4m3", "e5m2"])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--calibrate", action="store_true")
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--recipe", default="none",
                    help="FP8 recipe of the products, in both builds (the FP32-cache "
                         "reference build uses it too)")
    ap.add_argument("--flags", default="",
                    help="more fp8-compile flags for both builds, e.g. --include-attention")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--compile-only", action="store_true",
                    help="compile the libraries into --work and stop (e.g. for a GPU "
                         "machine without the compiler)")
    ap.add_argument("--prefill", action="store_true",
                    help="also check first steps from an empty cache (past length 0): "
                         "prefill 4 + decode 1 = prefill 5")
    ap.add_argument("--prebuilt", action="store_true",
                    help="run the libraries a --compile-only call left in --work")
    ap.add_argument("--work", default=None)
    ap.add_argument("--min-cosine", type=float, default=0.999)
    ap.add_argument("--max-rel-l2", type=float, default=None,
                    help="logits vs onnxruntime (default 0.03 for e4m3, 0.06 for e5m2)")
    args = ap.parse_args()
    args.model = os.path.join(args.model_dir, "model.onnx")
    if args.max_rel_l2 is None:
        args.max_rel_l2 = 0.03 if args.format == "e4m3" else 0.06
    tag = (f"{args.format}-{'cal' if args.calibrate else args.scale}-{args.recipe}-"
           f"{args.target}")
    work = args.work or os.path.join(args.build, "kv-cache", tag)
    os.makedirs(work, exist_ok=True)
    fmt = args.format
    steps = [read_set(os.path.join(args.model_dir, f"test_data_set_{k}")) for k in (0, 1)]
    is_past = lambda n: n.startswith("past")
    is_present = lambda n: n.startswith("present")

    scale_of = {}
    extra = ["--kv-cache", fmt]
    names0 = [n for n, _ in steps[0][0] if is_past(n)]
    if args.calibrate:
        # The documented workflow: an FP32-cache CPU build run on the
        # calibration data (here step 0's inputs), then kv_cache_scales.py.
        path = os.path.join(work, "scales.json")
        if not args.prebuilt:
            inputs0 = steps[0][0]
            lib = compile_lib(argparse.Namespace(**{**vars(args), "target": "cpu",
                                                    "recipe": "none", "flags": ""}),
                              inputs0, os.path.join(work, "calib.so"), [])
            run_dir = os.path.join(work, "calib-run")
            subprocess.run([os.path.join(args.build, "bin", "fp8-run"), lib, "--data",
                            os.path.join(args.model_dir, "test_data_set_0"), "--save", run_dir],
                           check=True, capture_output=True)
            subprocess.run([sys.executable, os.path.join(HERE, "kv_cache_scales.py"), run_dir,
                            "-o", path], check=True, capture_output=True)
        amax = {n: e["amax"] for n, e in json.load(open(path)).items()}
        extra += ["--kv-cache-scales", path]
        for n in names0:
            pres = present_of(n, [name for name, _ in steps[0][1]])
            scale_of[n] = scale_of[pres] = float(fp8ref.current_scale(
                np.float32(amax[pres]), fmt))
    else:
        extra += ["--kv-cache-scale", repr(args.scale)]

    def scale(name):
        return np.float32(scale_of.get(name, args.scale))

    failures = 0
    carried = None  # step 0's FP8 presents, by the matching past name
    print(f"{os.path.basename(os.path.abspath(args.model_dir))}: FP8 KV cache "
          f"{fmt}, {'calibrated scales' if args.calibrate else f'scale {args.scale:g}'}, "
          f"recipe {args.recipe}{(' ' + args.flags) if args.flags else ''}, target {args.target}")
    if args.prefill and not args.prebuilt:
        prefill_libs(args, work, steps, extra, is_past)
    libs = []
    for k, (inputs, _) in enumerate(steps):
        pair = (os.path.join(work, f"kv{k}.so"), os.path.join(work, f"fp32_{k}.so"))
        if not args.prebuilt:
            compile_lib(args, inputs, pair[0], extra)
            compile_lib(args, inputs, pair[1], [])
        libs.append(pair)
    if args.compile_only:
        return 0
    for k, (inputs, ref_outputs) in enumerate(steps):
        kv, fp32 = fp8rt.Model(libs[k][0]), fp8rt.Model(libs[k][1])
        if kv.device != ("cpu" if args.target == "cpu" else "cuda"):
            sys.exit(f"error: {libs[k][0]} runs on {kv.device}, --target is {args.target}")
        feeds_kv, feeds_32, past_q = [], [], {}
        for (name, arr), info in zip(inputs, kv.inputs):
            if is_past(name):
                if info.dtype != (17 if fmt == "e4m3" else 19):
                    sys.exit(f"error: input {name} has dtype {info.dtype} in the FP8 build")
                q = carried[name] if carried is not None else fp8ref.quantize(
                    arr.astype(np.float32), scale(name), "tensor", fmt)
                past_q[name] = q
                feeds_kv.append(q)
                feeds_32.append(fp8ref.dequantize(q, scale(name), "tensor", fmt))
            else:
                feeds_kv.append(arr)
                feeds_32.append(arr)
        out_kv = kv(*feeds_kv)
        out_32 = fp32(*feeds_32)
        carried = {}
        for (name, ref), got, f32, info in zip(ref_outputs, out_kv, out_32, kv.outputs):
            if is_present(name):
                past = past_of(name, kv.inputs)
                p = past_q[past].shape[2]
                verbatim = np.array_equal(got[:, :, :p], past_q[past])
                want = fp8ref.quantize(f32[:, :, p:], scale(name), "tensor", fmt)
                diff = int(np.count_nonzero(got[:, :, p:] != want))
                # The first layer's new K/V do not depend on the cache: they
                # must be exact. Later layers attend (in the FP8 build) to the
                # current tokens' FP8-rounded K/V, so their inputs differ from
                # the FP32 build's: their dequantized values must stay within
                # FP8 rounding error of the FP32 build's (relative L2).
                first = name.split(".")[1] == "0"
                deq = fp8ref.dequantize(got[:, :, p:], scale(name), "tensor", fmt)
                _, rel = stats(deq, f32[:, :, p:])
                bound = 0.05 if fmt == "e4m3" else 0.1
                ok = verbatim and (diff == 0 if first else rel <= bound)
                failures += not ok
                print(f"  step {k} {name:17s} verbatim {'yes' if verbatim else 'NO '}  "
                      f"new tokens {got.shape[2] - p} x {got.shape[1]} heads: "
                      f"{diff}/{want.size} bytes differ from fp8ref(FP32-cache build)"
                      f"{' (must be 0)' if first else ''}, rel L2 {rel:.3e}"
                      f"{'' if first else f' (<= {bound:g})'}  {'ok' if ok else 'FAIL'}")
                carried[past] = got
            else:
                cos, rel = stats(got, ref)
                top1 = np.array_equal(np.argmax(got, -1), np.argmax(ref, -1))
                ok = cos >= args.min_cosine and rel <= args.max_rel_l2 and top1
                failures += not ok
                cos32, rel32 = stats(f32, ref)
                print(f"  step {k} {name:17s} vs onnxruntime (FP32 cache): cosine {cos:.6f} "
                      f"rel L2 {rel:.3e} top-1 {'same' if top1 else 'DIFFERS'} "
                      f"(FP32-cache build given the same FP8 cache: rel L2 {rel32:.3e})  "
                      f"{'ok' if ok else 'FAIL'}")
        kv.close()
        fp32.close()
    if args.prefill:
        failures += prefill_check(args, work, steps, extra, scale, is_past, is_present)
    print("kv-cache:", "ok" if failures == 0 else f"{failures} FAILED")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
