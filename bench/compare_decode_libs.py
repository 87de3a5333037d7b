#!/usr/bin/env python3
"""bench/compare_decode_libs.py - two builds of the same decode step, same state.

usage: compare_decode_libs.py BUNDLE OTHER_LIBS [--steps N]
       compare_decode_libs.py BUNDLE --inputs IN.npz --save DIR

BUNDLE is bench/decode_bundle.sh's output after bench/decode_h200.py's
weights phase (libs/decode-b*.so with their packed .fp8w); OTHER_LIBS holds
libraries of the same names built another way (another compiler version,
another kernel) with the same weights (checked: their manifests list the
same tensors; the packed file is shared where the fingerprints agree, and
a build of another fingerprint must have its own packed file next to it). For each decode library in both: the same seeded FP8 cache, tokens
and slots; N greedy steps on each (in place, on the device); prints the
logits' relative L2 difference and max abs difference at the first step,
whether the caches stay equal byte for byte, and how many of the greedy
tokens agree. Two builds that must be bit-identical (a refactoring, the
same compiler with and without an unrelated change) show 0 here; a change
of the last bits anywhere (another attention kernel) makes a 32-layer
model of random weights with FP8 row quantization diverge within a step,
so such a change is checked with --inputs on a model small enough for the
CPU build (docs/PERFORMANCE.md, issue 14).

With --inputs (one step's inputs by name, e.g. from a CPU library's
fp8rt.Model.inputs) each decode library of BUNDLE (and of OTHER_LIBS, when
given) runs that one step and DIR gets <dir name>-<library>.npy, its
logits: the GPU builds against a CPU build of the same model, compared
where the CPU runs (a 2-layer model fits).
"""
import argparse
import json
import os
import sys

# fp8-opt-deps: device-only (torch)
import torch

p = argparse.ArgumentParser()
p.add_argument("bundle")
p.add_argument("other", nargs="?")
p.add_argument("--steps", type=int, default=8)
p.add_argument("--inputs")
p.add_argument("--save")
a = p.parse_args()
B = os.path.abspath(a.bundle)
sys.path.insert(0, B)
import fp8rt  # noqa: E402


def torch_dtype(info):
    import numpy as np
    return {np.dtype(np.int64): torch.int64, np.dtype(np.float16): torch.float16,
            np.dtype(np.float32): torch.float32,
            np.dtype(np.uint8): torch.uint8}[np.dtype(info.numpy_dtype)]


def run(lib, steps):
    """Greedy steps from the seeded state: (first logits, tokens, caches)."""
    m = fp8rt.Model(lib)
    infos, tied = m.inputs, m.tied_inputs
    batch, capacity = infos[0].shape[0], infos[1].shape[1]
    g = torch.Generator(device="cuda").manual_seed(0)
    cache = [torch.randint(0, 120, list(i.shape), dtype=torch.uint8, device="cuda",
                           generator=g) for i in infos[3:-1]]
    ids = torch.randint(0, 128256, (batch, 1), device="cuda", generator=g)
    lengths = torch.full((batch,), capacity - steps - 1, dtype=torch.int64,
                         device="cuda")
    slots = torch.arange(capacity, device="cuda")[None]
    logits = torch.empty(list(m.outputs[0].shape), dtype=torch_dtype(m.outputs[0]),
                         device="cuda")
    outs = [logits] + [cache[t - 3] for t in tied[1:]]
    first, tokens = None, []
    for _ in range(steps):
        mask = (slots <= lengths[:, None]).to(torch.int64)
        m.run(ids, mask, lengths[:, None].clone(), *cache, lengths.clone(), out=outs)
        if first is None:
            first = logits.float().clone()
        ids = logits[:, -1].argmax(-1, keepdim=True)
        tokens.append(ids.flatten().tolist())
        lengths = lengths + 1
    torch.cuda.synchronize()
    m.close()
    return first, tokens, [c.cpu() for c in cache]


def run_inputs(lib, arrays):
    """One step on `arrays` (numpy, by input name): the logits (numpy)."""
    m = fp8rt.Model(lib)
    ins = [torch.from_numpy(arrays[i.name]).cuda() for i in m.inputs]
    outs = m.run(*ins)
    logits = outs[0].float().cpu().numpy()
    m.close()
    return logits


if a.inputs:
    import numpy as np
    arrays = dict(np.load(a.inputs))
    os.makedirs(a.save, exist_ok=True)
    for d in [os.path.join(B, "libs")] + ([a.other] if a.other else []):
        for f in sorted(os.listdir(d)):
            if f.startswith("decode") and f.endswith(".so"):
                packed = os.path.join(d, f[:-3] + ".fp8w")
                if not os.path.exists(packed):
                    os.symlink(os.path.join(B, "libs", f[:-3] + ".fp8w"), packed)
                out = os.path.join(a.save, f"{os.path.basename(os.path.abspath(d))}-{f[:-3]}.npy")
                np.save(out, run_inputs(os.path.join(d, f), arrays))
                print("saved", out, flush=True)
    sys.exit(0)

for name in sorted(f[:-3] for f in os.listdir(os.path.join(B, "libs"))
                   if f.startswith("decode") and f.endswith(".so")):
    ours = os.path.join(B, "libs", name + ".so")
    other = os.path.join(a.other, name + ".so")
    if not os.path.exists(other):
        continue
    m1, m2 = (json.load(open(x[:-3] + ".fp8w.json")) for x in (ours, other))
    if any(m1[k] != m2[k] for k in ("tensors", "compiled_in")):
        sys.exit(f"{name}: the two weights manifests differ")
    # Same tensors; a build whose computation differs has another
    # fingerprint and needs its own packed file (named in its manifest,
    # next to the library), which this does not make.
    packed = os.path.join(os.path.dirname(other), m2["file"])
    if m1["fingerprint"] == m2["fingerprint"] and not os.path.exists(packed):
        os.symlink(os.path.join(os.path.dirname(ours), m1["file"]), packed)
    if not os.path.exists(packed):
        sys.exit(f"{name}: {packed} is missing: the other build has its own "
                 "fingerprint; pack its manifest (fp8-pack) first")
    l1, t1, c1 = run(ours, a.steps)
    l2, t2, c2 = run(other, a.steps)
    rel = float((l1 - l2).norm() / l2.norm())
    agree = sum(x == y for s1, s2 in zip(t1, t2) for x, y in zip(s1, s2))
    total = sum(len(s) for s in t1)
    same_cache = all(torch.equal(x, y) for x, y in zip(c1, c2))
    print(f"{name}: first-step logits rel_l2 {rel:.3e} max_abs "
          f"{float((l1 - l2).abs().max()):.3e}; caches after {a.steps} steps "
          f"equal: {same_cache}; greedy tokens agree {agree}/{total}", flush=True)
