# fp8-opt-deps: device-only (torch)
"""Runs one cuBLAS GEMM peer (bench/gpu_bench.py's gemm_peers kernels) a few
times at M x K x N, for a profiler to pick a launch:

    ncu -k regex:... --launch-skip 3 -c 1 python3 bench/gemm/peer_kernel.py fp8_block_cublas 8192 4096 28672
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gpu_bench import gemm_peer_kernel  # noqa: E402

name, m, k, n = sys.argv[1], *map(int, sys.argv[2:5])
run = gemm_peer_kernel(name, m, k, n)
for _ in range(5):
    run()
torch.cuda.synchronize()
