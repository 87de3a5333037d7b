//===- Passes.h - fp8-opt conversion passes ----------------------*- C++ -*-===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_PASSES_H
#define FP8_CONVERSION_PASSES_H

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace fp8 {

#define GEN_PASS_DECL
#include "fp8/Conversion/Passes.h.inc"

/// Conversion patterns (OpConversionPattern, no type conversion) lowering
/// every fp8 op to linalg/tensor/arith/math, for a dialect conversion with
/// the fp8 dialect illegal (convert-fp8-to-linalg). `splitTensorAmax`:
/// per-tensor amaxes as a reduction tree (see the pass option of the same
/// name).
void populateFP8ToLinalgPatterns(RewritePatternSet &patterns,
                                 bool splitTensorAmax = false);

/// The pattern lowering fp8.attention to its reference computation in
/// linalg (lib/Conversion/FP8ToLinalg/AttentionToLinalg.cpp); part of
/// populateFP8ToLinalgPatterns.
void populateFP8AttentionToLinalgPatterns(RewritePatternSet &patterns);

/// The scalar FP32 code of a scaled_matmul epilogue applied to `x` (f32):
/// relu, gelu (tanh or erf form) or silu, with arith and math ops. Shared by
/// the reference lowering and the GPU GEMM kernels so both compute the same.
Value buildEpilogue(OpBuilder &b, Location loc, Value x, Epilogue epilogue);

/// The attribute that marks a function made by fp8-outline-scaled-matmuls.
inline constexpr llvm::StringLiteral kGemmAttrName = "fp8.gemm";
/// Prefix of those functions' names.
inline constexpr llvm::StringLiteral kGemmFuncPrefix = "__fp8_gemm_";
/// Marks the element-wise consumer that fp8-fuse-gemm-epilogues moved into
/// a GEMM function (the kernel's epilogue computes it); `fp8.gemm`'s
/// `epilogue_inputs` counts its inputs besides the product.
inline constexpr llvm::StringLiteral kGemmEpilogueAttrName =
    "fp8.gemm_epilogue";
inline constexpr llvm::StringLiteral kGemmEpilogueInputsKey = "epilogue_inputs";

/// The attribute that marks an outlined attention function (q, k, v,
/// [mask], out): {scale = f32, causal = bool, has_mask = bool}; the
/// function computes `fp8.attention` (convert-fp8-attention-to-gpu).
inline constexpr llvm::StringLiteral kAttentionAttrName = "fp8.attention";
/// Prefix of those functions' names.
inline constexpr llvm::StringLiteral kAttentionFuncPrefix = "__fp8_attention_";

#define GEN_PASS_REGISTRATION
#include "fp8/Conversion/Passes.h.inc"

} // namespace fp8
} // namespace mlir

#endif // FP8_CONVERSION_PASSES_H
