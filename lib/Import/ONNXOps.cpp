//===- ONNXOps.cpp - Per-op ONNX import handlers --------------------------===//
//
// Part of fp8-opt. One handler per ONNX op type, registered by name in
// registerHandlers(). Attribute handling follows the ONNX operator spec for
// opsets 13 to 21, including the attribute-to-input moves (Split/Squeeze/
// Unsqueeze/ReduceSum axes at 13, the other Reduce ops at 18). Models of
// opsets 1 to 12 reach them rewritten to 13 by ONNX's version converter
// (importModel, detail::upgradeOpset).
//
// Handlers compute static result shapes themselves and refuse anything they
// cannot express statically with a diagnostic at the node.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <numeric>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

/// Prints a list of dimensions as [a, b, c] in diagnostics.
static std::string dims(ArrayRef<int64_t> xs) {
  std::string out = "[";
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(xs, os);
  os << "]";
  return out;
}

static int64_t product(ArrayRef<int64_t> xs) { return numElementsSat(xs); }

/// Checks the number of ONNX inputs given (omitted trailing optionals do not
/// count).
static LogicalResult checkArity(NodeContext &nc, size_t min, size_t max) {
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
static Value scalarTensor(NodeContext &nc, Type et, double v) {
  // Saturated: converting a double outside int64 is undefined behaviour
  // (fuzzing: LayerNormalization's epsilon = 3.4e26, for a float splat).
  int64_t iv = v >= 0x1p63    ? INT64_MAX
               : v < -0x1p63  ? INT64_MIN
               : std::isnan(v) ? 0
                               : static_cast<int64_t>(v);
  return nc.imp.splat(nc.loc, RankedTensorType::get({}, et), v, iv);
}

static bool isFloat8(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }

/// Converts the float scalar `v` to `t` (f8E4M3FN or f8E5M2) with ONNX's
/// Cast semantics (opset 19+, the table under "saturate"): round to nearest
/// even; saturate=1 clamps to +-max (infinities included) and keeps NaN;
/// saturate=0 turns an overflow (a value that rounds above the largest finite
/// one, or an infinity) into NaN for E4M3FN, which has no infinity, and into
/// +-inf for E5M2. The sign of an E4M3FN NaN is the input's, as in the
/// reference implementation.
static Value toFloat8(OpBuilder &bb, Location l, Value v, Type t,
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

static Handler elementwiseHandler(EwKind kind, size_t arity) {
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
static Handler variadicHandler(EwKind kind) {
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

//===----------------------------------------------------------------------===//
// Constants and shapes
//===----------------------------------------------------------------------===//

static LogicalResult importConstant(NodeContext &nc) {
  Importer &imp = nc.imp;
  const onnx::NodeProto &node = nc.node;
  if (node.attribute_size() != 1)
    return nc.error() << "expects exactly one value attribute";
  const onnx::AttributeProto &a = node.attribute(0);
  StringRef kind = a.name();
  Lit lit;
  if (kind == "value") {
    FailureOr<ElementsAttr> attr = imp.tensorToAttr(a.t(), nc.loc, false);
    if (failed(attr))
      return failure();
    Value v = imp.constant(nc.loc, *attr);
    if (Importer::isUnsignedONNXType(a.t().data_type()))
      imp.unsignedValues.insert(v);
    nc.results.push_back(v);
    return success();
  }
  if (kind == "value_float" || kind == "value_floats") {
    lit.elemType = imp.b.getF32Type();
    if (kind == "value_float") {
      lit.floats.push_back(a.f());
    } else {
      lit.floats.assign(a.floats().begin(), a.floats().end());
      lit.shape.push_back(lit.floats.size());
    }
  } else if (kind == "value_int" || kind == "value_ints") {
    lit.elemType = imp.b.getI64Type();
    if (kind == "value_int") {
      lit.ints.push_back(a.i());
    } else {
      lit.ints.assign(a.ints().begin(), a.ints().end());
      lit.shape.push_back(lit.ints.size());
    }
  } else {
    return nc.error() << "unsupported constant attribute '" << kind << "'";
  }
  nc.results.push_back(imp.litConstant(nc.loc, lit));
  return success();
}

static LogicalResult importConstantOfShape(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape = nc.constInts(0, "shape");
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return nc.error() << "negative dimension in shape";
  Importer &imp = nc.imp;
  Attribute elt = imp.b.getF32FloatAttr(0.0f);
  bool uns = false;
  if (const onnx::AttributeProto *a = nc.attr("value")) {
    FailureOr<ElementsAttr> attr = imp.tensorToAttr(a->t(), nc.loc, true);
    if (failed(attr))
      return failure();
    auto dense = cast<DenseElementsAttr>(*attr);
    if (dense.getNumElements() != 1)
      return nc.error() << "'value' must hold exactly one element";
    elt = dense.getSplatValue<Attribute>();
    uns = Importer::isUnsignedONNXType(a->t().data_type());
  }
  if (failed(imp.checkConstantSize(nc, *shape, cast<TypedAttr>(elt).getType())))
    return failure();
  auto type = RankedTensorType::get(*shape, cast<TypedAttr>(elt).getType());
  Value v = imp.constant(
      nc.loc, cast<ElementsAttr>(DenseElementsAttr::get(type, elt)));
  if (uns)
    imp.unsignedValues.insert(v);
  nc.results.push_back(v);
  return success();
}

static LogicalResult importShape(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  ArrayRef<int64_t> s = Importer::shapeOf(nc.in(0));
  int64_t rank = s.size();
  int64_t start = nc.attrInt("start", 0), end = nc.attrInt("end", rank);
  // Shape-15 clamps start/end into [0, rank] after adding rank to negatives.
  auto clampAxis = [&](int64_t a) {
    if (a < 0)
      a += rank;
    return std::clamp<int64_t>(a, 0, rank);
  };
  start = clampAxis(start);
  end = clampAxis(end);
  Lit lit;
  lit.elemType = nc.imp.b.getI64Type();
  for (int64_t i = start; i < end; ++i)
    lit.ints.push_back(s[i]);
  lit.shape.push_back(lit.ints.size());
  nc.results.push_back(nc.imp.litConstant(nc.loc, lit));
  return success();
}

static LogicalResult importSize(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Lit lit;
  lit.elemType = nc.imp.b.getI64Type();
  lit.ints.push_back(product(Importer::shapeOf(nc.in(0))));
  nc.results.push_back(nc.imp.litConstant(nc.loc, lit));
  return success();
}

static LogicalResult importRange(NodeContext &nc) {
  if (failed(checkArity(nc, 3, 3)))
    return failure();
  Importer &imp = nc.imp;
  std::optional<Lit> start = imp.getLit(nc.in(0)), limit = imp.getLit(nc.in(1)),
                     delta = imp.getLit(nc.in(2));
  if (!start || !limit || !delta)
    return nc.error() << "start, limit and delta must be constants so that the "
                         "result shape is static";
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return nc.error() << "start, limit and delta must be scalars";
  Lit out;
  out.elemType = start->elemType;
  if (start->isFloat()) {
    double s = start->floats[0], l = limit->floats[0], d = delta->floats[0];
    if (d == 0 || !std::isfinite(d) || !std::isfinite(s) || !std::isfinite(l))
      return nc.error() << "start, limit and delta must be finite and delta "
                           "non-zero";
    double count = std::max(0.0, std::ceil((l - s) / d));
    if (count > double(INT64_MAX / 2))
      return nc.error() << "would create " << count << " elements";
    int64_t n = int64_t(count);
    if (failed(imp.checkConstantSize(nc, {n}, out.elemType)))
      return failure();
    for (int64_t i = 0; i < n; ++i)
      out.floats.push_back(s + i * d);
    out.shape.push_back(n);
  } else {
    int64_t s = start->ints[0], l = limit->ints[0], d = delta->ints[0];
    if (d == 0)
      return nc.error() << "delta must not be zero";
    // max(ceil((l - s) / d), 0), exactly: l - s may overflow int64.
    __int128 span = __int128(l) - s, step = d;
    __int128 q = span / step;
    if (q * step != span && ((span < 0) == (step < 0)))
      ++q;
    if (q < 0)
      q = 0;
    if (q > INT64_MAX / 2)
      return nc.error() << "would create " << double(q) << " elements";
    int64_t n = int64_t(q);
    if (failed(imp.checkConstantSize(nc, {n}, out.elemType)))
      return failure();
    for (int64_t i = 0; i < n; ++i) // wraps (no UB) past int64's ends
      out.ints.push_back(int64_t(uint64_t(s) + uint64_t(i) * uint64_t(d)));
    out.shape.push_back(n);
  }
  nc.results.push_back(imp.litConstant(nc.loc, out));
  return success();
}

static LogicalResult importIdentity(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  nc.results.push_back(nc.in(0));
  return success();
}

static LogicalResult importDropout(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 3)))
    return failure();
  if (nc.wantsOutput(1))
    return nc.error() << "the mask output is not supported (inference only)";
  if (Value train = nc.in(2)) {
    std::optional<Lit> t = nc.imp.getLit(train);
    if (!t || t->ints.empty() || t->ints[0] != 0)
      return nc.error() << "training_mode must be a constant false";
  }
  nc.results.push_back(nc.in(0));
  return success();
}

/// Cast of input #0 to `t` (`outUns`: the ONNX target type is unsigned).
static LogicalResult castTo(NodeContext &nc, Type t, bool outUns) {
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  bool inUns = imp.isUnsigned(x);
  bool saturate = nc.attrInt("saturate", 1) != 0;
  bool toF8 = isa<Float8E4M3FNType, Float8E5M2Type>(t);
  Type inT = Importer::elemOf(x);
  Value r;
  if (!toF8 && imp.getConst(x)) {
    FailureOr<Value> f = imp.elementwise(nc, EwKind::Cast, {x}, t);
    if (failed(f))
      return failure();
    r = *f;
  } else {
    r = imp.generic(
        nc.loc, {x}, Importer::shapeOf(x), t,
        [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
          Value v = a[0];
          if (toF8) {
            // Through FP32 (exact for every ONNX input type but f64 and
            // large integers), then Cast's FP8 table with `saturate`.
            if (!isa<FloatType>(inT))
              v = Importer::castScalar(bb, l, v, inUns, bb.getF32Type(), false);
            return toFloat8(bb, l, v, t, saturate);
          }
          return Importer::castScalar(bb, l, v, inUns, t, outUns);
        });
  }
  if (outUns)
    imp.unsignedValues.insert(r);
  else
    imp.unsignedValues.erase(r);
  nc.results.push_back(r);
  return success();
}

static LogicalResult importCast(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  int to = nc.attrInt("to", 0);
  Type t = nc.imp.elementType(to);
  if (!t)
    return nc.error() << "unsupported target type " << Importer::onnxTypeName(to);
  return castTo(nc, t, Importer::isUnsignedONNXType(to));
}

/// CastLike (opset 15): Cast to the element type of input #1.
static LogicalResult importCastLike(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  return castTo(nc, Importer::elemOf(nc.in(1)), nc.imp.isUnsigned(nc.in(1)));
}

/// Clip (opset 11+): optional scalar `min` and `max` inputs; max(x, min)
/// then min(., max), so min > max yields max as in the reference.
static LogicalResult importClip(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 3)))
    return failure();
  Value r = nc.in(0);
  for (auto [i, kind] : {std::pair<size_t, EwKind>{1, EwKind::Max},
                         std::pair<size_t, EwKind>{2, EwKind::Min}}) {
    Value bound = nc.in(i);
    if (!bound)
      continue;
    if (!Importer::shapeOf(bound).empty())
      return nc.error() << "min/max must be scalars, got " << bound.getType();
    FailureOr<Value> v = nc.imp.elementwise(nc, kind, {r, bound});
    if (failed(v))
      return failure();
    r = *v;
  }
  nc.results.push_back(r);
  return success();
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

static LogicalResult importReshape(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  FailureOr<SmallVector<int64_t>> target = nc.constInts(1, "shape");
  if (failed(target))
    return failure();
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  bool allowZero = nc.attrInt("allowzero", 0) != 0;
  SmallVector<int64_t> shape;
  int64_t inferAt = -1;
  for (auto [i, d] : llvm::enumerate(*target)) {
    if (d == 0 && !allowZero) {
      if (i >= s.size())
        return nc.error() << "shape entry #" << i
                          << " is 0 (copy) but the input has rank " << s.size();
      shape.push_back(s[i]);
    } else if (d == -1) {
      if (inferAt >= 0)
        return nc.error() << "more than one -1 in shape";
      inferAt = i;
      shape.push_back(1);
    } else if (d < 0) {
      return nc.error() << "invalid shape entry " << d;
    } else {
      shape.push_back(d);
    }
  }
  int64_t n = product(s), known = product(shape);
  if (inferAt >= 0) {
    if (known == 0 || n % known != 0)
      return nc.error() << "cannot infer -1 when reshaping " << x.getType()
                        << " to " << dims(*target);
    shape[inferAt] = n / known;
  } else if (known != n) {
    return nc.error() << "shape mismatch: cannot reshape " << x.getType()
                      << " (" << n << " elements) to "
                      << dims(shape);
  }
  nc.results.push_back(nc.imp.reshape(nc.loc, x, shape));
  return success();
}

static LogicalResult importFlatten(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  int64_t rank = s.size();
  int64_t axis = nc.attrInt("axis", 1);
  if (axis < -rank || axis > rank)
    return nc.error() << "axis " << axis << " out of range for rank " << rank;
  if (axis < 0)
    axis += rank;
  nc.results.push_back(nc.imp.reshape(
      nc.loc, x, {product(s.take_front(axis)), product(s.drop_front(axis))}));
  return success();
}

/// Axes from input #1 (opset >= `inputSince`) or the `axes` attribute.
static FailureOr<std::optional<SmallVector<int64_t>>>
axesOf(NodeContext &nc, int64_t inputSince) {
  if (nc.imp.opset >= inputSince) {
    if (!nc.in(1))
      return std::optional<SmallVector<int64_t>>();
    FailureOr<SmallVector<int64_t>> axes = nc.constInts(1, "axes");
    if (failed(axes))
      return failure();
    return std::optional<SmallVector<int64_t>>(*axes);
  }
  return nc.attrInts("axes");
}

static FailureOr<SmallVector<int64_t>>
normAxes(NodeContext &nc, ArrayRef<int64_t> axes, int64_t rank) {
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

static LogicalResult importSqueeze(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 2)))
    return failure();
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  auto axesOr = axesOf(nc, 13);
  if (failed(axesOr))
    return failure();
  SmallVector<int64_t> axes;
  if (*axesOr) {
    auto n = normAxes(nc, **axesOr, s.size());
    if (failed(n))
      return failure();
    axes = *n;
  } else {
    for (auto [i, d] : llvm::enumerate(s))
      if (d == 1)
        axes.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(s)) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i))) {
      shape.push_back(d);
      continue;
    }
    if (d != 1)
      return nc.error() << "cannot squeeze dimension " << i << " of size " << d;
  }
  nc.results.push_back(nc.imp.reshape(nc.loc, x, shape));
  return success();
}

static LogicalResult importUnsqueeze(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 2)))
    return failure();
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  auto axesOr = axesOf(nc, 13);
  if (failed(axesOr))
    return failure();
  if (!*axesOr)
    return nc.error() << "missing axes";
  int64_t outRank = s.size() + (*axesOr)->size();
  auto axes = normAxes(nc, **axesOr, outRank);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> shape;
  size_t j = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(llvm::is_contained(*axes, i) ? 1 : s[j++]);
  nc.results.push_back(nc.imp.reshape(nc.loc, x, shape));
  return success();
}

/// GlobalAveragePool / GlobalMaxPool: the mean / max over every spatial
/// dim of [N, C, d...], kept as 1s.
static LogicalResult importGlobalPool(NodeContext &nc, bool isMax) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  if (s.size() < 2 || !isa<FloatType>(Importer::elemOf(x)))
    return nc.error() << "expects a floating-point [N, C, ...] input";
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, s.size()));
  if (axes.empty()) {
    nc.results.push_back(x);
    return success();
  }
  Value r = imp.reduceKeepDims(nc.loc, x, axes,
                               isMax ? Importer::ReduceKind::Max
                                     : Importer::ReduceKind::Sum);
  if (!isMax) {
    int64_t count = 1;
    for (int64_t a : axes)
      count *= s[a];
    FailureOr<Value> mean = imp.elementwise(
        nc, EwKind::Div, {r, scalarTensor(nc, Importer::elemOf(x), count)});
    if (failed(mean))
      return failure();
    r = *mean;
  }
  nc.results.push_back(r);
  return success();
}

/// DepthToSpace (DCR and CRD modes) and SpaceToDepth on [N, C, H, W] with
/// block size b: a reshape to six dims, a transpose, a reshape back.
static LogicalResult importDepthSpace(NodeContext &nc, bool toSpace) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  if (s.size() != 4)
    return nc.error() << "expects a [N, C, H, W] input";
  const int64_t b = nc.attrInt("blocksize", 0);
  if (b < 1 || b > (int64_t(1) << 20))
    return nc.error() << "blocksize must be in [1, 2^20]";
  const int64_t n = s[0], c = s[1], h = s[2], w = s[3];
  Value r;
  if (toSpace) {
    if (c % (b * b) != 0)
      return nc.error() << "channels (" << c << ") must be a multiple of "
                        << "blocksize^2 (" << b * b << ")";
    std::string mode = nc.attrString("mode", "DCR");
    if (mode == "DCR") {
      r = imp.reshape(nc.loc, x, {n, b, b, c / (b * b), h, w});
      r = imp.transpose(nc.loc, r, {0, 3, 4, 1, 5, 2});
    } else if (mode == "CRD") {
      r = imp.reshape(nc.loc, x, {n, c / (b * b), b, b, h, w});
      r = imp.transpose(nc.loc, r, {0, 1, 4, 2, 5, 3});
    } else {
      return nc.error() << "unknown mode '" << mode << "'";
    }
    r = imp.reshape(nc.loc, r, {n, c / (b * b), h * b, w * b});
  } else {
    if (h % b != 0 || w % b != 0)
      return nc.error() << "height and width must be multiples of blocksize "
                        << b;
    r = imp.reshape(nc.loc, x, {n, c, h / b, b, w / b, b});
    r = imp.transpose(nc.loc, r, {0, 3, 5, 1, 2, 4});
    r = imp.reshape(nc.loc, r, {n, c * b * b, h / b, w / b});
  }
  nc.results.push_back(r);
  return success();
}

/// Tile with constant repeats: out[i...] = x[i_0 mod s_0, ...], one
/// linalg.generic whose input map takes each output index modulo the
/// input's dim.
static LogicalResult importTile(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  std::optional<Lit> reps = imp.getLit(nc.in(1));
  if (!reps || reps->isFloat())
    return nc.error() << "input 'repeats' must be an integer constant";
  if (reps->ints.size() != s.size())
    return nc.error() << "repeats must have one entry per input dim";
  SmallVector<int64_t> outShape;
  for (auto [d, r] : llvm::enumerate(reps->ints)) {
    if (r < 0)
      return nc.error() << "repeats must be non-negative";
    if (r > kMaxTensorElements || s[d] > kMaxTensorElements / std::max<int64_t>(r, 1))
      return nc.error() << "tiles to more elements than any machine holds";
    outShape.push_back(s[d] * r);
  }
  if (product(outShape) > kMaxTensorElements)
    return nc.error() << "tiles to more elements than any machine holds";
  const int64_t rank = s.size();
  Value init = imp.emptyTensor(nc.loc, outShape, Importer::elemOf(x));
  if (product(outShape) == 0) {
    nc.results.push_back(init);
    return success();
  }
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0; d < rank; ++d)
    inExprs.push_back(imp.b.getAffineDimExpr(d) % s[d]);
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, inExprs, imp.ctx),
                              imp.b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value r = linalg::GenericOp::create(
                imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{x},
                ValueRange{init}, maps, iters,
                [&](OpBuilder &bb, Location l, ValueRange a) {
                  linalg::YieldOp::create(bb, l, ValueRange{a[0]});
                })
                .getResult(0);
  if (imp.isUnsigned(x))
    imp.unsignedValues.insert(r);
  nc.results.push_back(r);
  return success();
}

/// Hardmax (opset 13: axis -1): 1 where the first maximum along the axis
/// is, 0 elsewhere: ArgMax (keepdims) compared with each position's index.
static LogicalResult importArgExtreme(NodeContext &nc, bool isMax,
                                      int64_t defaultAxis);
static LogicalResult importHardmax(NodeContext &nc) {
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  if (!x || !isa<FloatType>(Importer::elemOf(x)))
    return nc.error() << "expects a floating-point input";
  const int64_t rank = Importer::shapeOf(x).size();
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", -1), rank);
  if (failed(axis) || failed(importArgExtreme(nc, true, -1)))
    return failure();
  Value arg = nc.results.pop_back_val();
  SmallVector<AffineExpr> argExprs;
  for (int64_t d = 0; d < rank; ++d)
    argExprs.push_back(d == *axis ? imp.b.getAffineConstantExpr(0)
                                  : imp.b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, argExprs, imp.ctx),
                              imp.b.getMultiDimIdentityMap(rank)};
  Type et = Importer::elemOf(x);
  Value init = imp.emptyTensor(nc.loc, Importer::shapeOf(x), et);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  const int64_t ax = *axis;
  Value r = linalg::GenericOp::create(
                imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{arg},
                ValueRange{init}, maps, iters,
                [&](OpBuilder &bb, Location l, ValueRange a) {
                  Value i = arith::IndexCastOp::create(
                      bb, l, bb.getI64Type(), linalg::IndexOp::create(bb, l, ax));
                  Value hit = arith::CmpIOp::create(
                      bb, l, arith::CmpIPredicate::eq, i, a[0]);
                  Value one = arith::ConstantOp::create(bb, l, bb.getFloatAttr(et, 1.0));
                  Value zero = arith::ConstantOp::create(bb, l, bb.getFloatAttr(et, 0.0));
                  linalg::YieldOp::create(
                      bb, l, ValueRange{arith::SelectOp::create(bb, l, hit, one, zero)});
                })
                .getResult(0);
  nc.results.push_back(r);
  return success();
}

/// CumSum (opsets 11, 14) along a constant axis: out[.., i, ..] = the sum of
/// x[.., j, ..] over j <= i (j >= i with reverse; j != i too with
/// exclusive). A linalg.generic with j as an extra reduction dim.
static LogicalResult importCumSum(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  std::optional<Lit> axisLit = imp.getLit(nc.in(1));
  if (!axisLit || axisLit->isFloat() || axisLit->ints.size() != 1)
    return nc.error() << "input 'axis' must be an integer constant";
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  const int64_t rank = s.size();
  FailureOr<int64_t> axis = nc.normAxis(axisLit->ints[0], rank);
  if (failed(axis))
    return failure();
  Type et = Importer::elemOf(x);
  if (et.isInteger(1))
    return nc.error() << "bool input is not supported";
  const bool exclusive = nc.attrInt("exclusive", 0) != 0;
  const bool reverse = nc.attrInt("reverse", 0) != 0;
  const int64_t ax = *axis;
  SmallVector<AffineExpr> inExprs, outExprs;
  for (int64_t d = 0; d < rank; ++d) {
    inExprs.push_back(imp.b.getAffineDimExpr(d == ax ? rank : d));
    outExprs.push_back(imp.b.getAffineDimExpr(d));
  }
  SmallVector<AffineMap> maps{AffineMap::get(rank + 1, 0, inExprs, imp.ctx),
                              AffineMap::get(rank + 1, 0, outExprs, imp.ctx)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  iters.push_back(utils::IteratorType::reduction);
  Value init = imp.filled(nc.loc, s, imp.b.getZeroAttr(et));
  const bool f = isa<FloatType>(et);
  Value r = linalg::GenericOp::create(
                imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{x},
                ValueRange{init}, maps, iters,
                [&](OpBuilder &bb, Location l, ValueRange a) {
                  Value i = linalg::IndexOp::create(bb, l, ax);
                  Value j = linalg::IndexOp::create(bb, l, rank);
                  arith::CmpIPredicate p =
                      reverse ? (exclusive ? arith::CmpIPredicate::ugt
                                           : arith::CmpIPredicate::uge)
                              : (exclusive ? arith::CmpIPredicate::ult
                                           : arith::CmpIPredicate::ule);
                  Value take = arith::CmpIOp::create(bb, l, p, j, i);
                  Value sum = f ? Value(arith::AddFOp::create(bb, l, a[1], a[0]))
                                : Value(arith::AddIOp::create(bb, l, a[1], a[0]));
                  linalg::YieldOp::create(
                      bb, l, ValueRange{arith::SelectOp::create(bb, l, take, sum, a[1])});
                })
                .getResult(0);
  if (imp.isUnsigned(x))
    imp.unsignedValues.insert(r);
  nc.results.push_back(r);
  return success();
}

/// Sign: 1, -1 or 0 (NaN stays NaN: x * 0 where x is neither above nor
/// below 0).
static LogicalResult importSign(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  Type et = Importer::elemOf(x);
  if (et.isInteger(1))
    return nc.error() << "bool input is not supported";
  auto ew = [&](EwKind k, ArrayRef<Value> ins) { return imp.elementwise(nc, k, ins); };
  Value zero = scalarTensor(nc, et, 0), one = scalarTensor(nc, et, 1);
  FailureOr<Value> pos = ew(EwKind::Greater, {x, zero});
  FailureOr<Value> neg = ew(EwKind::Less, {x, zero});
  FailureOr<Value> rest = ew(EwKind::Mul, {x, zero});
  if (failed(pos) || failed(neg) || failed(rest))
    return failure();
  Value minusOne = imp.isUnsigned(x) ? zero : scalarTensor(nc, et, -1);
  FailureOr<Value> lower = ew(EwKind::Where, {*neg, minusOne, *rest});
  if (failed(lower))
    return failure();
  FailureOr<Value> r = ew(EwKind::Where, {*pos, one, *lower});
  if (failed(r))
    return failure();
  nc.results.push_back(*r);
  return success();
}

/// A scalar 1 or 0 of type `t` inside a linalg body.
static Value oneOrZero(OpBuilder &bb, Location l, Type t, Value cond) {
  Value one = isa<FloatType>(t)
                  ? Value(arith::ConstantOp::create(bb, l, bb.getFloatAttr(t, 1.0)))
                  : Value(arith::ConstantOp::create(bb, l, bb.getIntegerAttr(t, 1)));
  Value zero = arith::ConstantOp::create(bb, l, bb.getZeroAttr(t));
  return arith::SelectOp::create(bb, l, cond, one, zero);
}

/// EyeLike: ones on the k-th diagonal of a 2-D tensor shaped like the
/// input, in `dtype` (default: the input's type).
static LogicalResult importEyeLike(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  ArrayRef<int64_t> s = Importer::shapeOf(nc.in(0));
  if (s.size() != 2)
    return nc.error() << "expects a 2-D input";
  Type et = Importer::elemOf(nc.in(0));
  bool uns = imp.isUnsigned(nc.in(0));
  if (const onnx::AttributeProto *dt = nc.attr("dtype")) {
    et = imp.elementType(dt->i());
    if (!et)
      return nc.error() << "unsupported dtype "
                        << Importer::onnxTypeName(dt->i());
    uns = Importer::isUnsignedONNXType(dt->i());
  }
  if (et.isInteger(1))
    return nc.error() << "bool output is not supported";
  const int64_t k = nc.attrInt("k", 0);
  Value init = imp.emptyTensor(nc.loc, s, et);
  SmallVector<AffineMap> maps{imp.b.getMultiDimIdentityMap(2)};
  SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
  Value r = linalg::GenericOp::create(
                imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{},
                ValueRange{init}, maps, iters,
                [&](OpBuilder &bb, Location l, ValueRange) {
                  Value i = arith::IndexCastOp::create(
                      bb, l, bb.getI64Type(), linalg::IndexOp::create(bb, l, 0));
                  Value j = arith::IndexCastOp::create(
                      bb, l, bb.getI64Type(), linalg::IndexOp::create(bb, l, 1));
                  Value diag = arith::SubIOp::create(bb, l, j, i);
                  Value kc = arith::ConstantOp::create(bb, l, bb.getI64IntegerAttr(k));
                  Value on = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq,
                                                   diag, kc);
                  linalg::YieldOp::create(bb, l, ValueRange{oneOrZero(bb, l, et, on)});
                })
                .getResult(0);
  if (uns)
    imp.unsignedValues.insert(r);
  nc.results.push_back(r);
  return success();
}

/// OneHot (opset 11): indices (negative ones wrap once by depth), a constant
/// scalar depth, values = [off, on]; the new dimension of size depth goes
/// at `axis` (default -1, the last). Non-integer indices are truncated.
static LogicalResult importOneHot(NodeContext &nc) {
  if (failed(checkArity(nc, 3, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value indices = nc.in(0), values = nc.in(2);
  std::optional<Lit> depthLit = imp.getLit(nc.in(1));
  if (!depthLit)
    return nc.error() << "input 'depth' is not a constant (the result's "
                         "shape depends on it)";
  if ((depthLit->isFloat() ? depthLit->floats.size() : depthLit->ints.size()) != 1)
    return nc.error() << "input 'depth' must hold one value";
  const double depthD =
      depthLit->isFloat() ? depthLit->floats[0] : double(depthLit->ints[0]);
  const int64_t depth = static_cast<int64_t>(depthD);
  if (depth < 1 || depth > (int64_t(1) << 31))
    return nc.error() << "depth must be in [1, 2^31], got " << depthD;
  if (Importer::shapeOf(values) != ArrayRef<int64_t>{2})
    return nc.error() << "values must be [off, on]";
  ArrayRef<int64_t> is = Importer::shapeOf(indices);
  const int64_t outRank = is.size() + 1;
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", -1), outRank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> outShape(is.begin(), is.end());
  outShape.insert(outShape.begin() + *axis, depth);
  if (product(outShape) > kMaxTensorElements)
    return nc.error() << "result too large";
  const int64_t ax = *axis;
  SmallVector<AffineExpr> inExprs;
  for (int64_t d = 0; d < outRank; ++d)
    if (d != ax)
      inExprs.push_back(imp.b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps{AffineMap::get(outRank, 0, inExprs, imp.ctx),
                              imp.b.getMultiDimIdentityMap(outRank)};
  Type et = Importer::elemOf(values), it = Importer::elemOf(indices);
  Value init = imp.emptyTensor(nc.loc, outShape, et);
  SmallVector<utils::IteratorType> iters(outRank, utils::IteratorType::parallel);
  const bool uns = imp.isUnsigned(indices);
  Value r = linalg::GenericOp::create(
                imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{indices},
                ValueRange{init}, maps, iters,
                [&](OpBuilder &bb, Location l, ValueRange a) {
                  Type i64 = bb.getI64Type();
                  Value idx = a[0];
                  if (isa<FloatType>(it))
                    idx = arith::FPToSIOp::create(bb, l, i64, idx);
                  else if (it.getIntOrFloatBitWidth() < 64)
                    idx = uns ? Value(arith::ExtUIOp::create(bb, l, i64, idx))
                              : Value(arith::ExtSIOp::create(bb, l, i64, idx));
                  Value zero = arith::ConstantOp::create(bb, l, bb.getI64IntegerAttr(0));
                  Value dc = arith::ConstantOp::create(bb, l, bb.getI64IntegerAttr(depth));
                  Value isNeg = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::slt,
                                                      idx, zero);
                  idx = arith::SelectOp::create(
                      bb, l, isNeg, arith::AddIOp::create(bb, l, idx, dc), idx);
                  Value pos = arith::IndexCastOp::create(
                      bb, l, i64, linalg::IndexOp::create(bb, l, ax));
                  Value hit = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq,
                                                    idx, pos);
                  Value c0 = arith::ConstantIndexOp::create(bb, l, 0);
                  Value c1 = arith::ConstantIndexOp::create(bb, l, 1);
                  Value off = tensor::ExtractOp::create(bb, l, values, ValueRange{c0});
                  Value on = tensor::ExtractOp::create(bb, l, values, ValueRange{c1});
                  linalg::YieldOp::create(
                      bb, l, ValueRange{arith::SelectOp::create(bb, l, hit, on, off)});
                })
                .getResult(0);
  if (imp.isUnsigned(values))
    imp.unsignedValues.insert(r);
  nc.results.push_back(r);
  return success();
}

static LogicalResult importTranspose(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Value x = nc.in(0);
  int64_t rank = Importer::shapeOf(x).size();
  SmallVector<int64_t> perm;
  if (auto p = nc.attrInts("perm"))
    perm = *p;
  else
    perm = llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank)));
  SmallVector<int64_t> sorted = perm;
  llvm::sort(sorted);
  if (!llvm::equal(sorted, llvm::seq<int64_t>(0, rank)))
    return nc.error() << "perm " << dims(perm)
                      << " is not a permutation of rank " << rank;
  nc.results.push_back(nc.imp.transpose(nc.loc, x, perm));
  return success();
}

static LogicalResult importExpand(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  FailureOr<SmallVector<int64_t>> target = nc.constInts(1, "shape");
  if (failed(target))
    return failure();
  Importer &imp = nc.imp;
  // Expand broadcasts both ways: the target may have 1s where the input has
  // larger dims.
  Value shapeProbe = imp.splat(
      nc.loc, RankedTensorType::get(*target, imp.b.getI1Type()), 0, 0);
  FailureOr<SmallVector<int64_t>> shape =
      imp.broadcastShapes(nc, {nc.in(0), shapeProbe});
  if (failed(shape))
    return failure();
  if (shapeProbe.use_empty())
    shapeProbe.getDefiningOp()->erase();
  nc.results.push_back(imp.broadcastTo(nc.loc, nc.in(0), *shape));
  return success();
}

static LogicalResult importConcat(NodeContext &nc) {
  if (nc.numInputs() < 1)
    return nc.error() << "expects at least one input";
  if (!nc.attr("axis"))
    return nc.error() << "missing required attribute 'axis'";
  Value first = nc.in(0);
  int64_t rank = Importer::shapeOf(first).size();
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  SmallVector<Value> vals;
  for (Value v : nc.inputs) {
    if (!v)
      return nc.error() << "empty input name";
    ArrayRef<int64_t> s = Importer::shapeOf(v);
    bool ok = static_cast<int64_t>(s.size()) == rank &&
              Importer::elemOf(v) == Importer::elemOf(first);
    for (int64_t d = 0; ok && d < rank; ++d)
      ok = d == *axis || s[d] == Importer::shapeOf(first)[d];
    if (!ok)
      return nc.error() << "shape mismatch: cannot concatenate "
                        << first.getType() << " and " << v.getType()
                        << " along axis " << *axis;
    // Zero-sized pieces (common in KV-cache graphs) contribute nothing.
    if (s[*axis] != 0)
      vals.push_back(v);
  }
  if (vals.empty())
    vals.push_back(first);
  nc.results.push_back(nc.imp.concat(nc.loc, vals, *axis));
  return success();
}

static LogicalResult importSplit(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 2)))
    return failure();
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 0), s.size());
  if (failed(axis))
    return failure();
  int64_t numOut = nc.node.output_size();
  SmallVector<int64_t> sizes;
  if (nc.in(1)) {
    FailureOr<SmallVector<int64_t>> sp = nc.constInts(1, "split");
    if (failed(sp))
      return failure();
    sizes = *sp;
  } else if (auto attr = nc.attrInts("split"); attr && nc.imp.opset < 13) {
    sizes = *attr;
  } else {
    int64_t n = nc.attrInt("num_outputs", numOut);
    if (n <= 0)
      return nc.error() << "num_outputs must be positive";
    // Opset 18: the last chunk is smaller when the dim does not divide.
    int64_t chunk = (s[*axis] + n - 1) / n;
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, s[*axis] - i * chunk)));
  }
  if (static_cast<int64_t>(sizes.size()) != numOut)
    return nc.error() << "split into " << sizes.size() << " pieces but the node has "
                      << numOut << " outputs";
  if (llvm::sum_of(sizes) != s[*axis])
    return nc.error() << "split sizes sum to " << llvm::sum_of(sizes)
                      << " but dimension " << *axis << " has size " << s[*axis];
  int64_t off = 0;
  for (int64_t sz : sizes) {
    SmallVector<int64_t> offs(s.size(), 0), szs = llvm::to_vector(s),
        strides(s.size(), 1);
    offs[*axis] = off;
    szs[*axis] = sz;
    nc.results.push_back(nc.imp.extractSlice(nc.loc, x, offs, szs, strides));
    off += sz;
  }
  return success();
}

static LogicalResult importSlice(NodeContext &nc) {
  if (failed(checkArity(nc, 3, 5)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  int64_t rank = s.size();
  auto starts = nc.constInts(1, "starts");
  auto ends = nc.constInts(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (nc.in(3)) {
    auto a = nc.constInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  }
  if (nc.in(4)) {
    auto st = nc.constInts(4, "steps");
    if (failed(st))
      return failure();
    steps = *st;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return nc.error() << "starts, ends, axes and steps must have equal lengths";

  SmallVector<int64_t> offs(rank, 0), sizes = llvm::to_vector(s),
      strides(rank, 1);
  SmallVector<int64_t> reversed;
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> ax = nc.normAxis(axes[i], rank);
    if (failed(ax))
      return failure();
    int64_t dim = s[*ax], step = steps[i];
    if (step == 0)
      return nc.error() << "step must not be zero";
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += dim;
    if (end < 0)
      end += dim;
    int64_t size;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      size = end > start ? (end - start + step - 1) / step : 0;
      offs[*ax] = start;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      size = start > end ? (start - end - step - 1) / -step : 0;
      // Take the same elements in increasing order, then reverse the axis.
      offs[*ax] = size > 0 ? start + (size - 1) * step : 0;
      reversed.push_back(*ax);
    }
    // An empty slice may start at the end of the axis (or past it, clamped);
    // tensor.extract_slice wants an in-bounds offset even for size 0.
    if (size == 0)
      offs[*ax] = 0;
    sizes[*ax] = size;
    strides[*ax] = std::abs(step);
  }
  Value r = imp.extractSlice(nc.loc, x, offs, sizes, strides);
  if (!reversed.empty()) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(llvm::is_contained(reversed, d)
                          ? imp.b.getAffineConstantExpr(sizes[d] - 1) -
                                imp.b.getAffineDimExpr(d)
                          : imp.b.getAffineDimExpr(d));
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, imp.ctx),
                                imp.b.getMultiDimIdentityMap(rank)};
    Value init = imp.emptyTensor(nc.loc, sizes, Importer::elemOf(x));
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    r = linalg::GenericOp::create(
            imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{r},
            ValueRange{init}, maps, iters,
            [](OpBuilder &bb, Location l, ValueRange a) {
              linalg::YieldOp::create(bb, l, a[0]);
            })
            .getResult(0);
  }
  nc.results.push_back(r);
  return success();
}

static LogicalResult importGather(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  Importer &imp = nc.imp;
  Value data = nc.in(0), indices = nc.in(1);
  ArrayRef<int64_t> s = Importer::shapeOf(data), is = Importer::shapeOf(indices);
  if (!isa<IntegerType>(Importer::elemOf(indices)) ||
      Importer::elemOf(indices).isInteger(1))
    return nc.error() << "indices must be integers, got " << indices.getType();
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 0), s.size());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> outShape(s.take_front(*axis));
  llvm::append_range(outShape, is);
  llvm::append_range(outShape, s.drop_front(*axis + 1));
  int64_t axisDim = s[*axis];
  if (axisDim == 0 && product(is) != 0)
    return nc.error() << "gathers from an empty dimension";
  if (failed(imp.checkIndices(nc, indices, {axisDim}, *axis,
                              /*perComponent=*/false)))
    return failure();

  std::optional<Lit> d = imp.getLit(data), ix = imp.getLit(indices);
  if (ix)
    for (int64_t &i : ix->ints)
      if (i < 0)
        i += axisDim;
  if (d && ix && product(outShape) <= 4096) {
    Lit out = *d;
    out.shape = outShape;
    out.ints.clear();
    out.floats.clear();
    int64_t outer = product(s.take_front(*axis));
    int64_t inner = product(s.drop_front(*axis + 1));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i : ix->ints)
        for (int64_t k = 0; k < inner; ++k) {
          int64_t src = (o * s[*axis] + i) * inner + k;
          if (d->isFloat())
            out.floats.push_back(d->floats[src]);
          else
            out.ints.push_back(d->ints[src]);
        }
    nc.results.push_back(imp.litConstant(nc.loc, out));
    return success();
  }

  bool unsignedIdx = imp.isUnsigned(indices);
  int64_t outRank = outShape.size(), ir = is.size();
  SmallVector<AffineExpr> idxExprs;
  for (int64_t i = 0; i < ir; ++i)
    idxExprs.push_back(imp.b.getAffineDimExpr(*axis + i));
  SmallVector<AffineMap> maps{AffineMap::get(outRank, 0, idxExprs, imp.ctx),
                              imp.b.getMultiDimIdentityMap(outRank)};
  Value init = imp.emptyTensor(nc.loc, outShape, Importer::elemOf(data));
  SmallVector<utils::IteratorType> iters(outRank,
                                         utils::IteratorType::parallel);
  Value r = linalg::GenericOp::create(
                imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{indices},
                ValueRange{init}, maps, iters,
                [&](OpBuilder &bb, Location l, ValueRange a) {
                  SmallVector<Value> coords;
                  for (int64_t dd = 0; dd < *axis; ++dd)
                    coords.push_back(linalg::IndexOp::create(bb, l, dd));
                  coords.push_back(
                      safeIndex(bb, l, a[0], axisDim, unsignedIdx));
                  for (int64_t dd = *axis + ir; dd < outRank; ++dd)
                    coords.push_back(linalg::IndexOp::create(bb, l, dd));
                  Value v = tensor::ExtractOp::create(bb, l, data, coords);
                  linalg::YieldOp::create(bb, l, v);
                })
                .getResult(0);
  if (imp.isUnsigned(data))
    imp.unsignedValues.insert(r);
  nc.results.push_back(r);
  return success();
}

static LogicalResult importGatherElements(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  Importer &imp = nc.imp;
  Value data = nc.in(0), indices = nc.in(1);
  ArrayRef<int64_t> s = Importer::shapeOf(data), is = Importer::shapeOf(indices);
  if (s.size() != is.size())
    return nc.error() << "data and indices must have the same rank";
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 0), s.size());
  if (failed(axis))
    return failure();
  if (!isa<IntegerType>(Importer::elemOf(indices)) ||
      Importer::elemOf(indices).isInteger(1))
    return nc.error() << "indices must be integers, got " << indices.getType();
  int64_t rank = is.size();
  for (int64_t d = 0; d < rank; ++d)
    if (d != *axis && is[d] > s[d])
      return nc.error() << "indices dimension " << d << " (" << is[d]
                        << ") exceeds data's (" << s[d] << ")";
  int64_t axisDim = s[*axis];
  if (axisDim == 0 && product(is) != 0)
    return nc.error() << "gathers from an empty dimension";
  if (failed(imp.checkIndices(nc, indices, {axisDim}, *axis,
                              /*perComponent=*/false)))
    return failure();
  bool unsignedIdx = imp.isUnsigned(indices);
  SmallVector<AffineMap> maps{imp.b.getMultiDimIdentityMap(rank),
                              imp.b.getMultiDimIdentityMap(rank)};
  Value init = imp.emptyTensor(nc.loc, is, Importer::elemOf(data));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value r = linalg::GenericOp::create(
                imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{indices},
                ValueRange{init}, maps, iters,
                [&](OpBuilder &bb, Location l, ValueRange a) {
                  SmallVector<Value> coords;
                  for (int64_t dd = 0; dd < rank; ++dd)
                    coords.push_back(
                        dd == *axis
                            ? safeIndex(bb, l, a[0], axisDim, unsignedIdx)
                            : Value(linalg::IndexOp::create(bb, l, dd)));
                  Value v = tensor::ExtractOp::create(bb, l, data, coords);
                  linalg::YieldOp::create(bb, l, v);
                })
                .getResult(0);
  nc.results.push_back(r);
  return success();
}

/// GatherND (opsets 13+): with r = rank(data), q = rank(indices), b =
/// batch_dims and k = indices.shape[-1] (1 <= k <= r - b), the result has
/// shape indices.shape[:-1] ++ data.shape[b+k:] and
///   out[i_0..i_{q-2}, j..] = data[i_0..i_{b-1}, indices[i_0..i_{q-2}, :], j..]
/// (the first b dims of data and indices must agree). Negative indices wrap
/// once. A linalg.generic over the output whose body reads the k index
/// components and then the data with tensor.extract; folds when both inputs
/// are small constants.
static LogicalResult importGatherND(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  Importer &imp = nc.imp;
  Value data = nc.in(0), indices = nc.in(1);
  ArrayRef<int64_t> s = Importer::shapeOf(data), is = Importer::shapeOf(indices);
  if (!isa<IntegerType>(Importer::elemOf(indices)) ||
      Importer::elemOf(indices).isInteger(1))
    return nc.error() << "indices must be integers, got " << indices.getType();
  int64_t r = s.size(), q = is.size();
  int64_t b = nc.attrInt("batch_dims", 0);
  if (r < 1 || q < 1)
    return nc.error() << "data and indices must have rank >= 1";
  if (b < 0 || b >= std::min(r, q))
    return nc.error() << "batch_dims " << b
                      << " must be in [0, min(rank(data), rank(indices)) = "
                      << std::min(r, q) << ")";
  for (int64_t d = 0; d < b; ++d)
    if (s[d] != is[d])
      return nc.error() << "batch dimension " << d << " differs: data "
                        << data.getType() << ", indices " << indices.getType();
  int64_t k = is.back();
  if (k < 1 || k > r - b)
    return nc.error() << "indices.shape[-1] = " << k << " must be in [1, "
                      << r - b << "] (rank(data) - batch_dims)";
  SmallVector<int64_t> outShape(is.drop_back());
  llvm::append_range(outShape, s.drop_front(b + k));
  int64_t outRank = outShape.size();

  SmallVector<int64_t> tupleDims(s.begin() + b, s.begin() + b + k);
  if (llvm::is_contained(tupleDims, 0) && product(is.drop_back()) != 0)
    return nc.error() << "gathers from an empty dimension";
  if (failed(imp.checkIndices(nc, indices, tupleDims, b,
                              /*perComponent=*/true)))
    return failure();
  std::optional<Lit> d = imp.getLit(data), ix = imp.getLit(indices);
  if (ix) // in range (checked above); wrap the negative ones
    for (int64_t n = 0, e = ix->ints.size(); n < e; ++n)
      if (ix->ints[n] < 0)
        ix->ints[n] += s[b + n % k];
  if (d && ix && product(outShape) <= 4096) {
    Lit out = *d;
    out.shape = outShape;
    out.ints.clear();
    out.floats.clear();
    int64_t batch = product(s.take_front(b));
    int64_t tuples = product(is.drop_back()) / std::max<int64_t>(batch, 1);
    int64_t slice = product(s.drop_front(b + k));
    SmallVector<int64_t> strides(r, 1);
    for (int64_t dd = r - 2; dd >= 0; --dd)
      strides[dd] = strides[dd + 1] * s[dd + 1];
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t t = 0; t < tuples; ++t) {
        int64_t base = 0, rem = bi;
        for (int64_t dd = b - 1; dd >= 0; --dd) {
          base += (rem % s[dd]) * strides[dd];
          rem /= s[dd];
        }
        for (int64_t j = 0; j < k; ++j)
          base += ix->ints[(bi * tuples + t) * k + j] * strides[b + j];
        for (int64_t e = 0; e < slice; ++e) {
          if (d->isFloat())
            out.floats.push_back(d->floats[base + e]);
          else
            out.ints.push_back(d->ints[base + e]);
        }
      }
    Value v = imp.litConstant(nc.loc, out);
    if (imp.isUnsigned(data))
      imp.unsignedValues.insert(v);
    nc.results.push_back(v);
    return success();
  }

  bool unsignedIdx = imp.isUnsigned(indices);
  Value init = imp.emptyTensor(nc.loc, outShape, Importer::elemOf(data));
  SmallVector<AffineMap> maps{imp.b.getMultiDimIdentityMap(outRank)};
  SmallVector<utils::IteratorType> iters(outRank, utils::IteratorType::parallel);
  Value rv = linalg::GenericOp::create(
                 imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{},
                 ValueRange{init}, maps, iters,
                 [&](OpBuilder &bb, Location l, ValueRange) {
                   SmallVector<Value> tuple;
                   for (int64_t dd = 0; dd < q - 1; ++dd)
                     tuple.push_back(linalg::IndexOp::create(bb, l, dd));
                   SmallVector<Value> coords(tuple.begin(), tuple.begin() + b);
                   for (int64_t j = 0; j < k; ++j) {
                     SmallVector<Value> at = tuple;
                     at.push_back(arith::ConstantIndexOp::create(bb, l, j));
                     Value i = tensor::ExtractOp::create(bb, l, indices, at);
                     coords.push_back(
                         safeIndex(bb, l, i, s[b + j], unsignedIdx));
                   }
                   for (int64_t dd = q - 1; dd < outRank; ++dd)
                     coords.push_back(linalg::IndexOp::create(bb, l, dd));
                   Value v = tensor::ExtractOp::create(bb, l, data, coords);
                   linalg::YieldOp::create(bb, l, v);
                 })
                 .getResult(0);
  if (imp.isUnsigned(data))
    imp.unsignedValues.insert(rv);
  nc.results.push_back(rv);
  return success();
}

//===----------------------------------------------------------------------===//
// Float predicates and activations
//===----------------------------------------------------------------------===//

/// IsNaN (opsets 13, 20) and IsInf (10, 20; detect_positive/detect_negative):
/// bool tensors, folded for constant inputs.
static LogicalResult importFloatClass(NodeContext &nc, bool isNaN) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  Type et = Importer::elemOf(x);
  if (!isa<FloatType>(et))
    return nc.error() << "expects a floating-point input, got " << x.getType();
  bool pos = nc.attrInt("detect_positive", 1) != 0;
  bool neg = nc.attrInt("detect_negative", 1) != 0;
  auto test = [&](double v) {
    if (isNaN)
      return std::isnan(v);
    return std::isinf(v) && (v > 0 ? pos : neg);
  };
  if (std::optional<Lit> lit = imp.getLit(x); lit && lit->size() <= 4096) {
    Lit out;
    out.shape = lit->shape;
    out.elemType = imp.b.getI1Type();
    for (double v : lit->floats)
      out.ints.push_back(test(v));
    nc.results.push_back(imp.litConstant(nc.loc, out));
    return success();
  }
  nc.results.push_back(imp.generic(
      nc.loc, {x}, Importer::shapeOf(x), imp.b.getI1Type(),
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        if (isNaN)
          return arith::CmpFOp::create(bb, l, arith::CmpFPredicate::UNO, a[0],
                                       a[0]);
        const llvm::fltSemantics &sem = cast<FloatType>(et).getFloatSemantics();
        auto inf = [&](bool negative) {
          return arith::ConstantOp::create(
              bb, l, bb.getFloatAttr(et, APFloat::getInf(sem, negative)));
        };
        Value r = arith::ConstantOp::create(bb, l, bb.getBoolAttr(false));
        if (pos)
          r = arith::OrIOp::create(
              bb, l, r,
              arith::CmpFOp::create(bb, l, arith::CmpFPredicate::OEQ, a[0], inf(false)));
        if (neg)
          r = arith::OrIOp::create(
              bb, l, r,
              arith::CmpFOp::create(bb, l, arith::CmpFPredicate::OEQ, a[0], inf(true)));
        return r;
      }));
  return success();
}

/// Gelu (opset 20): approximate = "none": 0.5 x (1 + erf(x / sqrt 2));
/// "tanh": 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))). Computed in
/// f32 for narrower float types.
static LogicalResult importGelu(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  if (imp.opset < 20)
    return nc.error() << "Gelu is defined from opset 20, the model has opset "
                      << imp.opset;
  Value x = nc.in(0);
  Type et = Importer::elemOf(x);
  if (!isa<FloatType>(et))
    return nc.error() << "expects a floating-point input, got " << x.getType();
  std::string approx = nc.attrString("approximate", "none");
  if (approx != "none" && approx != "tanh")
    return nc.error() << "unsupported approximate '" << approx
                      << "' (expected 'none' or 'tanh')";
  bool useTanh = approx == "tanh";
  nc.results.push_back(imp.generic(
      nc.loc, {x}, Importer::shapeOf(x), et,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Type ct = et.getIntOrFloatBitWidth() < 32 ? bb.getF32Type() : et;
        Value v = Importer::castScalar(bb, l, a[0], false, ct, false);
        auto cst = [&](double d) {
          return arith::ConstantOp::create(bb, l, bb.getFloatAttr(ct, d));
        };
        Value inner;
        if (useTanh) {
          Value cube = arith::MulFOp::create(
              bb, l, v, arith::MulFOp::create(bb, l, v, v));
          Value sum = arith::AddFOp::create(
              bb, l, v, arith::MulFOp::create(bb, l, cst(0.044715), cube));
          inner = math::TanhOp::create(
              bb, l, arith::MulFOp::create(bb, l, cst(std::sqrt(2.0 / M_PI)), sum));
        } else {
          inner = math::ErfOp::create(
              bb, l, arith::MulFOp::create(bb, l, v, cst(M_SQRT1_2)));
        }
        Value onePlus = arith::AddFOp::create(bb, l, cst(1.0), inner);
        Value half = arith::MulFOp::create(bb, l, cst(0.5), v);
        Value r = arith::MulFOp::create(bb, l, half, onePlus);
        return Importer::castScalar(bb, l, r, false, et, false);
      }));
  return success();
}

static LogicalResult importTrilu(NodeContext &nc) {
  if (failed(checkArity(nc, 1, 2)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  if (s.size() < 2)
    return nc.error() << "input must have rank >= 2";
  int64_t k = 0;
  if (nc.in(1)) {
    auto kv = nc.constInts(1, "k");
    if (failed(kv))
      return failure();
    if (kv->size() != 1)
      return nc.error() << "k must be a scalar";
    k = (*kv)[0];
  }
  bool upper = nc.attrInt("upper", 1) != 0;
  int64_t rank = s.size();
  Type et = Importer::elemOf(x);
  Value r = imp.generic(
      nc.loc, {x}, s, et, [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value i = linalg::IndexOp::create(bb, l, rank - 2);
        Value j = linalg::IndexOp::create(bb, l, rank - 1);
        Value diff = arith::SubIOp::create(bb, l, j, i);
        Value kc = arith::ConstantIndexOp::create(bb, l, k);
        Value keep = arith::CmpIOp::create(
            bb, l, upper ? arith::CmpIPredicate::sge : arith::CmpIPredicate::sle,
            diff, kc);
        Value zero = arith::ConstantOp::create(
            bb, l, isa<FloatType>(et) ? TypedAttr(bb.getFloatAttr(et, 0))
                                      : TypedAttr(bb.getIntegerAttr(et, 0)));
        return arith::SelectOp::create(bb, l, keep, a[0], zero);
      });
  nc.results.push_back(r);
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra and normalisation
//===----------------------------------------------------------------------===//

static LogicalResult importMatMul(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  if (Importer::shapeOf(nc.in(0)).empty() || Importer::shapeOf(nc.in(1)).empty())
    return nc.error() << "operands must have rank >= 1";
  Value r = nc.imp.matmul(nc, nc.in(0), nc.in(1));
  if (!r)
    return failure();
  nc.results.push_back(r);
  return success();
}

static LogicalResult importGemm(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value a = nc.in(0), bm = nc.in(1);
  if (Importer::shapeOf(a).size() != 2 || Importer::shapeOf(bm).size() != 2)
    return nc.error() << "A and B must be 2-D, got " << a.getType() << " and "
                      << bm.getType();
  if (nc.attrInt("transA", 0))
    a = imp.transpose(nc.loc, a, {1, 0});
  if (nc.attrInt("transB", 0))
    bm = imp.transpose(nc.loc, bm, {1, 0});
  Value r = imp.matmul(nc, a, bm);
  if (!r)
    return failure();
  Type et = Importer::elemOf(r);
  float alpha = nc.attrFloat("alpha", 1.0f), beta = nc.attrFloat("beta", 1.0f);
  if (alpha != 1.0f) {
    auto m = imp.elementwise(nc, EwKind::Mul, {r, scalarTensor(nc, et, alpha)});
    if (failed(m))
      return failure();
    r = *m;
  }
  if (Value c = nc.in(2); c && beta != 0.0f) {
    if (beta != 1.0f) {
      auto m = imp.elementwise(nc, EwKind::Mul, {c, scalarTensor(nc, et, beta)});
      if (failed(m))
        return failure();
      c = *m;
    }
    auto s = imp.elementwise(nc, EwKind::Add, {r, c});
    if (failed(s))
      return failure();
    r = *s;
  }
  nc.results.push_back(r);
  return success();
}

static LogicalResult importSoftmax(NodeContext &nc, bool isLog) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  if (!isa<FloatType>(Importer::elemOf(x)))
    return nc.error() << "expects a floating-point input";
  FailureOr<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", -1), Importer::shapeOf(x).size());
  if (failed(axis))
    return failure();
  // Subtracting the row max keeps exp() in range.
  Value m = imp.reduceKeepDims(nc.loc, x, {*axis}, Importer::ReduceKind::Max);
  auto shifted = imp.elementwise(nc, EwKind::Sub, {x, m});
  if (failed(shifted))
    return failure();
  auto e = imp.elementwise(nc, EwKind::Exp, {*shifted});
  if (failed(e))
    return failure();
  Value sum = imp.reduceKeepDims(nc.loc, *e, {*axis}, Importer::ReduceKind::Sum);
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

/// Element-wise steps around a Sum reduction for the composite Reduce ops.
enum class ReduceVariant { Plain, SumSquare, L1, L2, LogSum, LogSumExp };

static LogicalResult importReduce(NodeContext &nc, Importer::ReduceKind kind,
                                  bool mean, int64_t axesInputSince,
                                  ReduceVariant variant = ReduceVariant::Plain) {
  if (failed(checkArity(nc, 1, 2)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  auto axesOr = axesOf(nc, axesInputSince);
  if (failed(axesOr))
    return failure();
  SmallVector<int64_t> axes;
  if (*axesOr && !(*axesOr)->empty()) {
    auto n = normAxes(nc, **axesOr, s.size());
    if (failed(n))
      return failure();
    axes = *n;
  } else if (nc.attrInt("noop_with_empty_axes", 0)) {
    if (variant != ReduceVariant::Plain)
      return nc.error() << "noop_with_empty_axes is not supported for "
                        << nc.opType();
    nc.results.push_back(x);
    return success();
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, s.size()));
  }
  // Before the sum: x*x (SumSquare, L2), |x| (L1), exp(x) (LogSumExp).
  FailureOr<Value> pre = x;
  if (variant == ReduceVariant::SumSquare || variant == ReduceVariant::L2)
    pre = imp.elementwise(nc, EwKind::Mul, {x, x});
  else if (variant == ReduceVariant::L1)
    pre = imp.elementwise(nc, EwKind::Abs, {x});
  else if (variant == ReduceVariant::LogSumExp)
    pre = imp.elementwise(nc, EwKind::Exp, {x});
  if (failed(pre))
    return failure();
  bool keep = nc.attrInt("keepdims", 1) != 0;
  Value r = keep ? imp.reduceKeepDims(nc.loc, *pre, axes, kind)
                 : imp.reduce(nc.loc, *pre, axes, kind);
  // After it: sqrt (L2), log (LogSum, LogSumExp).
  FailureOr<Value> post = r;
  if (variant == ReduceVariant::L2)
    post = imp.elementwise(nc, EwKind::Sqrt, {r});
  else if (variant == ReduceVariant::LogSum ||
           variant == ReduceVariant::LogSumExp)
    post = imp.elementwise(nc, EwKind::Log, {r});
  if (failed(post))
    return failure();
  r = *post;
  if (mean) {
    int64_t count = 1;
    for (int64_t a : axes)
      count *= s[a];
    auto m = imp.elementwise(
        nc, EwKind::Div, {r, scalarTensor(nc, Importer::elemOf(x), count)});
    if (failed(m))
      return failure();
    r = *m;
  }
  nc.results.push_back(r);
  return success();
}

/// ArgMax/ArgMin: one reduction generic carrying (best value, its index);
/// ties keep the first index, or the last with select_last_index.
static LogicalResult importArgExtreme(NodeContext &nc, bool isMax,
                                      int64_t defaultAxis = 0) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Importer &imp = nc.imp;
  OpBuilder &b = imp.b;
  Value x = nc.in(0);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  int64_t rank = s.size();
  if (rank == 0)
    return nc.error() << "input must have rank >= 1";
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", defaultAxis), rank);
  if (failed(axis))
    return failure();
  if (s[*axis] == 0)
    return nc.error() << "cannot reduce an empty axis";
  bool keep = nc.attrInt("keepdims", 1) != 0;
  bool last = nc.attrInt("select_last_index", 0) != 0;
  Type et = Importer::elemOf(x);
  bool f = isa<FloatType>(et), u = imp.isUnsigned(x);
  if (!f && et.isInteger(1))
    return nc.error() << "bool input is not supported";

  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    iters.push_back(d == *axis ? utils::IteratorType::reduction
                               : utils::IteratorType::parallel);
    if (d != *axis) {
      outShape.push_back(s[d]);
      outExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  TypedAttr init;
  if (auto ft = dyn_cast<FloatType>(et)) {
    init = b.getFloatAttr(ft, APFloat::getInf(ft.getFloatSemantics(), isMax));
  } else {
    unsigned w = et.getIntOrFloatBitWidth();
    APInt v = isMax ? (u ? APInt::getMinValue(w) : APInt::getSignedMinValue(w))
                    : (u ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w));
    init = b.getIntegerAttr(et, v);
  }
  Value accV = imp.filled(nc.loc, outShape, init);
  Value accI = imp.filled(nc.loc, outShape, b.getI64IntegerAttr(0));
  AffineMap outMap = AffineMap::get(rank, 0, outExprs, imp.ctx);
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank), outMap, outMap};
  int64_t ax = *axis;
  auto op = linalg::GenericOp::create(
      b, nc.loc, TypeRange{accV.getType(), accI.getType()}, ValueRange{x},
      ValueRange{accV, accI}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange a) {
        Value cur = a[0], best = a[1], bestI = a[2];
        Value i = arith::IndexCastOp::create(
            bb, l, bb.getI64Type(), linalg::IndexOp::create(bb, l, ax));
        Value better;
        if (f) {
          arith::CmpFPredicate p =
              isMax ? (last ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OGT)
                    : (last ? arith::CmpFPredicate::OLE : arith::CmpFPredicate::OLT);
          better = arith::CmpFOp::create(bb, l, p, cur, best);
        } else {
          using P = arith::CmpIPredicate;
          P p = isMax ? (last ? (u ? P::uge : P::sge) : (u ? P::ugt : P::sgt))
                      : (last ? (u ? P::ule : P::sle) : (u ? P::ult : P::slt));
          better = arith::CmpIOp::create(bb, l, p, cur, best);
        }
        // The first element always wins, so that an all -inf (or all
        // integer-min) row still gets the right index.
        Value zero = arith::ConstantIntOp::create(bb, l, bb.getI64Type(), 0);
        Value first = arith::CmpIOp::create(bb, l, arith::CmpIPredicate::eq, i, zero);
        better = arith::OrIOp::create(bb, l, better, first);
        Value v = arith::SelectOp::create(bb, l, better, cur, best);
        Value vi = arith::SelectOp::create(bb, l, better, i, bestI);
        linalg::YieldOp::create(bb, l, ValueRange{v, vi});
      });
  Value r = op.getResult(1);
  if (keep) {
    SmallVector<int64_t> kept = llvm::to_vector(s);
    kept[ax] = 1;
    r = imp.reshape(nc.loc, r, kept);
  }
  nc.results.push_back(r);
  return success();
}

static LogicalResult importConv(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0), w = nc.in(1);
  ArrayRef<int64_t> xs = Importer::shapeOf(x), ws = Importer::shapeOf(w);
  if (xs.size() != 4 || ws.size() != 4)
    return nc.error() << "only 2-D convolution (NCHW input, FCHW weights) is "
                         "supported, got "
                      << x.getType() << " and " << w.getType();
  if (nc.attrInt("group", 1) != 1)
    return nc.error() << "unsupported group " << nc.attrInt("group", 1)
                      << " (only 1)";
  if (ws[1] != xs[1])
    return nc.error() << "weight channels " << ws[1]
                      << " do not match input channels " << xs[1];
  SmallVector<int64_t> strides = nc.attrInts("strides").value_or(SmallVector<int64_t>{1, 1});
  SmallVector<int64_t> dil = nc.attrInts("dilations").value_or(SmallVector<int64_t>{1, 1});
  SmallVector<int64_t> pads = nc.attrInts("pads").value_or(SmallVector<int64_t>{0, 0, 0, 0});
  if (strides.size() != 2 || dil.size() != 2 || pads.size() != 4)
    return nc.error() << "strides/dilations/pads have the wrong length";
  // A zero stride divided by zero below; a zero dilation built a convolution
  // that does not verify; negative dilations or pads made the generated code
  // address the input out of bounds (found by fuzzing).
  if (llvm::any_of(strides, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(dil, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(pads, [](int64_t v) { return v < 0; }))
    return nc.error() << "strides and dilations must be positive and pads "
                         "non-negative";
  if (auto ks = nc.attrInts("kernel_shape");
      ks && (ks->size() != 2 || (*ks)[0] != ws[2] || (*ks)[1] != ws[3]))
    return nc.error() << "kernel_shape does not match the weights";
  if (nc.in(2) && Importer::shapeOf(nc.in(2)) != ArrayRef<int64_t>{ws[0]})
    return nc.error() << "bias has shape " << dims(Importer::shapeOf(nc.in(2)))
                      << ", expected [" << ws[0] << "] (one per output channel)";
  std::string autoPad = nc.attrString("auto_pad", "NOTSET");
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t in = xs[2 + i], out = (in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[i] + dil[i] * (ws[2 + i] - 1) + 1 - in);
      int64_t small = total / 2, big = total - small;
      pads[i] = autoPad == "SAME_UPPER" ? small : big;
      pads[i + 2] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else if (autoPad == "VALID") {
    pads.assign(4, 0);
  } else if (autoPad != "NOTSET") {
    return nc.error() << "unsupported auto_pad '" << autoPad << "'";
  }
  Type et = Importer::elemOf(x);
  if (llvm::any_of(pads, [](int64_t p) { return p != 0; })) {
    SmallVector<int64_t> padded = llvm::to_vector(xs);
    padded[2] += pads[0] + pads[2];
    padded[3] += pads[1] + pads[3];
    auto idx = [&](int64_t v) -> OpFoldResult { return imp.b.getIndexAttr(v); };
    SmallVector<OpFoldResult> lo{idx(0), idx(0), idx(pads[0]), idx(pads[1])};
    SmallVector<OpFoldResult> hi{idx(0), idx(0), idx(pads[2]), idx(pads[3])};
    Value zero = imp.scalarConst(nc.loc, et, 0.0);
    x = tensor::PadOp::create(imp.b, nc.loc, RankedTensorType::get(padded, et),
                              x, lo, hi, zero);
    xs = Importer::shapeOf(x);
  }
  SmallVector<int64_t> outShape{xs[0], ws[0]};
  for (int i = 0; i < 2; ++i) {
    int64_t o = (xs[2 + i] - dil[i] * (ws[2 + i] - 1) - 1) / strides[i] + 1;
    if (o <= 0)
      return nc.error() << "kernel larger than the padded input";
    outShape.push_back(o);
  }
  TypedAttr zero = imp.b.getFloatAttr(et, 0.0);
  Value acc = imp.filled(nc.loc, outShape, zero);
  auto i64x2 = RankedTensorType::get({2}, imp.b.getI64Type());
  Value r = linalg::Conv2DNchwFchwOp::create(
                imp.b, nc.loc, TypeRange{acc.getType()}, ValueRange{x, w},
                ValueRange{acc}, DenseIntElementsAttr::get(i64x2, strides),
                DenseIntElementsAttr::get(i64x2, dil))
                .getResult(0);
  if (Value bias = nc.in(2)) {
    Value b4 = imp.reshape(nc.loc, bias, {1, ws[0], 1, 1});
    auto s = imp.elementwise(nc, EwKind::Add, {r, b4});
    if (failed(s))
      return failure();
    r = *s;
  }
  nc.results.push_back(r);
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization
//===----------------------------------------------------------------------===//

/// The scale and zero point of QuantizeLinear/DequantizeLinear, checked
/// against the input shape `s`, with the indexing map that reads them from
/// the iteration space of the input:
///   per-tensor  scalar (or one element)        -> rank 0, map ()
///   per-axis    1-D [s[axis]]                  -> map (d_axis)
///   blocked     rank of x, s[axis] replaced by -> map (.., d_axis floordiv B, ..)
///               ceil(s[axis] / B) (opset 21, block_size = B; the last block
///               may be partial)
/// A zero point, when given, must have the scale's shape.
static LogicalResult quantOperands(NodeContext &nc, ArrayRef<int64_t> s,
                                   Value scale, Value zp,
                                   SmallVectorImpl<Value> &ins,
                                   SmallVectorImpl<AffineMap> &maps) {
  Importer &imp = nc.imp;
  int64_t rank = s.size();
  ArrayRef<int64_t> ss = Importer::shapeOf(scale);
  if (zp && Importer::shapeOf(zp) != ss)
    return nc.error() << "zero point shape " << dims(Importer::shapeOf(zp))
                      << " differs from scale shape " << dims(ss);
  int64_t block = nc.attrInt("block_size", 0);
  if (block < 0)
    return nc.error() << "block_size must be positive, got " << block;
  SmallVector<Value> operands{scale};
  if (zp)
    operands.push_back(zp);

  if (block > 0) {
    if (imp.opset < 21)
      return nc.error() << "blocked quantization (block_size) needs opset 21, "
                           "the model has opset "
                        << imp.opset;
    if (static_cast<int64_t>(ss.size()) != rank)
      return nc.error() << "blocked quantization: scale has rank " << ss.size()
                        << " but the input has rank " << rank;
    FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 1), rank);
    if (failed(axis))
      return failure();
    SmallVector<int64_t> expected = llvm::to_vector(s);
    expected[*axis] = (s[*axis] + block - 1) / block;
    if (ss != ArrayRef<int64_t>(expected))
      return nc.error() << "blocked quantization: scale shape " << dims(ss)
                        << " does not match " << dims(expected) << " (input "
                        << dims(s) << ", axis " << *axis << ", block_size "
                        << block << ")";
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < rank; ++d)
      exprs.push_back(d == *axis ? imp.b.getAffineDimExpr(d).floorDiv(block)
                                 : imp.b.getAffineDimExpr(d));
    for (Value v : operands) {
      ins.push_back(v);
      maps.push_back(AffineMap::get(rank, 0, exprs, imp.ctx));
    }
    return success();
  }

  if (ss.empty() || (ss.size() == 1 && ss[0] == 1)) {
    for (Value v : operands) {
      ins.push_back(imp.reshape(nc.loc, v, {}));
      maps.push_back(AffineMap::get(rank, 0, {}, imp.ctx));
    }
    return success();
  }
  if (ss.size() != 1)
    return nc.error() << "scale has rank " << ss.size()
                      << ": blocked quantization needs the block_size "
                         "attribute, per-axis a 1-D scale";
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 1), rank);
  if (failed(axis))
    return failure();
  if (ss[0] != s[*axis])
    return nc.error() << "scale has " << ss[0]
                      << " elements but the quantization axis " << *axis
                      << " has " << s[*axis];
  for (Value v : operands) {
    ins.push_back(v);
    maps.push_back(AffineMap::get(rank, 0, imp.b.getAffineDimExpr(*axis)));
  }
  return success();
}

/// A linalg.generic over the shape of `ins[0]` (identity map) reading the
/// other inputs through `maps`.
static Value quantGeneric(
    Importer &imp, Location loc, ArrayRef<Value> ins, ArrayRef<AffineMap> maps,
    Type outElem, function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  ArrayRef<int64_t> s = Importer::shapeOf(ins[0]);
  int64_t rank = s.size();
  SmallVector<AffineMap> all{imp.b.getMultiDimIdentityMap(rank)};
  llvm::append_range(all, maps);
  all.push_back(imp.b.getMultiDimIdentityMap(rank));
  Value init = imp.emptyTensor(loc, s, outElem);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             imp.b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, all,
             iters,
             [&](OpBuilder &bb, Location l, ValueRange a) {
               linalg::YieldOp::create(bb, l, body(bb, l, a.drop_back()));
             })
      .getResult(0);
}

/// A float8 zero point must be (a constant) zero: the reference
/// implementation does not apply it.
static LogicalResult checkFloat8ZeroPoint(NodeContext &nc, Value zp) {
  if (!zp || !isFloat8(Importer::elemOf(zp)))
    return success();
  std::optional<Lit> z = nc.imp.getLit(zp);
  if (!z)
    return nc.error() << "a float8 zero point must be a constant";
  if (llvm::any_of(z->floats, [](double d) { return d != 0.0; }))
    return nc.error() << "a float8 zero point must be zero";
  return success();
}

/// QuantizeLinear (opsets 13, 19, 21): y = saturate(round(x / scale) + zp)
/// for integers (round half to even, clamp to the type's range); float8:
/// y = cast(x / scale) with the `saturate` attribute (Cast's table).
static LogicalResult importQuantizeLinear(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0), scale = nc.in(1), zp = nc.in(2);
  Type xt = Importer::elemOf(x);
  if (!isa<FloatType>(xt))
    return nc.error() << "input must be floating point";
  if (!isa<FloatType>(Importer::elemOf(scale)))
    return nc.error() << "scale must be floating point";
  Type qt;
  bool qUns;
  int outDt = nc.attrInt("output_dtype", 0);
  if (zp) {
    qt = Importer::elemOf(zp);
    qUns = imp.isUnsigned(zp);
    if (outDt && (imp.elementType(outDt) != qt ||
                  Importer::isUnsignedONNXType(outDt) != qUns))
      return nc.error() << "output_dtype " << Importer::onnxTypeName(outDt)
                        << " differs from the zero point's type "
                        << (isa<IntegerType>(qt)
                                ? (qUns ? "UINT" : "INT") +
                                      std::to_string(qt.getIntOrFloatBitWidth())
                                : [&] {
                                    std::string str;
                                    llvm::raw_string_ostream(str) << qt;
                                    return str;
                                  }());
  } else if (outDt) {
    qt = imp.elementType(outDt);
    qUns = Importer::isUnsignedONNXType(outDt);
    if (!qt)
      return nc.error() << "unsupported quantized type "
                        << Importer::onnxTypeName(outDt);
  } else {
    qt = imp.b.getI8Type();
    qUns = true;
  }
  bool fp8 = isFloat8(qt);
  if (!fp8 && !(isa<IntegerType>(qt) && qt.getIntOrFloatBitWidth() <= 16 &&
                !qt.isInteger(1)))
    return nc.error() << "unsupported quantized type " << qt;
  if (failed(checkFloat8ZeroPoint(nc, zp)))
    return failure();
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  SmallVector<Value> ins{x};
  SmallVector<AffineMap> maps;
  if (failed(quantOperands(nc, s, scale, fp8 ? Value() : zp, ins, maps)))
    return failure();
  bool saturate = nc.attrInt("saturate", 1) != 0;
  unsigned w = qt.getIntOrFloatBitWidth();
  double qmin = fp8 ? 0 : (qUns ? 0.0 : -std::ldexp(1.0, w - 1));
  double qmax = fp8 ? 0 : (qUns ? std::ldexp(1.0, w) - 1 : std::ldexp(1.0, w - 1) - 1);
  Value r = quantGeneric(
      imp, nc.loc, ins, maps, qt,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value sv = Importer::castScalar(bb, l, a[1], false, xt, false);
        Value v = arith::DivFOp::create(bb, l, a[0], sv);
        if (fp8)
          return toFloat8(bb, l, v, qt, saturate);
        auto cst = [&](double d) {
          return arith::ConstantOp::create(bb, l, bb.getFloatAttr(xt, d));
        };
        v = math::RoundEvenOp::create(bb, l, v);
        if (a.size() > 2)
          v = arith::AddFOp::create(
              bb, l, v, Importer::castScalar(bb, l, a[2], qUns, xt, false));
        v = arith::MinimumFOp::create(
            bb, l, arith::MaximumFOp::create(bb, l, v, cst(qmin)), cst(qmax));
        return Importer::castScalar(bb, l, v, false, qt, qUns);
      });
  if (qUns)
    imp.unsignedValues.insert(r);
  nc.results.push_back(r);
  return success();
}

/// DequantizeLinear (opsets 13, 19, 21): y = (x - zp) * scale, in the
/// scale's type; float8 inputs are widened exactly.
static LogicalResult importDequantizeLinear(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0), scale = nc.in(1), zp = nc.in(2);
  Type ft = Importer::elemOf(scale);
  if (!isa<FloatType>(ft))
    return nc.error() << "scale must be floating point";
  Type xt = Importer::elemOf(x);
  if (!isFloat8(xt) && !(isa<IntegerType>(xt) && !xt.isInteger(1)))
    return nc.error() << "unsupported quantized input type " << xt;
  if (zp && Importer::elemOf(zp) != xt)
    return nc.error() << "zero point type " << Importer::elemOf(zp)
                      << " differs from the input type " << xt;
  if (failed(checkFloat8ZeroPoint(nc, zp)))
    return failure();
  bool xUns = imp.isUnsigned(x);
  bool fp8 = isFloat8(xt);
  SmallVector<Value> ins{x};
  SmallVector<AffineMap> maps;
  if (failed(quantOperands(nc, Importer::shapeOf(x), scale,
                           fp8 ? Value() : zp, ins, maps)))
    return failure();
  bool zpUns = zp && imp.isUnsigned(zp);
  Value r = quantGeneric(
      imp, nc.loc, ins, maps, ft,
      [&](OpBuilder &bb, Location l, ValueRange a) -> Value {
        Value v = Importer::castScalar(bb, l, a[0], xUns, ft, false);
        if (a.size() > 2)
          v = arith::SubFOp::create(
              bb, l, v, Importer::castScalar(bb, l, a[2], zpUns, ft, false));
        return arith::MulFOp::create(bb, l, v, a[1]);
      });
  nc.results.push_back(r);
  return success();
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

/// NegativeLogLikelihoodLoss (opsets 12, 13): input [N, C, d...] (log
/// probabilities), target [N, d...] (class indices), optional weight [C].
/// Per element l = -input[n, t, d...] * w[t] (w = 1 without weights), and
/// 0 with weight 0 where t == ignore_index; reduction "none" returns l,
/// "sum" its sum, "mean" the sum over the sum of the elements' weights
/// (NaN when every target is ignored, as the reference computes). One
/// linalg.generic over [N, d...] yields l and the weights; a target out of
/// [0, C) that is not ignore_index reads a clamped class (no out-of-bounds
/// read).
static LogicalResult negativeLogLikelihood(NodeContext &nc, Value input,
                                           Value target, Value weight) {
  Importer &imp = nc.imp;
  ArrayRef<int64_t> s = Importer::shapeOf(input), ts = Importer::shapeOf(target);
  Type et = Importer::elemOf(input);
  if (!isa<FloatType>(et))
    return nc.error() << "expects floating-point input, got " << et;
  if (!isa<IntegerType>(Importer::elemOf(target)) ||
      Importer::elemOf(target).isInteger(1))
    return nc.error() << "target must be integers, got " << target.getType();
  if (s.size() < 2 || ts.size() + 1 != s.size() || ts[0] != s[0] ||
      ts.drop_front() != s.drop_front(2))
    return nc.error() << "target must have the input's shape without its "
                         "class dimension";
  const int64_t classes = s[1];
  if (weight && (Importer::shapeOf(weight) != ArrayRef<int64_t>{classes} ||
                 Importer::elemOf(weight) != et))
    return nc.error() << "weight must be [" << classes << "] of " << et;
  std::string reduction = nc.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return nc.error() << "unknown reduction '" << reduction << "'";
  const onnx::AttributeProto *ignoreAttr = nc.attr("ignore_index");
  std::optional<int64_t> ignore;
  if (ignoreAttr)
    ignore = ignoreAttr->i();
  if (classes == 0)
    return nc.error() << "has no classes";

  const int64_t rank = ts.size();
  bool unsignedIdx = imp.isUnsigned(target);
  Value lossInit = imp.emptyTensor(nc.loc, ts, et);
  Value weightInit = imp.emptyTensor(nc.loc, ts, et);
  SmallVector<AffineMap> maps(3, imp.b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      imp.b, nc.loc, TypeRange{lossInit.getType(), weightInit.getType()},
      ValueRange{target}, ValueRange{lossInit, weightInit}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange a) {
        Value t = a[0];
        Value cls = safeIndex(bb, l, t, classes, unsignedIdx);
        SmallVector<Value> coords{linalg::IndexOp::create(bb, l, 0), cls};
        for (int64_t d = 1; d < rank; ++d)
          coords.push_back(linalg::IndexOp::create(bb, l, d));
        Value x = tensor::ExtractOp::create(bb, l, input, coords);
        auto fc = [&](double v) {
          return arith::ConstantOp::create(bb, l, bb.getFloatAttr(et, v));
        };
        Value w = weight ? Value(tensor::ExtractOp::create(bb, l, weight,
                                                           ValueRange{cls}))
                         : Value(fc(1.0));
        if (ignore) {
          Value ig = arith::ConstantOp::create(
              bb, l, bb.getIntegerAttr(t.getType(), *ignore));
          Value isIgnored = arith::CmpIOp::create(
              bb, l, arith::CmpIPredicate::eq, t, ig);
          w = arith::SelectOp::create(bb, l, isIgnored, fc(0.0), w);
        }
        Value loss = arith::NegFOp::create(
            bb, l, arith::MulFOp::create(bb, l, x, w));
        linalg::YieldOp::create(bb, l, ValueRange{loss, w});
      });
  Value loss = generic.getResult(0), weights = generic.getResult(1);
  if (reduction == "none") {
    nc.results.push_back(loss);
    return success();
  }
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  Value sum = imp.reduce(nc.loc, loss, all, Importer::ReduceKind::Sum);
  if (reduction == "mean") {
    Value total = imp.reduce(nc.loc, weights, all, Importer::ReduceKind::Sum);
    FailureOr<Value> mean = imp.elementwise(nc, EwKind::Div, {sum, total});
    if (failed(mean))
      return failure();
    sum = *mean;
  }
  nc.results.push_back(sum);
  return success();
}

static LogicalResult importNegativeLogLikelihoodLoss(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  return negativeLogLikelihood(nc, nc.in(0), nc.in(1), nc.in(2));
}

/// SoftmaxCrossEntropyLoss (opsets 12, 13): log_prob = log softmax of the
/// scores along the class axis 1 (x - max - log sum exp(x - max)), then
/// NegativeLogLikelihoodLoss of log_prob with the same target, weight,
/// reduction and ignore_index; the optional second output is log_prob.
static LogicalResult importSoftmaxCrossEntropyLoss(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 3)))
    return failure();
  Importer &imp = nc.imp;
  Value scores = nc.in(0);
  if (!isa<FloatType>(Importer::elemOf(scores)))
    return nc.error() << "expects floating-point scores, got "
                      << Importer::elemOf(scores);
  if (Importer::shapeOf(scores).size() < 2)
    return nc.error() << "scores must be [N, C, ...]";
  auto ew = [&](EwKind k, ArrayRef<Value> ins) { return imp.elementwise(nc, k, ins); };
  Value max = imp.reduceKeepDims(nc.loc, scores, {1}, Importer::ReduceKind::Max);
  FailureOr<Value> shifted = ew(EwKind::Sub, {scores, max});
  if (failed(shifted))
    return failure();
  FailureOr<Value> e = ew(EwKind::Exp, {*shifted});
  if (failed(e))
    return failure();
  Value sum = imp.reduceKeepDims(nc.loc, *e, {1}, Importer::ReduceKind::Sum);
  FailureOr<Value> logSum = ew(EwKind::Log, {sum});
  if (failed(logSum))
    return failure();
  FailureOr<Value> logProb = ew(EwKind::Sub, {*shifted, *logSum});
  if (failed(logProb) ||
      failed(negativeLogLikelihood(nc, *logProb, nc.in(1), nc.in(2))))
    return failure();
  if (nc.node.output_size() > 1)
    nc.results.push_back(*logProb);
  return success();
}

namespace {

/// Builds activations that ONNX defines with attributes from element-wise
/// pieces (each one linalg.generic; later fusion merges them): `x` is the
/// float input, `c(v)` a scalar constant of its type, `ew` one element-wise
/// op.
class Composer {
public:
  explicit Composer(NodeContext &nc) : nc(nc) {}
  LogicalResult init() {
    x = nc.in(0);
    if (!x)
      return nc.error() << "expects an input";
    if (!isa<FloatType>(Importer::elemOf(x)))
      return nc.error() << "expects floating-point input, got "
                        << Importer::elemOf(x);
    return success();
  }
  Value c(double v) { return scalarTensor(nc, Importer::elemOf(x), v); }
  Value ew(EwKind k, ArrayRef<Value> ins) {
    if (failed(status))
      return {};
    FailureOr<Value> r = nc.imp.elementwise(nc, k, ins);
    if (failed(r)) {
      status = failure();
      return {};
    }
    return *r;
  }
  LogicalResult finish(Value result) {
    if (failed(status))
      return failure();
    nc.results.push_back(result);
    return success();
  }

  NodeContext &nc;
  Value x;
  LogicalResult status = success();
};

/// A handler from `body(composer)`, which returns the result.
Handler composed(std::function<Value(Composer &)> body) {
  return [body](NodeContext &nc) -> LogicalResult {
    Composer cp(nc);
    if (failed(cp.init()))
      return failure();
    Value r = body(cp);
    return cp.finish(r);
  };
}

} // namespace

void onnx_import::registerHandlers(llvm::StringMap<Handler> &t) {
  using RK = Importer::ReduceKind;
  struct Ew {
    const char *name;
    EwKind kind;
    size_t arity;
  };
  for (Ew e : std::initializer_list<Ew>{
           {"Add", EwKind::Add, 2},
           {"Sub", EwKind::Sub, 2},
           {"Mul", EwKind::Mul, 2},
           {"Div", EwKind::Div, 2},
           {"Pow", EwKind::Pow, 2},
           {"Neg", EwKind::Neg, 1},
           {"Abs", EwKind::Abs, 1},
           {"Sqrt", EwKind::Sqrt, 1},
           {"Reciprocal", EwKind::Reciprocal, 1},
           {"Erf", EwKind::Erf, 1},
           {"Tanh", EwKind::Tanh, 1},
           {"Sigmoid", EwKind::Sigmoid, 1},
           {"Relu", EwKind::Relu, 1},
           {"Exp", EwKind::Exp, 1},
           {"Log", EwKind::Log, 1},
           {"Floor", EwKind::Floor, 1},
           {"Ceil", EwKind::Ceil, 1},
           {"Sin", EwKind::Sin, 1},
           {"Cos", EwKind::Cos, 1},
           {"Tan", EwKind::Tan, 1},
           {"Asin", EwKind::Asin, 1},
           {"Acos", EwKind::Acos, 1},
           {"Atan", EwKind::Atan, 1},
           {"Sinh", EwKind::Sinh, 1},
           {"Cosh", EwKind::Cosh, 1},
           {"Asinh", EwKind::Asinh, 1},
           {"Acosh", EwKind::Acosh, 1},
           {"Atanh", EwKind::Atanh, 1},
           {"Round", EwKind::Round, 1},
           {"Softsign", EwKind::Softsign, 1},
           {"Equal", EwKind::Equal, 2},
           {"Greater", EwKind::Greater, 2},
           {"GreaterOrEqual", EwKind::GreaterOrEqual, 2},
           {"Less", EwKind::Less, 2},
           {"LessOrEqual", EwKind::LessOrEqual, 2},
           {"And", EwKind::And, 2},
           {"Or", EwKind::Or, 2},
           {"Xor", EwKind::Xor, 2},
           {"Not", EwKind::Not, 1},
           {"Where", EwKind::Where, 3},
       })
    t[e.name] = elementwiseHandler(e.kind, e.arity);
  // Activations with attributes (opset 6+ definitions), as compositions.
  using K = EwKind;
  t["LeakyRelu"] = composed([](Composer &p) { // x < 0 ? alpha x : x
    Value x = p.x;
    return p.ew(K::Where, {p.ew(K::Less, {x, p.c(0)}),
                           p.ew(K::Mul, {x, p.c(p.nc.attrFloat("alpha", 0.01f))}),
                           x});
  });
  t["ThresholdedRelu"] = composed([](Composer &p) { // x > alpha ? x : 0
    Value x = p.x;
    return p.ew(K::Where,
                {p.ew(K::Greater, {x, p.c(p.nc.attrFloat("alpha", 1.0f))}), x,
                 p.c(0)});
  });
  t["HardSigmoid"] = composed([](Composer &p) { // max(0, min(1, a x + b))
    Value y = p.ew(K::Add, {p.ew(K::Mul, {p.x, p.c(p.nc.attrFloat("alpha", 0.2f))}),
                            p.c(p.nc.attrFloat("beta", 0.5f))});
    return p.ew(K::Max, {p.c(0), p.ew(K::Min, {p.c(1), y})});
  });
  t["HardSwish"] = composed([](Composer &p) { // x max(0, min(1, x / 6 + 1/2))
    Value y = p.ew(K::Add, {p.ew(K::Mul, {p.x, p.c(1.0 / 6.0)}), p.c(0.5)});
    return p.ew(K::Mul,
                {p.x, p.ew(K::Max, {p.c(0), p.ew(K::Min, {p.c(1), y})})});
  });
  // Elu: x < 0 ? alpha (exp(x) - 1) : x; Selu: gamma times Elu(alpha).
  auto elu = [](Composer &p, double alpha) {
    Value x = p.x;
    Value neg = p.ew(K::Mul, {p.c(alpha), p.ew(K::Sub, {p.ew(K::Exp, {x}), p.c(1)})});
    return p.ew(K::Where, {p.ew(K::Less, {x, p.c(0)}), neg, x});
  };
  t["Elu"] = composed([elu](Composer &p) {
    return elu(p, p.nc.attrFloat("alpha", 1.0f));
  });
  t["Selu"] = composed([elu](Composer &p) {
    return p.ew(K::Mul, {p.c(p.nc.attrFloat("gamma", 1.05070102214813232421875f)),
                         elu(p, p.nc.attrFloat("alpha", 1.67326319217681884765625f))});
  });
  t["Celu"] = composed([](Composer &p) { // max(0,x) + min(0, a (exp(x/a) - 1))
    const double a = p.nc.attrFloat("alpha", 1.0f);
    Value x = p.x;
    Value e = p.ew(K::Mul, {p.c(a), p.ew(K::Sub, {p.ew(K::Exp, {p.ew(K::Div, {x, p.c(a)})}),
                                                  p.c(1)})});
    return p.ew(K::Add, {p.ew(K::Max, {p.c(0), x}), p.ew(K::Min, {p.c(0), e})});
  });
  t["Shrink"] = composed([](Composer &p) {
    // x < -lambd ? x + bias : (x > lambd ? x - bias : 0)
    const double l = p.nc.attrFloat("lambd", 0.5f), b = p.nc.attrFloat("bias", 0.0f);
    Value x = p.x;
    Value upper = p.ew(K::Where, {p.ew(K::Greater, {x, p.c(l)}),
                                  p.ew(K::Sub, {x, p.c(b)}), p.c(0)});
    return p.ew(K::Where, {p.ew(K::Less, {x, p.c(-l)}), p.ew(K::Add, {x, p.c(b)}),
                           upper});
  });
  t["PRelu"] = composed([](Composer &p) -> Value { // x < 0 ? slope x : x
    Value slope = p.nc.in(1);
    if (!slope) {
      p.status = p.nc.error() << "expects a slope input";
      return {};
    }
    Value x = p.x;
    return p.ew(K::Where, {p.ew(K::Less, {x, p.c(0)}), p.ew(K::Mul, {x, slope}), x});
  });
  t["Softplus"] = composed([](Composer &p) { // ln(exp(x) + 1)
    return p.ew(K::Log, {p.ew(K::Add, {p.ew(K::Exp, {p.x}), p.c(1)})});
  });
  t["GlobalAveragePool"] = [](NodeContext &nc) { return importGlobalPool(nc, false); };
  t["GlobalMaxPool"] = [](NodeContext &nc) { return importGlobalPool(nc, true); };
  t["DepthToSpace"] = [](NodeContext &nc) { return importDepthSpace(nc, true); };
  t["SpaceToDepth"] = [](NodeContext &nc) { return importDepthSpace(nc, false); };
  t["Tile"] = importTile;
  t["Hardmax"] = importHardmax;
  t["CumSum"] = importCumSum;
  t["Sign"] = importSign;
  t["EyeLike"] = importEyeLike;
  t["OneHot"] = importOneHot;
  t["NegativeLogLikelihoodLoss"] = importNegativeLogLikelihoodLoss;
  t["SoftmaxCrossEntropyLoss"] = importSoftmaxCrossEntropyLoss;
  t["Sum"] = variadicHandler(EwKind::Add);
  t["Mean"] = [](NodeContext &nc) -> LogicalResult {
    if (failed(variadicHandler(EwKind::Add)(nc)))
      return failure();
    Value sum = nc.results.pop_back_val();
    if (!isa<FloatType>(Importer::elemOf(sum)))
      return nc.error() << "expects floating-point inputs";
    auto r = nc.imp.elementwise(
        nc, EwKind::Div,
        {sum, scalarTensor(nc, Importer::elemOf(sum), nc.numInputs())});
    if (failed(r))
      return failure();
    nc.results.push_back(*r);
    return success();
  };
  t["Max"] = variadicHandler(EwKind::Max);
  t["Min"] = variadicHandler(EwKind::Min);
  t["Mod"] = [](NodeContext &nc) -> LogicalResult {
    if (nc.attrInt("fmod", 0) == 0 && nc.in(0) &&
        isa<FloatType>(Importer::elemOf(nc.in(0))))
      return nc.error() << "fmod=0 is only defined for integer inputs";
    // fmod=1 is C's fmod (sign of the dividend); fmod=0 takes the divisor's.
    return elementwiseHandler(nc.attrInt("fmod", 0) ? EwKind::FMod : EwKind::Mod,
                              2)(nc);
  };

  t["Constant"] = importConstant;
  t["ConstantOfShape"] = importConstantOfShape;
  t["Shape"] = importShape;
  t["Size"] = importSize;
  t["Range"] = importRange;
  t["Identity"] = importIdentity;
  t["Dropout"] = importDropout;
  t["Cast"] = importCast;
  t["CastLike"] = importCastLike;
  t["Clip"] = importClip;

  t["Reshape"] = importReshape;
  t["Flatten"] = importFlatten;
  t["Squeeze"] = importSqueeze;
  t["Unsqueeze"] = importUnsqueeze;
  t["Transpose"] = importTranspose;
  t["Expand"] = importExpand;
  t["Concat"] = importConcat;
  t["Split"] = importSplit;
  t["Slice"] = importSlice;
  t["Gather"] = importGather;
  t["GatherElements"] = importGatherElements;
  t["GatherND"] = importGatherND;
  t["IsNaN"] = [](NodeContext &nc) { return importFloatClass(nc, true); };
  t["IsInf"] = [](NodeContext &nc) { return importFloatClass(nc, false); };
  t["Gelu"] = importGelu;
  t["Trilu"] = importTrilu;

  t["MatMul"] = importMatMul;
  t["Gemm"] = importGemm;
  t["Conv"] = importConv;
  t["Softmax"] = [](NodeContext &nc) { return importSoftmax(nc, false); };
  t["LogSoftmax"] = [](NodeContext &nc) { return importSoftmax(nc, true); };
  t["LayerNormalization"] = importLayerNorm;
  t["ReduceSum"] = [](NodeContext &nc) { return importReduce(nc, RK::Sum, false, 13); };
  t["ReduceMean"] = [](NodeContext &nc) { return importReduce(nc, RK::Sum, true, 18); };
  t["ReduceMax"] = [](NodeContext &nc) { return importReduce(nc, RK::Max, false, 18); };
  t["ReduceMin"] = [](NodeContext &nc) { return importReduce(nc, RK::Min, false, 18); };
  t["ReduceProd"] = [](NodeContext &nc) { return importReduce(nc, RK::Prod, false, 18); };
  using RV = ReduceVariant;
  for (auto [name, v] : std::initializer_list<std::pair<const char *, RV>>{
           {"ReduceSumSquare", RV::SumSquare},
           {"ReduceL1", RV::L1},
           {"ReduceL2", RV::L2},
           {"ReduceLogSum", RV::LogSum},
           {"ReduceLogSumExp", RV::LogSumExp}})
    t[name] = [v = v](NodeContext &nc) {
      return importReduce(nc, RK::Sum, false, 18, v);
    };
  t["ArgMax"] = [](NodeContext &nc) { return importArgExtreme(nc, true); };
  t["ArgMin"] = [](NodeContext &nc) { return importArgExtreme(nc, false); };

  t["QuantizeLinear"] = importQuantizeLinear;
  t["DequantizeLinear"] = importDequantizeLinear;
}
