//===- Passes.h - fp8-opt conversion passes ----------------------*- C++ -*-===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_CONVERSION_PASSES_H
#define FP8_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace fp8 {

#define GEN_PASS_DECL
#include "fp8/Conversion/Passes.h.inc"

/// Patterns lowering every fp8 op to linalg/tensor/arith/math.
void populateFP8ToLinalgPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "fp8/Conversion/Passes.h.inc"

} // namespace fp8
} // namespace mlir

#endif // FP8_CONVERSION_PASSES_H
