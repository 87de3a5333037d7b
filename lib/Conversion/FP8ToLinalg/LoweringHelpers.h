//===- LoweringHelpers.h - Scalar helpers of the linalg lowerings -*- C++ -*-===//
//
// Part of fp8-opt. Small builders shared by FP8ToLinalg.cpp and
// AttentionToLinalg.cpp (internal; not installed).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOLINALG_LOWERINGHELPERS_H
#define FP8_LIB_CONVERSION_FP8TOLINALG_LOWERINGHELPERS_H

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace mlir::fp8::linalg_lowering {

/// An f32 constant.
inline Value f32Const(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// Widens f16/bf16 to f32 inside a region body (f32 as it is).
inline Value toF32(OpBuilder &b, Location loc, Value v) {
  if (v.getType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), v);
}

} // namespace mlir::fp8::linalg_lowering

#endif // FP8_LIB_CONVERSION_FP8TOLINALG_LOWERINGHELPERS_H
