"""Drives kv-cache-in-place.test: DIR (append.so and inplace.so in it)."""
import os
import sys

import numpy as np

import fp8rt

tmp = sys.argv[1]
ref = fp8rt.Model(os.path.join(tmp, "append.so"))
lib = fp8rt.Model(os.path.join(tmp, "inplace.so"))
sig = open(os.path.join(tmp, "inplace.so"), "rb").read()
version = sig[sig.index(b"fp8rt-signature ") + 16:][:1].decode()
print(f"signature {version}; inputs {[i.name for i in lib.inputs]}; "
      f"tied {lib.tied_inputs}")

rng = np.random.default_rng(0)
B, H, C, D = 2, 2, 48, 16
ids = rng.integers(0, 256, (B, 1)).astype(np.int64)
past = [rng.standard_normal((B, H, C - 1, D)).astype(np.float32) for _ in range(4)]


def caches():
    return [np.concatenate([p, np.zeros((B, H, 1, D), np.float32)], axis=2)
            for p in past]


def same(xs, ys):
    return all(np.array_equal(x, y) for x, y in zip(xs, ys))


# The new token at the appending library's own slot (47): identical runs.
mask = np.ones((B, C), np.int64)
pos = np.full((B, 1), 47, np.int64)
r = ref.run(ids, mask, pos, *past)
cache = caches()
o = lib.run(ids, mask, pos, *cache, np.array([47, 47], np.int64), out=[None] + cache)
print(f"new token at slot 47, all valid: logits equal {np.array_equal(r[0], o[0])}, "
      f"caches = the appending library's presents {same(r[1:], cache)}, "
      f"the same buffers {all(a is b for a, b in zip(o[1:], cache))}")

# At slot 10 with the later slots masked: the appending library sees the
# same tokens with the new one at slot 47.
L = 10
mask_ip = np.zeros((B, C), np.int64)
mask_ip[:, :L + 1] = 1
mask_ref = np.zeros((B, C), np.int64)
mask_ref[:, :L] = 1
mask_ref[:, 47] = 1
posL = np.full((B, 1), L, np.int64)
r = ref.run(ids, mask_ref, posL, *past)
cache = caches()
o = lib.run(ids, mask_ip, posL, *cache, np.array([L, L], np.int64), out=[None] + cache)
others = all(np.array_equal(np.delete(c, L, axis=2)[:, :, :C - 2],
                            np.delete(p, L, axis=2)[:, :, :C - 2])
             for c, p in zip(cache, past))
print(f"new token at slot {L} (slots {L + 1}-47 masked): logits = the appending "
      f"library's with the token at slot 47: {np.array_equal(r[0], o[0])}; slot {L} "
      f"holds it {all(np.array_equal(c[:, :, L], p[:, :, 47]) for c, p in zip(cache, r[1:]))}; "
      f"other slots untouched {others}")
good = [c.copy() for c in cache]

# Two buffers: the output gets the input's data plus the new token.
inputs = caches()
kept = [c.copy() for c in inputs]
o = lib.run(ids, mask_ip, posL, *inputs, np.array([L, L], np.int64))
print(f"separate output buffers: input untouched {same(inputs, kept)}, "
      f"outputs = the in-place caches {same(o[1:], good)}")

# Refusals change nothing.
try:
    lib.run(ids, mask_ip, posL, *inputs, np.array([L, 48], np.int64))
except fp8rt.Error as e:
    print(f"slot 48: {e}")
cache = caches()
before = [c.copy() for c in cache]
try:
    lib.run(ids, mask_ip, posL, *cache, np.array([L, -1], np.int64), out=[None] + cache)
    print("slot -1: not refused")
except fp8rt.Error:
    print(f"slot -1 with the other sequence valid, in place: refused, every cache "
          f"unchanged {same(cache, before)}")
# Another check (a token id past the vocabulary) refuses the run: no
# cache is written either.
before = [c.copy() for c in cache]
try:
    lib.run(np.array([[5], [300]], np.int64), mask_ip, posL, *cache,
            np.array([L, L], np.int64), out=[None] + cache)
    print("token 300: not refused")
except fp8rt.Error as e:
    print(f"token 300, in place: {str(e).split(';')[0]}; every cache unchanged "
          f"{same(cache, before)}")
big = np.zeros(B * H * C * D + 16, np.float32)
inp = big[:B * H * C * D].reshape(B, H, C, D)
outp = big[16:].reshape(B, H, C, D)
try:
    lib.run(ids, mask_ip, posL, inp, *cache[1:], np.array([L, L], np.int64),
            out=[None, outp] + cache[1:])
    print("partial overlap: not refused")
except fp8rt.Error as e:
    print(f"partial overlap: {e}")
# A tied output whose buffer overlaps another tie's input (separate buffers
# for each tie, laid out so that present.0.key's lies across
# past_key_values.0.value's): refused before any copy, every input as it was.
cache = caches()
n = B * H * C * D
big = np.zeros(2 * n + n // 2, np.float32)
k_in = big[:n].reshape(B, H, C, D)
v_in = big[n:2 * n].reshape(B, H, C, D)
k_out = big[n + n // 2:].reshape(B, H, C, D)
k_in[...], v_in[...] = cache[0], cache[1]
before = [k_in.copy(), v_in.copy()]
try:
    lib.run(ids, mask_ip, posL, k_in, v_in, *cache[2:], np.array([L, L], np.int64),
            out=[None, k_out, caches()[1]] + caches()[2:])
    print("overlap across ties: not refused")
except fp8rt.Error as e:
    print(f"overlap across ties: {e}; inputs unchanged "
          f"{np.array_equal(k_in, before[0]) and np.array_equal(v_in, before[1])}")
cache = caches()
lib.run(ids, mask_ip, posL, *cache, np.array([L, L], np.int64), out=[None] + cache)
print(f"after the refusals: the same result as before {same(cache, good)}")
