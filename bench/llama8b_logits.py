"""Runs model libraries of the Llama-3-8B-shaped model (bench/export_llama8b.py)
with weights files packed where the model's data is, against the same model
in torch, in one process on the GPU: the weights' upload time (FP8RT_VERBOSE)
and the logits' agreement with torch (FP32 and FP16 in torch on the same
weights: the model is rebuilt from the export's seed).

usage: llama8b_logits.py --layers 2 --seq 128 NAME=LIB.so:WEIGHTS.fp8w ...

Prints one JSON line per build: {"build", "upload_s", "cosine", "rel_l2",
"max_abs", "top1"} against torch FP32, and torch FP16's own for scale.
"""
# fp8-opt-deps: device-only (torch, transformers, onnxruntime)
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
import transformers

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "runtime",
                                "python"))
import fp8rt  # noqa: E402
import llama8b_model  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("builds", nargs="+", help="NAME=LIB.so:WEIGHTS.fp8w")
p.add_argument("--layers", type=int, default=2)
p.add_argument("--seq", type=int, default=128)
p.add_argument("--onnx", help="also run this model with onnxruntime (CPU), "
               "where it is installed")
p.add_argument("--torch-fp8-current", action="store_true",
               help="also run torch with every nn.Linear's input and weight "
               "fake-quantized to E4M3 with per-tensor current scaling (an "
               "independent reference for fp8-compile --recipe=current "
               "--keep-first-last=false)")
a = p.parse_args()

# The export's model and input, rebuilt from its seed.
model, ids = llama8b_model.build(a.layers, a.seq)
with torch.no_grad():
    model16 = model.cuda()
    ref16 = model16(ids.cuda()).logits.float().cpu().numpy()
    ref32 = model16.float()(ids.cuda()).logits.float().cpu().numpy()
    fp8_ref = None
    if a.torch_fp8_current:
        def fake_e4m3(x):
            """Per-tensor current scaling: scale = amax / 448, RNE to E4M3."""
            x = x.float()
            amax = x.abs().amax()
            scale = torch.where(amax > 0, amax / 448.0, torch.ones_like(amax))
            return (x / scale).to(torch.float8_e4m3fn).float() * scale

        model16 = model16.half()
        for module in model16.modules():
            if isinstance(module, torch.nn.Linear):
                module.forward = (lambda x, m=module: torch.nn.functional.linear(
                    fake_e4m3(x), fake_e4m3(m.weight)).to(x.dtype))
        fp8_ref = model16(ids.cuda()).logits.float().cpu().numpy()
del model, model16
torch.cuda.empty_cache()


outputs = {}


def compare(name, got, extra):
    got = got.astype(np.float32).reshape(ref32.shape)
    outputs[name] = got
    d = got.ravel().astype(np.float64)
    r = ref32.ravel().astype(np.float64)
    out = {"build": name,
           "cosine": float(d @ r / (np.linalg.norm(d) * np.linalg.norm(r))),
           "rel_l2": float(np.linalg.norm(d - r) / np.linalg.norm(r)),
           "max_abs": float(np.abs(d - r).max()),
           "top1": float((got.argmax(-1) == ref32.argmax(-1)).mean()),
           "finite": bool(np.isfinite(got).all())}
    out.update(extra)
    print(json.dumps(out), flush=True)


compare("torch-fp16", ref16, {})
if fp8_ref is not None:
    compare("torch-fp8-current", fp8_ref, {})
if a.onnx:
    try:
        import onnxruntime
    except ImportError:
        print(json.dumps({"build": "onnxruntime", "skipped": "not installed"}))
    else:
        t0 = time.time()
        session = onnxruntime.InferenceSession(
            a.onnx, providers=["CPUExecutionProvider"])
        (ort,) = session.run(None, {session.get_inputs()[0].name: ids.numpy()})
        compare("onnxruntime-cpu", ort, {"seconds": round(time.time() - t0, 1)})
os.environ["FP8RT_VERBOSE"] = "1"
for build in a.builds:
    name, rest = build.split("=", 1)
    lib, weights = rest.split(":", 1)
    t0 = time.time()
    with fp8rt.Model(lib, weights=weights) as m:
        t1 = time.time()
        (logits,) = m.run(ids.numpy())
        t2 = time.time()
        m.run(ids.numpy())
        t3 = time.time()
    compare(name, logits, {"create_s": round(t1 - t0, 3),
                           "first_run_s": round(t2 - t1, 3),
                           "second_run_s": round(t3 - t2, 3),
                           "weights_gb": round(os.path.getsize(weights) / 1e9,
                                               3)})

# Each pair: cosine (which builds agree with which).
names = list(outputs)
for i, x in enumerate(names):
    for y in names[i + 1:]:
        u = outputs[x].ravel().astype(np.float64)
        v = outputs[y].ravel().astype(np.float64)
        print(json.dumps({"pair": [x, y], "cosine": float(
            u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))}))
