#!/usr/bin/env python3
"""Greedy generation with fp8-compile'd libraries and a preallocated KV cache.

A decoder exported with its cache as plain tensors -- inputs `input_ids`,
`attention_mask` (cache + new tokens), `position_ids` and
`past_key_values.<i>.key/value` [batch, kv_heads, past, head_dim]; outputs
`logits` and `present.<i>.key/value` (past + new) -- is compiled twice, with
static shapes: a *prefill* library that takes WIDTH tokens per sequence
and a *decode* library that takes one, both with a past of CAPACITY slots.
Those two serve every prompt of at most WIDTH tokens and every length up to
CAPACITY: each sequence's tokens sit in cache slots [0, length); the
attention mask marks them (and the new tokens) valid and every other slot
invalid, so the model attends to exactly the cached tokens, and
position_ids carry the real positions (RoPE). After each run the new
tokens' K/V -- the last rows of the present outputs -- are written into the
cache at each sequence's length. Prompts shorter than WIDTH are
right-padded; the padding is masked, and its cache rows are overwritten by
the tokens that follow. With --kv-cache the cache is FP8 (its bytes are
copied as they are).

    decode.py MODEL.onnx --prompt 5,17,42 --prompt 7 --steps 32
        [--capacity 64] [--width 16] [--recipe current] [--kv-cache e4m3]
        [--target sm_90a] [--work DIR] [--fp8-compile PATH] [--json]
        [--dynamic | --in-place]

--in-place: the decode library updates the cache in place (fp8-compile
--kv-cache-in-place, compiled with a past of CAPACITY - 1 so that its
cache is the same CAPACITY slots): each decode step passes the cache
buffers as both the past inputs and the present outputs (tied, ABI 4) and
the slot of each sequence's new token (`cache_position`), so nothing is
appended or copied after a step; the attention mask covers the CAPACITY
slots (valid: each sequence's tokens, the new one included).

--dynamic: one library with dynamic dimensions instead -- batch
1..8 (or the batch), WIDTH new tokens at most, a past of 0..CAPACITY --
and a cache that grows: each step's present outputs are the next step's
past, as onnxruntime's loop does; prompts are left-padded (masked) to the
longest, the positions count each sequence's own tokens.

It prints the tokens generated for each prompt. For a CUDA library
(--target sm_90a) with torch installed, the cache, the inputs and the
outputs stay on the GPU as torch tensors: fp8rt reads and writes them in
place, the appends are torch copies on the device, and the next token is
chosen there (the tokens are read back once, at the end). Elsewhere numpy
arrays on the host. Exported like scripts/export_models.py's
llama_decode_dynamo.
"""
# (torch is optional: the device-resident path on a GPU machine.)
# fp8-opt-deps: device-only (torch)
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

import fp8rt
from fp8rt.tensors import graph_inputs


def input_shapes(model, batch, tokens, capacity):
    """fp8-compile's --input-shape for one library: `tokens` new tokens
    per sequence over a cache of `capacity` slots."""
    shapes = []
    for name, _, dims in graph_inputs(model):
        if name.startswith("past"):
            dims = [batch, dims[1], capacity, dims[3]]
        elif name == "attention_mask":
            dims = [batch, capacity + tokens]
        elif name in ("input_ids", "position_ids"):
            dims = [batch, tokens]
        else:
            sys.exit(f"error: {model}: unexpected input '{name}' for a decoder step")
        if not all(isinstance(d, int) for d in dims):
            sys.exit(f"error: {model}: input '{name}' has dynamic dims {dims} "
                     "beyond batch and lengths")
        shapes.append(f"{name}={'x'.join(map(str, dims))}")
    return ",".join(shapes)


def dynamic_shapes(model, batch, width, capacity):
    """fp8-compile's --input-shape with bounds: batch 1..max(batch, 8),
    1..width new tokens, a past of 0..capacity slots."""
    b = f"1..{max(batch, 8)}"
    shapes = []
    for name, _, dims in graph_inputs(model):
        if name.startswith("past"):
            dims = [b, dims[1], f"0..{capacity}", dims[3]]
        elif name == "attention_mask":
            dims = [b, f"1..{capacity + width}"]
        elif name in ("input_ids", "position_ids"):
            dims = [b, f"1..{width}"]
        else:
            sys.exit(f"error: {model}: unexpected input '{name}' for a decoder step")
        if not all(isinstance(d, (int, str)) for d in dims):
            sys.exit(f"error: {model}: input '{name}' has dynamic dims {dims} "
                     "beyond batch and lengths")
        shapes.append(f"{name}={'x'.join(map(str, dims))}")
    return ",".join(shapes)


def compile_commands(args, batch):
    """[(library, fp8-compile command)] for the prefill and decode steps
    (--dynamic: the one library that serves both)."""
    out = []
    if args.dynamic:
        lib = os.path.join(args.work, f"dynamic-b{max(batch, 8)}-w{args.width}-"
                                      f"c{args.capacity}-{args.recipe}-{args.target}.so")
        return [(lib, [args.fp8_compile, args.model, "-o", lib, "--quiet",
                       f"--target={args.target}", f"--recipe={args.recipe}",
                       "--input-shape",
                       dynamic_shapes(args.model, batch, args.width, args.capacity)])]
    for tag, tokens in (("prefill", args.width), ("decode", 1)):
        in_place = tag == "decode" and args.in_place
        if in_place:
            tag = "decode-inplace"
        lib = os.path.join(args.work, f"{tag}-b{batch}-w{tokens}-c{args.capacity}-"
                                      f"{args.recipe}-{args.kv_cache or 'f32'}-{args.target}.so")
        # In place: the cache (past + the new token) is the CAPACITY slots.
        past = args.capacity - 1 if in_place else args.capacity
        cmd = [args.fp8_compile, args.model, "-o", lib, "--quiet",
               f"--target={args.target}", f"--recipe={args.recipe}",
               "--input-shape", input_shapes(args.model, batch, tokens, past)]
        if args.kv_cache:
            cmd += ["--kv-cache", args.kv_cache]
        if in_place:
            cmd += ["--kv-cache-in-place"]
        out.append((lib, cmd))
    return out


def compile_libraries(args, batch):
    """The prefill and decode libraries (compiled once, then reused)."""
    for lib, cmd in compile_commands(args, batch):
        if not os.path.exists(lib):
            subprocess.run(cmd, check=True)
    return [lib for lib, _ in compile_commands(args, batch)]


class Arrays:
    """numpy on the host, or torch on the GPU: the few operations the loop
    needs."""

    def __init__(self, device):
        self.torch = None
        if device == "cuda":
            try:
                import torch
                self.torch = torch
            except ImportError:
                pass

    def zeros(self, shape, dtype):
        if self.torch:
            t = self.torch.from_numpy(np.zeros(0, dtype)).dtype
            return self.torch.zeros(shape, dtype=t, device="cuda")
        return np.zeros(shape, dtype)

    def arange(self, n):
        a = np.arange(n)
        return self.torch.from_numpy(a).cuda() if self.torch else a

    def array(self, a):
        """A numpy array as the loop's array (uploaded for torch)."""
        if self.torch:
            return self.torch.from_numpy(np.ascontiguousarray(a)).cuda()
        return a

    def concat(self, arrays):
        """Along the last dimension."""
        if self.torch:
            return self.torch.cat(arrays, -1)
        return np.concatenate(arrays, -1)

    def host(self, a):
        return a.cpu().numpy() if self.torch else a

    def synchronize(self):
        if self.torch:
            self.torch.cuda.synchronize()


def generate(prefill, decode, prompts, steps, capacity, xp, times=None):
    """Greedy generation: the tokens after each prompt (lists of ints).
    `times`, a list, receives each step's wall time in seconds."""
    names = [i.name for i in prefill.inputs]
    if names[:3] != ["input_ids", "attention_mask", "position_ids"] or not all(
            n.startswith("past") for n in names[3:]):
        sys.exit(f"error: the library's inputs {names} are not a decoder step's "
                 "(input_ids, attention_mask, position_ids, past_key_values...)")
    batch, width = len(prompts), prefill.inputs[0].shape[1]
    if any(not 1 <= len(p) <= width for p in prompts):
        sys.exit(f"error: prompts must have 1 to {width} tokens (--width)")
    if max(map(len, prompts)) + steps > capacity:
        sys.exit(f"error: prompt + {steps} steps exceed the cache's {capacity} slots")
    cache = [xp.zeros(i.shape, i.numpy_dtype) for i in prefill.inputs[3:]]
    # A decode library that updates the cache in place (ABI 4): its present
    # outputs are tied to the past inputs, and its last input is the slot.
    tied = getattr(decode, "tied_inputs", [-1] * len(decode.outputs))
    in_place = any(t >= 0 for t in tied)
    if in_place and (tied[0] >= 0 or any(t < 3 for t in tied[1:]) or
                     list(decode.inputs[-1].shape) != [batch] or
                     list(decode.inputs[3].shape) != list(cache[0].shape)):
        sys.exit("error: the in-place decode library does not fit the prefill "
                 "library (its cache must be the prefill's past, its last input "
                 "the [batch] slots)")
    lengths = np.zeros(batch, np.int64)  # tokens cached per sequence
    tokens = xp.zeros((batch, steps), np.int64)
    rows = xp.arange(batch)
    # The inputs and outputs of each library: fixed buffers, so that a
    # CUDA graph captured once (FP8RT_CUDA_GRAPH=1) replays every step.
    bufs = {}
    for lib in (prefill, decode):
        ins = [xp.zeros(i.shape, i.numpy_dtype) for i in lib.inputs[:3]]
        outs = [xp.zeros(o.shape, o.numpy_dtype) for o in lib.outputs]
        if lib is decode and in_place:
            ins.append(xp.zeros(lib.inputs[-1].shape, np.int64))
            outs = outs[:1] + [cache[t - 3] for t in tied[1:]]  # the cache itself
        bufs[lib] = (ins, outs)
    ids = np.zeros((batch, width), np.int64)
    valid = np.zeros((batch, width), np.int64)
    for r, p in enumerate(prompts):
        ids[r, :len(p)], valid[r, :len(p)] = p, 1
    lib, new = prefill, valid.sum(1)
    for step in range(steps):
        start = time.perf_counter()
        (ids_in, mask_in, pos_in, *slot_in), outs = bufs[lib]
        t = ids_in.shape[1]
        slots = np.arange(capacity)[None] < lengths[:, None]
        if step == 0:
            ids_in[...] = xp.array(ids)
            mask_in[...] = xp.array(np.concatenate([slots, valid], 1).astype(np.int64))
        elif slot_in:  # in place: the new token's slot is `length`
            mask_in[...] = xp.array((np.arange(capacity)[None] <= lengths[:, None])
                                    .astype(np.int64))
            slot_in[0][...] = xp.array(lengths)
        else:  # the token chosen last step, already in ids_in on the device
            mask_in[...] = xp.array(np.concatenate([slots, np.ones((batch, 1), bool)], 1)
                                    .astype(np.int64))
        pos_in[...] = xp.array(lengths[:, None] + np.arange(t)[None])
        lib(ids_in, mask_in, pos_in, *cache, *slot_in, out=outs)
        logits, presents = outs[0], outs[1:]
        nxt = logits[rows, xp.array(new - 1)].argmax(-1)
        tokens[:, step] = nxt
        for c, p in zip(cache, presents):  # append the new tokens' K/V
            if step == 0:
                for r in range(batch):
                    at, n = int(lengths[r]), int(new[r])
                    c[r, :, at:at + n] = p[r, :, capacity:capacity + n]
            elif slot_in:
                break  # written in place by the run
            else:
                c[rows, :, xp.array(lengths)] = p[:, :, capacity]
        lengths += new
        lib, new = decode, np.ones(batch, np.int64)
        bufs[decode][0][0][:, 0] = nxt
        if times is not None:
            xp.synchronize()
            times.append(time.perf_counter() - start)
    return xp.host(tokens).tolist()


def generate_growing(lib, prompts, steps, capacity, xp, times=None):
    """Greedy generation on one library with dynamic dimensions: the cache
    grows by one token per step (present -> past), nothing is copied into
    a preallocated one. `xp`'s arrays: numpy on the host, or torch tensors
    on the GPU (the library reads and writes them in place; each step's
    outputs are new device tensors). `times` receives each step's wall
    time in seconds."""
    names = [i.name for i in lib.inputs]
    if names[:3] != ["input_ids", "attention_mask", "position_ids"]:
        sys.exit(f"error: the library's inputs {names} are not a decoder step's")
    batch, width = len(prompts), lib.inputs[0].bounds[1][1]
    longest = max(map(len, prompts))
    if any(not p for p in prompts) or longest > width:
        sys.exit(f"error: prompts must have 1 to {width} tokens (--width)")
    if longest + steps - 1 > capacity:
        sys.exit(f"error: prompt + {steps} steps exceed the cache's {capacity} slots")
    # Left-padded prompts: every sequence's last token is the last column.
    ids = np.zeros((batch, longest), np.int64)
    mask = np.zeros((batch, longest), np.int64)
    for r, p in enumerate(prompts):
        ids[r, longest - len(p):], mask[r, longest - len(p):] = p, 1
    pos = xp.array(np.maximum(np.cumsum(mask, 1) - 1, 0))
    ids, mask = xp.array(ids), xp.array(mask)
    past = [xp.zeros((batch, i.shape[1], 0, i.shape[3]), i.numpy_dtype)
            for i in lib.inputs[3:]]
    tokens = xp.zeros((batch, steps), np.int64)
    one = xp.array(np.ones((batch, 1), np.int64))
    for step in range(steps):
        start = time.perf_counter()
        logits, *past = lib.run(ids, mask, pos, *past)
        nxt = logits[:, -1].argmax(-1)
        tokens[:, step] = nxt
        ids = nxt[:, None]  # [batch, 1], contiguous
        mask = xp.concat([mask, one])
        pos = pos[:, -1:] + 1
        if times is not None:
            xp.synchronize()
            times.append(time.perf_counter() - start)
    return xp.host(tokens).tolist()


def report_times(args, lib, xp, prompts, times):
    """--time: the decode steps' median on stderr (the first step is the
    prefill)."""
    if args.time and len(times) > 1:
        ms = 1e3 * float(np.median(times[1:]))
        print(f"decode: {lib.device}{' (torch tensors)' if xp.torch else ''}, "
              f"batch {len(prompts)}: median {ms:.3f} ms per decode step over "
              f"{len(times) - 1} steps ({len(prompts) / ms * 1e3:.0f} tokens/s); prefill "
              f"{1e3 * times[0]:.3f} ms", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("--prompt", action="append", required=True,
                    help="comma-separated token ids; once per sequence of the batch")
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--capacity", type=int, default=64)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--recipe", default="none")
    ap.add_argument("--kv-cache", default=None, choices=["e4m3", "e5m2"])
    ap.add_argument("--target", default="cpu")
    ap.add_argument("--work", default="decode-libs")
    ap.add_argument("--fp8-compile", default=shutil.which("fp8-compile") or "fp8-compile")
    ap.add_argument("--libs", nargs=2, metavar=("PREFILL", "DECODE"),
                    help="run these libraries instead of compiling")
    ap.add_argument("--dynamic", action="store_true",
                    help="one library with dynamic dimensions and a growing cache "
                         "(see above)")
    ap.add_argument("--in-place", action="store_true",
                    help="a decode library that updates the cache in place "
                         "(--kv-cache-in-place; see above)")
    ap.add_argument("--json", action="store_true", help="print the tokens as JSON")
    ap.add_argument("--print-commands", action="store_true",
                    help="print the two fp8-compile commands and stop")
    ap.add_argument("--compile-only", action="store_true",
                    help="compile the libraries into --work and stop (e.g. for a GPU "
                         "machine without the compiler: run them there with --libs)")
    ap.add_argument("--time", action="store_true",
                    help="print the decode steps' median wall time on stderr")
    args = ap.parse_args()
    prompts = [[int(t) for t in p.split(",")] for p in args.prompt]
    if args.print_commands:
        import shlex
        for _, cmd in compile_commands(args, len(prompts)):
            print(shlex.join(cmd))
        return
    if args.dynamic and (args.kv_cache or args.in_place or
                         (args.libs and len(set(args.libs)) != 1)):
        sys.exit("error: --dynamic runs one library (--libs LIB LIB) without "
                 "--kv-cache or --in-place")
    os.makedirs(args.work, exist_ok=True)
    if args.dynamic:
        (lib,) = args.libs[:1] if args.libs else compile_libraries(args, len(prompts))
        if args.compile_only:
            print(lib)
            return
        model = fp8rt.Model(lib)
        times = []
        xp = Arrays(model.device)
        tokens = generate_growing(model, prompts, args.steps, args.capacity, xp, times)
        report_times(args, model, xp, prompts, times)
        print(json.dumps(tokens) if args.json else
              "\n".join(f"{p} -> {t}" for p, t in zip(prompts, tokens)))
        return
    libs = args.libs or compile_libraries(args, len(prompts))
    if args.compile_only:
        print("\n".join(libs))
        return
    prefill, decode = (fp8rt.Model(p) for p in libs)
    times = []
    xp = Arrays(prefill.device)
    tokens = generate(prefill, decode, prompts, args.steps, args.capacity, xp, times)
    report_times(args, prefill, xp, prompts, times)
    if args.json:
        print(json.dumps(tokens))
    else:
        for p, t in zip(prompts, tokens):
            print(f"{p} -> {t}")


if __name__ == "__main__":
    main()
