//===- Indexing.cpp - Index-driven ONNX ops -------------------------------===//
//
// Part of fp8-opt. Ops whose results are selected by indices or
// positions: Gather, GatherElements and GatherND (index checks at import or
// run time, BoundsChecks.cpp), OneHot and Trilu.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"
#include "../ConstantFolding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

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

/// The `index` value of size `e` for a linalg body (null when constant).
static Value runtimeSize(Importer &imp, Location loc, const SymExpr &e) {
  if (e.isConstant())
    return {};
  return imp.symbols.materialize(imp.b, loc, e);
}

/// safeIndex into a dimension of static size, or of the run-time size
/// `dynDim` (non-null).
static Value safeIndexInto(OpBuilder &bb, Location l, Value idx,
                           const SymExpr &dim, Value dynDim, bool uns) {
  return dynDim ? safeIndex(bb, l, idx, dynDim, uns)
                : safeIndex(bb, l, idx, *dim.getConstant(), uns);
}

static LogicalResult importGather(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  Importer &imp = nc.imp;
  Value data = nc.in(0), indices = nc.in(1);
  SymShape s = imp.symShape(data), is = imp.symShape(indices);
  if (!isa<IntegerType>(Importer::elemOf(indices)) ||
      Importer::elemOf(indices).isInteger(1))
    return nc.error() << "indices must be integers, got " << indices.getType();
  FailureOr<int64_t> axis = nc.normAxis(nc.attrInt("axis", 0), s.size());
  if (failed(axis))
    return failure();
  SymShape outShape(s.begin(), s.begin() + *axis);
  llvm::append_range(outShape, is);
  llvm::append_range(outShape, ArrayRef<SymExpr>(s).drop_front(*axis + 1));
  SymExpr axisDim = s[*axis];
  SymExpr indexCount(1);
  for (const SymExpr &e : is)
    indexCount = imp.symbols.canonical(indexCount * e);
  if (axisDim.getConstant() == std::optional<int64_t>(0) &&
      indexCount.getConstant() != std::optional<int64_t>(0))
    return nc.error() << "gathers from an empty dimension";
  if (failed(imp.checkIndices(nc, indices, {axisDim}, *axis,
                              /*perComponent=*/false)))
    return failure();

  std::optional<SmallVector<int64_t>> staticOut;
  if (!Importer::isDynamic(data) && !Importer::isDynamic(indices))
    staticOut = SmallVector<int64_t>(
        llvm::map_range(outShape, [](const SymExpr &e) { return *e.getConstant(); }));
  std::optional<Lit> d = imp.getLit(data), ix = imp.getLit(indices);
  if (ix && staticOut)
    for (int64_t &i : ix->ints)
      if (i < 0)
        i += *axisDim.getConstant();
  if (d && ix && staticOut && product(*staticOut) <= 4096) {
    nc.results.push_back(
        imp.litConstant(nc.loc, foldGather(*d, ix->ints, *axis, *staticOut)));
    return success();
  }
  // A size out of a shape tensor (Gather(Shape(x), 1)).
  if (std::optional<Lit> sd = imp.getSymLit(data);
      sd && sd->isSymbolic() && ix && staticOut && product(*staticOut) <= 4096) {
    nc.results.push_back(
        imp.symLitValue(nc.loc, foldGather(*sd, ix->ints, *axis, *staticOut)));
    return success();
  }
  Value dynAxisDim = runtimeSize(imp, nc.loc, axisDim);

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
                  coords.push_back(safeIndexInto(bb, l, a[0], axisDim,
                                                 dynAxisDim, unsignedIdx));
                  for (int64_t dd = *axis + ir; dd < outRank; ++dd)
                    coords.push_back(linalg::IndexOp::create(bb, l, dd));
                  Value v = tensor::ExtractOp::create(bb, l, data, coords);
                  linalg::YieldOp::create(bb, l, v);
                })
                .getResult(0);
  imp.withShape(r, outShape);
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

/// GatherND with dynamic dimensions (batch_dims 0): the result is
/// indices.shape[:-1] ++ data.shape[k:], each tuple component checked and
/// clamped against its run-time size.
static LogicalResult importGatherNDDynamic(NodeContext &nc) {
  Importer &imp = nc.imp;
  Value data = nc.in(0), indices = nc.in(1);
  SymShape s = imp.symShape(data), is = imp.symShape(indices);
  if (!isa<IntegerType>(Importer::elemOf(indices)) ||
      Importer::elemOf(indices).isInteger(1))
    return nc.error() << "indices must be integers, got " << indices.getType();
  const int64_t r = s.size(), q = is.size();
  if (r < 1 || q < 1)
    return nc.error() << "data and indices must have rank >= 1";
  if (nc.attrInt("batch_dims", 0) != 0)
    return nc.error() << "batch_dims with dynamic dimensions is not "
                         "supported; compile with a static --input-shape";
  std::optional<int64_t> kc = is.back().getConstant();
  if (!kc || *kc < 1 || *kc > r)
    return nc.error() << "indices.shape[-1] must be a static size in [1, "
                      << r << "], got " << imp.symbols.str(is.back());
  const int64_t k = *kc;
  SymShape outShape(is.begin(), is.end() - 1);
  llvm::append_range(outShape, ArrayRef<SymExpr>(s).drop_front(k));
  SmallVector<SymExpr> tupleDims(s.begin(), s.begin() + k);
  if (failed(imp.checkIndices(nc, indices, tupleDims, 0,
                              /*perComponent=*/true)))
    return failure();
  SmallVector<Value> dynDims;
  for (const SymExpr &d : tupleDims)
    dynDims.push_back(runtimeSize(imp, nc.loc, d));
  const bool unsignedIdx = imp.isUnsigned(indices);
  const int64_t outRank = outShape.size();
  Value init = imp.emptyTensor(nc.loc, outShape, Importer::elemOf(data));
  SmallVector<AffineMap> maps{imp.b.getMultiDimIdentityMap(outRank)};
  SmallVector<utils::IteratorType> iters(outRank, utils::IteratorType::parallel);
  Value rv = linalg::GenericOp::create(
                 imp.b, nc.loc, TypeRange{init.getType()}, ValueRange{},
                 ValueRange{init}, maps, iters,
                 [&](OpBuilder &bb, Location l, ValueRange) {
                   SmallVector<Value> tuple, coords;
                   for (int64_t dd = 0; dd < q - 1; ++dd)
                     tuple.push_back(linalg::IndexOp::create(bb, l, dd));
                   for (int64_t j = 0; j < k; ++j) {
                     SmallVector<Value> at = tuple;
                     at.push_back(arith::ConstantIndexOp::create(bb, l, j));
                     Value i = tensor::ExtractOp::create(bb, l, indices, at);
                     coords.push_back(safeIndexInto(bb, l, i, tupleDims[j],
                                                    dynDims[j], unsignedIdx));
                   }
                   for (int64_t dd = q - 1; dd < outRank; ++dd)
                     coords.push_back(linalg::IndexOp::create(bb, l, dd));
                   Value v = tensor::ExtractOp::create(bb, l, data, coords);
                   linalg::YieldOp::create(bb, l, v);
                 })
                 .getResult(0);
  imp.withShape(rv, outShape);
  if (imp.isUnsigned(data))
    imp.unsignedValues.insert(rv);
  nc.results.push_back(rv);
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
  if (Importer::isDynamic(data) || Importer::isDynamic(indices))
    return importGatherNDDynamic(nc);
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
  if (failed(imp.checkIndices(nc, indices,
                              SmallVector<SymExpr>(tupleDims.begin(),
                                                   tupleDims.end()),
                              b, /*perComponent=*/true)))
    return failure();
  std::optional<Lit> d = imp.getLit(data), ix = imp.getLit(indices);
  if (ix) // in range (checked above); wrap the negative ones
    for (int64_t n = 0, e = ix->ints.size(); n < e; ++n)
      if (ix->ints[n] < 0)
        ix->ints[n] += s[b + n % k];
  if (d && ix && product(outShape) <= 4096) {
    Value v = imp.litConstant(
        nc.loc, foldGatherND(*d, ix->ints, is, b, outShape));
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

void onnx_import::registerIndexingOps(OpRegistry &r) {
  r.add("OneHot", {11}, importOneHot);
  r.add("Gather", {13}, importGather, ShapeSupport::Dynamic);
  r.add("GatherElements", {13}, importGatherElements);
  r.add("GatherND", {13}, importGatherND, ShapeSupport::Dynamic);
  r.add("Trilu", {14}, importTrilu);
}
