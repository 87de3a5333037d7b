# fp8-opt-deps: device-only (torch)
"""cuBLAS peers of gemm_test's timed case, for the same device call.

    python3 bench/gemm_peers.py [M K N]      (default 4096 4096 4096)

BF16, FP8 tensorwise and rowwise (fast accumulation) and FP8 block-scaled
(1x128 activation / 128x128 weight scales, bf16 output) through torch
(cuBLASLt), median of 30 timed runs after 5 warm-up runs, fresh random
data; TFLOP/s, one line per kernel. Run it right before or after
`gemm_test` / `gemm_test_tma` in one call so that the ratios compare the
same clocks (docs/PERFORMANCE.md). The measurement is gpu_bench.py's
(`gemm_peers`), which the PERFORMANCE.md benchmark also reports."""
import os
import sys

import torch  # noqa: F401  (the peers; gpu_bench imports it too)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_bench import gemm_peers  # noqa: E402

M, K, N = (int(v) for v in sys.argv[1:4]) if len(sys.argv) >= 4 else (4096,) * 3
flops = 2 * M * N * K
names = {"bf16_cublas": "cuBLAS BF16",
         "fp8_tensorwise_cublas": "cuBLAS FP8 tensorwise",
         "fp8_tensorwise_precise_cublas": "cuBLAS FP8 tensorwise (no fast accumulation)",
         "fp8_rowwise_cublas": "cuBLAS FP8 rowwise",
         "fp8_block_cublas": "cuBLAS FP8 block 1x128/128x128"}
for key, tflops in gemm_peers(M, K, N).items():
    if isinstance(tflops, str):  # a kernel this torch does not have
        print(f"PEER {names[key]} {M}x{K}x{N}: {tflops}", flush=True)
        continue
    ms = flops / tflops / 1e9
    print(f"PEER {names[key]} {M}x{K}x{N}: {ms:.3f} ms {tflops:.1f} TFLOP/s",
          flush=True)
