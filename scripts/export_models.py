#!/usr/bin/env python3
"""Exports small random-weight transformers to ONNX with PyTorch's exporters
and stores onnxruntime's outputs beside them (the ONNX backend-test layout).

Runs where torch, transformers, onnx and onnxruntime are installed (the H200
machine: `python3 scripts/export_models.py OUTDIR [NAME...]`). No downloads: configs
are built here and weights are random (seeded). Each model gets
OUTDIR/<name>/model.onnx and OUTDIR/<name>/test_data_set_0/{input,output}_N.pb.
A failing family is logged and skipped; the exit code counts failures.
"""
# fp8-opt-deps: device-only (onnxruntime, torch, transformers)
import os
import sys
import traceback

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import numpy_helper

SEQ, VOCAB, HIDDEN, HEADS, FFN, LAYERS = 32, 256, 64, 4, 128, 2
# The TorchScript exporter's opset where it is not 17.
OPSET = {"gpt2_tiny_opset12": 12, "bert_tiny_opset12": 12}


class LogitsOnly(torch.nn.Module):
    """Wraps an HF model so the graph has plain tensor inputs and outputs."""

    def __init__(self, model, kind):
        super().__init__()
        self.model, self.kind = model, kind

    def forward(self, *args):
        if self.kind == "lm":
            return self.model(input_ids=args[0], use_cache=False).logits
        if self.kind == "lm_mask":
            return self.model(input_ids=args[0], attention_mask=args[1],
                              use_cache=False).logits
        if self.kind == "encoder":
            return self.model(input_ids=args[0]).last_hidden_state
        if self.kind == "encoder_mask":
            return self.model(input_ids=args[0],
                              attention_mask=args[1]).last_hidden_state
        if self.kind == "vision":
            return self.model(pixel_values=args[0]).last_hidden_state
        raise ValueError(self.kind)


def configs():
    import transformers as tf
    common = dict(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=FFN,
                  num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                  max_position_embeddings=128)
    yield "mistral_tiny_dynamo", lambda: tf.MistralForCausalLM(
        tf.MistralConfig(num_key_value_heads=2, sliding_window=None, **common)), "lm", True, None
    yield "qwen2_tiny_dynamo", lambda: tf.Qwen2ForCausalLM(
        tf.Qwen2Config(num_key_value_heads=2, **common)), "lm", True, None
    yield "phi3_tiny_dynamo", lambda: tf.Phi3ForCausalLM(
        tf.Phi3Config(num_key_value_heads=HEADS, pad_token_id=0, **common)), "lm", True, None
    yield "vit_tiny_dynamo", lambda: tf.ViTModel(
        tf.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=HIDDEN,
                     num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                     intermediate_size=FFN), add_pooling_layer=False), "vision", True, None
    yield "t5_encoder_tiny_opset17", lambda: tf.T5EncoderModel(
        tf.T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=FFN,
                    num_layers=LAYERS, num_heads=HEADS)), "encoder", False, None
    yield "qwen2_tiny_opset17", lambda: tf.Qwen2ForCausalLM(
        tf.Qwen2Config(num_key_value_heads=2, **common)), "lm", False, None
    yield "bert_tiny_dynamo", lambda: tf.BertModel(
        tf.BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                      num_attention_heads=HEADS, intermediate_size=FFN),
        add_pooling_layer=False), "encoder", True, None
    yield "llama_dynamic_dynamo", lambda: tf.LlamaForCausalLM(
        tf.LlamaConfig(num_key_value_heads=2, **common)), "lm_mask", True, "dynamic"
    yield "llama_kv_dynamo", lambda: tf.LlamaForCausalLM(
        tf.LlamaConfig(num_key_value_heads=2, **common)), "lm_cache", True, "dynamic"
    # A decoder step with explicit position ids, for decode loops over a
    # fixed-capacity cache (examples/decode).
    yield "llama_decode_dynamo", lambda: tf.LlamaForCausalLM(
        tf.LlamaConfig(num_key_value_heads=2, **common)), "lm_decode", True, "dynamic"
    # Older exports: TorchScript at opset 12 (eager attention: the exporter's
    # SDPA symbolic needs opset 14). The importer upgrades them with ONNX's
    # version converter.
    yield "gpt2_tiny_opset12", lambda: tf.GPT2LMHeadModel(
        tf.GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                      n_positions=128, attn_implementation="eager")), "lm_mask", False, None
    yield "bert_tiny_opset12", lambda: tf.BertModel(
        tf.BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                      num_attention_heads=HEADS, intermediate_size=FFN,
                      attn_implementation="eager"),
        add_pooling_layer=False), "encoder_mask", False, None


class CachedLM(torch.nn.Module):
    """A decoder step with its KV cache as plain tensors, the way cached
    decoders are deployed: inputs input_ids, attention_mask (past + new) and
    past_key_values.<i>.key/value [batch, kv_heads, past, head_dim]; outputs
    logits and present.<i>.key/value (past and new tokens)."""

    def __init__(self, model):
        super().__init__()
        self.model, self.layers = model, model.config.num_hidden_layers

    def forward(self, input_ids, attention_mask, *past):
        from transformers.cache_utils import DynamicCache
        cache = DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         past_key_values=cache, use_cache=True)
        return (out.logits, *flatten_cache(out.past_key_values, self.layers))


def flatten_cache(pkv, layers):
    """[key_0, value_0, key_1, ...] of a transformers cache, whichever of its
    layouts this transformers version uses."""
    flat = []
    for i in range(layers):
        if hasattr(pkv, "layers"):
            flat += [pkv.layers[i].keys, pkv.layers[i].values]
        elif hasattr(pkv, "key_cache"):
            flat += [pkv.key_cache[i], pkv.value_cache[i]]
        else:
            flat += list(pkv[i])
    return flat


def export_cached(name, make, outdir, prefill=12, new=4):
    """Exports CachedLM with dynamic past/sequence axes and stores two
    consecutive decode steps: test_data_set_0 (past = the prefill of
    `prefill` tokens, `new` new tokens) and test_data_set_1 (past =
    onnxruntime's present of step 0, one new token)."""
    torch.manual_seed(0)
    hf = make().eval()
    model = CachedLM(hf)
    layers = model.layers
    gen = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (1, prefill + new + 1), generator=gen)
    with torch.no_grad():
        pre = hf(input_ids=ids[:, :prefill], use_cache=True).past_key_values
    past = [t.detach().clone() for t in flatten_cache(pre, layers)]
    step0 = (ids[:, prefill:prefill + new], torch.ones(1, prefill + new, dtype=torch.int64), *past)
    names = ["input_ids", "attention_mask"] + [
        f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    outs_names = ["logits"] + [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    path = os.path.join(outdir, name)
    onnx_path = os.path.join(path, "model.onnx")
    os.makedirs(path, exist_ok=True)
    dyn = torch.export.Dim.DYNAMIC
    # forward(input_ids, attention_mask, *past): the cache is one positional tuple.
    shapes = ({1: dyn}, {1: dyn}, tuple({2: dyn} for _ in past))
    torch.onnx.export(model, step0, onnx_path, dynamo=True, external_data=False,
                      input_names=names, output_names=outs_names, dynamic_shapes=shapes)
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    out0 = sess.run(None, {n: t.numpy() for n, t in zip(names, step0)})
    step1 = [ids[:, prefill + new:].numpy(), np.ones((1, prefill + new + 1), np.int64)] + out0[1:]
    out1 = sess.run(None, dict(zip(names, step1)))
    with torch.no_grad():
        ref0 = model(*step0)
        ref1 = model(*[torch.from_numpy(np.ascontiguousarray(a)) for a in step1])
    for k, (feeds, outs) in enumerate(((step0, out0), (step1, out1))):
        d = os.path.join(path, f"test_data_set_{k}")
        os.makedirs(d, exist_ok=True)
        for i, (n, a) in enumerate(zip(names, feeds)):
            a = a.numpy() if isinstance(a, torch.Tensor) else a
            open(os.path.join(d, f"input_{i}.pb"), "wb").write(
                numpy_helper.from_array(np.ascontiguousarray(a), n).SerializeToString())
        for i, (n, o) in enumerate(zip(outs_names, outs)):
            open(os.path.join(d, f"output_{i}.pb"), "wb").write(
                numpy_helper.from_array(o, n).SerializeToString())
    m = onnx.load(onnx_path)
    rel = max(float(np.linalg.norm(o[0] - r[0].numpy()) / np.linalg.norm(r[0].numpy()))
              for o, r in ((out0, ref0), (out1, ref1)))
    print(f"{name}: opset {[o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')]} "
          f"IR {m.ir_version}, inputs {[(i.name, [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]) for i in m.graph.input]}, "
          f"outputs {[o.name for o in m.graph.output]}, ort vs torch logits rel L2 {rel:.2e}, "
          f"ops {sorted({n.op_type for n in m.graph.node})}", flush=True)


class PositionedLM(CachedLM):
    """CachedLM with explicit position ids (RoPE positions): what a decode
    loop over a preallocated, fixed-capacity cache needs, since the graph's
    own past length is then the capacity, not the tokens cached."""

    def forward(self, input_ids, attention_mask, position_ids, *past):
        from transformers.cache_utils import DynamicCache
        cache = DynamicCache()
        for i in range(self.layers):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids, past_key_values=cache,
                         use_cache=True)
        return (out.logits, *flatten_cache(out.past_key_values, self.layers))


def ort_greedy(sess, names, layers, kv_shape, prompt, steps):
    """onnxruntime's greedy loop for one prompt, the cache growing by one
    token per step (the reference a decode loop must reproduce)."""
    past = [np.zeros((1, *kv_shape[:1], 0, kv_shape[1]), np.float32)] * (2 * layers)
    ids, tokens, pos = np.array([prompt], np.int64), [], 0
    for _ in range(steps):
        t = ids.shape[1]
        feeds = [ids, np.ones((1, pos + t), np.int64),
                 np.arange(pos, pos + t, dtype=np.int64)[None]] + past
        out = sess.run(None, dict(zip(names, feeds)))
        tok = int(np.argmax(out[0][0, -1]))
        tokens.append(tok)
        past, pos, ids = out[1:], pos + t, np.array([[tok]], np.int64)
    return tokens


def fixed_capacity_greedy(sess, names, layers, kv_shape, prompts, steps, capacity,
                          width):
    """The decode loop of examples/decode with onnxruntime: a cache of
    `capacity` slots per sequence, prompts right-padded to `width`, slots past
    each sequence's length masked; each step's new K/V (the last rows of the
    present outputs) written into the cache at the sequence's position."""
    b = len(prompts)
    cache = [np.zeros((b, kv_shape[0], capacity, kv_shape[1]), np.float32)
             for _ in range(2 * layers)]
    lengths = np.zeros(b, np.int64)
    ids = np.zeros((b, width), np.int64)
    valid = np.zeros((b, width), np.int64)
    for r, p in enumerate(prompts):
        ids[r, :len(p)], valid[r, :len(p)] = p, 1
    tokens = [[] for _ in prompts]
    for step in range(steps):
        t = ids.shape[1]
        mask = np.concatenate([(np.arange(capacity)[None] < lengths[:, None]).astype(np.int64),
                               valid], axis=1)
        pos = lengths[:, None] + np.arange(t)[None]
        out = sess.run(None, dict(zip(names, [ids, mask, pos] + cache)))
        last = valid.sum(1) - 1
        nxt = np.argmax(out[0][np.arange(b), last], axis=-1)
        for r in range(b):
            n = int(valid[r].sum())
            for c, pres in zip(cache, out[1:]):
                c[r, :, lengths[r]:lengths[r] + n] = pres[r, :, capacity:capacity + n]
            lengths[r] += n
            tokens[r].append(int(nxt[r]))
        ids, valid = nxt[:, None].astype(np.int64), np.ones((b, 1), np.int64)
    return tokens


def export_decoder(name, make, outdir, steps=32):
    """PositionedLM with dynamic batch/sequence/past axes, one test step
    (batch 2, past 12, 4 new tokens), and greedy.json: prompts, onnxruntime's
    greedy tokens per prompt (growing cache), and the same loop over a
    fixed-capacity cache checked against them."""
    torch.manual_seed(0)
    hf = make().eval()
    model = PositionedLM(hf)
    layers = model.layers
    cfg = hf.config
    kv_shape = (cfg.num_key_value_heads, cfg.hidden_size // cfg.num_attention_heads)
    gen = torch.Generator().manual_seed(1)
    past = [torch.randn(2, kv_shape[0], 12, kv_shape[1], generator=gen)
            for _ in range(2 * layers)]
    step0 = (torch.randint(0, VOCAB, (2, 4), generator=gen),
             torch.ones(2, 16, dtype=torch.int64),
             torch.arange(12, 16).repeat(2, 1), *past)
    names = ["input_ids", "attention_mask", "position_ids"] + [
        f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    outs_names = ["logits"] + [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]
    path = os.path.join(outdir, name)
    onnx_path = os.path.join(path, "model.onnx")
    os.makedirs(os.path.join(path, "test_data_set_0"), exist_ok=True)
    dyn = torch.export.Dim.DYNAMIC
    shapes = ({0: dyn, 1: dyn}, {0: dyn, 1: dyn}, {0: dyn, 1: dyn},
              tuple({0: dyn, 2: dyn} for _ in past))
    torch.onnx.export(model, step0, onnx_path, dynamo=True, external_data=False,
                      input_names=names, output_names=outs_names, dynamic_shapes=shapes)
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    out0 = sess.run(None, {n: t.numpy() for n, t in zip(names, step0)})
    with torch.no_grad():
        ref0 = model(*step0)
    d = os.path.join(path, "test_data_set_0")
    for i, (n, a) in enumerate(zip(names, step0)):
        open(os.path.join(d, f"input_{i}.pb"), "wb").write(
            numpy_helper.from_array(a.numpy(), n).SerializeToString())
    for i, (n, o) in enumerate(zip(outs_names, out0)):
        open(os.path.join(d, f"output_{i}.pb"), "wb").write(
            numpy_helper.from_array(o, n).SerializeToString())
    rng = np.random.default_rng(2)
    prompts = [rng.integers(0, VOCAB, n).tolist() for n in (7, 12, 1, 9, 12, 3, 10, 5)]
    tokens = [ort_greedy(sess, names, layers, kv_shape, p, steps) for p in prompts]
    capacity, width = 48, 12
    fixed = fixed_capacity_greedy(sess, names, layers, kv_shape, prompts, steps,
                                  capacity, width)
    agree = fixed == tokens
    import json
    json.dump({"steps": steps, "prompts": prompts, "tokens": tokens,
               "fixed_capacity": {"capacity": capacity, "width": width,
                                  "same_tokens": agree}},
              open(os.path.join(path, "greedy.json"), "w"), indent=1)
    m = onnx.load(onnx_path)
    rel = float(np.linalg.norm(out0[0] - ref0[0].numpy()) / np.linalg.norm(ref0[0].numpy()))
    print(f"{name}: opset {[o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')]} "
          f"inputs {[(i.name, [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]) for i in m.graph.input][:3]}, "
          f"ort vs torch logits rel L2 {rel:.2e}; greedy {steps} tokens x {len(prompts)} prompts; "
          f"fixed-capacity loop = growing-cache loop: {agree}; first: {tokens[0][:10]}", flush=True)


def export(name, make, kind, dynamo, dynamic, outdir):
    if kind == "lm_cache":
        return export_cached(name, make, outdir)
    if kind == "lm_decode":
        return export_decoder(name, make, outdir)
    torch.manual_seed(0)
    model = LogitsOnly(make().eval(), kind)
    gen = torch.Generator().manual_seed(1)
    if kind == "vision":
        inputs = (torch.randn(1, 3, 32, 32, generator=gen),)
        names = ["pixel_values"]
    else:
        ids = torch.randint(0, VOCAB, (1, SEQ), generator=gen)
        inputs = (ids,)
        names = ["input_ids"]
        if kind in ("lm_mask", "encoder_mask"):
            mask = torch.ones(1, SEQ, dtype=torch.int64)
            mask[0, -5:] = 0
            inputs = (ids, mask)
            names = ["input_ids", "attention_mask"]
    path = os.path.join(outdir, name)
    os.makedirs(os.path.join(path, "test_data_set_0"), exist_ok=True)
    onnx_path = os.path.join(path, "model.onnx")
    kwargs = dict(input_names=names, output_names=["output"])
    if dynamo:
        if dynamic:
            batch, seq = torch.export.Dim("batch", max=8), torch.export.Dim("seq", max=64)
            # forward(*args): the inputs form one positional tuple.
            kwargs["dynamic_shapes"] = (tuple({0: batch, 1: seq} for _ in inputs),)
        torch.onnx.export(model, inputs, onnx_path, dynamo=True, external_data=False,
                          **kwargs)
    else:
        torch.onnx.export(model, inputs, onnx_path, dynamo=False,
                          opset_version=OPSET.get(name, 17), **kwargs)
    m = onnx.load(onnx_path)
    sess = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
    feeds = {n: t.numpy() for n, t in zip(names, inputs)}
    outs = sess.run(None, feeds)
    with torch.no_grad():
        torch_out = model(*inputs).numpy()
    for i, n in enumerate(names):
        t = numpy_helper.from_array(feeds[n], n)
        open(os.path.join(path, "test_data_set_0", f"input_{i}.pb"), "wb").write(t.SerializeToString())
    for i, o in enumerate(outs):
        t = numpy_helper.from_array(o, sess.get_outputs()[i].name)
        open(os.path.join(path, "test_data_set_0", f"output_{i}.pb"), "wb").write(t.SerializeToString())
    rel = float(np.linalg.norm(outs[0] - torch_out) / np.linalg.norm(torch_out))
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    ops = sorted({n.op_type for n in m.graph.node})
    size = os.path.getsize(onnx_path)
    print(f"{name}: opset {opset} IR {m.ir_version}, {size/1e6:.2f} MB, "
          f"output {outs[0].shape}, ort vs torch rel L2 {rel:.2e}, ops {ops}", flush=True)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "exported"
    os.makedirs(outdir, exist_ok=True)
    failures = 0
    only = set(sys.argv[2:])
    for name, make, kind, dynamo, dynamic in configs():
        if only and name not in only:
            continue
        try:
            export(name, make, kind, dynamo, dynamic, outdir)
        except Exception:  # log and go on with the next family
            failures += 1
            print(f"{name}: FAILED", flush=True)
            traceback.print_exc()
    return failures


if __name__ == "__main__":
    sys.exit(main())
