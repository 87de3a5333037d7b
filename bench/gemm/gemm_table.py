# fp8-opt-deps: device-only (torch)
"""The GEMM tables of docs/PERFORMANCE.md from one device call on the H200:
fp8-opt's generated FP8 kernels (bench/gemm/make_gemm_bench.py's products:
gemm_bench with the default options, promotion every 128 K; gemm_bench_fast
with fast accumulation; CUDA events around each call, median of 30 after a
warm-up call, outputs checked on 2048 samples against the FP32 reference)
next to cuBLAS through torch (bench/gpu_bench.py's gemm_peers: CUDA events,
median of 30 after 5 warm-up runs) at the Llama-3-8B layer's shapes
(M x K x N).

    python3 bench/gemm/gemm_table.py GEMM_BENCH GEMM_BENCH_FAST [--json OUT.json]
        [--only TEXT]...

(`-` for GEMM_BENCH_FAST skips the fast-accumulation build; each --only runs
the benchmark's products whose name contains TEXT, e.g. `--only _1x --only
_16x --only _64x` for the decode shapes, and the peers at their shapes.) Prints four
markdown tables: per-tensor and rowwise scales, block scales, BF16 operands
(the products a recipe keeps out of FP8) against cuBLAS BF16 (TFLOP/s of
each kernel and our/peer ratios), and decode shapes (M <= 64:
microseconds, peer/ours ratios, and our bandwidth against the copy rate)."""
import argparse
import json
import os
import re
import subprocess
import sys

import torch  # noqa: F401  (the peers; gpu_bench imports it too)

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from gpu_bench import gemm_peers  # noqa: E402

PEAK = 1979.0

p = argparse.ArgumentParser()
p.add_argument("gemm_bench")
p.add_argument("gemm_bench_fast")
p.add_argument("--json")
p.add_argument("--only", action="append", default=[],
               help="run only the products whose name contains this (repeatable)")
a = p.parse_args()

ours, failed, rc = {}, [], 0
for mode, binary in (("", a.gemm_bench), ("_fast", a.gemm_bench_fast)):
    if binary == "-":  # skipped
        continue
    stdout = ""
    for only in a.only or [None]:
        run = subprocess.run([binary] + (["--only", only] if only else []),
                             capture_output=True, text=True)
        rc |= run.returncode
        print(f"== {binary}" + (f" --only {only}" if only else "") + "\n" + run.stdout,
              end="", flush=True)
        stdout += run.stdout
    for line in stdout.splitlines():
        m = re.match(r"(PASS|FAIL) perf_(\w+?)_(\d+)x(\d+)x(\d+)_bf16 .* time "
                     r"([0-9.]+) ms \(([0-9.]+) TFLOP/s, CUDA events", line)
        if m:
            ok, scaling, mm, kk, nn = m.group(1), m.group(2), *map(int, m.group(3, 4, 5))
            ours[(scaling + mode, mm, kk, nn)] = float(m.group(7))
        if line.startswith("FAIL"):
            failed.append(line)


def num(v):
    return f"{v:.0f}" if isinstance(v, float) else "—"


def ratio(x, y):
    return f"{x / y:.2f}" if isinstance(x, float) and isinstance(y, float) else "—"


DECODE_M = 64  # shapes with at most this many tokens go to the decode table
allShapes = sorted({k[1:] for k in ours}, key=lambda s: (s[0] * s[1] * s[2], s))
shapes = [s for s in allShapes if s[0] > DECODE_M]
decode = sorted((s for s in allShapes if s[0] <= DECODE_M), key=lambda s: (s[1], s[2], s[0]))
peers = {shape: gemm_peers(*shape) for shape in allShapes}
record = []
print("\n| M×K×N | cuBLAS tensorwise (fast acc.) | **fp8-opt tensorwise, fast acc.** | ratio "
      "| cuBLAS tensorwise | **fp8-opt tensorwise** | ratio | cuBLAS rowwise (fast acc.) "
      "| **fp8-opt rowwise, fast acc.** | ratio | **fp8-opt rowwise** | ratio |")
print("|" + "---|" * 12)
for shape in shapes:
    o = {k[0]: v for k, v in ours.items() if k[1:] == shape}
    q = peers[shape]
    tw, twp = q.get("fp8_tensorwise_cublas"), q.get("fp8_tensorwise_precise_cublas")
    rw = q.get("fp8_rowwise_cublas")
    print(f"| {'×'.join(map(str, shape))} | {num(tw)} | **{num(o.get('tensorwise_fast'))}** "
          f"| {ratio(o.get('tensorwise_fast'), tw)} | {num(twp)} | **{num(o.get('tensorwise'))}** "
          f"| {ratio(o.get('tensorwise'), twp)} | {num(rw)} | **{num(o.get('rowwise_fast'))}** "
          f"| {ratio(o.get('rowwise_fast'), rw)} | **{num(o.get('rowwise'))}** "
          f"| {ratio(o.get('rowwise'), rw)} |", flush=True)
    record.append({"m": shape[0], "k": shape[1], "n": shape[2],
                   **{"ours_" + k: v for k, v in o.items()}, **q})
# Block scales: activation scales in the canonical order ([M, K / 128]) and
# M-major ([K / 128, M], blockmm_*: what compiled models and cuBLAS use).
print("\n| M×K×N | cuBLAS BF16 | cuBLAS FP8 block | **fp8-opt block** | block / cuBLAS block "
      "| block / cuBLAS BF16 | of the 1979 TFLOP/s peak | **fp8-opt block, M-major scales** "
      "| ratio to cuBLAS block |")
print("|" + "---|" * 9)
for shape in shapes:
    b = ours.get(("block",) + shape)
    bm = ours.get(("blockmm",) + shape)
    q = peers[shape]
    print(f"| {'×'.join(map(str, shape))} | {num(q.get('bf16_cublas'))} "
          f"| {num(q.get('fp8_block_cublas'))} | **{num(b)}** "
          f"| {ratio(b, q.get('fp8_block_cublas'))} | {ratio(b, q.get('bf16_cublas'))} "
          f"| {b / PEAK:.0%} | **{num(bm)}** | {ratio(bm, q.get('fp8_block_cublas'))} |"
          if b else f"| {shape} | — |", flush=True)
if any(k[0] == "bf16" for k in ours):
    print("\n| M×K×N | cuBLAS BF16 | **fp8-opt BF16** | ratio | of the 989 TFLOP/s BF16 peak |")
    print("|" + "---|" * 5)
    for shape in shapes:
        b = ours.get(("bf16",) + shape)
        q = peers[shape]
        print(f"| {'×'.join(map(str, shape))} | {num(q.get('bf16_cublas'))} | **{num(b)}** "
              f"| {ratio(b, q.get('bf16_cublas'))} | {b / 989.0:.0%} |" if b
              else f"| {shape} | — |", flush=True)
COPY_RATE = 4.2e12  # bytes/s, the H200's measured copy rate


def usec(shape, tflops):
    return 2 * shape[0] * shape[1] * shape[2] / (tflops * 1e12) * 1e6 \
        if isinstance(tflops, float) else None


def us(v):
    return f"{v:.1f}" if isinstance(v, float) else "—"


if decode:
    print("\nDecode (microseconds; FP8 bytes moved = M·K + N·K + 2·M·N; cuBLAS's "
          "FP8 kernels need M % 16 == 0):\n")
    print("| M×K×N | cuBLAS BF16 | cuBLAS FP8 tensorwise (fast acc.) | **fp8-opt tensorwise** "
          "| ratio | fp8-opt tensorwise GB/s (of 4.2 TB/s) | cuBLAS FP8 block | **fp8-opt block** "
          "| ratio |")
    print("|" + "---|" * 9)
    for shape in decode:
        q = peers[shape]
        t = usec(shape, ours.get(("tensorwise",) + shape))
        b = usec(shape, ours.get(("block",) + shape))
        tw = usec(shape, q.get("fp8_tensorwise_cublas"))
        bl = usec(shape, q.get("fp8_block_cublas"))
        m, k, n = shape
        gbs = (m * k + n * k + 2 * m * n) / (t * 1e-6) if t else None
        print(f"| {'×'.join(map(str, shape))} | {us(usec(shape, q.get('bf16_cublas')))} "
              f"| {us(tw)} | **{us(t)}** | {ratio(tw, t)} "
              f"| {gbs / 1e9:.0f} ({gbs / COPY_RATE:.0%}) | {us(bl)} | **{us(b)}** "
              f"| {ratio(bl, b)} |" if gbs else f"| {shape} | — |", flush=True)
        record.append({"m": m, "k": k, "n": n, "decode": True,
                       **{"ours_" + kk[0]: v for kk, v in ours.items() if kk[1:] == shape},
                       **q})
if failed:
    print("\nFAILED checks:\n" + "\n".join(failed))
if a.json:
    with open(a.json, "w") as f:
        json.dump(record, f, indent=1)
sys.exit(1 if failed or rc else 0)
