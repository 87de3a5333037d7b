//===- Generator.cpp - Constant-producing ONNX ops ------------------------===//
//
// Part of fp8-opt. Ops that make tensors from attributes and constant
// inputs: Constant, ConstantOfShape and Range (folded to constants, held to
// the constant budget), EyeLike.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

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
  std::optional<Lit> symShape = nc.imp.getSymLit(nc.in(0));
  FailureOr<SmallVector<int64_t>> shape =
      symShape && symShape->isSymbolic() ? SmallVector<int64_t>()
                                         : nc.constInts(0, "shape");
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
  if (symShape && symShape->isSymbolic()) {
    // A size computed from dynamic dimensions: a filled tensor.
    SymShape sizes(symShape->syms.begin(), symShape->syms.end());
    for (const SymExpr &e : sizes)
      if (!imp.symbols.provablyNonNegative(e))
        return nc.error() << "dimension " << imp.symbols.str(e)
                          << " may be negative at run time";
    Value v = imp.filled(nc.loc, sizes, cast<TypedAttr>(elt));
    if (uns)
      imp.unsignedValues.insert(v);
    nc.results.push_back(v);
    return success();
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

/// Range over a size computed from dynamic dimensions (integers, a
/// constant delta of 1 or -1): start + i * delta for i < |limit - start|,
/// a linalg.generic over the run-time length.
static LogicalResult importRangeDynamic(NodeContext &nc, const Lit &start,
                                        const Lit &limit, const Lit &delta) {
  Importer &imp = nc.imp;
  if (start.syms.size() != 1 || limit.syms.size() != 1 ||
      delta.syms.size() != 1)
    return nc.error() << "start, limit and delta must be scalars";
  std::optional<int64_t> d = delta.syms[0].getConstant();
  if (!d || (*d != 1 && *d != -1))
    return nc.error() << "a Range over a run-time size needs a constant "
                         "delta of 1 or -1";
  SymExpr count = imp.symbols.canonical(*d == 1 ? limit.syms[0] - start.syms[0]
                                                : start.syms[0] - limit.syms[0]);
  if (!imp.symbols.provablyNonNegative(count))
    return nc.error() << "Range of " << imp.symbols.str(count)
                      << " elements, which may be negative at run time";
  Type et = start.elemType;
  Value first = arith::IndexCastOp::create(
      imp.b, nc.loc, et, imp.symbols.materialize(imp.b, nc.loc, start.syms[0]));
  Value r = imp.generic(
      nc.loc, {}, SymShape{count}, et,
      [&](OpBuilder &bb, Location l, ValueRange) -> Value {
        Value i = arith::IndexCastOp::create(bb, l, et,
                                             linalg::IndexOp::create(bb, l, 0));
        return *d == 1 ? Value(arith::AddIOp::create(bb, l, first, i))
                       : Value(arith::SubIOp::create(bb, l, first, i));
      });
  nc.results.push_back(r);
  return success();
}

static LogicalResult importRange(NodeContext &nc) {
  if (failed(checkArity(nc, 3, 3)))
    return failure();
  Importer &imp = nc.imp;
  {
    std::optional<Lit> s = imp.getSymLit(nc.in(0)), l = imp.getSymLit(nc.in(1)),
                       d = imp.getSymLit(nc.in(2));
    if (s && l && d && (s->isSymbolic() || l->isSymbolic() || d->isSymbolic()))
      return importRangeDynamic(nc, *s, *l, *d);
  }
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

void onnx_import::registerGeneratorOps(OpRegistry &r) {
  r.add("EyeLike", {9}, importEyeLike);
  r.add("Constant", {13, 19, 21}, importConstant);
  r.add("ConstantOfShape", {9, 20, 21}, importConstantOfShape,
        ShapeSupport::Dynamic);
  r.add("Range", {11}, importRange, ShapeSupport::Dynamic);
}
