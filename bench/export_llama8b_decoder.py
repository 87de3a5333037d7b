"""Exports the Llama-3-8B-shaped causal LM of bench/llama8b_model.py (FP16,
hidden 4096, 32 heads, 8 KV heads, FFN 14336) as a decoder step with its
KV cache as plain tensors, through torch's dynamo exporter with external
data: inputs input_ids, attention_mask (past + new), position_ids and
past_key_values.<i>.key/value [batch, 8, past, 128]; outputs logits and
present.<i>.key/value. Batch, sequence and past axes are dynamic (one
export serves every static build: fp8-compile --input-shape). The step
examples/decode runs (scripts/export_models.py's llama_decode_dynamo, at
the real model's size), for issue 14's decode measurements. Runs where
torch and transformers are (the GPU machine); only OUT/model.onnx needs to
travel (scripts/fill_external_data.py regenerates seeded weights in the
layout it references; bench/grow_llama_layers.py grows a 2-layer export to
32 layers).

usage: export_llama8b_decoder.py OUT [--layers 2] [--vocab 128256]
                                     [--device cpu|cuda]
"""
# fp8-opt-deps: device-only (torch, transformers)
import argparse
import json
import os
import sys
import time

import torch
import transformers

import llama8b_model

# The decoder step of the test models' export (scripts/export_models.py,
# which the GPU machine runs too: onnx and onnxruntime are there).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
from export_models import PositionedLM  # noqa: E402


p = argparse.ArgumentParser()
p.add_argument("out")
p.add_argument("--layers", type=int, default=2)
p.add_argument("--vocab", type=int, default=128256)
p.add_argument("--device", default="cpu")
a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
t0 = time.time()
hf, _ = llama8b_model.build(a.layers, 4, a.device, vocab=a.vocab, batch=2)
hf.config.use_cache = True
model = PositionedLM(hf)
heads, dim = hf.config.num_key_value_heads, hf.config.hidden_size // hf.config.num_attention_heads
gen = torch.Generator(device=a.device).manual_seed(1)
past = [torch.randn(2, heads, 12, dim, generator=gen, device=a.device).to(torch.float16)
        for _ in range(2 * a.layers)]
step = (torch.randint(0, a.vocab, (2, 4), generator=gen, device=a.device),
        torch.ones(2, 16, dtype=torch.int64, device=a.device),
        torch.arange(12, 16, device=a.device).repeat(2, 1), *past)
names = ["input_ids", "attention_mask", "position_ids"] + [
    f"past_key_values.{i}.{kv}" for i in range(a.layers) for kv in ("key", "value")]
outputs = ["logits"] + [f"present.{i}.{kv}" for i in range(a.layers) for kv in ("key", "value")]
dyn = torch.export.Dim.DYNAMIC
shapes = ({0: dyn, 1: dyn}, {0: dyn, 1: dyn}, {0: dyn, 1: dyn},
          tuple({0: dyn, 2: dyn} for _ in past))
t1 = time.time()
with torch.no_grad():
    torch.onnx.export(model, step, os.path.join(a.out, "model.onnx"), dynamo=True,
                      external_data=True, input_names=names, output_names=outputs,
                      dynamic_shapes=shapes)
t2 = time.time()
sizes = {f: os.path.getsize(os.path.join(a.out, f)) for f in os.listdir(a.out)}
print(json.dumps({"layers": a.layers, "vocab": a.vocab, "device": a.device,
                  "build_s": round(t1 - t0, 1), "export_s": round(t2 - t1, 1),
                  "files": sizes, "torch": torch.__version__,
                  "transformers": transformers.__version__}))
