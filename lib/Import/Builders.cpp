//===- Builders.cpp - IR builders of the importer -------------------------===//
//
// Part of fp8-opt. The tensor-level IR builders the op handlers share
// (element-wise ops with numpy broadcasting, reshape, transpose, slices,
// concatenation, reductions). Every value has a static shape, and each
// builder folds when its inputs are small constants (ConstantFolding.h).
//
//===----------------------------------------------------------------------===//

#include "ConstantFolding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

static constexpr int64_t kFoldLimit = Importer::kFoldLimit;

static int64_t numElements(ArrayRef<int64_t> shape) {
  return numElementsSat(shape);
}

//===----------------------------------------------------------------------===//
// IR builders
//===----------------------------------------------------------------------===//

Value Importer::emptyTensor(Location loc, ArrayRef<int64_t> shape,
                            Type elemType) {
  return tensor::EmptyOp::create(b, loc, shape, elemType);
}

Value Importer::filled(Location loc, ArrayRef<int64_t> shape, TypedAttr init) {
  Value empty = emptyTensor(loc, shape, init.getType());
  Value cst = arith::ConstantOp::create(b, loc, init);
  return linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{empty})
      .getResult(0);
}

FailureOr<SmallVector<int64_t>>
Importer::broadcastShapes(NodeContext &nc, ArrayRef<Value> vals) {
  SmallVector<int64_t> out;
  for (Value v : vals) {
    ArrayRef<int64_t> s = shapeOf(v);
    if (s.size() > out.size())
      out.insert(out.begin(), s.size() - out.size(), 1);
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[out.size() - s.size() + i];
      if (s[i] == o || s[i] == 1)
        continue;
      if (o == 1) {
        o = s[i];
        continue;
      }
      auto diag = nc.error() << "shapes are not broadcast-compatible:";
      for (Value w : vals)
        diag << " " << w.getType();
      return diag;
    }
  }
  return out;
}

Value Importer::generic(
    Location loc, ArrayRef<Value> ins, ArrayRef<int64_t> outShape,
    Type outElem, function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = outShape.size();
  SmallVector<AffineMap> maps;
  for (Value v : ins) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<AffineExpr> exprs;
    int64_t off = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d)
      exprs.push_back(s[d] == 1 && outShape[off + d] != 1
                          ? b.getAffineConstantExpr(0)
                          : b.getAffineDimExpr(off + d));
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init = emptyTensor(loc, outShape, outElem);
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps, iters,
      [&](OpBuilder &bb, Location l, ValueRange args) {
        Value r = body(bb, l, args.drop_back());
        linalg::YieldOp::create(bb, l, r);
      });
  return op.getResult(0);
}

FailureOr<Value> Importer::elementwise(NodeContext &nc, EwKind kind,
                                       ArrayRef<Value> ins, Type castTo) {
  FailureOr<SmallVector<int64_t>> outShape = broadcastShapes(nc, ins);
  if (failed(outShape))
    return failure();
  Type dataT = elemOf(ins[kind == EwKind::Where ? 1 : 0]);
  Type outT = isCompare(kind) ? b.getI1Type()
              : kind == EwKind::Cast ? castTo
                                     : dataT;
  // ONNX requires matching element types; Pow's exponent and Where's
  // condition are the exceptions.
  for (auto [i, v] : llvm::enumerate(ins)) {
    if (kind == EwKind::Pow && i == 1)
      continue;
    if (kind == EwKind::Where && i == 0) {
      if (!elemOf(v).isInteger(1))
        return nc.error() << "condition must be bool, got " << v.getType();
      continue;
    }
    if (elemOf(v) != dataT)
      return nc.error() << "operand element types differ: " << dataT
                        << " vs " << elemOf(v);
  }
  bool isFloat = isa<FloatType>(dataT);
  if ((kind == EwKind::And || kind == EwKind::Or || kind == EwKind::Xor ||
       kind == EwKind::Not) &&
      !dataT.isInteger(1))
    return nc.error() << "expects bool operands, got " << dataT;
  if (!isFloat && (kind == EwKind::Sqrt || kind == EwKind::Reciprocal ||
                   kind == EwKind::Erf || kind == EwKind::Tanh ||
                   kind == EwKind::Sigmoid || kind == EwKind::Exp ||
                   kind == EwKind::Log || kind == EwKind::Floor ||
                   kind == EwKind::Ceil || kind == EwKind::Sin ||
                   kind == EwKind::Cos || kind == EwKind::Tan ||
                   kind == EwKind::Asin || kind == EwKind::Acos ||
                   kind == EwKind::Atan || kind == EwKind::Sinh ||
                   kind == EwKind::Cosh || kind == EwKind::Asinh ||
                   kind == EwKind::Acosh || kind == EwKind::Atanh ||
                   kind == EwKind::Round || kind == EwKind::Softsign))
    return nc.error() << "expects floating-point operands, got " << dataT;

  SmallVector<bool> uns(llvm::map_range(ins, [&](Value v) { return isUnsigned(v); }));
  bool outUnsigned = kind != EwKind::Cast && !isCompare(kind) && !uns.empty() &&
                     uns[kind == EwKind::Where ? 1 : 0];

  // Fold when every input is a constant and the result is small.
  SmallVector<Lit> lits;
  for (Value v : ins)
    if (std::optional<Lit> l = getLit(v))
      lits.push_back(std::move(*l));
  if (lits.size() == ins.size() && numElements(*outShape) <= kFoldLimit &&
      !isa<Float8E4M3FNType, Float8E5M2Type>(outT))
    return litConstant(
        nc.loc, foldElementwise(kind, lits, *outShape, outT, outUnsigned));

  Value result = generic(nc.loc, ins, *outShape, outT,
                         [&](OpBuilder &bb, Location l, ValueRange args) {
                           return buildScalar(bb, l, kind, args, outT, uns);
                         });
  if (outUnsigned)
    unsignedValues.insert(result);
  return result;
}

Value Importer::broadcastTo(Location loc, Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  if (DenseElementsAttr attr = getConst(v); attr && attr.isSplat()) {
    Value r = constant(loc, cast<ElementsAttr>(attr.resizeSplat(
                                RankedTensorType::get(shape, elemOf(v)))));
    if (isUnsigned(v))
      unsignedValues.insert(r);
    return r;
  }
  if (std::optional<Lit> lit = getLit(v); lit && numElements(shape) <= kFoldLimit)
    return litConstant(loc, foldBroadcast(*lit, shape));
  Value r = generic(loc, {v}, shape, elemOf(v),
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::reshape(Location loc, Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  auto type = RankedTensorType::get(shape, elemOf(v));
  Value r;
  if (DenseElementsAttr attr = getConst(v)) {
    r = constant(loc, cast<ElementsAttr>(attr.reshape(type)));
  } else {
    // Collapse to 1-D, then expand: both reassociations are trivially valid
    // for any pair of static shapes, and the canonicalizer merges them.
    Value flat = v;
    int64_t n = numElements(shape);
    int64_t srcRank = shapeOf(v).size();
    if (srcRank != 1) {
      auto flatT = RankedTensorType::get({n}, elemOf(v));
      if (srcRank == 0)
        flat = tensor::ExpandShapeOp::create(b, loc, flatT, v,
                                             ArrayRef<ReassociationIndices>{});
      else
        flat = tensor::CollapseShapeOp::create(
            b, loc, flatT, v,
            ArrayRef<ReassociationIndices>{
                llvm::to_vector(llvm::seq<int64_t>(0, srcRank))});
    }
    if (shape.size() == 1)
      r = flat;
    else if (shape.empty())
      r = tensor::CollapseShapeOp::create(b, loc, type, flat,
                                          ArrayRef<ReassociationIndices>{});
    else
      r = tensor::ExpandShapeOp::create(
          b, loc, type, flat,
          ArrayRef<ReassociationIndices>{
              llvm::to_vector(llvm::seq<int64_t>(0, shape.size()))});
  }
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::transpose(Location loc, Value v, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  ArrayRef<int64_t> s = shapeOf(v);
  SmallVector<int64_t> outShape(llvm::map_range(perm, [&](int64_t p) { return s[p]; }));
  Value r;
  if (std::optional<Lit> lit = getLit(v); lit && lit->size() <= kFoldLimit)
    return litConstant(loc, foldTranspose(*lit, perm));
  Value init = emptyTensor(loc, outShape, elemOf(v));
  r = linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::extractSlice(Location loc, Value v, ArrayRef<int64_t> offsets,
                             ArrayRef<int64_t> sizes,
                             ArrayRef<int64_t> strides) {
  if (shapeOf(v) == sizes)
    return v;
  auto type = RankedTensorType::get(sizes, elemOf(v));
  if (std::optional<Lit> lit = getLit(v))
    return litConstant(loc, foldSlice(*lit, offsets, sizes, strides));
  auto ofr = [&](ArrayRef<int64_t> xs) {
    return SmallVector<OpFoldResult>(
        llvm::map_range(xs, [&](int64_t x) -> OpFoldResult {
          return b.getIndexAttr(x);
        }));
  };
  Value r = tensor::ExtractSliceOp::create(b, loc, type, v, ofr(offsets),
                                           ofr(sizes), ofr(strides));
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::concat(Location loc, ArrayRef<Value> vals, int64_t axis) {
  if (vals.size() == 1)
    return vals[0];
  SmallVector<int64_t> outShape = llvm::to_vector(shapeOf(vals[0]));
  outShape[axis] = 0;
  for (Value v : vals)
    outShape[axis] += shapeOf(v)[axis];
  Type et = elemOf(vals[0]);

  SmallVector<Lit> lits;
  for (Value v : vals)
    if (std::optional<Lit> l = getLit(v))
      lits.push_back(std::move(*l));
  if (lits.size() == vals.size() && numElements(outShape) <= kFoldLimit)
    return litConstant(loc, foldConcat(lits, axis));

  // A chain of insert_slice into an empty tensor bufferizes in place.
  Value acc = emptyTensor(loc, outShape, et);
  int64_t offset = 0;
  for (Value v : vals) {
    ArrayRef<int64_t> s = shapeOf(v);
    SmallVector<OpFoldResult> offs(s.size(), b.getIndexAttr(0)), sizes,
        strides(s.size(), b.getIndexAttr(1));
    offs[axis] = b.getIndexAttr(offset);
    for (int64_t d : s)
      sizes.push_back(b.getIndexAttr(d));
    acc = tensor::InsertSliceOp::create(b, loc, v, acc, offs, sizes, strides);
    offset += s[axis];
  }
  if (isUnsigned(vals[0]))
    unsignedValues.insert(acc);
  return acc;
}

Value Importer::reduce(Location loc, Value v, ArrayRef<int64_t> axes,
                       ReduceKind kind) {
  ArrayRef<int64_t> s = shapeOf(v);
  Type et = elemOf(v);
  int64_t rank = s.size();
  SmallVector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  for (int64_t d = 0; d < rank; ++d) {
    bool red = llvm::is_contained(axes, d);
    iters.push_back(red ? utils::IteratorType::reduction
                        : utils::IteratorType::parallel);
    if (!red) {
      outShape.push_back(s[d]);
      outExprs.push_back(b.getAffineDimExpr(d));
    }
  }
  bool f = isa<FloatType>(et);
  // Unsigned integers and bools compare unsigned: the Max of bools is
  // their "any", the Min their "all" (ReduceMax-20, ReduceMin-20).
  const bool u = !f && (isUnsigned(v) || et.isInteger(1));
  TypedAttr init;
  if (auto ft = dyn_cast<FloatType>(et)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    APFloat v = kind == ReduceKind::Sum    ? APFloat::getZero(sem)
                : kind == ReduceKind::Prod ? APFloat::getOne(sem)
                : kind == ReduceKind::Max  ? APFloat::getInf(sem, true)
                                           : APFloat::getInf(sem, false);
    init = b.getFloatAttr(ft, v);
  } else {
    unsigned w = et.getIntOrFloatBitWidth();
    APInt v = kind == ReduceKind::Sum    ? APInt(w, 0)
              : kind == ReduceKind::Prod ? APInt(w, 1)
              : kind == ReduceKind::Max
                  ? (u ? APInt::getMinValue(w) : APInt::getSignedMinValue(w))
                  : (u ? APInt::getMaxValue(w) : APInt::getSignedMaxValue(w));
    init = b.getIntegerAttr(et, v);
  }
  Value acc = filled(loc, outShape, init);
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, outExprs, ctx)};
  auto op = linalg::GenericOp::create(
      b, loc, TypeRange{acc.getType()}, ValueRange{v}, ValueRange{acc}, maps,
      iters, [&](OpBuilder &bb, Location l, ValueRange args) {
        Value x = args[0], y = args[1], r;
        switch (kind) {
        case ReduceKind::Sum:
          r = f ? Value(arith::AddFOp::create(bb, l, x, y))
                : Value(arith::AddIOp::create(bb, l, x, y));
          break;
        case ReduceKind::Prod:
          r = f ? Value(arith::MulFOp::create(bb, l, x, y))
                : Value(arith::MulIOp::create(bb, l, x, y));
          break;
        case ReduceKind::Max:
          r = f   ? Value(arith::MaximumFOp::create(bb, l, x, y))
              : u ? Value(arith::MaxUIOp::create(bb, l, x, y))
                  : Value(arith::MaxSIOp::create(bb, l, x, y));
          break;
        case ReduceKind::Min:
          r = f   ? Value(arith::MinimumFOp::create(bb, l, x, y))
              : u ? Value(arith::MinUIOp::create(bb, l, x, y))
                  : Value(arith::MinSIOp::create(bb, l, x, y));
          break;
        }
        linalg::YieldOp::create(bb, l, r);
      });
  Value result = op.getResult(0);
  if (isUnsigned(v))
    unsignedValues.insert(result);
  return result;
}

Value Importer::reduceKeepDims(Location loc, Value v, ArrayRef<int64_t> axes,
                               ReduceKind kind) {
  SmallVector<int64_t> keep = llvm::to_vector(shapeOf(v));
  for (int64_t a : axes)
    keep[a] = 1;
  return reshape(loc, reduce(loc, v, axes, kind), keep);
}
