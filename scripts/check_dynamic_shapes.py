#!/usr/bin/env python3
"""Checks one library compiled with dynamic dimensions (fp8-compile
--input-shape with LO..HI bounds) against static builds of the same shapes
and against onnxruntime, on a decoder step with a KV cache.

    check_dynamic_shapes.py MODEL_DIR [--recipe R[,R...]] [--build BUILD]
                            [--work DIR] [--ort-prefix DIR] [--node NODE]
                            [--kv-cache e4m3|e5m2]
                            [--target T [--compile-only | --prebuilt]]

MODEL_DIR holds model.onnx with inputs input_ids, attention_mask,
position_ids and past_key_values.<i>.key/value [batch, heads, past, dim]
(llama_decode_dynamo of scripts/export_models.py). Bounds: batch 1..8,
seq 1..64, past 0..64 (the mask 1..128). For each shape (batch, seq, past)
of SHAPES it draws inputs (numpy default_rng, seeded by the shape), has
onnxruntime-node (scripts/ort/ort_run.js) compute the reference, and checks
per output, relative L2 error:

  fp32 dyn/static  the dynamic FP32 library vs the static FP32 build of
                   that shape: <= 1e-6
  fp32 dyn/ort     the dynamic FP32 library vs onnxruntime: <= 1e-5 (the
                   FP32 bound of test/Models)
  R dyn/static     the dynamic FP8 library (--recipe R, default current;
                   several, comma-separated, each checked the same way:
                   rowwise and block take per-row and per-block scales of
                   a dynamic M) vs the static FP8 build of that shape with
                   --fuse-attention=false (attention is fused for static
                   shapes only): <= 1e-6 (GPU: <= half that static build's
                   own error vs onnxruntime: the order of FP32 sums
                   differs between the two GPU builds)
  R dyn/ort        the same vs onnxruntime: <= 0.1 (the FP8 bound of
                   test/Models/exported-llama_decode_dynamo.test), and
                   within 1.5x the default static FP8 build's own error

With --kv-cache FMT every library (dynamic and static) is compiled with
fp8-compile --kv-cache FMT: the cache inputs and outputs are FP8. The
past values are drawn already representable in FMT (0.5 N(0, 1) rounded
to it), so onnxruntime's FP32 model sees exactly the cached values; the
libraries get their FP8 bits (test/reference/fp8ref.py) and their FP8
outputs are decoded before the comparisons. The dyn/static bounds are the
same (FP8 bits, decoded); dyn/ort, FP32 included, is within 1.5x the
static build's own error (the cache's new rows are rounded to FMT, and
attention reads them so), and a present output within half an ulp of FMT
(2^-4 relative for E4M3, 2^-3 for E5M2). fp8-run's check (float .pb
inputs) is skipped.

Then: fp8-run on the dynamic library with one shape's .pb files (the CLI
passes shapes through), a run outside the bounds (an error naming the input
and its bounds), and the same library still giving the same outputs after
it. Prints one line per check ("ok" or "FAIL") and "dynamic shapes: PASS";
exits 1 on any failure.

GPU libraries (--target sm_90a) are compiled here and run on the GPU
machine: `--compile-only` compiles every library and writes the inputs and
onnxruntime's outputs into WORK; there `--prebuilt --work WORK --build
BIN_DIR` (BIN_DIR holding fp8-run) runs the same checks, and two more per
recipe: runs at alternating shapes through CUDA graphs (FP8RT_CUDA_GRAPH=1:
a graph per set of addresses and dimensions) equal to the plain runs bit
for bit, and runs on torch CUDA tensors equal to the numpy runs with no
host-to-device copy (when torch is installed).
"""
# (torch is optional: the GPU run's device-tensor check.)
# fp8-opt-deps: device-only (torch)
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))
# Plain runs (the references) unless a check asks for CUDA graphs, which
# are on by default.
os.environ["FP8RT_CUDA_GRAPH"] = "0"
import fp8rt  # noqa: E402
from onnx_tensor import read_tensor, write_tensor  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "test", "reference"))
import fp8ref  # noqa: E402

# --kv-cache: the FP8 format of the cache inputs and outputs (None: FP32).
KV = None

BATCH, SEQ, PAST = (1, 8), (1, 64), (0, 64)
# The first step of a generation (nothing cached; two tokens: with one, the
# static build's P V has a single key, a product with K = 1 that the
# importer computes as an outer product, exactly, where the dynamic build
# cannot know K), the stored test set's shape, an odd one, and the upper
# bounds.
SHAPES = [(1, 2, 0), (2, 4, 12), (3, 9, 20), (8, 64, 64)]


def bounds_args(layers):
    b, s, p = (f"{lo}..{hi}" for lo, hi in (BATCH, SEQ, PAST))
    mask = f"{SEQ[0] + PAST[0]}..{SEQ[1] + PAST[1]}"
    spec = [f"input_ids={b}x{s}", f"attention_mask={b}x{mask}",
            f"position_ids={b}x{s}"]
    spec += [f"past_key_values.{i}.{kv}={b}x{{heads}}x{p}x{{dim}}"
             for i in range(layers) for kv in ("key", "value")]
    return spec


def make_inputs(shape, heads, dim, layers):
    """The inputs as onnxruntime takes them (FP32 past values; with KV,
    values FMT represents exactly)."""
    b, s, p = shape
    rng = np.random.default_rng(1000 * b + 10 * s + p)
    mask = np.ones((b, p + s), np.int64)
    if b > 1 and p > 2:
        mask[1, :2] = 0  # a left-padded sequence
    ins = [("input_ids", rng.integers(0, 256, (b, s), dtype=np.int64)),
           ("attention_mask", mask),
           ("position_ids", np.tile(np.arange(p, p + s, dtype=np.int64), (b, 1)))]
    for i in range(layers):
        for kv in ("key", "value"):
            past = (0.5 * rng.standard_normal((b, heads, p, dim))).astype(np.float32)
            if KV:
                past = fp8ref.fp8_to_f32(fp8ref.cast_to_fp8(past, KV), KV)
            ins.append((f"past_key_values.{i}.{kv}", past))
    return ins


def lib_inputs(ins):
    """The libraries' arrays for make_inputs' inputs: with KV, the cache's
    FP8 bits (exact: the values are FMT's)."""
    return [fp8ref.cast_to_fp8(a, KV) if KV and name.startswith("past_key_values.")
            else a for name, a in ins]


def decoded(outputs, names):
    """Outputs as FP32 (with KV, the cache outputs' FP8 bits decoded)."""
    return [fp8ref.fp8_to_f32(a, KV) if KV and n.startswith("present.") else a
            for a, n in zip(outputs, names)]


def rel_l2(a, ref):
    a, ref = a.astype(np.float64), ref.astype(np.float64)
    den = np.linalg.norm(ref)
    err = np.linalg.norm(a - ref)
    return err / den if den > 0 else err


def load_meta(model, work, prebuilt):
    """Heads, head size and layers from the model's past inputs (saved in
    WORK/meta.json for a --prebuilt run, where onnx may be missing)."""
    path = os.path.join(work, "meta.json")
    if prebuilt:
        with open(path) as f:
            meta = json.load(f)
        return meta["heads"], meta["dim"], meta["layers"]
    import onnx
    graph = onnx.load(model, load_external_data=False).graph
    pasts = [i for i in graph.input if i.name.startswith("past_key_values.")]
    dims = pasts[0].type.tensor_type.shape.dim
    heads, dim, layers = dims[1].dim_value, dims[3].dim_value, len(pasts) // 2
    with open(path, "w") as f:
        json.dump({"heads": heads, "dim": dim, "layers": layers}, f)
    return heads, dim, layers


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("--recipe", default="current")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--target", default="cpu",
                    help="fp8-compile --target (cpu, or sm_90a: run where the GPU is, "
                         "after --compile-only here)")
    ap.add_argument("--compile-only", action="store_true",
                    help="compile every library and write the inputs and onnxruntime's "
                         "outputs into WORK, run nothing")
    ap.add_argument("--prebuilt", action="store_true",
                    help="run WORK's libraries on WORK's inputs (from --compile-only); "
                         "--build is then the folder holding fp8-run")
    ap.add_argument("--ort-prefix",
                    default=os.environ.get("FP8_ORT_PREFIX", os.path.join(ROOT, "build", "ort")))
    ap.add_argument("--node", default=shutil.which("node") or "node")
    ap.add_argument("--kv-cache", default=None, choices=["e4m3", "e5m2"],
                    help="compile every library with fp8-compile --kv-cache")
    args = ap.parse_args()
    global KV
    KV = args.kv_cache
    model = os.path.join(args.model_dir, "model.onnx")
    work = args.work or os.path.join(args.build, "check-dynamic-shapes")
    os.makedirs(work, exist_ok=True)
    bindir = args.build if args.prebuilt else os.path.join(args.build, "bin")
    gpu = args.target != "cpu"
    failures = []

    def check(what, value, bound):
        ok = value <= bound
        print(f"  {what:44s} {value:10.3e} <= {bound:g}  {'ok' if ok else 'FAIL'}",
              flush=True)
        if not ok:
            failures.append(what)

    def compile_lib(out, shape_args, recipe, flags=()):
        if args.prebuilt:
            if not os.path.exists(out):
                raise SystemExit(f"error: {out} missing: run --compile-only first")
            return out
        cmd = [os.path.join(bindir, "fp8-compile"), model, "-o", out, "--recipe", recipe,
               "--target", args.target, "--quiet", *flags]
        if KV:
            cmd += ["--kv-cache", KV]
        for a in shape_args:
            cmd += ["--input-shape", a]
        if subprocess.run(cmd).returncode != 0:
            raise SystemExit(f"error: {' '.join(cmd)} failed")
        return out

    def load(path):
        return None if args.compile_only else fp8rt.Model(path)

    heads, dim, layers = load_meta(model, work, args.prebuilt)
    spec = [s.format(heads=heads, dim=dim) for s in bounds_args(layers)]

    recipes = ["none"] + [r for r in args.recipe.split(",") if r]
    dynamic = {r: load(compile_lib(os.path.join(work, f"dynamic-{r}.so"), spec, r))
               for r in recipes}
    m = dynamic["none"]
    if m:
        print("dynamic library inputs: " +
              ", ".join(f"{i.name} {i.shape_text()}" for i in m.inputs), flush=True)

    first = None
    runs = {}  # (recipe, tag) -> the dynamic library's outputs
    for shape in SHAPES:
        b, s, p = shape
        tag = f"b{b}-s{s}-p{p}"
        ins = make_inputs(shape, heads, dim, layers)
        data = os.path.join(work, tag)
        os.makedirs(data, exist_ok=True)
        if not args.prebuilt:
            for k, (name, a) in enumerate(ins):
                write_tensor(os.path.join(data, f"input_{k}.pb"), a, name)
            ort = subprocess.run([args.node, os.path.join(HERE, "ort", "ort_run.js"),
                                  "--prefix", args.ort_prefix, model, data])
            if ort.returncode != 0:
                raise SystemExit("error: onnxruntime-node failed")
        static_spec = [f"{name}={'x'.join(map(str, a.shape))}" for name, a in ins]
        arrays = lib_inputs(ins)
        if args.compile_only:
            for r in recipes:
                compile_lib(os.path.join(work, f"static-{tag}-{r}.so"), static_spec, r)
                if r != "none":
                    compile_lib(os.path.join(work, f"static-{tag}-{r}-unfused.so"),
                                static_spec, r, ["--fuse-attention=false"])
            continue
        refs = [read_tensor(os.path.join(data, f"output_{k}.pb"))[1]
                for k in range(len(m.outputs))]
        names = [o.name for o in m.outputs]
        print(f"batch {b}, seq {s}, past {p}:", flush=True)
        for r in recipes:
            label = "fp32" if r == "none" else r
            static = fp8rt.Model(compile_lib(os.path.join(work, f"static-{tag}-{r}.so"),
                                             static_spec, r))
            raw = dynamic[r].run(*arrays)
            runs[(r, tag)] = raw
            got = decoded(raw, names)
            want = decoded(static.run(*arrays), names)
            static.close()
            if r != "none":
                # The importer fuses attention (fp8.attention) for static
                # shapes only; its BF16 products round where the
                # decomposition's do not, so the like-for-like static FP8
                # build decomposes it too. The default static build's error
                # against onnxruntime is the bound of the dynamic one's.
                unfused = fp8rt.Model(compile_lib(
                    os.path.join(work, f"static-{tag}-{r}-unfused.so"), static_spec, r,
                    ["--fuse-attention=false"]))
                want, default = decoded(unfused.run(*arrays), names), want
                unfused.close()
            if r == "none" and first is None:
                first = (arrays, raw)
            for info, g, w, ref in zip(m.outputs, got, want, refs):
                if g.shape != ref.shape or w.shape != ref.shape:
                    print(f"  {label} {info.name}: shape {g.shape}, static {w.shape}, "
                          f"onnxruntime {ref.shape}  FAIL")
                    failures.append(f"{tag} {info.name} shape")
                    continue
                bound = 1e-6
                if gpu and r != "none":
                    # Two GPU builds of one recipe differ in the order of
                    # FP32 sums (a softmax over a dynamic row length folds
                    # one element per lane per step, a static one vectors;
                    # GEMM configurations), which FP8 rounding can amplify:
                    # their
                    # distance is bounded by half the static build's own
                    # FP8 error (on the CPU they are bit-identical).
                    bound = 0.5 * rel_l2(w, ref)
                check(f"{label} dyn/static {info.name} {'x'.join(map(str, g.shape))}",
                      rel_l2(g, w), bound)
                # With KV the cache's new rows are rounded to it (attention
                # reads them so): every output is within 1.5x the static
                # build's own error, a cache output within half an ulp.
                kv_bound = (2.0 ** -4 if KV == "e4m3" else 2.0 ** -3) \
                    if KV and info.name.startswith("present.") else 0.1
                if r == "none":
                    check(f"{label} dyn/ort {info.name}", rel_l2(g, ref),
                          min(kv_bound, 1.5 * rel_l2(w, ref) + 1e-6) if KV else 1e-5)
                else:
                    d = default[[o.name for o in m.outputs].index(info.name)]
                    check(f"{label} dyn/ort {info.name}", rel_l2(g, ref),
                          min(kv_bound, 1.5 * rel_l2(d, ref) + 1e-6))
    if args.compile_only:
        print(f"compiled {len(recipes) * (1 + 2 * len(SHAPES)) - len(SHAPES)} "
              f"libraries for {args.target} into {work}")
        return 0

    # fp8-run passes the shapes of its inputs through (and checks against
    # onnxruntime's outputs in the same folder; its FP32 inputs are not an
    # FP8 cache's).
    tag = "b3-s9-p20"
    run = subprocess.CompletedProcess([], 0, "(skipped: --kv-cache)\n", "") if KV else \
        subprocess.run([os.path.join(bindir, "fp8-run"), os.path.join(work, "dynamic-none.so"),
                          "--data", os.path.join(work, tag), "--rtol", "1e-5"],
                         capture_output=True, text=True)
    print(f"fp8-run {tag}: exit {run.returncode}")
    print(run.stdout, end="")
    if run.returncode != 0:
        print(run.stderr, end="")
        failures.append("fp8-run")

    # Outside the bounds: an error naming the input; the handle still works.
    try:
        m.run(*lib_inputs(make_inputs((9, 1, 0), heads, dim, layers)))
        print("out of bounds: ran  FAIL")
        failures.append("out of bounds")
    except fp8rt.Error as e:
        print(f"out of bounds: {e}")
    arrays, before = first
    after = m.run(*arrays)
    same = all(np.array_equal(x, y) for x, y in zip(before, after))
    print(f"after the refused run: {'same outputs  ok' if same else 'outputs differ  FAIL'}")
    if not same:
        failures.append("after refused run")

    if gpu:
        check_gpu_runs(work, recipes, runs, heads, dim, layers, failures)

    if failures:
        print(f"dynamic shapes: FAIL ({len(failures)}: {', '.join(failures[:5])})")
        return 1
    print("dynamic shapes: PASS")
    return 0


def check_gpu_runs(work, recipes, runs, heads, dim, layers, failures):
    """A GPU library's runs at alternating shapes through CUDA graphs (one
    graph per set of addresses and dimensions: a replay at another shape
    would reuse the wrong grids) and with torch tensors on the device (the
    sizes from the tensors, no host copy): outputs equal to the plain runs
    bit for bit."""
    order = SHAPES + SHAPES[::-1] + SHAPES
    os.environ["FP8RT_CUDA_GRAPH"] = "1"
    try:
        for r in recipes:
            g = fp8rt.Model(os.path.join(work, f"dynamic-{r}.so"))
            same = 0
            for shape in order:
                b, s, p = shape
                got = g.run(*lib_inputs(make_inputs(shape, heads, dim, layers)))
                same += all(np.array_equal(x, y)
                            for x, y in zip(got, runs[(r, f"b{b}-s{s}-p{p}")]))
            g.close()
            ok = same == len(order)
            print(f"cuda graphs {r}: {same}/{len(order)} runs at alternating shapes "
                  f"equal to the plain runs  {'ok' if ok else 'FAIL'}", flush=True)
            if not ok:
                failures.append(f"cuda graphs {r}")
    finally:
        os.environ["FP8RT_CUDA_GRAPH"] = "0"
    try:
        import torch
    except ImportError:
        print("device tensors: torch not installed, skipped")
        return
    for r in recipes:
        lib = fp8rt.Model(os.path.join(work, f"dynamic-{r}.so"))
        same = 0
        for shape in SHAPES[1:3]:
            b, s, p = shape
            ins = [torch.from_numpy(a).cuda()
                   for a in lib_inputs(make_inputs(shape, heads, dim, layers))]
            got = lib.run(*ins)
            torch.cuda.synchronize()
            same += all(isinstance(x, torch.Tensor) and x.is_cuda and
                        np.array_equal(x.cpu().numpy(), y)
                        for x, y in zip(got, runs[(r, f"b{b}-s{s}-p{p}")]))
        copies = lib.last_run_copies()
        lib.close()
        # Nothing staged through the host (the check status, 16 bytes, is
        # the one copy back when the model has run-time checks).
        ok = same == 2 and copies["host_to_device"] == 0 and \
            copies["device_to_host"] <= 16
        print(f"device tensors {r}: {same}/2 shapes equal to the numpy runs, "
              f"last run's copies {copies}  {'ok' if ok else 'FAIL'}", flush=True)
        if not ok:
            failures.append(f"device tensors {r}")


if __name__ == "__main__":
    sys.exit(main())
