//===- Passes.h - FP8 dialect transformation passes --------------*- C++ -*-===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_PASSES_H
#define FP8_DIALECT_FP8_TRANSFORMS_PASSES_H

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/RecipeOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace fp8 {

#define GEN_PASS_DECL
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"

/// Patterns that rewrite arith.truncf / arith.extf between f32 (or f16/bf16)
/// and f8E4M3FN / f8E5M2 into exact integer arithmetic.
void populateExpandFP8ArithCastsPatterns(RewritePatternSet &patterns);

/// Patterns that fold the recipe's quantization of an fp8.external_weight
/// (amax, compute_scale, quantize), its pass-through transpose and its zero
/// padding into fp8.packed_weight (fp8-pack-external-weights).
void populatePackExternalWeightsPatterns(RewritePatternSet &patterns);

/// fp8-transpose-rescale's rewrite: each scaled_matmul with an N-major
/// static right operand gets a K-major one (a pass-through fp8.transpose,
/// or a re-quantization along K); `remarks` says which, per product.
void populateFP8TransposeRescalePatterns(RewritePatternSet &patterns,
                                         bool remarks = false);

/// fp8-block-layout's padding: a static scaled_matmul whose M, N or K is
/// not a multiple of its blocks computes on operands zero-padded to whole
/// blocks (rounded up to `multiple`) and returns the slice it had.
void populateFP8BlockLayoutPatterns(RewritePatternSet &patterns,
                                    int64_t multiple);

/// fp8-block-layout's scale-storage=tma: static lhs scales of a non
/// per-tensor scaled_matmul stored M-major, 16-byte aligned along M.
void populateFP8LhsScalesMMajorPatterns(RewritePatternSet &patterns);

/// fp8-fold-product-rounding: an FP32 scaled_matmul whose only use (through
/// reshapes) rounds it to f16/bf16 produces the narrow type itself.
void populateFP8FoldProductRoundingPatterns(RewritePatternSet &patterns);

/// Part of fp8-fuse-elementwise: RoPE's rotate-half (two slices of one
/// dimension, a unary op on either, concatenated in swapped order) as one
/// element-wise generic reading x at (d + n/2) mod n (FoldRotateHalf.cpp).
void populateFP8FoldRotateHalfPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"

} // namespace fp8
} // namespace mlir

#endif // FP8_DIALECT_FP8_TRANSFORMS_PASSES_H
