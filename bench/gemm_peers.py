# fp8-opt-deps: device-only (torch)
"""cuBLAS peers of gemm_test's timed case, for the same device call.

    python3 bench/gemm_peers.py [M K N]      (default 4096 4096 4096)

BF16, FP8 tensorwise (fast accumulation) and FP8 block-scaled
(1x128 activation / 128x128 weight scales, bf16 output) through torch
(cuBLASLt), median of 30 timed runs after 5 warm-up runs, fresh random
data; TFLOP/s, one line per kernel. Run it right before or after
`gemm_test` / `gemm_test_tma` in one call so that the ratios compare the
same clocks (docs/PERFORMANCE.md)."""
import sys

import torch
import torch.nn.functional as F

M, K, N = (int(v) for v in sys.argv[1:4]) if len(sys.argv) >= 4 else (4096,) * 3
dev = torch.device("cuda")
flops = 2 * M * N * K


def bench(fn, warm=5, reps=30):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return times[len(times) // 2]


a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
w = torch.randn(N, K, device=dev, dtype=torch.bfloat16)
a8, w8 = (a * 0.5).to(torch.float8_e4m3fn), (w * 0.5).to(torch.float8_e4m3fn)
one = torch.tensor(1.0, device=dev)
rows = [("cuBLAS BF16", lambda: a @ w.t()),
        ("cuBLAS FP8 tensorwise", lambda: torch._scaled_mm(
            a8, w8.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=True))]
sa = torch.ones(K // 128, M, device=dev).t()  # 1x128 blocks, M-major
sb = torch.ones(N // 128, K // 128, device=dev)  # 128x128 blocks
rows.append(("cuBLAS FP8 block 1x128/128x128", lambda: F.scaled_mm(
    a8, w8.t(), sa, F.ScalingType.BlockWise1x128, sb.t(),
    F.ScalingType.BlockWise128x128, swizzle_a=F.SwizzleType.NO_SWIZZLE,
    swizzle_b=F.SwizzleType.NO_SWIZZLE, output_dtype=torch.bfloat16)))
for name, fn in rows:
    ms = bench(fn)
    print(f"PEER {name} {M}x{K}x{N}: {ms:.3f} ms {flops / ms / 1e9:.1f} TFLOP/s",
          flush=True)
