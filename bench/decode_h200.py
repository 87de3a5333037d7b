"""Issue 14's end-to-end measurement on the GPU machine: a 32-layer
Llama-3-8B-shaped decoder (bench/export_llama8b_decoder.py, grown by
bench/grow_llama_layers.py) compiled here into three static libraries --
a prefill of PREFILL tokens with nothing cached, and decode steps at
batch 1 and 8 that update an FP8 KV cache of CAPACITY slots in place
(fp8-compile --kv-cache e4m3 --kv-cache-in-place, examples/decode's
--in-place) -- run there against transformers' eager BF16 model with its
KV cache (the peer of ../shared/peers/decode_baseline.py), in one call.

    decode_h200.py BUNDLE OUT [--steps 32] [--phases peer,weights,prefill,decode]
                   [--libs REGEX] [--no-graph]

BUNDLE holds model.onnx and constants.npz (the graph and its small
constants: scripts/fill_external_data.py regenerates the seeded weights
there), fill_external_data.py, fp8-pack, and libs/<name>.so with their
weights manifests (<name>.fp8w.json); bench/decode_bundle.sh makes it.
Here: the weights are written, each library's weights packed, then

  prefill   the prefill library, torch CUDA tensors in and out (no host
            copy), CUDA graphs on: median of 10 runs after 3;
  decode    each decode library: STEPS greedy steps from a cache filled
            with random FP8 values (each step writes its token's K/V at
            the slot it is given), the step's inputs updated on the
            device, CUDA graphs on: the median wall time of a step
            (host work included), and the bytes copied between host and
            device per step (the runtime's count: the cache never moves);
  peer      first: transformers LlamaForCausalLM (same configuration,
            BF16, transformers' default attention, DynamicCache): prefill
            of PREFILL tokens, then STEPS decode steps at batch 1 and 8
            from a prefill of PREFILL.

Each decode time is given two ways: `step_ms`, a synchronize after every
step (what one step costs, host work included), and `pipelined_step_ms`,
STEPS more steps with one synchronize at the end (the host queues the next
step while the GPU runs this one: how ../shared/peers/decode_baseline.py
times the peer). --phases runs some phases only (the weights phase writes
and packs; a later call with --phases prefill,decode reuses the packed
files); --libs REGEX the libraries whose name it matches; --no-graph runs
without CUDA graphs (FP8RT_CUDA_PROFILE=1 times only runs that are not
graph replays: profile with it).

Needs the H200's memory (a library's weights stay on the device while
the process lives: three libraries hold ~26 GB). Prints each result and
writes OUT/decode_h200.json after each phase. Timings only: the
libraries' numerics are tested on the test models (gpu-check), and these
weights are random.
"""
# fp8-opt-deps: device-only (torch, transformers)
import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np
import onnx
import torch

p = argparse.ArgumentParser()
p.add_argument("bundle")
p.add_argument("out")
p.add_argument("--steps", type=int, default=32)
p.add_argument("--phases", default="peer,weights,prefill,decode")
p.add_argument("--libs", default=".")
p.add_argument("--no-graph", action="store_true")
a = p.parse_args()
phases = set(a.phases.split(","))
B = os.path.abspath(a.bundle)
sys.path.insert(0, B)
os.environ["FP8RT_CUDA_GRAPH"] = "0" if a.no_graph else "1"
import fp8rt  # noqa: E402  (the bundle's copy)

res = {"device": torch.cuda.get_device_name(), "steps": a.steps}


def log(*args):
    print(*args, flush=True)


def sh(cmd):
    t = time.time()
    subprocess.run(cmd, check=True)
    return round(time.time() - t, 1)


def cuda_ms(fn, reps, warm):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    return float(np.median(ts))


def save():
    """The results so far (a run cut short keeps them)."""
    os.makedirs(a.out, exist_ok=True)
    json.dump(res, open(os.path.join(a.out, "decode_h200.json"), "w"), indent=1)


libs = sorted(f[:-3] for f in os.listdir(os.path.join(B, "libs"))
              if f.endswith(".so") and re.search(a.libs, f[:-3]))


def torch_dtype(info):
    return {np.dtype(np.int64): torch.int64, np.dtype(np.float16): torch.float16,
            np.dtype(np.float32): torch.float32,
            np.dtype(np.uint8): torch.uint8}[np.dtype(info.numpy_dtype)]


model = os.path.join(B, "model.onnx")
layers = sum(i.name.startswith("past_key_values.") for i in
             onnx.load(model, load_external_data=False).graph.input) // 2
res["layers"] = layers

# 1. The peer first, in the same call (its memory is returned before our
# libraries load: a library's weights stay on the device for the process).
if "peer" in phases:
    import transformers as T
    cfg = T.LlamaConfig(vocab_size=128256, hidden_size=4096, intermediate_size=14336,
                        num_hidden_layers=layers, num_attention_heads=32,
                        num_key_value_heads=8, max_position_embeddings=8192,
                        rope_theta=500000.0)
    torch.manual_seed(0)
    torch.set_default_dtype(torch.bfloat16)  # built in BF16, never in FP32
    with torch.device("cuda"):
        hf = T.LlamaForCausalLM(cfg).eval()
    torch.set_default_dtype(torch.float32)
    prefill = int(next((n.split("-s")[1] for n in libs if n.startswith("prefill")), 2048))
    for batch in (1, 8):
        ids = torch.randint(0, 128256, (batch, prefill), device="cuda")
        with torch.no_grad():
            pre = (cuda_ms(lambda: hf(input_ids=ids, use_cache=False), reps=5, warm=2)
                   if batch == 1 else None)
            out = hf(input_ids=ids, use_cache=True)
            pkv, nxt = out.past_key_values, out.logits[:, -1:].argmax(-1)
            del out
            torch.cuda.synchronize()
            times = []
            for _ in range(a.steps):
                t = time.perf_counter()
                o = hf(input_ids=nxt, past_key_values=pkv, use_cache=True)
                pkv, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
                torch.cuda.synchronize()
                times.append(time.perf_counter() - t)
            t = time.perf_counter()
            for _ in range(a.steps):  # one synchronize at the end
                o = hf(input_ids=nxt, past_key_values=pkv, use_cache=True)
                pkv, nxt = o.past_key_values, o.logits[:, -1:].argmax(-1)
            torch.cuda.synchronize()
            pipelined = 1e3 * (time.perf_counter() - t) / a.steps
        step_ms = 1e3 * float(np.median(times[2:]))
        res[f"peer_b{batch}"] = {"prefill_ms": pre, "step_ms": step_ms,
                                 "pipelined_step_ms": pipelined,
                                 "tokens_per_s": batch * 1e3 / step_ms}
        log(f"peer_b{batch}", res[f"peer_b{batch}"])
        del pkv
        torch.cuda.empty_cache()
    del hf
    torch.cuda.empty_cache()
    save()

# 2. Weights: the seeded FP16 weights, then each library's packed file.
if "weights" in phases:
    res["fill_s"] = sh([sys.executable, os.path.join(B, "fill_external_data.py"), model,
                        "--constants", os.path.join(B, "constants.npz")])
    # The libraries' files at once (the data stays in the page cache).
    t = time.time()
    packs = [subprocess.Popen([os.path.join(B, "fp8-pack"),
                               os.path.join(B, "libs", name + ".fp8w.json"),
                               "--data-dir", B]) for name in libs]
    if [p.wait() for p in packs].count(0) != len(packs):  # (waits for all)
        sys.exit("fp8-pack failed")
    res["pack_s"] = round(time.time() - t, 1)
    log("weights:", res["fill_s"], "s to write,", res["pack_s"], "s to pack",
        len(libs), "files")
    os.remove(model + ".data")  # disk: only the packed files are read now

# 3. Prefill: nothing cached, PREFILL tokens.
for name in (n for n in libs if n.startswith("prefill") and "prefill" in phases):
    t0 = time.time()
    m = fp8rt.Model(os.path.join(B, "libs", name + ".so"))
    load_s = time.time() - t0
    ins = []
    for info in m.inputs:
        shape = list(info.shape)
        if info.name == "input_ids":
            ins.append(torch.randint(0, 128256, shape, device="cuda"))
        elif info.name == "attention_mask":
            ins.append(torch.ones(shape, dtype=torch.int64, device="cuda"))
        elif info.name == "position_ids":
            ins.append(torch.arange(shape[1], device="cuda").repeat(shape[0], 1))
        else:
            ins.append(torch.zeros(shape, dtype=torch_dtype(info), device="cuda"))
    outs = m.run(*ins)
    ms = cuda_ms(lambda: m.run(*ins, out=outs), reps=10, warm=3)
    logits = outs[0].float()
    res[name] = {"ms": ms, "load_s": round(load_s, 2),
                 "finite": bool(torch.isfinite(logits).all()),
                 "copies": m.last_run_copies()}
    log(name, res[name])
    save()
    m.close()
    del outs, ins
    torch.cuda.empty_cache()

# 4. Decode steps over the FP8 cache, updated in place.
for name in (n for n in libs if n.startswith("decode") and "decode" in phases):
    m = fp8rt.Model(os.path.join(B, "libs", name + ".so"))
    tied = m.tied_inputs
    infos = m.inputs
    batch = infos[0].shape[0]
    capacity = infos[1].shape[1]
    cache = [torch.randint(0, 120, list(i.shape), dtype=torch.uint8, device="cuda")
             if torch_dtype(i) == torch.uint8 else
             torch.randn(list(i.shape), device="cuda").to(torch_dtype(i))
             for i in infos[3:-1]]
    ids = torch.randint(0, 128256, (batch, 1), device="cuda")
    start = capacity - 2 * a.steps - 1  # tokens already cached per sequence
    lengths = torch.full((batch,), start, dtype=torch.int64, device="cuda")
    slots = torch.arange(capacity, device="cuda")[None]
    mask = (slots <= lengths[:, None]).to(torch.int64)
    pos = lengths[:, None].clone()
    slot = lengths.clone()
    logits = torch.empty(list(m.outputs[0].shape), dtype=torch_dtype(m.outputs[0]),
                         device="cuda")
    outs = [logits] + [cache[t - 3] for t in tied[1:]]

    def step():
        m.run(ids, mask, pos, *cache, slot, out=outs)
        # Greedy, on the device, into the same buffer (the captured graph
        # reads its inputs at fixed addresses).
        ids.copy_(logits[:, -1].argmax(-1, keepdim=True))
        lengths.add_(1)
        mask[:] = (slots <= lengths[:, None]).to(torch.int64)
        pos[:] = lengths[:, None]
        slot[:] = lengths

    times = []
    for _ in range(a.steps):
        t = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(a.steps):  # one synchronize at the end
        step()
    torch.cuda.synchronize()
    pipelined = 1e3 * (time.perf_counter() - t) / a.steps
    step_ms = 1e3 * float(np.median(times[2:]))
    res[name] = {"batch": batch, "capacity": capacity, "step_ms": step_ms,
                 "pipelined_step_ms": pipelined,
                 "tokens_per_s": batch * 1e3 / step_ms,
                 "copies_last_step": m.last_run_copies(),
                 "finite": bool(torch.isfinite(logits.float()).all())}
    log(name, res[name])
    save()
    m.close()
    del cache, outs
    torch.cuda.empty_cache()

save()
log(json.dumps(res))
