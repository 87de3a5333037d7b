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

static int64_t numElements(ArrayRef<int64_t> shape) {
  return numElementsSat(shape);
}

//===----------------------------------------------------------------------===//
// IR builders
//===----------------------------------------------------------------------===//

/// `shape` as SymExprs (constants).
static SymShape toSym(ArrayRef<int64_t> shape) {
  return SymShape(shape.begin(), shape.end());
}

/// The constants of `shape`, when every size is one.
static std::optional<SmallVector<int64_t>> staticSizes(ArrayRef<SymExpr> shape) {
  SmallVector<int64_t> out;
  for (const SymExpr &e : shape) {
    std::optional<int64_t> c = e.getConstant();
    if (!c)
      return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

Value Importer::emptyTensor(Location loc, ArrayRef<int64_t> shape,
                            Type elemType) {
  return tensor::EmptyOp::create(b, loc, shape, elemType);
}

Value Importer::emptyTensor(Location loc, ArrayRef<SymExpr> shape,
                            Type elemType) {
  SymShape canon;
  for (const SymExpr &e : shape)
    canon.push_back(symbols.canonical(e));
  if (std::optional<SmallVector<int64_t>> s = staticSizes(canon))
    return emptyTensor(loc, *s, elemType);
  Value v = tensor::EmptyOp::create(b, loc, foldResults(loc, canon), elemType);
  return withShape(v, canon);
}

Value Importer::filled(Location loc, ArrayRef<int64_t> shape, TypedAttr init) {
  return filled(loc, toSym(shape), init);
}

Value Importer::filled(Location loc, ArrayRef<SymExpr> shape, TypedAttr init) {
  Value empty = emptyTensor(loc, shape, init.getType());
  Value cst = arith::ConstantOp::create(b, loc, init);
  Value r = linalg::FillOp::create(b, loc, ValueRange{cst}, ValueRange{empty})
                .getResult(0);
  return withShape(r, symShape(empty));
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

/// "[s10, 4]" for diagnostics.
static std::string formatSymShape(const ShapeSymbols &symbols,
                                  ArrayRef<SymExpr> shape) {
  std::string out = "[";
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(shape, os,
                        [&](const SymExpr &e) { os << symbols.str(e); });
  os << "]";
  return out;
}

FailureOr<SymShape> Importer::broadcastSymShapes(NodeContext &nc,
                                                 ArrayRef<SymShape> shapes) {
  SymShape out;
  auto isOne = [&](const SymExpr &e) {
    return symbols.canonical(e).getConstant() == std::optional<int64_t>(1);
  };
  for (const SymShape &s : shapes) {
    if (s.size() > out.size())
      out.insert(out.begin(), s.size() - out.size(), SymExpr(1));
    for (size_t i = 0; i < s.size(); ++i) {
      SymExpr &o = out[out.size() - s.size() + i];
      if (symbols.equal(s[i], o) || isOne(s[i]))
        continue;
      if (isOne(o)) {
        o = s[i];
        continue;
      }
      // Two sizes that are not 1: numpy requires them equal, and so does
      // the model at run time.
      std::string what = "shapes are not broadcast-compatible:";
      for (const SymShape &t : shapes)
        what += " " + formatSymShape(symbols, t);
      if (failed(requireEqual(nc, s[i], o, what)))
        return failure();
    }
  }
  for (SymExpr &e : out)
    e = symbols.canonical(e);
  return out;
}

Value Importer::generic(
    Location loc, ArrayRef<Value> ins, ArrayRef<int64_t> outShape,
    Type outElem, function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  return generic(loc, ins, toSym(outShape), outElem, body);
}

Value Importer::generic(
    Location loc, ArrayRef<Value> ins, ArrayRef<SymExpr> outShape,
    Type outElem, function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  int64_t rank = outShape.size();
  auto isOne = [&](const SymExpr &e) {
    return symbols.canonical(e).getConstant() == std::optional<int64_t>(1);
  };
  SmallVector<AffineMap> maps;
  for (Value v : ins) {
    SymShape s = symShape(v);
    SmallVector<AffineExpr> exprs;
    int64_t off = rank - s.size();
    // Broadcasting: a static 1 against any other size (numpy's rule; other
    // sizes were made equal by broadcastSymShapes).
    for (size_t d = 0; d < s.size(); ++d)
      exprs.push_back(isOne(s[d]) && !isOne(outShape[off + d])
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
  return withShape(op.getResult(0), outShape);
}

FailureOr<Value> Importer::elementwise(NodeContext &nc, EwKind kind,
                                       ArrayRef<Value> ins, Type castTo) {
  const bool dynamic = llvm::any_of(ins, isDynamic);
  SymShape symOut;
  FailureOr<SmallVector<int64_t>> outShape = SmallVector<int64_t>();
  if (dynamic) {
    SmallVector<SymShape, 3> shapes(
        llvm::map_range(ins, [&](Value v) { return symShape(v); }));
    FailureOr<SymShape> s = broadcastSymShapes(nc, shapes);
    if (failed(s))
      return failure();
    symOut = *s;
  } else {
    outShape = broadcastShapes(nc, ins);
    if (failed(outShape))
      return failure();
    symOut = toSym(*outShape);
  }
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

  if (!dynamic) {
    // Sizes computed from dynamic dimensions, where they fold.
    if (std::optional<Value> r =
            foldSymbolic(nc.loc, kind, ins, *outShape, outT, outUnsigned))
      return *r;
    // Fold when every input is a constant and the result is small.
    SmallVector<Lit> lits;
    for (Value v : ins)
      if (std::optional<Lit> l = getLit(v))
        lits.push_back(std::move(*l));
    if (lits.size() == ins.size() && numElements(*outShape) <= kFoldLimit &&
        !isa<Float8E4M3FNType, Float8E5M2Type>(outT))
      return litConstant(
          nc.loc, foldElementwise(kind, lits, *outShape, outT, outUnsigned));
  }

  Value result = generic(nc.loc, ins, symOut, outT,
                         [&](OpBuilder &bb, Location l, ValueRange args) {
                           return buildScalar(bb, l, kind, args, outT, uns);
                         });
  if (outUnsigned)
    unsignedValues.insert(result);
  return result;
}

Value Importer::broadcastTo(Location loc, Value v, ArrayRef<SymExpr> shape) {
  if (std::optional<SmallVector<int64_t>> s = staticSizes(shape);
      s && !isDynamic(v))
    return broadcastTo(loc, v, *s);
  if (llvm::equal(symShape(v), shape,
                  [&](const SymExpr &a, const SymExpr &x) {
                    return symbols.equal(a, x);
                  }))
    return v;
  if (std::optional<Lit> lit = getSymLit(v);
      lit && lit->isSymbolic() && staticSizes(shape)) {
    Lit r = foldBroadcast(*lit, *staticSizes(shape));
    return symLitValue(loc, r);
  }
  Value r = generic(loc, {v}, shape, elemOf(v),
                    [](OpBuilder &, Location, ValueRange a) { return a[0]; });
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::broadcastTo(Location loc, Value v, ArrayRef<int64_t> shape) {
  if (shapeOf(v) == shape)
    return v;
  if (std::optional<Lit> lit = getSymLit(v); lit && lit->isSymbolic() &&
                                             numElements(shape) <= kFoldLimit)
    return symLitValue(loc, foldBroadcast(*lit, shape));
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
  if (isDynamic(v))
    return reshape(loc, v, toSym(shape));
  if (shapeOf(v) == shape)
    return v;
  auto type = RankedTensorType::get(shape, elemOf(v));
  Value r;
  if (std::optional<Lit> lit = getSymLit(v); lit && lit->isSymbolic()) {
    lit->shape = llvm::to_vector(shape);
    return symLitValue(loc, *lit);
  }
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

/// A reassociation between `src` and `dst` sizes: groups of consecutive
/// dimensions whose products are equal, one group of each side at a time
/// (the side whose product divides the other's takes its next dimension);
/// trailing unit dimensions join the last group. Nothing when the sizes do
/// not group that way (e.g. [s, 64] -> [64, s]).
static std::optional<std::pair<SmallVector<ReassociationIndices>,
                               SmallVector<ReassociationIndices>>>
groupDims(const ShapeSymbols &symbols, ArrayRef<SymExpr> src,
          ArrayRef<SymExpr> dst) {
  auto isOne = [&](const SymExpr &e) {
    return e.getConstant() == std::optional<int64_t>(1);
  };
  SmallVector<ReassociationIndices> gs, gd;
  size_t i = 0, j = 0;
  while (i < src.size() && j < dst.size()) {
    ReassociationIndices a{int64_t(i)}, d{int64_t(j)};
    SymExpr ps = src[i++], pd = dst[j++];
    while (!symbols.equal(ps, pd)) {
      std::optional<SymExpr> q = pd.divExact(ps), r = ps.divExact(pd);
      if (q && i < src.size()) {
        ps = symbols.canonical(ps * src[i]);
        a.push_back(i++);
      } else if (r && j < dst.size()) {
        pd = symbols.canonical(pd * dst[j]);
        d.push_back(j++);
      } else {
        return std::nullopt;
      }
    }
    gs.push_back(std::move(a));
    gd.push_back(std::move(d));
  }
  for (; i < src.size(); ++i) {
    if (!isOne(src[i]) || gs.empty())
      return std::nullopt;
    gs.back().push_back(i);
  }
  for (; j < dst.size(); ++j) {
    if (!isOne(dst[j]) || gd.empty())
      return std::nullopt;
    gd.back().push_back(j);
  }
  return std::make_pair(gs, gd);
}

Value Importer::reshape(Location loc, Value v, ArrayRef<SymExpr> shape) {
  SymShape dst;
  for (const SymExpr &e : shape)
    dst.push_back(symbols.canonical(e));
  std::optional<SmallVector<int64_t>> staticDst = staticSizes(dst);
  if (staticDst && !isDynamic(v))
    return reshape(loc, v, *staticDst);
  SymShape src = symShape(v);
  if (llvm::equal(src, dst))
    return v;
  // Shape tensors: the same elements in another shape.
  if (std::optional<Lit> lit = getSymLit(v); lit && staticDst) {
    lit->shape = *staticDst;
    return symLitValue(loc, *lit);
  }
  // Collapse each group of source dimensions, expand it into the group of
  // result dimensions; or, when the sizes do not group, through one
  // dimension of all elements.
  auto groups = groupDims(symbols, src, dst);
  if (!groups) {
    groups = std::make_pair(
        SmallVector<ReassociationIndices>{
            llvm::to_vector(llvm::seq<int64_t>(0, src.size()))},
        SmallVector<ReassociationIndices>{
            llvm::to_vector(llvm::seq<int64_t>(0, dst.size()))});
  }
  Value r = v;
  auto [srcGroups, dstGroups] = *groups;
  SymShape mid;
  for (const ReassociationIndices &g : srcGroups) {
    SymExpr p(1);
    for (int64_t d : g)
      p = p * src[d];
    mid.push_back(symbols.canonical(p));
  }
  if (mid.size() != src.size()) {
    r = tensor::CollapseShapeOp::create(b, loc, r, srcGroups);
    withShape(r, mid);
  }
  if (mid.size() != dst.size())
    r = tensor::ExpandShapeOp::create(b, loc, typeFor(dst, elemOf(v)), r,
                                      dstGroups, foldResults(loc, dst));
  withShape(r, dst);
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::transpose(Location loc, Value v, ArrayRef<int64_t> perm) {
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return v;
  SymShape s = symShape(v);
  SymShape outShape(llvm::map_range(perm, [&](int64_t p) { return s[p]; }));
  Value r;
  if (std::optional<Lit> lit = getLit(v); lit && lit->size() <= kFoldLimit)
    return litConstant(loc, foldTranspose(*lit, perm));
  if (std::optional<Lit> lit = getSymLit(v); lit && lit->isSymbolic())
    return symLitValue(loc, foldTranspose(*lit, perm));
  // A permutation that moves only dimensions of size 1 keeps every
  // element at its linear position: a reshape, not a copy (a decode step's
  // [B, 1, H, D] -> [B, H, 1, D] would otherwise be a kernel of its own).
  SmallVector<int64_t> moved;
  for (int64_t p : perm)
    if (symbols.canonical(s[p]).getConstant() != std::optional<int64_t>(1))
      moved.push_back(p);
  if (llvm::is_sorted(moved))
    return reshape(loc, v, outShape);
  Value init = emptyTensor(loc, outShape, elemOf(v));
  r = linalg::TransposeOp::create(b, loc, v, init, perm).getResult()[0];
  withShape(r, outShape);
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::extractSlice(Location loc, Value v, ArrayRef<int64_t> offsets,
                             ArrayRef<int64_t> sizes,
                             ArrayRef<int64_t> strides) {
  if (isDynamic(v))
    return extractSlice(loc, v, toSym(offsets), toSym(sizes), strides);
  if (shapeOf(v) == sizes)
    return v;
  auto type = RankedTensorType::get(sizes, elemOf(v));
  if (std::optional<Lit> lit = getLit(v))
    return litConstant(loc, foldSlice(*lit, offsets, sizes, strides));
  if (std::optional<Lit> lit = getSymLit(v); lit && lit->isSymbolic())
    return symLitValue(loc, foldSlice(*lit, offsets, sizes, strides));
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

Value Importer::extractSlice(Location loc, Value v, ArrayRef<SymExpr> offsets,
                             ArrayRef<SymExpr> sizes,
                             ArrayRef<int64_t> strides) {
  std::optional<SmallVector<int64_t>> o = staticSizes(offsets),
                                      s = staticSizes(sizes);
  if (o && s && !isDynamic(v))
    return extractSlice(loc, v, *o, *s, strides);
  if (llvm::equal(symShape(v), sizes, [&](const SymExpr &a, const SymExpr &x) {
        return symbols.equal(a, x);
      }))
    return v;
  SmallVector<OpFoldResult> strideAttrs(
      llvm::map_range(strides, [&](int64_t x) -> OpFoldResult {
        return b.getIndexAttr(x);
      }));
  Value r = tensor::ExtractSliceOp::create(
      b, loc, typeFor(sizes, elemOf(v)), v, foldResults(loc, offsets),
      foldResults(loc, sizes), strideAttrs);
  withShape(r, sizes);
  if (isUnsigned(v))
    unsignedValues.insert(r);
  return r;
}

Value Importer::concat(Location loc, ArrayRef<Value> vals, int64_t axis) {
  if (vals.size() == 1)
    return vals[0];
  SymShape outShape = symShape(vals[0]);
  outShape[axis] = 0;
  for (Value v : vals)
    outShape[axis] = symbols.canonical(outShape[axis] + symShape(v)[axis]);
  Type et = elemOf(vals[0]);

  if (!llvm::any_of(vals, isDynamic)) {
    SmallVector<int64_t> staticShape = *staticSizes(outShape);
    SmallVector<Lit, 2> lits, symLits;
    for (Value v : vals) {
      if (std::optional<Lit> l = getLit(v))
        lits.push_back(std::move(*l));
      if (std::optional<Lit> l = getSymLit(v))
        symLits.push_back(std::move(*l));
    }
    if (lits.size() == vals.size() && numElements(staticShape) <= kFoldLimit)
      return litConstant(loc, foldConcat(lits, axis));
    // Shape tensors: Concat of sizes computed from dynamic dimensions.
    if (symLits.size() == vals.size() &&
        llvm::any_of(symLits, [](const Lit &l) { return l.isSymbolic(); }))
      return symLitValue(loc, foldConcat(symLits, axis));
  }

  // A chain of insert_slice into an empty tensor bufferizes in place.
  Value acc = emptyTensor(loc, outShape, et);
  SymExpr offset(0);
  for (Value v : vals) {
    SymShape s = symShape(v);
    SmallVector<OpFoldResult> offs(s.size(), b.getIndexAttr(0)),
        strides(s.size(), b.getIndexAttr(1));
    offs[axis] = foldResults(loc, {offset})[0];
    acc = tensor::InsertSliceOp::create(b, loc, v, acc, offs,
                                        foldResults(loc, s), strides);
    offset = symbols.canonical(offset + s[axis]);
  }
  withShape(acc, outShape);
  if (isUnsigned(vals[0]))
    unsignedValues.insert(acc);
  return acc;
}

Value Importer::reduce(Location loc, Value v, ArrayRef<int64_t> axes,
                       ReduceKind kind) {
  SymShape s = symShape(v);
  Type et = elemOf(v);
  int64_t rank = s.size();
  SymShape outShape;
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
  Value result = withShape(op.getResult(0), outShape);
  if (isUnsigned(v))
    unsignedValues.insert(result);
  return result;
}

Value Importer::reduceKeepDims(Location loc, Value v, ArrayRef<int64_t> axes,
                               ReduceKind kind) {
  SymShape keep = symShape(v);
  for (int64_t a : axes)
    keep[a] = 1;
  if (std::optional<SmallVector<int64_t>> s = staticSizes(keep))
    return reshape(loc, reduce(loc, v, axes, kind), *s);
  return reshape(loc, reduce(loc, v, axes, kind), keep);
}
