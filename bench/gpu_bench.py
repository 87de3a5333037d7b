#!/usr/bin/env python3
"""GPU benchmark of docs/PERFORMANCE.md, run on the H200 in one device call
so that fp8-opt and its peers are measured side by side.

usage: gpu_bench.py BUNDLE OUT_JSON [--no-gemm]
BUNDLE (made here by bench/gpu-bench-bundle): fp8-run, gemm_test, and the
benchmark model (bench/export_bench_model.py) compiled for sm_90a as
none.so / current.so / block.so / mxfp8.so (+ *-attn.so with attention's
products in FP8), with its input in data/.

1. (Not with --no-gemm.) The FP8 GEMM kernel (convert-fp8-gemm-to-gpu; gemm_test's 4096^3 block
   1x128/128x128 case, bf16 out) vs cuBLAS through torch: BF16, FP8
   tensorwise, FP8 1x128/128x128 blocks.
2. The model, end to end: fp8-run --repeat (CUDA graph replay; the time,
   median of the runs, includes copying the input in and the logits out) vs the same model in
   torch (same config and seed): eager FP32, eager BF16, torch.compile BF16.
3. Accuracy against torch: each library run through the Python wrapper
   (fp8rt.py) on the same input, logits compared with torch's FP32 logits
   (relative L2), and torch BF16's for scale.
"""
# fp8-opt-deps: device-only (torch)
import json
import os
import re
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def bench(fn, warm=5, reps=30):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def gemm_peer_makers(M, K, N):
    """The cuBLAS GEMM kernels through torch at M x K x N: name -> a function
    that makes the call (operands allocated once)."""
    dev = torch.device("cuda")
    a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    w = torch.randn(N, K, device=dev, dtype=torch.bfloat16)
    a8, w8 = (a * 0.5).to(torch.float8_e4m3fn), (w * 0.5).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device=dev)
    sra = torch.ones(M, 1, device=dev)
    srb = torch.ones(1, N, device=dev)

    def block():
        import torch.nn.functional as F
        from torch.nn.functional import ScalingType, SwizzleType
        sa = torch.ones(K // 128, M, device=dev).t()
        sb = torch.ones(N // 128, K // 128, device=dev)
        return lambda: F.scaled_mm(
            a8, w8.t(), sa, ScalingType.BlockWise1x128, sb.t(),
            ScalingType.BlockWise128x128, swizzle_a=SwizzleType.NO_SWIZZLE,
            swizzle_b=SwizzleType.NO_SWIZZLE, output_dtype=torch.bfloat16)

    kernels = {
        "bf16_cublas": lambda: lambda: a @ w.t(),
        "fp8_tensorwise_cublas": lambda: lambda: torch._scaled_mm(
            a8, w8.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=True),
        "fp8_tensorwise_precise_cublas": lambda: lambda: torch._scaled_mm(
            a8, w8.t(), one, one, out_dtype=torch.bfloat16, use_fast_accum=False),
        "fp8_rowwise_cublas": lambda: lambda: torch._scaled_mm(
            a8, w8.t(), sra, srb, out_dtype=torch.bfloat16, use_fast_accum=True),
        "fp8_block_cublas": block,
    }
    return kernels


def gemm_peer_kernel(name, M, K, N):
    """One peer's call at M x K x N (for a profiler)."""
    return gemm_peer_makers(M, K, N)[name]()


def gemm_peers(M=4096, K=4096, N=4096):
    """TFLOP/s of cuBLAS's kernels through torch at M x K x N; a kernel this
    torch lacks or refuses for the shape (FP8 needs M % 16 == 0) is a
    string saying so."""
    flops = 2 * M * N * K
    kernels = gemm_peer_makers(M, K, N)
    r = {}
    for key, make in kernels.items():
        try:
            r[key] = flops / bench(make()) / 1e9
        except Exception as ex:  # older torch, or a shape cuBLAS refuses
            r[key] = f"unavailable: {type(ex).__name__}"
    return r


def ours_gemm(bundle):
    out = subprocess.run([os.path.join(bundle, "gemm_test")], capture_output=True,
                         text=True).stdout
    m = re.search(r"perf_block_4096x4096x4096\S* .*time ([0-9.]+) ms \(([0-9.]+) TFLOP/s", out)
    return {"fp8_block_ours_ms": float(m.group(1)),
            "fp8_block_ours": float(m.group(2))} if m else {"error": out[-400:]}


def ours_model(bundle, lib, graph=True, repeat=50):
    env = dict(os.environ, FP8RT_CUDA_GRAPH="1" if graph else "0")
    p = subprocess.run([os.path.join(bundle, "fp8-run"), os.path.join(bundle, lib),
                        "--device=cuda", "--data", os.path.join(bundle, "data"),
                        "--repeat", str(repeat), "--rtol", "1e9", "--atol", "1e9"],
                       capture_output=True, text=True, env=env)
    m = re.search(r"run ([0-9.]+) ms \(best of \d+; median ([0-9.]+) ms", p.stdout)
    err = re.search(r"logits\s+\S+\s+(\S+)\s+(\S+)\s+(\S+)", p.stdout)
    if not m:
        return {"error": (p.stdout + p.stderr)[-400:]}
    r = {"ms": float(m.group(2)), "best_ms": float(m.group(1))}
    if err:
        r["rel_l2_vs_ort"] = float(err.group(2))
    return r


def rel_l2(a, b):
    a = torch.as_tensor(a, dtype=torch.float64)
    b = torch.as_tensor(b, dtype=torch.float64)
    return float(torch.linalg.norm(a - b) / torch.linalg.norm(b))


def torch_model(bundle, libs, accuracy):
    from export_bench_model import inputs, make
    import fp8rt
    dev = torch.device("cuda")
    ids = inputs().to(dev)
    r = {}
    with torch.no_grad():
        m32 = make().to(dev)
        r["torch_eager_fp32"] = bench(lambda: m32(ids))
        ref = m32(ids).float().cpu()
        m16 = make().to(dev).to(torch.bfloat16)
        r["torch_eager_bf16"] = bench(lambda: m16(ids))
        accuracy["torch_bf16"] = rel_l2(m16(ids).float().cpu(), ref)
        for lib in libs:
            model = fp8rt.Model(os.path.join(bundle, lib))
            (logits,) = model(inputs().numpy())
            accuracy[lib] = rel_l2(logits, ref)
            model.close()
        try:
            c16 = torch.compile(m16)
            r["torch_compile_bf16"] = bench(lambda: c16(ids), warm=3)
        except Exception as ex:
            r["torch_compile_bf16"] = f"failed: {type(ex).__name__}"
    return r


def main():
    args = [a for a in sys.argv[1:] if a != "--no-gemm"]
    bundle, out = args[0], args[1]
    res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__}
    if "--no-gemm" not in sys.argv:
        res["gemm_4096"] = {**gemm_peers(), **ours_gemm(bundle)}
        print("GEMM 4096^3 TFLOP/s:", res["gemm_4096"], flush=True)
    model = {}
    for lib in sorted(f for f in os.listdir(bundle) if f.endswith(".so")):
        model[lib] = ours_model(bundle, lib)
        if lib == "none.so":
            model["none.so (no graph)"] = ours_model(bundle, lib, graph=False)
        print(lib, model[lib], flush=True)
    accuracy = {}
    model.update(torch_model(bundle, sorted(
        f for f in os.listdir(bundle) if f.endswith(".so")), accuracy))
    print("torch:", {k: v for k, v in model.items() if k.startswith("torch")},
          flush=True)
    print("rel L2 of the logits vs torch FP32:", accuracy, flush=True)
    res["model_ms"] = model
    res["rel_l2_vs_torch_fp32"] = accuracy
    json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
