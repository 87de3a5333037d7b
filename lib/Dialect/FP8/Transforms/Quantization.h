//===- Quantization.h - The amax -> scale -> quantize chain -----*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Dialect/FP8/Transforms.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZATION_H
#define FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZATION_H

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/IR/Builders.h"

#include <utility>

namespace mlir::fp8 {

/// `x` quantized with a scale computed from its own amax: fp8.amax with
/// `layout`, fp8.compute_scale with `recipe` (a recipe without history) in
/// `format`, its scales of `scaleElt` (f32 or E8M0), then fp8.quantize.
/// Returns the FP8 tensor and its scale.
inline std::pair<Value, Value>
quantizeFromAmax(OpBuilder &b, Location loc, Value x, ScaleLayoutAttr layout,
                 RecipeAttrInterface recipe, Format format, Type scaleElt) {
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> scaleShape = *layout.getScaleShape(type.getShape());
  Value amax = AmaxOp::create(
      b, loc, RankedTensorType::get(scaleShape, b.getF32Type()), x, layout);
  Value scale = ComputeScaleOp::create(
      b, loc, RankedTensorType::get(scaleShape, scaleElt), amax, Value(),
      recipe, format);
  Value q = QuantizeOp::create(
      b, loc, type.clone(getFloatType(b.getContext(), format)), x, scale,
      layout);
  return {q, scale};
}

} // namespace mlir::fp8

#endif // FP8_LIB_DIALECT_FP8_TRANSFORMS_QUANTIZATION_H
