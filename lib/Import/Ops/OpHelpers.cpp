//===- OpHelpers.cpp - Helpers shared by the op handlers ------------------===//
//
// Part of fp8-opt. What several op-family files use: arity checks, scalar
// constants, FP8 casts with ONNX's saturate semantics, the element-wise
// handler factories and axes inputs.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

/// Prints a list of dimensions as [a, b, c] in diagnostics.
std::string onnx_import::dims(ArrayRef<int64_t> xs) {
  std::string out = "[";
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(xs, os);
  os << "]";
  return out;
}

/// Checks the number of ONNX inputs given (omitted trailing optionals do not
/// count).
LogicalResult onnx_import::checkArity(NodeContext &nc, size_t min,
                                      size_t max) {
  if (nc.numInputs() < min || nc.numInputs() > max) {
    auto diag = nc.error() << "expects ";
    if (min == max)
      diag << min;
    else
      diag << min << " to " << max;
    return diag << " inputs, got " << nc.numInputs();
  }
  for (size_t i = 0; i < min; ++i)
    if (!nc.in(i))
      return nc.error() << "missing required input #" << i;
  return success();
}

/// A rank-0 constant of `et`.
Value onnx_import::scalarTensor(NodeContext &nc, Type et, double v) {
  // Saturated: converting a double outside int64 is undefined behaviour
  // (fuzzing: LayerNormalization's epsilon = 3.4e26, for a float splat).
  int64_t iv = v >= 0x1p63    ? INT64_MAX
               : v < -0x1p63  ? INT64_MIN
               : std::isnan(v) ? 0
                               : static_cast<int64_t>(v);
  return nc.imp.splat(nc.loc, RankedTensorType::get({}, et), v, iv);
}

/// Converts the float scalar `v` to `t` (f8E4M3FN or f8E5M2) with ONNX's
/// Cast semantics (opset 19+, the table under "saturate"): round to nearest
/// even; saturate=1 clamps to +-max (infinities included) and keeps NaN;
/// saturate=0 turns an overflow (a value that rounds above the largest finite
/// one, or an infinity) into NaN for E4M3FN, which has no infinity, and into
/// +-inf for E5M2. The sign of an E4M3FN NaN is the input's, as in the
/// reference implementation.
Value onnx_import::toFloat8(OpBuilder &bb, Location l, Value v, Type t,
                           bool saturate) {
  Type f32 = bb.getF32Type();
  if (!v.getType().isF32())
    v = Importer::castScalar(bb, l, v, false, f32, false);
  bool e4m3 = isa<Float8E4M3FNType>(t);
  auto cst = [&](double d) {
    return arith::ConstantOp::create(bb, l, bb.getFloatAttr(f32, d));
  };
  if (saturate) {
    double m = e4m3 ? 448.0 : 57344.0;
    v = arith::MinimumFOp::create(
        bb, l, arith::MaximumFOp::create(bb, l, v, cst(-m)), cst(m));
    return arith::TruncFOp::create(bb, l, t, v);
  }
  // Rounding overflows past the midpoint between the largest finite value
  // and the next power-of-two step: E4M3FN 448 | 464 | (480), a tie at 464
  // goes to the even 448; E5M2 57344 | 61440 | 65536 = inf, a tie goes to
  // the even inf.
  Value q = arith::TruncFOp::create(bb, l, t, v);
  Value mag = math::AbsFOp::create(bb, l, v);
  Value over = arith::CmpFOp::create(
      bb, l, e4m3 ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OGE,
      mag, cst(e4m3 ? 464.0 : 61440.0));
  const llvm::fltSemantics &sem = cast<FloatType>(t).getFloatSemantics();
  auto f8 = [&](const APFloat &x) {
    return arith::ConstantOp::create(bb, l, bb.getFloatAttr(t, x));
  };
  Value pos = f8(e4m3 ? APFloat::getNaN(sem, false) : APFloat::getInf(sem, false));
  Value neg = f8(e4m3 ? APFloat::getNaN(sem, true) : APFloat::getInf(sem, true));
  Value isNeg = arith::CmpFOp::create(bb, l, arith::CmpFPredicate::OLT, v, cst(0));
  Value special = arith::SelectOp::create(bb, l, isNeg, neg, pos);
  return arith::SelectOp::create(bb, l, over, special, q);
}

Handler onnx_import::elementwiseHandler(EwKind kind, size_t arity) {
  return [kind, arity](NodeContext &nc) -> LogicalResult {
    if (failed(checkArity(nc, arity, arity)))
      return failure();
    FailureOr<Value> r = nc.imp.elementwise(nc, kind, nc.inputs);
    if (failed(r))
      return failure();
    nc.results.push_back(*r);
    return success();
  };
}

/// Max/Min take one or more inputs.
Handler onnx_import::variadicHandler(EwKind kind) {
  return [kind](NodeContext &nc) -> LogicalResult {
    if (nc.numInputs() < 1)
      return nc.error() << "expects at least one input";
    Value acc = nc.in(0);
    for (size_t i = 1; i < nc.numInputs(); ++i) {
      FailureOr<Value> r = nc.imp.elementwise(nc, kind, {acc, nc.in(i)});
      if (failed(r))
        return failure();
      acc = *r;
    }
    nc.results.push_back(acc);
    return success();
  };
}

/// Axes from input #1 (op version >= `inputSince`) or the `axes` attribute.
FailureOr<std::optional<SmallVector<int64_t>>>
onnx_import::axesOf(NodeContext &nc, int64_t inputSince) {
  if (nc.version >= inputSince) {
    if (!nc.in(1))
      return std::optional<SmallVector<int64_t>>();
    FailureOr<SmallVector<int64_t>> axes = nc.constInts(1, "axes");
    if (failed(axes))
      return failure();
    return std::optional<SmallVector<int64_t>>(*axes);
  }
  return nc.attrInts("axes");
}

FailureOr<SmallVector<int64_t>>
onnx_import::normAxes(NodeContext &nc, ArrayRef<int64_t> axes, int64_t rank) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> n = nc.normAxis(a, rank);
    if (failed(n))
      return failure();
    if (llvm::is_contained(out, *n))
      return nc.error() << "repeated axis " << a;
    out.push_back(*n);
  }
  llvm::sort(out);
  return out;
}
