//===- ConstantFolding.cpp - The importer's folder ------------------------===//
//
// Part of fp8-opt. Constants and the constant folder: values that are small
// constants stay `arith.constant` with a DenseElementsAttr, and the IR
// builders fold when all their inputs are such constants; that is what
// turns the shape subgraphs exporters emit (Shape -> Gather -> Concat ->
// Reshape) into static target shapes. Lits (Importer.h) are what the folder
// computes on.
//
//===----------------------------------------------------------------------===//

#include "ConstantFolding.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

//===----------------------------------------------------------------------===//
// Constants and folding
//===----------------------------------------------------------------------===//

Value Importer::constant(Location loc, ElementsAttr attr) {
  return arith::ConstantOp::create(b, loc, cast<TypedAttr>(attr));
}

Value Importer::scalarConst(Location loc, Type t, double v) {
  if (auto ft = dyn_cast<FloatType>(t))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, v));
  return arith::ConstantOp::create(
      b, loc, b.getIntegerAttr(t, static_cast<int64_t>(v)));
}

Value Importer::splat(Location loc, RankedTensorType type, double fval,
                      int64_t ival) {
  Attribute elt;
  if (auto ft = dyn_cast<FloatType>(type.getElementType()))
    elt = b.getFloatAttr(ft, fval);
  else
    elt = b.getIntegerAttr(type.getElementType(), ival);
  return constant(loc, DenseElementsAttr::get(type, elt));
}

DenseElementsAttr Importer::getConst(Value v) {
  if (!v)
    return {};
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return {};
  return dyn_cast<DenseElementsAttr>(cst.getValue());
}

std::optional<Lit> Importer::getLit(Value v, int64_t maxElements) {
  DenseElementsAttr attr = getConst(v);
  if (!attr || numElementsSat(attr.getType().getShape()) > maxElements)
    return std::nullopt;
  Lit lit;
  lit.shape = llvm::to_vector(attr.getType().getShape());
  lit.elemType = attr.getElementType();
  lit.isUnsigned = isUnsigned(v);
  int64_t n = attr.getNumElements();
  if (lit.isFloat()) {
    lit.floats.reserve(n);
    for (APFloat f : attr.getValues<APFloat>()) {
      bool lost;
      f.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
      lit.floats.push_back(f.convertToDouble());
    }
  } else {
    bool zext = lit.isUnsigned || lit.elemType.isInteger(1);
    lit.ints.reserve(n);
    for (const APInt &i : attr.getValues<APInt>())
      lit.ints.push_back(zext ? static_cast<int64_t>(i.getZExtValue())
                              : i.getSExtValue());
  }
  return lit;
}

Value Importer::litConstant(Location loc, const Lit &lit) {
  auto type = RankedTensorType::get(lit.shape, lit.elemType);
  DenseElementsAttr attr;
  if (auto ft = dyn_cast<FloatType>(lit.elemType)) {
    SmallVector<APFloat> vals;
    vals.reserve(lit.floats.size());
    for (double d : lit.floats) {
      APFloat f(d);
      bool lost;
      f.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(f);
    }
    attr = DenseElementsAttr::get(type, vals);
  } else if (lit.elemType.isInteger(1)) {
    SmallVector<bool> vals(
        llvm::map_range(lit.ints, [](int64_t i) { return i != 0; }));
    attr = DenseElementsAttr::get(type, vals);
  } else {
    unsigned width = lit.elemType.getIntOrFloatBitWidth();
    SmallVector<APInt> vals(llvm::map_range(lit.ints, [&](int64_t i) {
      return APInt(width, static_cast<uint64_t>(i), /*isSigned=*/true,
                   /*implicitTrunc=*/true);
    }));
    attr = DenseElementsAttr::get(type, vals);
  }
  Value v = constant(loc, cast<ElementsAttr>(attr));
  if (lit.isUnsigned)
    unsignedValues.insert(v);
  return v;
}

/// Row-major strides of `shape`.
static SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Linear index into a numpy-broadcast input of shape `in` for the output
/// multi-index `idx` (of the output's rank).
static int64_t broadcastIndex(ArrayRef<int64_t> idx, ArrayRef<int64_t> in,
                              ArrayRef<int64_t> inStrides) {
  int64_t off = idx.size() - in.size(), lin = 0;
  for (size_t d = 0; d < in.size(); ++d)
    lin += (in[d] == 1 ? 0 : idx[off + d]) * inStrides[d];
  return lin;
}

/// Scalar evaluation for the folder. Integers (incl. bools) travel as int64,
/// floats as double; `outFloat` says which the result is.
static double foldFloat(EwKind k, ArrayRef<double> a) {
  switch (k) {
  case EwKind::Add: return a[0] + a[1];
  case EwKind::Sub: return a[0] - a[1];
  case EwKind::Mul: return a[0] * a[1];
  case EwKind::Div: return a[0] / a[1];
  case EwKind::Pow: return std::pow(a[0], a[1]);
  case EwKind::Mod:
  case EwKind::FMod: return std::fmod(a[0], a[1]);
  case EwKind::Max: return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::max(a[0], a[1]);
  case EwKind::Min: return std::isnan(a[0]) || std::isnan(a[1]) ? NAN : std::min(a[0], a[1]);
  case EwKind::Neg: return -a[0];
  case EwKind::Abs: return std::fabs(a[0]);
  case EwKind::Sqrt: return std::sqrt(a[0]);
  case EwKind::Reciprocal: return 1.0 / a[0];
  case EwKind::Erf: return std::erf(a[0]);
  case EwKind::Tanh: return std::tanh(a[0]);
  case EwKind::Sigmoid: return 1.0 / (1.0 + std::exp(-a[0]));
  case EwKind::Relu: return a[0] > 0 ? a[0] : 0.0;
  case EwKind::Exp: return std::exp(a[0]);
  case EwKind::Log: return std::log(a[0]);
  case EwKind::Floor: return std::floor(a[0]);
  case EwKind::Ceil: return std::ceil(a[0]);
  case EwKind::Sin: return std::sin(a[0]);
  case EwKind::Cos: return std::cos(a[0]);
  case EwKind::Tan: return std::tan(a[0]);
  case EwKind::Asin: return std::asin(a[0]);
  case EwKind::Acos: return std::acos(a[0]);
  case EwKind::Atan: return std::atan(a[0]);
  case EwKind::Sinh: return std::sinh(a[0]);
  case EwKind::Cosh: return std::cosh(a[0]);
  case EwKind::Asinh: return std::asinh(a[0]);
  case EwKind::Acosh: return std::acosh(a[0]);
  case EwKind::Atanh: return std::atanh(a[0]);
  case EwKind::Round: return std::nearbyint(a[0]); // ties to even
  case EwKind::Softsign: return a[0] / (1.0 + std::fabs(a[0]));
  default: return a[0];
  }
}

/// Two's-complement wrapping, as the generated code computes (C++ signed
/// overflow would be undefined behaviour in the compiler itself).
static int64_t wrap(uint64_t v) { return static_cast<int64_t>(v); }

/// A double as int64, saturating (the C++ conversion of an out-of-range
/// double is undefined).
static int64_t toInt64Sat(double d) {
  if (std::isnan(d))
    return 0;
  if (d >= 9223372036854775807.0)
    return INT64_MAX;
  if (d <= -9223372036854775808.0)
    return INT64_MIN;
  return static_cast<int64_t>(d);
}

/// `isUnsigned`: the int64s hold uint64 bit patterns (Div, Mod, Max, Min
/// and comparisons differ from the signed ones above 2^63).
static int64_t foldInt(EwKind k, ArrayRef<int64_t> a, bool isUnsigned) {
  const uint64_t x = a[0], y = a.size() > 1 ? a[1] : 0;
  if (isUnsigned) {
    switch (k) {
    case EwKind::Div:
      return y == 0 ? 0 : wrap(x / y);
    case EwKind::Mod:
    case EwKind::FMod:
      return y == 0 ? 0 : wrap(x % y);
    case EwKind::Max:
      return wrap(std::max(x, y));
    case EwKind::Min:
      return wrap(std::min(x, y));
    default:
      break; // the same bits as the signed operation
    }
  }
  switch (k) {
  case EwKind::Add:
    return wrap(x + y);
  case EwKind::Sub:
    return wrap(x - y);
  case EwKind::Mul:
    return wrap(x * y);
  // Integer division by zero gives 0 (numpy's result; ONNX leaves it
  // undefined) and INT_MIN / -1 wraps, at compile time as at run time
  // (Importer::buildScalar).
  case EwKind::Div:
    return a[1] == 0 ? 0 : a[1] == -1 ? wrap(0 - x) : a[0] / a[1];
  case EwKind::Pow:
    return toInt64Sat(std::pow(double(a[0]), double(a[1])));
  case EwKind::Mod: {
    if (a[1] == 0 || a[1] == -1)
      return 0;
    int64_t r = a[0] % a[1];
    return (r != 0 && ((r < 0) != (a[1] < 0))) ? r + a[1] : r;
  }
  case EwKind::FMod:
    return a[1] == 0 || a[1] == -1 ? 0 : a[0] % a[1];
  case EwKind::Max: return std::max(a[0], a[1]);
  case EwKind::Min: return std::min(a[0], a[1]);
  case EwKind::Neg:
    return wrap(0 - x);
  case EwKind::Abs:
    return a[0] < 0 ? wrap(0 - x) : a[0];
  case EwKind::Relu: return a[0] > 0 ? a[0] : 0;
  case EwKind::And: return a[0] && a[1];
  case EwKind::Or: return a[0] || a[1];
  case EwKind::Xor: return (a[0] != 0) != (a[1] != 0);
  case EwKind::Not: return !a[0];
  default: return a[0];
  }
}

bool onnx_import::isCompare(EwKind k) {
  return k == EwKind::Equal || k == EwKind::Greater ||
         k == EwKind::GreaterOrEqual || k == EwKind::Less ||
         k == EwKind::LessOrEqual;
}

template <typename T>
static bool foldCompare(EwKind k, T x, T y) {
  switch (k) {
  case EwKind::Equal: return x == y;
  case EwKind::Greater: return x > y;
  case EwKind::GreaterOrEqual: return x >= y;
  case EwKind::Less: return x < y;
  default: return x <= y;
  }
}

/// Rounds `d` as converting to `t` would (integer wrap, float rounding), so
/// that folded Casts match runtime ones.
static int64_t castToInt(double d, Type t) {
  if (t.isInteger(1))
    return d != 0;
  return toInt64Sat(std::trunc(d));
}

static int64_t numElements(ArrayRef<int64_t> shape) {
  return numElementsSat(shape);
}

/// A Lit of `shape` with `like`'s element type and signedness, no values.
static Lit emptyLike(const Lit &like, ArrayRef<int64_t> shape) {
  Lit out;
  out.shape = llvm::to_vector(shape);
  out.elemType = like.elemType;
  out.isUnsigned = like.isUnsigned;
  return out;
}

/// Appends element `i` of `from` to `to` (of the same element kind).
static void appendElement(Lit &to, const Lit &from, int64_t i) {
  if (from.isFloat())
    to.floats.push_back(from.floats[i]);
  else if (!from.syms.empty())
    to.syms.push_back(from.syms[i]);
  else
    to.ints.push_back(from.ints[i]);
}

Lit onnx_import::foldElementwise(EwKind kind, ArrayRef<Lit> lits,
                                 ArrayRef<int64_t> outShape, Type outT,
                                 bool outUnsigned) {
  const bool isFloat = lits[kind == EwKind::Where ? 1 : 0].isFloat();
  const bool unsigned0 = lits[0].isUnsigned;
  Type i64 = IntegerType::get(outT.getContext(), 64);
  Lit out;
  out.shape = llvm::to_vector(outShape);
  out.elemType = outT;
  out.isUnsigned = outUnsigned;
  SmallVector<int64_t> strides = stridesOf(out.shape);
  SmallVector<SmallVector<int64_t>> inStrides;
  for (const Lit &l : lits)
    inStrides.push_back(stridesOf(l.shape));
  int64_t n = numElements(out.shape);
  SmallVector<int64_t> idx(out.shape.size());
  bool outFloat = isa<FloatType>(outT);
  for (int64_t lin = 0; lin < n; ++lin) {
    for (size_t d = 0; d < idx.size(); ++d)
      idx[d] = (lin / strides[d]) % out.shape[d];
    SmallVector<double> fa;
    SmallVector<int64_t> ia;
    for (auto [l, s] : llvm::zip(lits, inStrides)) {
      int64_t j = broadcastIndex(idx, l.shape, s);
      fa.push_back(l.isFloat()    ? l.floats[j]
                   : l.isUnsigned ? double(uint64_t(l.ints[j]))
                                  : double(l.ints[j]));
      ia.push_back(l.isFloat() ? castToInt(l.floats[j], i64) : l.ints[j]);
    }
    if (kind == EwKind::Where) {
      if (outFloat)
        out.floats.push_back(ia[0] ? fa[1] : fa[2]);
      else
        out.ints.push_back(ia[0] ? ia[1] : ia[2]);
    } else if (isCompare(kind)) {
      out.ints.push_back(
          isFloat     ? foldCompare(kind, fa[0], fa[1])
          : unsigned0 ? foldCompare(kind, uint64_t(ia[0]), uint64_t(ia[1]))
                      : foldCompare(kind, ia[0], ia[1]));
    } else if (kind == EwKind::Cast) {
      if (outFloat)
        out.floats.push_back(fa[0]);
      else
        out.ints.push_back(isFloat ? castToInt(fa[0], outT) : ia[0]);
    } else if (isFloat) {
      out.floats.push_back(foldFloat(kind, fa));
    } else {
      out.ints.push_back(foldInt(kind, ia, outUnsigned));
    }
  }
  if (outT.isInteger(1))
    for (int64_t &i : out.ints)
      i = i != 0;
  return out;
}

Lit onnx_import::foldBroadcast(const Lit &in, ArrayRef<int64_t> shape) {
  Lit out = emptyLike(in, shape);
  SmallVector<int64_t> strides = stridesOf(shape), inStrides = stridesOf(in.shape);
  SmallVector<int64_t> idx(shape.size());
  for (int64_t lin = 0, n = numElements(shape); lin < n; ++lin) {
    for (size_t d = 0; d < idx.size(); ++d)
      idx[d] = (lin / strides[d]) % shape[d];
    appendElement(out, in, broadcastIndex(idx, in.shape, inStrides));
  }
  return out;
}

Lit onnx_import::foldTranspose(const Lit &in, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> outShape(
      llvm::map_range(perm, [&](int64_t p) { return in.shape[p]; }));
  Lit out = emptyLike(in, outShape);
  SmallVector<int64_t> os = stridesOf(outShape), is = stridesOf(in.shape);
  for (int64_t lin = 0, n = numElements(outShape); lin < n; ++lin) {
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      src += ((lin / os[d]) % outShape[d]) * is[perm[d]];
    appendElement(out, in, src);
  }
  return out;
}

Lit onnx_import::foldSlice(const Lit &in, ArrayRef<int64_t> offsets,
                           ArrayRef<int64_t> sizes,
                           ArrayRef<int64_t> strides) {
  Lit out = emptyLike(in, sizes);
  SmallVector<int64_t> os = stridesOf(sizes), is = stridesOf(in.shape);
  for (int64_t lin = 0, n = numElements(sizes); lin < n; ++lin) {
    int64_t src = 0;
    for (size_t d = 0; d < sizes.size(); ++d)
      src += (offsets[d] + ((lin / os[d]) % sizes[d]) * strides[d]) * is[d];
    appendElement(out, in, src);
  }
  return out;
}

Lit onnx_import::foldConcat(ArrayRef<Lit> ins, int64_t axis) {
  SmallVector<int64_t> outShape = ins[0].shape;
  outShape[axis] = 0;
  for (const Lit &l : ins)
    outShape[axis] += l.shape[axis];
  Lit out = emptyLike(ins[0], outShape);
  // Outer dims before `axis`, then each input's contiguous inner block.
  int64_t outer = numElements(ArrayRef<int64_t>(outShape).take_front(axis));
  for (int64_t o = 0; o < outer; ++o)
    for (const Lit &l : ins) {
      int64_t inner = numElements(ArrayRef<int64_t>(l.shape).drop_front(axis));
      for (int64_t i = 0; i < inner; ++i)
        appendElement(out, l, o * inner + i);
    }
  return out;
}

Lit onnx_import::foldGather(const Lit &in, ArrayRef<int64_t> indices,
                            int64_t axis, ArrayRef<int64_t> outShape) {
  ArrayRef<int64_t> s = in.shape;
  Lit out = emptyLike(in, outShape);
  int64_t outer = numElements(s.take_front(axis));
  int64_t inner = numElements(s.drop_front(axis + 1));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : indices)
      for (int64_t k = 0; k < inner; ++k)
        appendElement(out, in, (o * s[axis] + i) * inner + k);
  return out;
}

Lit onnx_import::foldGatherND(const Lit &in, ArrayRef<int64_t> indices,
                              ArrayRef<int64_t> indicesShape, int64_t b,
                              ArrayRef<int64_t> outShape) {
  ArrayRef<int64_t> s = in.shape;
  const int64_t r = s.size(), k = indicesShape.back();
  Lit out = emptyLike(in, outShape);
  int64_t batch = numElements(s.take_front(b));
  int64_t tuples =
      numElements(indicesShape.drop_back()) / std::max<int64_t>(batch, 1);
  int64_t slice = numElements(s.drop_front(b + k));
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
        base += indices[(bi * tuples + t) * k + j] * strides[b + j];
      for (int64_t e = 0; e < slice; ++e)
        appendElement(out, in, base + e);
    }
  return out;
}
