"""Issue 13's layer benchmark, on the H200 in one device call: the
Llama-3-8B-shaped model with one decoder layer (hidden 4096, 32 heads, 8 KV
heads, FFN 14336, RoPE theta 500000; vocabulary 256 so that the decoder
layer is what is timed) over BATCH x SEQ tokens, compiled here by
bench/layer/make_bundle.sh with --pack-weights=false, against torch on the
same weights in the same process.

usage: layer_h200.py BUNDLE OUT [--batch 1 --seq 8192] [--peer PEER.py]

1. Exports the model as the bundle's graph was exported (bench/export_llama8b.py
   --device cuda: seed 0, weights initialised on the GPU) and checks that the
   graph is byte for byte the one the bundle was compiled from (md5).
2. Packs each library's weights file there with the static fp8-pack.
3. torch on the same weights: the FP32 and BF16 logits (the references),
   and eager BF16 / torch.compile BF16 timings of the same module.
4. Each library through fp8rt: the logits against torch FP32 and BF16
   (relative L2, cosine), and the GPU time of a run -- replays of its CUDA
   graph (the default), and plain runs -- (fp8rt_cuda_last_run_ms:
   CUDA events around the library's kernels, without the input/output
   copies; median of 30 runs after 3 warm-ups), then a profiled run
   (FP8RT_CUDA_PROFILE=1) in a subprocess: the kernels by time.
   A library named *-layer-* is the decoder layer alone (make_bundle.sh's
   "-layer": bench/layer/extract_layer.py's cut, what the peer times): its
   inputs are the hidden states and rotary cos/sin that the FP16 torch model
   hands its layer (forward hooks), its output is compared with the FP32 and
   BF16 torch layer's (columns 'rel L2' as for the logits; those layers take
   their own model's hidden states and cos/sin, so the FP32 reference also
   differs by the library's FP16 inputs).
5. --peer: runs that script (../shared/peers/h200_layer.py, carried, for
   1 x 8192; bench/layer/peer_layer_batched.py for other shapes, given
   --batch and --seq) in the same call: torch's layer alone (no embedding/head), eager BF16,
   torch.compile BF16, torch.compile with FP8 tensorwise linears.
Writes OUT/layer.json and OUT/profile-NAME.txt; prints a summary table.
"""
# fp8-opt-deps: device-only (torch)
import argparse
import ctypes
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, ".."))
sys.path.insert(0, os.path.join(here, "..", "..", "runtime", "python"))
import fp8rt  # noqa: E402
import llama8b_model  # noqa: E402
from gpu_bench import bench  # noqa: E402

VOCAB = 256


def md5(path):
    h = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 24), b""):
            h.update(chunk)
    return h.hexdigest()


def compare(got, ref):
    d = got.astype(np.float64).ravel()
    r = ref.astype(np.float64).ravel()
    return {"rel_l2": float(np.linalg.norm(d - r) / np.linalg.norm(r)),
            "cosine": float(d @ r / (np.linalg.norm(d) * np.linalg.norm(r))),
            "max_abs": float(np.abs(d - r).max()),
            "finite": bool(np.isfinite(d).all())}


def layer_io(model, ids):
    """One forward of `model` on `ids`: what its decoder layer is given
    (hidden states, cos, sin) and returns, and the logits ("logits", FP32),
    as numpy arrays."""
    got = {}
    layer = model.model.layers[0]

    def before(_, args, kwargs):
        got["hidden"] = args[0] if args else kwargs["hidden_states"]
        got["cos"], got["sin"] = kwargs["position_embeddings"]

    def after(_, args, kwargs, out):
        got["out"] = out[0] if isinstance(out, tuple) else out

    hooks = [layer.register_forward_pre_hook(before, with_kwargs=True),
             layer.register_forward_hook(after, with_kwargs=True)]
    try:
        got["logits"] = model(ids).logits.float()
    finally:
        for h in hooks:
            h.remove()
    # numpy has no bfloat16: those go out as FP32 (exact).
    return {k: (v.float() if v.dtype == torch.bfloat16 else v).detach().cpu().numpy()
            for k, v in got.items()}


def time_library(lib, weights, inputs, runs=30, graph=True):
    """Median GPU time (ms) of the library's runs and its output: replays
    of its CUDA graph (the runtime's default), or plain runs (graph=False:
    the host launching every kernel)."""
    handle = ctypes.CDLL(lib)
    handle.fp8rt_cuda_last_run_ms.restype = ctypes.c_float
    os.environ["FP8RT_CUDA_GRAPH"] = "1" if graph else "0"
    with fp8rt.Model(lib, weights=weights) as m:
        if len(m.inputs) != len(inputs):
            sys.exit(f"{lib}: takes {[i.name for i in m.inputs]}; this script "
                     f"gives {len(inputs)} inputs (the layer alone: hidden "
                     "states, cos, sin; extract_layer.py added graph inputs?)")
        (logits,) = m.run(*inputs)
        for _ in range(3):
            m.run(*inputs)
        # Loop-kernel builds (FP32 products) take seconds: fewer runs.
        if handle.fp8rt_cuda_last_run_ms() > 100:
            runs = 3
        ms = []
        for _ in range(runs):
            m.run(*inputs)
            ms.append(float(handle.fp8rt_cuda_last_run_ms()))
    ms.sort()
    return ms[len(ms) // 2], logits


def profile(lib, weights, inputs_path, out):
    """One profiled process: FP8RT_CUDA_PROFILE prints the kernels at exit."""
    code = ("import sys, numpy as np; sys.path.insert(0, %r); import fp8rt; "
            "z = np.load(%r); xs = [z[k] for k in sorted(z.files)]; "
            "m = fp8rt.Model(%r, weights=%r); "
            "[m.run(*xs) for _ in range(5)]; m.close()" %
            (os.path.join(here, "..", "..", "runtime", "python"), inputs_path,
             lib, weights))
    env = dict(os.environ, FP8RT_CUDA_PROFILE="1", FP8RT_CUDA_PROFILE_TOP="0")
    r = subprocess.run([sys.executable, "-c", code], env=env,
                       capture_output=True, text=True)
    with open(out, "w") as f:
        f.write(r.stdout + r.stderr)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("bundle")
    p.add_argument("out")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq", type=int, default=8192)
    p.add_argument("--peer")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    result = {"batch": a.batch, "seq": a.seq, "builds": {}}
    tag = f"b{a.batch}-s{a.seq}"
    work = f"/tmp/layer-{tag}"

    # 1. The export, as the bundle's graph was made.
    t0 = time.time()
    subprocess.run([sys.executable, os.path.join(here, "..", "export_llama8b.py"),
                    work, "--layers", "1", "--seq", str(a.seq), "--batch",
                    str(a.batch), "--vocab", str(VOCAB), "--device", "cuda"],
                   check=True, stdout=subprocess.DEVNULL)
    result["export_s"] = round(time.time() - t0, 1)
    want = open(os.path.join(a.bundle, f"model-{tag}.md5")).read().split()[0]
    got = md5(os.path.join(work, "model.onnx"))
    if got != want:
        sys.exit(f"the export's graph {got} is not the bundle's {want}")

    # 3. torch on the same weights (seed 0 on the GPU, as the export).
    model, ids = llama8b_model.build(1, a.seq, "cuda", vocab=VOCAB,
                                     batch=a.batch)
    ids_np = ids.cpu().numpy()
    ids_path = os.path.join(work, "ids.npz")
    np.savez(ids_path, a0=ids_np)
    with torch.no_grad():
        # The decoder layer alone: what the FP16 model gives it, and its
        # output in FP32 and BF16 (the -layer- libraries' references).
        io_h = layer_io(model, ids)
        layer_in = [io_h["hidden"], io_h["cos"], io_h["sin"]]
        layer_path = os.path.join(work, "layer_inputs.npz")
        np.savez(layer_path, **{f"a{i}": x for i, x in enumerate(layer_in)})
        # The exported precision (FP16), FP32 on the same weights (the
        # reference), BF16 (the peer; its rotary frequencies are rounded to
        # BF16 too, which costs accuracy at long positions).
        refh = io_h["logits"]
        m32 = model.float()
        io32 = layer_io(m32, ids)
        ref32, layer32 = io32["logits"], io32["out"]
        m16 = model.to(torch.bfloat16)
        io16 = layer_io(m16, ids)
        ref16, layer16 = io16["logits"], io16["out"].astype(np.float32)
        result["torch_fp16_vs_fp32"] = compare(refh, ref32)
        result["torch_bf16_vs_fp32"] = compare(ref16, ref32)
        result["torch_eager_bf16_ms"] = bench(lambda: m16(ids))
        compiled = torch.compile(m16)
        result["torch_compile_bf16_ms"] = bench(lambda: compiled(ids))
    del model, m32, m16, compiled
    torch.cuda.empty_cache()

    # 2 + 4. Each library: pack, check, time, profile.
    outputs = {}
    for lib in sorted(f for f in os.listdir(a.bundle)
                      if f.endswith(".so") and tag in f):
        name = lib[:-3]
        path = os.path.join(a.bundle, lib)
        weights = os.path.join(work, name + ".fp8w")
        t0 = time.time()
        subprocess.run([os.path.join(a.bundle, "fp8-pack"),
                        os.path.join(a.bundle, name + ".fp8w.json"),
                        "--data-dir", work, "-o", weights], check=True,
                       stdout=subprocess.DEVNULL)
        build = {"pack_s": round(time.time() - t0, 1)}
        alone = "-layer-" in name
        feed = layer_in if alone else [ids_np]
        ms, logits = time_library(path, weights, feed)
        plain_ms, plain_logits = time_library(path, weights, feed, graph=False)
        r32, r16 = (layer32, layer16) if alone else (ref32, ref16)
        logits = np.asarray(logits, np.float32).reshape(r32.shape)
        build["gpu_ms"] = round(ms, 3)
        build["gpu_ms_plain_runs"] = round(plain_ms, 3)
        build["graph_equals_plain"] = bool(np.array_equal(
            logits, np.asarray(plain_logits, np.float32).reshape(r32.shape)))
        build["vs_torch_fp32"] = compare(logits, r32)
        build["vs_torch_bf16"] = compare(logits, r16)
        if not alone:
            build["vs_torch_fp16"] = compare(logits, refh)
        profile(path, weights, layer_path if alone else ids_path,
                os.path.join(a.out, f"profile-{name}.txt"))
        result["builds"][name] = build
        outputs[name] = logits
        print(json.dumps({name: build}), flush=True)
        os.remove(weights)

    # Builds against each other (the fused attention against the decomposed
    # one: bf16 vs bf16-unfused; a variant that must be bit-identical, as
    # -res against the plain build: rel L2 0).
    names = list(outputs)
    result["pairs"] = {f"{x} vs {y}": compare(outputs[x], outputs[y])
                       for i, x in enumerate(names) for y in names[i + 1:]}

    # 5. The peer script, in the same call.
    if a.peer:
        # (The shared script times 1 x 8192 and takes no arguments;
        # peer_layer_batched.py takes the shape.)
        r = subprocess.run([sys.executable, a.peer, "--batch", str(a.batch),
                            "--seq", str(a.seq)], capture_output=True,
                           text=True, env=dict(os.environ, OUT=a.out))
        with open(os.path.join(a.out, "peer.txt"), "w") as f:
            f.write(r.stdout + r.stderr)
        try:
            result["peer"] = json.loads(r.stdout[r.stdout.index("{"):])
        except ValueError:
            result["peer"] = {"failed": r.stderr[-2000:]}

    with open(os.path.join(a.out, "layer.json"), "w") as f:
        json.dump(result, f, indent=1)
    print(f"| build | ms (GPU, CUDA graph) | rel L2 vs torch FP32 | vs torch BF16 | vs torch FP16 |")
    print(f"| torch FP16 | - | {result['torch_fp16_vs_fp32']['rel_l2']:.4f} | | |")
    print(f"| torch eager BF16 | {result['torch_eager_bf16_ms']:.3f} | "
          f"{result['torch_bf16_vs_fp32']['rel_l2']:.4f} | - | |")
    print(f"| torch.compile BF16 | {result['torch_compile_bf16_ms']:.3f} | | |")
    for name, b in result["builds"].items():
        fp16 = (f"{b['vs_torch_fp16']['rel_l2']:.4f}" if "vs_torch_fp16" in b
                else "(the layer's output)")
        print(f"| {name} | {b['gpu_ms']:.3f} (plain runs {b['gpu_ms_plain_runs']:.3f}) | "
              f"{b['vs_torch_fp32']['rel_l2']:.4f}"
              f" | {b['vs_torch_bf16']['rel_l2']:.4f} | {fp16} |")
    if a.peer:
        print("peer:", json.dumps(result["peer"]))


if __name__ == "__main__":
    main()
