//===- Promotion.h - FP32 promotion of wgmma partial sums -------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// Hopper's FP8 wgmma keeps only ~14 mantissa bits in its internal
// accumulation, so like DeepGEMM the kernel accumulates each promotion unit
// (the k32 steps of one K-block of the scales, at most 128 K) into a fresh
// accumulator and adds it into the FP32 total:
//     total += partial * sa[m, kb] * sb[n, kb]
// where only the scales that vary along K take part (the others are applied
// once, in the epilogue).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_PROMOTION_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_PROMOTION_H

#include "KernelBuilder.h"

namespace mlir::fp8::gemm {

class Promotion {
public:
  Promotion(const GemmPlan &plan, const KernelValues &kv,
            const AccumulatorFragment &frag)
      : plan(plan), kv(kv), frag(frag) {}

  /// `total` + `partial` times the K-dependent scales of the promotion unit
  /// `unit` of the K tile starting at `k0`.
  Value promote(KernelBuilder &kb, Value total, Value partial, Value k0,
                int64_t unit) {
    return apply(kb, total, partial, factors(kb, k0, unit));
  }

  /// The two halves of `promote`, for kernels that load the scales before
  /// the wgmmas they multiply (their latency then hides behind the tensor
  /// cores): the combined factor sa * sb of every fragment register for
  /// unit `unit` of the K tile at `k0` (null where no scale depends on K),
  /// computed once per distinct (row half, rhs scale) pair ...
  SmallVector<Value> factors(KernelBuilder &kb, Value k0, int64_t unit);
  /// ... and `total` + `partial` times them.
  Value apply(KernelBuilder &kb, Value total, Value partial,
              ArrayRef<Value> factors);

private:

  const GemmPlan &plan;
  const KernelValues &kv;
  const AccumulatorFragment &frag;
};

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_PROMOTION_H
