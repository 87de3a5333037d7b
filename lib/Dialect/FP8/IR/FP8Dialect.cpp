//===- FP8Dialect.cpp - FP8 dialect ---------------------------------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;

#include "fp8/Dialect/FP8/IR/FP8Dialect.cpp.inc"
#include "fp8/Dialect/FP8/IR/FP8Enums.cpp.inc"

void FP8Dialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "fp8/Dialect/FP8/IR/FP8Ops.cpp.inc"
      >();
}

Operation *FP8Dialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

FloatType mlir::fp8::getFloatType(MLIRContext *ctx, Format format) {
  switch (format) {
  case Format::E4M3:
    return Float8E4M3FNType::get(ctx);
  case Format::E5M2:
    return Float8E5M2Type::get(ctx);
  case Format::Hybrid:
    break;
  }
  llvm_unreachable("hybrid is not a concrete FP8 format");
}

std::optional<Format> mlir::fp8::getFormat(Type elementType) {
  if (isa<Float8E4M3FNType>(elementType))
    return Format::E4M3;
  if (isa<Float8E5M2Type>(elementType))
    return Format::E5M2;
  return std::nullopt;
}

numerics::Fmt mlir::fp8::toNumericsFormat(Format format) {
  assert(format != Format::Hybrid && "hybrid is not a concrete FP8 format");
  return format == Format::E4M3 ? numerics::Fmt::E4M3 : numerics::Fmt::E5M2;
}

float mlir::fp8::getMaxFinite(Format format) {
  return numerics::maxFinite(toNumericsFormat(format));
}

float mlir::fp8::getScaleEps(RecipeAttrInterface recipe) {
  if (auto current = dyn_cast<CurrentScalingAttr>(recipe))
    return current.getEps().convertToFloat();
  if (auto block = dyn_cast<BlockScalingAttr>(recipe))
    return block.getEps().convertToFloat();
  return 0.0f;
}

bool mlir::fp8::isExactRoundTripScale(float s, Format format, FloatType type) {
  const llvm::fltSemantics &sem = type.getFloatSemantics();
  // The bounds of f32, f16 and bf16 are all exact in float.
  const float largest = llvm::APFloat::getLargest(sem).convertToFloat();
  const float smallestNormal =
      llvm::APFloat::getSmallestNormalized(sem).convertToFloat();
  const float minSubnormal = format == Format::E4M3 ? 0x1p-9f : 0x1p-16f;
  return std::isnormal(s) && s > 0 && getMaxFinite(format) * s <= largest / 2 &&
         minSubnormal * s >= smallestNormal;
}
