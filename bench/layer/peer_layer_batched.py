# fp8-opt-deps: device-only (torch)
"""Issue 13's peer layer at B sequences of S tokens (../shared/peers/h200_layer.py
times one sequence of 8192): one Llama-3-8B-shaped decoder layer (hidden 4096,
32 heads, 8 KV heads, FFN 14336), forward only, causal attention within each
sequence -- torch eager BF16, torch.compile BF16, and torch.compile with FP8
tensorwise linears (dynamic per-tensor scales into torch._scaled_mm with fast
accumulation), as the shared script builds them; CUDA events, median of 30
after 5 warm-ups (bench/gpu_bench.py's bench).

usage: peer_layer_batched.py [--batch 4] [--seq 2048]
Prints one JSON object (the shared script's keys); layer_h200.py --peer runs
it with its own --batch/--seq.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from gpu_bench import bench  # noqa: E402  (CUDA events, median after warm-up)

p = argparse.ArgumentParser()
p.add_argument("--batch", type=int, default=4)
p.add_argument("--seq", type=int, default=2048)
a = p.parse_args()
torch.manual_seed(0)
dev, dt = "cuda", torch.bfloat16
H, NH, KVH, FF = 4096, 32, 8, 14336
B, S = a.batch, a.seq
T, HD = B * S, H // NH
E4 = torch.float8_e4m3fn


shapes = dict(q=(H, H), k=(KVH * HD, H), v=(KVH * HD, H), o=(H, H),
              g=(FF, H), u=(FF, H), d=(H, FF))
W = {n: torch.randn(*s, device=dev, dtype=dt) * 0.02 for n, s in shapes.items()}
n1 = torch.ones(H, device=dev, dtype=dt)
n2 = torch.ones(H, device=dev, dtype=dt)
pos = torch.arange(S, device=dev)
inv = 1.0 / (500000 ** (torch.arange(0, HD, 2, device=dev).float() / HD))
ang = torch.outer(pos.float(), inv)
cos = torch.cat([ang.cos(), ang.cos()], -1).to(dt)
sin = torch.cat([ang.sin(), ang.sin()], -1).to(dt)


def rms(x, w):
    return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True)
                                    + 1e-5)).to(dt) * w


def rot(x):
    x1, x2 = x.chunk(2, -1)
    return torch.cat([-x2, x1], -1)


def q8(x):
    amax = x.abs().amax().float().clamp(min=1e-12)
    s = 448.0 / amax
    return (x.float() * s).clamp(-448, 448).to(E4), s.reciprocal()


def lin_fp8(x, w):
    xq, xs = q8(x)
    wq, ws = q8(w)
    return torch._scaled_mm(xq, wq.t(), xs, ws, out_dtype=dt,
                            use_fast_accum=True)


def lin_bf16(x, w):
    return x @ w.t()


def heads(t, n):
    # [B*S, n*HD] -> [B, n, S, HD]
    return t.view(B, S, n, HD).transpose(1, 2)


def layer(x, lin):
    h = rms(x, n1)
    q, k, v = (heads(lin(h, W["q"]), NH), heads(lin(h, W["k"]), KVH),
               heads(lin(h, W["v"]), KVH))
    q = q * cos + rot(q) * sin
    k = k * cos + rot(k) * sin
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                       enable_gqa=True)
    x = x + lin(o.transpose(1, 2).reshape(T, H), W["o"])
    h = rms(x, n2)
    return x + lin(F.silu(lin(h, W["g"])) * lin(h, W["u"]), W["d"])


x = torch.randn(T, H, device=dev, dtype=dt)
flops_lin = 2 * T * H * (H + 2 * KVH * HD + H + 3 * FF)
flops_attn = 2 * 2 * B * S * S * H / 2  # causal
res = {"batch": B, "seq": S}
res["bf16_eager_ms"] = bench(lambda: layer(x, lin_bf16))
cb = torch.compile(lambda x: layer(x, lin_bf16))
res["bf16_compile_ms"] = bench(lambda: cb(x))
cf = torch.compile(lambda x: layer(x, lin_fp8))
res["fp8_tensorwise_compile_ms"] = bench(lambda: cf(x))
ref = layer(x, lin_bf16).float()
got = cf(x).float()
res["fp8_vs_bf16_relL2"] = ((got - ref).norm() / ref.norm()).item()
qa = torch.randn(B, NH, S, HD, device=dev, dtype=dt)
ka = torch.randn(B, KVH, S, HD, device=dev, dtype=dt)
va = torch.randn_like(ka)
res["sdpa_bf16_ms"] = bench(lambda: F.scaled_dot_product_attention(
    qa, ka, va, is_causal=True, enable_gqa=True))
res["linear_GFLOP"] = flops_lin / 1e9
res["attn_GFLOP"] = flops_attn / 1e9
print(json.dumps(res, indent=1))
