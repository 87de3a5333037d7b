//===- Normalization.cpp - Softmax and normalisation ----------------------===//
//
// Part of fp8-opt. Softmax and LogSoftmax (max-shifted), and
// LayerNormalization with its mean and inverse standard deviation outputs.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

/// Softmax and LogSoftmax. Version 13 normalises along one axis (default
/// -1); versions 1 and 11 (reached through detail::kUnconvertedDomain)
/// coerce the input to 2-D [prod(s[:axis]), prod(s[axis:])] (default axis
/// 1) and normalise each row, which is normalising over the axes from
/// `axis` on together.
static LogicalResult importSoftmax(NodeContext &nc, bool isLog) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  if (!isa<FloatType>(Importer::elemOf(x)))
    return nc.error() << "expects a floating-point input";
  const int64_t rank = Importer::shapeOf(x).size();
  const bool coerce = nc.version < 13;
  FailureOr<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", coerce ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> axes{*axis};
  if (coerce)
    axes = llvm::to_vector(llvm::seq<int64_t>(*axis, rank));
  // Subtracting the row max keeps exp() in range.
  Value m = imp.reduceKeepDims(nc.loc, x, axes, Importer::ReduceKind::Max);
  auto shifted = imp.elementwise(nc, EwKind::Sub, {x, m});
  if (failed(shifted))
    return failure();
  auto e = imp.elementwise(nc, EwKind::Exp, {*shifted});
  if (failed(e))
    return failure();
  Value sum = imp.reduceKeepDims(nc.loc, *e, axes, Importer::ReduceKind::Sum);
  FailureOr<Value> r;
  if (isLog) {
    auto logSum = imp.elementwise(nc, EwKind::Log, {sum});
    if (failed(logSum))
      return failure();
    r = imp.elementwise(nc, EwKind::Sub, {*shifted, *logSum});
  } else {
    r = imp.elementwise(nc, EwKind::Div, {*e, sum});
  }
  if (failed(r))
    return failure();
  nc.results.push_back(*r);
  return success();
}

static LogicalResult importLayerNorm(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  Type et = Importer::elemOf(x);
  if (!isa<FloatType>(et))
    return nc.error() << "expects a floating-point input";
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  int64_t rank = s.size();
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", -1), rank);
  if (failed(axis))
    return failure();
  float eps = nc.attrFloat("epsilon", 1e-5f);
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(*axis, rank));
  if (llvm::any_of(s.drop_front(*axis), ShapedType::isDynamic))
    return nc.error() << "normalizes over a dynamic dimension ("
                      << imp.describe(x)
                      << "); compile with a static --input-shape";
  double count = product(s.drop_front(*axis));

  auto ew = [&](EwKind k, ArrayRef<Value> ins) {
    return imp.elementwise(nc, k, ins);
  };
  Value n = scalarTensor(nc, et, count);
  Value sum = imp.reduceKeepDims(nc.loc, x, axes, Importer::ReduceKind::Sum);
  auto mean = ew(EwKind::Div, {sum, n});
  if (failed(mean))
    return failure();
  auto d = ew(EwKind::Sub, {x, *mean});
  if (failed(d))
    return failure();
  auto sq = ew(EwKind::Mul, {*d, *d});
  if (failed(sq))
    return failure();
  Value sqSum = imp.reduceKeepDims(nc.loc, *sq, axes, Importer::ReduceKind::Sum);
  auto var = ew(EwKind::Div, {sqSum, n});
  if (failed(var))
    return failure();
  auto varEps = ew(EwKind::Add, {*var, scalarTensor(nc, et, eps)});
  if (failed(varEps))
    return failure();
  auto stddev = ew(EwKind::Sqrt, {*varEps});
  if (failed(stddev))
    return failure();
  auto rstd = ew(EwKind::Reciprocal, {*stddev});
  if (failed(rstd))
    return failure();
  auto y = ew(EwKind::Mul, {*d, *rstd});
  if (failed(y))
    return failure();
  y = ew(EwKind::Mul, {*y, nc.in(1)});
  if (failed(y))
    return failure();
  if (Value bias = nc.in(2)) {
    y = ew(EwKind::Add, {*y, bias});
    if (failed(y))
      return failure();
  }
  nc.results = {*y, *mean, *rstd};
  return success();
}

void onnx_import::registerNormalizationOps(OpRegistry &r) {
  constexpr ShapeSupport dyn = ShapeSupport::Dynamic;
  r.add("Softmax", {1, 11, 13},
        [](NodeContext &nc) { return importSoftmax(nc, false); }, dyn);
  r.add("LogSoftmax", {1, 11, 13},
        [](NodeContext &nc) { return importSoftmax(nc, true); }, dyn);
  r.add("LayerNormalization", {17}, importLayerNorm, dyn);
}
