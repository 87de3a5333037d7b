#!/usr/bin/env python3
"""torch's scaled_dot_product_attention at attention_test's perf shapes, on
the H200 in the same device call as our kernels (bench/attention/run.sh).

usage: attention_peers.py
Prints one PEER line per (shape, backend): milliseconds (CUDA events,
median of 30 after 5 warm-up calls, fresh bf16 inputs) and TFLOP/s over the
unmasked score pairs (4 FLOPs per pair and head-dim element), as
attention_test counts them. Backends: torch's default choice, and flash
and cuDNN forced where torch has them (a refused backend says so).
"""
# fp8-opt-deps: device-only (torch)
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpu_bench import bench  # noqa: E402

SHAPES = [  # name, B, Hq, Hkv, S, D, causal (attention_test's perf cases)
    ("perf_causal_8k", 1, 32, 8, 8192, 128, True),
    ("perf_full_4k", 1, 32, 32, 4096, 128, False),
]


def flops(b, hq, s, d, causal):
    pairs = s * (s + 1) / 2 if causal else s * s
    return 4.0 * b * hq * pairs * d


def main():
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    for name, b, hq, hkv, s, d, causal in SHAPES:
        q = torch.randn(b, hq, s, d, device=dev, dtype=torch.bfloat16)
        k = torch.randn(b, hkv, s, d, device=dev, dtype=torch.bfloat16)
        v = torch.randn(b, hkv, s, d, device=dev, dtype=torch.bfloat16)
        f = flops(b, hq, s, d, causal)
        for label, backends in [("default", None),
                                ("flash", [SDPBackend.FLASH_ATTENTION]),
                                ("cudnn", [SDPBackend.CUDNN_ATTENTION])]:
            def run():
                return F.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, enable_gqa=hkv != hq)
            try:
                if backends:
                    with sdpa_kernel(backends):
                        ms = bench(run)
                else:
                    ms = bench(run)
                print(f"PEER {name} sdpa-{label} {ms:.3f} ms "
                      f"{f / (ms * 1e-3) / 1e12:.1f} TFLOP/s", flush=True)
            except Exception as e:  # a backend this torch refuses here
                print(f"PEER {name} sdpa-{label} refused: "
                      f"{str(e).splitlines()[0][:120]}", flush=True)


if __name__ == "__main__":
    main()
