//===- Epilogue.h - Output of the FP8 GEMM kernels --------------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// The epilogue applies what does not vary along K to the FP32 total --
// per-tensor / per-row scales and block scales covering all of K, the bias,
// the activation (fp8::buildEpilogue, shared with the CPU reference) -- and
// rounds once to the output type; or, with a fused consumer, rounds to the
// product's type and applies the consumer's body, which gives the output.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_EPILOGUE_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_EPILOGUE_H

#include "KernelBuilder.h"

namespace mlir::fp8::gemm {

/// A fused consumer's body (GemmProblem::fusedEpilogue), copied out of the
/// function before the kernel replaces its body: the generic and the
/// constants its body captures live in a detached block.
class FusedEpilogue {
public:
  explicit FusedEpilogue(Operation *generic);
  /// Clones the body at `b`'s insertion point with its inputs bound to
  /// `inputs` (one per input of the generic; the init is never read) and
  /// returns the value it yields.
  Value apply(OpBuilder &b, ValueRange inputs) const;

private:
  std::unique_ptr<Block> holder;
  Operation *generic = nullptr;
};

/// The finished output values of one warpgroup's FP32 total: the scales
/// that do not vary along K (loaded once, at construction), the bias, the
/// activation, the rounding to the output type -- or the rounding to the
/// product's type and the fused consumer.
class OutputValues {
public:
  OutputValues(KernelBuilder &kb, const KernelValues &kv,
               const AccumulatorFragment &frag);
  /// Register `i` of the total `acc`, finished; `col` is its column and
  /// `outLin` its element of `out` (both in range: callers clamp what they
  /// do not store). `stagedInput`: the fused consumer's Full input at that
  /// element, already read (GemmConfig::stagedInput), else null (loaded
  /// here).
  Value finish(KernelBuilder &kb, Value acc, int64_t i, Value col, Value outLin,
               Value stagedInput = {}) const;
  /// Register `i` finished with its row and column clamped into the output
  /// (every load in bounds: no guard needed, whether or not it is stored).
  Value finishClamped(KernelBuilder &kb, const AccumulatorFragment &frag,
                      Value acc, int64_t i, Value stagedInput = {}) const;

private:
  const KernelValues &kv;
  /// The lhs scale of each of the thread's two rows (null when it depends
  /// on K), a per-tensor rhs scale (null otherwise: read per column), index
  /// 0 (the K of the scales read here).
  Value sa[2], sbTensor, zeroIdx;
};

/// EpilogueKind::Registers: bounds-checked stores straight from the
/// accumulator fragment `acc`.
void buildRegisterEpilogue(KernelBuilder &kb, const GemmPlan &plan,
                           const KernelValues &kv,
                           const AccumulatorFragment &frag, Value acc);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_EPILOGUE_H
