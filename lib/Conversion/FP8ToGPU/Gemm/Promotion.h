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

  /// The K-dependent scales of one promotion unit as loaded: the lhs
  /// scales of the thread's two rows, then the rhs scales of its distinct
  /// column groups (one per CTA when the rhs row blocks are whole CTA
  /// tiles, one per 8 columns when blocks are multiples of 8, else one per
  /// column), and `inK` (i1; null when not needed): whether the unit starts
  /// inside K (the last tile's zero padding must not read scales past the
  /// end: such a unit's partial is zero and is scaled by 0).
  struct UnitScales {
    SmallVector<Value> values;
    Value inK;
  };

  /// The three steps of `promote`, for kernels that load a unit's scales
  /// while the tensor cores compute an earlier one: the scales of unit
  /// `unit` of the K tile at `k0` ...
  UnitScales load(KernelBuilder &kb, Value k0, int64_t unit);
  /// ... or, with staged scales (GemmConfig::stagedScales: one unit per K
  /// tile, one rhs scale per CTA tile), read from the slots of the stage at
  /// byte `slots` (index) of `tiles` (!llvm.ptr<3>, tilesPointer) for the
  /// CTA tile `tile` (its m0) ...
  UnitScales loadStaged(KernelBuilder &kb, Value tiles, Value slots,
                        const KernelValues &tile);
  /// ... the combined factor sa * sb of every fragment register (null where
  /// no scale depends on K), computed once per distinct pair ...
  SmallVector<Value> factors(KernelBuilder &kb, const UnitScales &scales);
  SmallVector<Value> factors(KernelBuilder &kb, Value k0, int64_t unit) {
    return factors(kb, load(kb, k0, unit));
  }
  /// ... and `total` + `partial` times them.
  Value apply(KernelBuilder &kb, Value total, Value partial,
              ArrayRef<Value> factors);

private:
  /// Which of the rhs values of UnitScales register `i` takes.
  int64_t rhsGroup(int64_t i) const;
  bool lhsVaries() const { return plan.problem.lhsScale.dependsOnK(); }
  bool rhsVaries() const { return plan.problem.rhsScale.dependsOnK(); }

  const GemmPlan &plan;
  const KernelValues &kv;
  const AccumulatorFragment &frag;
};

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_PROMOTION_H
