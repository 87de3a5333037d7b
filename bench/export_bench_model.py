#!/usr/bin/env python3
"""Exports the benchmark model of docs/PERFORMANCE.md on the GPU machine
(torch, transformers, onnx, onnxruntime there): a Llama-shaped decoder
(RoPE, RMSNorm, SiLU MLP, grouped-query attention; random seeded weights)
big enough that its products are real GEMMs, small enough to travel.

usage: export_bench_model.py OUTDIR
Writes OUTDIR/model.onnx with its weights in OUTDIR/model.onnx.data, split
into OUTDIR/model.onnx.data.partN files (under 16 MiB each, what a device
call can return; join them with `cat`), and OUTDIR/input_0.pb,
OUTDIR/output_0.pb (onnxruntime's logits).
"""
# fp8-opt-deps: device-only (onnxruntime, torch, transformers)
import os
import sys

import numpy as np
import onnxruntime as ort
import torch
import transformers as tf
from onnx import numpy_helper

SEQ, VOCAB = 1024, 512
CONFIG = dict(vocab_size=VOCAB, hidden_size=768, intermediate_size=2048,
              num_hidden_layers=1, num_attention_heads=12,
              num_key_value_heads=4, max_position_embeddings=SEQ)


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, use_cache=False).logits


def make():
    torch.manual_seed(0)
    return Logits(tf.LlamaForCausalLM(tf.LlamaConfig(**CONFIG)).eval())


def inputs():
    gen = torch.Generator().manual_seed(1)
    return torch.randint(0, VOCAB, (1, SEQ), generator=gen)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    model, ids = make(), inputs()
    path = os.path.join(out, "model.onnx")
    torch.onnx.export(model, (ids,), path, dynamo=True, external_data=True,
                      input_names=["input_ids"], output_names=["logits"])
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    logits = sess.run(None, {"input_ids": ids.numpy()})[0]
    open(os.path.join(out, "input_0.pb"), "wb").write(
        numpy_helper.from_array(ids.numpy(), "input_ids").SerializeToString())
    open(os.path.join(out, "output_0.pb"), "wb").write(
        numpy_helper.from_array(logits, "logits").SerializeToString())
    data = path + ".data"
    blob = open(data, "rb").read()
    part = 15 << 20
    for i in range(0, len(blob), part):
        open(f"{data}.part{i // part}", "wb").write(blob[i:i + part])
    os.remove(data)
    print("exported", path, len(blob), "bytes of weights", logits.shape)


if __name__ == "__main__":
    main()
