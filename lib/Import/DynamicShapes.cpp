//===- DynamicShapes.cpp - The importer's dynamic dimensions --------------===//
//
// Part of fp8-opt. What the Importer keeps about dynamic dimensions
// (issue 14): a symbol per dynamic input dimension (a tensor.dim of the
// function argument holds its run-time size), the symbolic sizes of every
// value with a dynamic dimension, shape tensors whose elements are sizes
// computed from the symbols (Shape -> Gather -> Concat chains, evaluated
// as SymExprs instead of constants), the refusal of ops that have no
// dynamic form yet, and the function attributes that carry the symbols and
// the tensors' sizes to the model ABI (kDimsAttr, kShapeAttr).
//
//===----------------------------------------------------------------------===//

#include "ConstantFolding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

//===----------------------------------------------------------------------===//
// Symbols of the graph inputs
//===----------------------------------------------------------------------===//

void Importer::bindInputSymbols(func::FuncOp func,
                                ArrayRef<SmallVector<InputDim>> dims,
                                ArrayRef<const onnx::ValueInfoProto *> infos) {
  Block &entry = func.getBody().front();
  // Dimensions sharing a dim_param are one symbol: its size is read from
  // the first of them (the model ABI checks that the others agree).
  llvm::StringMap<unsigned> byName;
  for (auto [i, argDims] : llvm::enumerate(dims)) {
    Value arg = entry.getArgument(i);
    if (!isDynamic(arg))
      continue;
    SymShape shape;
    for (auto [d, dim] : llvm::enumerate(argDims)) {
      if (!ShapedType::isDynamic(dim.size)) {
        shape.push_back(dim.size);
        continue;
      }
      auto [it, inserted] = byName.try_emplace(dim.symbol, symbols.size());
      if (inserted) {
        Location loc = graphLoc(infos[i]->name());
        Value size = tensor::DimOp::create(b, loc, arg, int64_t(d));
        symbols.add(dim.symbol, dim.lo, dim.hi,
                    "input '" + infos[i]->name() + "' dimension " +
                        std::to_string(d),
                    size);
      }
      shape.push_back(SymExpr::symbol(it->second));
    }
    withShape(arg, shape);
  }
}

void Importer::annotateDynamicShapes(func::FuncOp func,
                                     ArrayRef<Value> results) {
  if (symbols.empty())
    return;
  // The ABI numbers the free symbols (those not made equal to another).
  SmallVector<unsigned> order;
  SmallVector<Attribute> dims;
  for (unsigned id = 0; id < symbols.size(); ++id) {
    if (!symbols.isFree(id))
      continue;
    order.push_back(id);
    const ShapeSymbols::Symbol &s = symbols.get(id);
    dims.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("name", b.getStringAttr(s.name)),
         b.getNamedAttr("lo", b.getI64IntegerAttr(s.lo)),
         b.getNamedAttr("hi", b.getI64IntegerAttr(s.hi))}));
  }
  func->setAttr(kDimsAttr, b.getArrayAttr(dims));
  auto shapeAttr = [&](Value v) {
    SmallVector<StringRef> exprs;
    SmallVector<std::string> storage;
    for (const SymExpr &e : symShape(v))
      storage.push_back(symbols.abiStr(e, order));
    for (const std::string &s : storage)
      exprs.push_back(s);
    return b.getStrArrayAttr(exprs);
  };
  for (BlockArgument arg : func.getArguments())
    if (isDynamic(arg))
      func.setArgAttr(arg.getArgNumber(), kShapeAttr, shapeAttr(arg));
  for (auto [i, v] : llvm::enumerate(results))
    if (isDynamic(v))
      func.setResultAttr(i, kShapeAttr, shapeAttr(v));
}

//===----------------------------------------------------------------------===//
// Symbolic shapes
//===----------------------------------------------------------------------===//

bool Importer::isDynamic(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && !type.hasStaticShape();
}

SymShape Importer::symShape(Value v) {
  ArrayRef<int64_t> s = shapeOf(v);
  auto it = dynamicShapes.find(v);
  SymShape out;
  for (auto [d, size] : llvm::enumerate(s))
    out.push_back(ShapedType::isDynamic(size) && it != dynamicShapes.end()
                      ? symbols.canonical(it->second[d])
                      : SymExpr(size));
  return out;
}

Value Importer::withShape(Value v, ArrayRef<SymExpr> shape) {
  if (isDynamic(v))
    dynamicShapes[v] = SymShape(shape.begin(), shape.end());
  return v;
}

bool Importer::hasShape(Value v) const {
  return !isDynamic(v) || dynamicShapes.contains(v);
}

RankedTensorType Importer::typeFor(ArrayRef<SymExpr> shape, Type elemType) {
  SmallVector<int64_t> dims;
  for (const SymExpr &e : shape)
    dims.push_back(symbols.canonical(e).getConstant().value_or(
        ShapedType::kDynamic));
  return RankedTensorType::get(dims, elemType);
}

SmallVector<OpFoldResult> Importer::foldResults(Location loc,
                                                ArrayRef<SymExpr> shape) {
  SmallVector<OpFoldResult> out;
  for (const SymExpr &e : shape) {
    SymExpr c = symbols.canonical(e);
    if (std::optional<int64_t> k = c.getConstant())
      out.push_back(b.getIndexAttr(*k));
    else
      out.push_back(symbols.materialize(b, loc, c));
  }
  return out;
}

LogicalResult Importer::requireEqual(NodeContext &nc, const SymExpr &a,
                                     const SymExpr &x, StringRef what) {
  std::string why;
  if (symbols.unify(a, x, why))
    return success();
  return nc.error() << what << ": " << why;
}

std::string Importer::describe(Value v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << v.getType();
  if (isDynamic(v)) {
    os << " with sizes [";
    llvm::interleaveComma(symShape(v), os,
                          [&](const SymExpr &e) { os << symbols.str(e); });
    os << "]";
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Shape tensors over the symbols
//===----------------------------------------------------------------------===//

std::optional<Lit> Importer::getSymLit(Value v) {
  if (!v)
    return std::nullopt;
  if (auto it = symbolicValues.find(v); it != symbolicValues.end()) {
    Lit lit = it->second;
    for (SymExpr &e : lit.syms)
      e = symbols.canonical(e);
    return lit;
  }
  std::optional<Lit> lit = getLit(v);
  if (!lit || lit->isFloat() || lit->elemType.isInteger(1))
    return std::nullopt;
  for (int64_t i : lit->ints)
    lit->syms.push_back(i);
  lit->ints.clear();
  return lit;
}

Value Importer::symLitValue(Location loc, const Lit &lit) {
  if (llvm::all_of(lit.syms, [](const SymExpr &e) { return e.isConstant(); })) {
    Lit constant = lit;
    constant.syms.clear();
    for (const SymExpr &e : lit.syms)
      constant.ints.push_back(*e.getConstant());
    return litConstant(loc, constant);
  }
  SmallVector<Value> elements;
  for (const SymExpr &e : lit.syms)
    elements.push_back(arith::IndexCastOp::create(
        b, loc, lit.elemType, symbols.materialize(b, loc, e)));
  auto type = RankedTensorType::get(lit.shape, lit.elemType);
  Value v = tensor::FromElementsOp::create(b, loc, type, elements);
  symbolicValues[v] = lit;
  if (lit.isUnsigned)
    unsignedValues.insert(v);
  return v;
}

/// `kind` on one element of each input (sizes, or a bool condition for
/// Where), when the symbols' bounds decide it.
static std::optional<SymExpr> foldSymbolicScalar(const ShapeSymbols &symbols,
                                                 EwKind kind,
                                                 ArrayRef<SymExpr> a,
                                                 Type outT) {
  auto sign = [&](const SymExpr &d) -> std::optional<int> {
    if (!d.isValid())
      return std::nullopt;
    auto [lo, hi] = symbols.range(d);
    if (lo > 0)
      return 1;
    if (hi < 0)
      return -1;
    if (lo == 0 && hi == 0)
      return 0;
    return std::nullopt;
  };
  auto boolean = [](bool v) { return SymExpr(v ? 1 : 0); };
  switch (kind) {
  case EwKind::Identity:
    return a[0];
  case EwKind::Add:
    return a[0] + a[1];
  case EwKind::Sub:
    return a[0] - a[1];
  case EwKind::Mul:
    return a[0] * a[1];
  case EwKind::Neg:
    return -a[0];
  case EwKind::Div:
    return a[0].divExact(a[1]);
  case EwKind::Abs:
    if (symbols.provablyNonNegative(a[0]))
      return a[0];
    return std::nullopt;
  case EwKind::Max:
  case EwKind::Min: {
    std::optional<int> s = sign(a[0] - a[1]);
    if (!s)
      return std::nullopt;
    return (*s >= 0) == (kind == EwKind::Max) ? a[0] : a[1];
  }
  case EwKind::Where: {
    std::optional<int64_t> c = a[0].getConstant();
    if (!c)
      return std::nullopt;
    return *c ? a[1] : a[2];
  }
  case EwKind::Equal: {
    if (symbols.equal(a[0], a[1]))
      return boolean(true);
    std::optional<int> s = sign(a[0] - a[1]);
    if (s && *s != 0)
      return boolean(false);
    return std::nullopt;
  }
  case EwKind::Less:
  case EwKind::LessOrEqual:
  case EwKind::Greater:
  case EwKind::GreaterOrEqual: {
    std::optional<int> s = sign(a[0] - a[1]);
    if (!s)
      return std::nullopt;
    bool r = kind == EwKind::Less             ? *s < 0
             : kind == EwKind::LessOrEqual    ? *s <= 0
             : kind == EwKind::Greater        ? *s > 0
                                              : *s >= 0;
    return boolean(r);
  }
  case EwKind::Cast: {
    // Sizes stay sizes in an integer type that holds all of them.
    auto it = dyn_cast<IntegerType>(outT);
    if (!it || it.getWidth() < 2)
      return std::nullopt;
    auto [lo, hi] = symbols.range(a[0]);
    unsigned bits = it.getWidth() - 1;
    if (lo < 0 || (bits < 63 && hi >= (int64_t(1) << bits)))
      return std::nullopt;
    return a[0];
  }
  default:
    return std::nullopt;
  }
}

std::optional<Value> Importer::foldSymbolic(Location loc, EwKind kind,
                                            ArrayRef<Value> ins,
                                            ArrayRef<int64_t> outShape,
                                            Type outT, bool outUnsigned) {
  if (!llvm::any_of(ins, [&](Value v) { return symbolicValues.contains(v); }) ||
      numElementsSat(outShape) > kFoldLimit)
    return std::nullopt;
  // Every input as sizes broadcast to the result (Where's condition as 0/1).
  SmallVector<Lit, 3> lits;
  for (Value v : ins) {
    std::optional<Lit> lit = getSymLit(v);
    if (!lit && (lit = getLit(v)) && lit->elemType.isInteger(1)) {
      for (int64_t i : lit->ints)
        lit->syms.push_back(i);
      lit->ints.clear();
    }
    if (!lit || lit->isFloat())
      return std::nullopt;
    lits.push_back(foldBroadcast(*lit, outShape));
  }
  Lit out;
  out.shape = llvm::to_vector(outShape);
  out.elemType = outT;
  out.isUnsigned = outUnsigned;
  const bool toBool = outT.isInteger(1);
  for (int64_t i = 0, n = numElementsSat(outShape); i < n; ++i) {
    SmallVector<SymExpr> args;
    for (const Lit &l : lits)
      args.push_back(symbols.canonical(l.syms[i]));
    std::optional<SymExpr> r = foldSymbolicScalar(symbols, kind, args, outT);
    if (!r || !r->isValid())
      return std::nullopt;
    if (toBool)
      out.ints.push_back(r->getConstant().value_or(0) != 0);
    else
      out.syms.push_back(*r);
  }
  return toBool ? litConstant(loc, out) : symLitValue(loc, out);
}

FailureOr<SmallVector<SymExpr>> NodeContext::symInts(size_t i,
                                                     StringRef what) {
  Value v = in(i);
  if (!v)
    return error() << "missing input '" << what << "'";
  std::optional<Lit> lit = imp.getSymLit(v);
  if (!lit)
    return error() << "input '" << what
                   << "' must be an integer constant or a size computed from "
                      "the inputs' shapes (Shape, Gather, Concat, ...), so "
                      "that the result's shape is known";
  return SmallVector<SymExpr>(lit->syms.begin(), lit->syms.end());
}

//===----------------------------------------------------------------------===//
// Ops without a dynamic form
//===----------------------------------------------------------------------===//

LogicalResult Importer::checkDynamicInputs(NodeContext &nc,
                                           bool handlerIsDynamic) {
  if (handlerIsDynamic)
    return success();
  for (auto [i, v] : llvm::enumerate(nc.inputs)) {
    if (!v)
      continue;
    if (isDynamic(v))
      return nc.error() << "dynamic shapes are not supported by the "
                           "importer's "
                        << nc.opType() << " yet: input #" << i << " is "
                        << describe(v)
                        << "; compile with a static --input-shape";
    if (symbolicValues.contains(v)) {
      std::string elems;
      llvm::raw_string_ostream os(elems);
      llvm::interleaveComma(getSymLit(v)->syms, os,
                            [&](const SymExpr &e) { os << symbols.str(e); });
      return nc.error() << "input #" << i << " holds sizes computed from "
                        << "dynamic dimensions ([" << elems << "]), which the "
                        << "importer's " << nc.opType()
                        << " does not take yet; compile with a static "
                           "--input-shape";
    }
  }
  return success();
}

LogicalResult Importer::checkDynamicResults(NodeContext &nc) {
  for (auto [i, v] : llvm::enumerate(nc.results))
    if (v && !hasShape(v))
      return nc.error() << "output #" << i << " has type " << v.getType()
                        << " but the importer lost its dynamic sizes (a bug "
                           "in the importer's "
                        << nc.opType()
                        << "); compile with a static --input-shape";
  return success();
}
