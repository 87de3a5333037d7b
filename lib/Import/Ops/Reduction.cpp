//===- Reduction.cpp - Reductions -----------------------------------------===//
//
// Part of fp8-opt. ReduceSum/Mean/Max/Min/Prod and the composite Reduce
// ops (SumSquare, L1, L2, LogSum, LogSumExp), ArgMax/ArgMin, Hardmax and
// CumSum.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

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
    SymExpr symCount(1);
    SymShape sym = imp.symShape(x);
    for (int64_t a : axes)
      symCount = symCount * sym[a];
    Value n;
    if (Importer::isDynamic(x) && !imp.symbols.canonical(symCount).isConstant()) {
      // The run-time element count, as the input's element type.
      Lit c;
      c.elemType = imp.b.getI64Type();
      c.syms.push_back(imp.symbols.canonical(symCount));
      Value ci = imp.symLitValue(nc.loc, c);
      auto cf = imp.elementwise(nc, EwKind::Cast, {ci}, Importer::elemOf(x));
      if (failed(cf))
        return failure();
      n = *cf;
    } else {
      n = scalarTensor(nc, Importer::elemOf(x),
                       *imp.symbols.canonical(symCount).getConstant());
    }
    auto m = imp.elementwise(nc, EwKind::Div, {r, n});
    if (failed(m))
      return failure();
    r = *m;
  }
  nc.results.push_back(r);
  return success();
}

/// The int64 index of the maximum (`isMax`) or minimum of `x` along `axis`
/// (normalised), the first on ties or the last with `last`; the axis kept
/// as 1 with `keep`. One reduction generic carrying (best value, its index).
static FailureOr<Value> argExtreme(NodeContext &nc, Value x, int64_t axis,
                                   bool isMax, bool keep, bool last) {
  Importer &imp = nc.imp;
  OpBuilder &b = imp.b;
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  int64_t rank = s.size();
  if (s[axis] == 0)
    return nc.error() << "cannot reduce an empty axis";
  Type et = Importer::elemOf(x);
  bool f = isa<FloatType>(et), u = imp.isUnsigned(x);
  if (!f && et.isInteger(1))
    return nc.error() << "bool input is not supported";

  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    iters.push_back(d == axis ? utils::IteratorType::reduction
                              : utils::IteratorType::parallel);
    if (d != axis) {
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
  int64_t ax = axis;
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
  return r;
}

/// ArgMax/ArgMin; ties keep the first index, or the last with
/// select_last_index.
static LogicalResult importArgExtreme(NodeContext &nc, bool isMax) {
  if (failed(checkArity(nc, 1, 1)))
    return failure();
  Value x = nc.in(0);
  int64_t rank = Importer::shapeOf(x).size();
  if (rank == 0)
    return nc.error() << "input must have rank >= 1";
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 0), rank);
  if (failed(axis))
    return failure();
  FailureOr<Value> r =
      argExtreme(nc, x, *axis, isMax, nc.attrInt("keepdims", 1) != 0,
                 nc.attrInt("select_last_index", 0) != 0);
  if (failed(r))
    return failure();
  nc.results.push_back(*r);
  return success();
}

/// Hardmax: 1 where the first maximum along the axis is, 0 elsewhere:
/// ArgMax (keepdims) compared with each position's index. Version 13 takes
/// one axis (default -1); versions 1 and 11 (reached through
/// detail::kUnconvertedDomain) coerce the input to 2-D
/// [prod(s[:axis]), prod(s[axis:])] (default axis 1) and take the maximum of
/// each row.
static LogicalResult importHardmax(NodeContext &nc) {
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  if (!x || !isa<FloatType>(Importer::elemOf(x)))
    return nc.error() << "expects a floating-point input";
  ArrayRef<int64_t> xs = Importer::shapeOf(x);
  const int64_t xRank = xs.size();
  const bool coerce = nc.version < 13;
  FailureOr<int64_t> axis =
      nc.normAxis(nc.attrInt("axis", coerce ? 1 : -1), xRank);
  if (failed(axis) || failed(checkArity(nc, 1, 1)))
    return failure();
  Value in = x;
  int64_t ax = *axis;
  if (coerce && ax != xRank - 1) {
    in = imp.reshape(nc.loc, x,
                     ArrayRef<int64_t>{product(xs.take_front(ax)), product(xs.drop_front(ax))});
    ax = 1;
  }
  FailureOr<Value> argOr =
      argExtreme(nc, in, ax, /*isMax=*/true, /*keep=*/true, /*last=*/false);
  if (failed(argOr))
    return failure();
  Value arg = *argOr;
  ArrayRef<int64_t> s = Importer::shapeOf(in);
  const int64_t rank = s.size();
  SmallVector<AffineExpr> argExprs;
  for (int64_t d = 0; d < rank; ++d)
    argExprs.push_back(d == ax ? imp.b.getAffineConstantExpr(0)
                               : imp.b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, argExprs, imp.ctx),
                              imp.b.getMultiDimIdentityMap(rank)};
  Type et = Importer::elemOf(x);
  Value init = imp.emptyTensor(nc.loc, s, et);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
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
  nc.results.push_back(imp.reshape(nc.loc, r, xs));
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

void onnx_import::registerReductionOps(OpRegistry &r) {
  using RK = Importer::ReduceKind;
  r.add("Hardmax", {1, 11, 13}, importHardmax);
  r.add("CumSum", {11, 14}, importCumSum);
  // The axes attribute became an input in ReduceSum-13 and in the other
  // Reduce ops' version 18 (importReduce's axesInputSince).
  // Reductions take dynamic dimensions (Mean divides by the run-time count).
  constexpr ShapeSupport dyn = ShapeSupport::Dynamic;
  r.add("ReduceSum", {13},
        [](NodeContext &nc) { return importReduce(nc, RK::Sum, false, 13); },
        dyn);
  r.add("ReduceMean", {13, 18},
        [](NodeContext &nc) { return importReduce(nc, RK::Sum, true, 18); },
        dyn);
  r.add("ReduceMax", {13, 18, 20},
        [](NodeContext &nc) { return importReduce(nc, RK::Max, false, 18); },
        dyn);
  r.add("ReduceMin", {13, 18, 20},
        [](NodeContext &nc) { return importReduce(nc, RK::Min, false, 18); },
        dyn);
  r.add("ReduceProd", {13, 18},
        [](NodeContext &nc) { return importReduce(nc, RK::Prod, false, 18); },
        dyn);
  using RV = ReduceVariant;
  for (auto [name, v] : std::initializer_list<std::pair<const char *, RV>>{
           {"ReduceSumSquare", RV::SumSquare},
           {"ReduceL1", RV::L1},
           {"ReduceL2", RV::L2},
           {"ReduceLogSum", RV::LogSum},
           {"ReduceLogSumExp", RV::LogSumExp}})
    r.add(name, {13, 18}, [v = v](NodeContext &nc) {
      return importReduce(nc, RK::Sum, false, 18, v);
    }, dyn);
  r.add("ArgMax", {13},
        [](NodeContext &nc) { return importArgExtreme(nc, true); });
  r.add("ArgMin", {13},
        [](NodeContext &nc) { return importArgExtreme(nc, false); });
}
