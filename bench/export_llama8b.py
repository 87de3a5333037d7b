"""Exports a Llama-3-8B-shaped causal LM (hidden 4096, 32 heads, 8 KV heads,
FFN 14336, vocab 128256, RoPE theta 500000) with LAYERS decoder layers in
FP16 through torch's dynamo exporter with external data, for
issue 12's real-size checks. Runs where torch and transformers are (the
H200 machine); only OUT/model.onnx (the graph, a few hundred KB) needs to
travel: scripts/fill_external_data.py regenerates seeded weights in the
layout it references.

usage: export_llama8b.py OUT [--layers 2] [--seq 128] [--device cpu|cuda]
                          [--vocab 128256] [--batch 1]
"""
# fp8-opt-deps: device-only (torch, transformers)
import argparse
import json
import os
import time

import torch
import transformers

import llama8b_model

p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--layers", type=int, default=2)
p.add_argument("--seq", type=int, default=128)
p.add_argument("--vocab", type=int, default=128256)
p.add_argument("--batch", type=int, default=1)
p.add_argument("--device", default="cpu",
               help="where the model is initialised (cuda: seconds, not minutes)")
a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
t0 = time.time()
model, ids = llama8b_model.build(a.layers, a.seq, a.device, vocab=a.vocab,
                                 batch=a.batch)
t1 = time.time()
with torch.no_grad():
    torch.onnx.export(model, (ids,), os.path.join(a.out, "model.onnx"),
                      dynamo=True, external_data=True,
                      input_names=["input_ids"], output_names=["logits"])
t2 = time.time()
sizes = {f: os.path.getsize(os.path.join(a.out, f)) for f in os.listdir(a.out)}
print(json.dumps({"layers": a.layers, "seq": a.seq, "vocab": a.vocab,
                  "batch": a.batch, "device": a.device, "build_s": round(t1 - t0, 1),
                  "export_s": round(t2 - t1, 1), "files": sizes,
                  "torch": torch.__version__,
                  "transformers": transformers.__version__}))
