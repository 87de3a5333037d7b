//===- Shape.cpp - Shape and layout ONNX ops ------------------------------===//
//
// Part of fp8-opt. Shape and Size (folded to constants), and the ops that
// move data without computing on it: Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Expand, Concat, Split, Slice, Tile, DepthToSpace and
// SpaceToDepth. Shape inputs must be constants (or fold to them) so that
// every result shape is static.
//
//===----------------------------------------------------------------------===//

#include "Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

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
  if (Importer::isDynamic(nc.in(0))) {
    // The sizes, known symbolically: what Reshape, Expand, Range, ... read.
    SymShape sym = nc.imp.symShape(nc.in(0));
    for (int64_t i = start; i < end; ++i)
      lit.syms.push_back(sym[i]);
    lit.shape.push_back(lit.syms.size());
    nc.results.push_back(nc.imp.symLitValue(nc.loc, lit));
    return success();
  }
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
  if (Importer::isDynamic(nc.in(0))) {
    SymExpr n(1);
    for (const SymExpr &e : nc.imp.symShape(nc.in(0)))
      n = n * e;
    lit.syms.push_back(nc.imp.symbols.canonical(n));
    nc.results.push_back(nc.imp.symLitValue(nc.loc, lit));
    return success();
  }
  lit.ints.push_back(product(Importer::shapeOf(nc.in(0))));
  nc.results.push_back(nc.imp.litConstant(nc.loc, lit));
  return success();
}

/// The size a Reshape's -1 stands for: the product of `src` divided by
/// the product of `known`. Sizes that appear on both sides cancel (a
/// dynamic dimension kept by the reshape), the constants left divide;
/// else the product of `known` must divide the whole.
static std::optional<SymExpr> inferredSize(const ShapeSymbols &symbols,
                                           ArrayRef<SymExpr> src,
                                           ArrayRef<SymExpr> known) {
  SmallVector<SymExpr> num(src.begin(), src.end());
  SymExpr divisor(1), all(1), knownAll(1);
  for (const SymExpr &e : src)
    all = all * e;
  for (const SymExpr &k : known)
    knownAll = knownAll * k;
  bool cancelled = true;
  for (const SymExpr &k : known) {
    auto it = llvm::find_if(
        num, [&](const SymExpr &e) { return symbols.equal(e, k); });
    if (it != num.end())
      num.erase(it);
    else if (k.isConstant())
      divisor = divisor * k;
    else
      cancelled = false;
  }
  if (cancelled) {
    SymExpr rest(1);
    for (const SymExpr &e : num)
      rest = rest * e;
    if (std::optional<SymExpr> q = symbols.canonical(rest).divExact(divisor))
      return q;
  }
  return symbols.canonical(all).divExact(symbols.canonical(knownAll));
}

/// Reshape to a target with sizes computed from dynamic dimensions (or of
/// an input with dynamic dimensions).
static LogicalResult importReshapeDynamic(NodeContext &nc,
                                          ArrayRef<SymExpr> target) {
  Importer &imp = nc.imp;
  const ShapeSymbols &symbols = imp.symbols;
  Value x = nc.in(0);
  SymShape s = imp.symShape(x);
  bool allowZero = nc.attrInt("allowzero", 0) != 0;
  SymShape shape;
  int64_t inferAt = -1;
  for (auto [i, d] : llvm::enumerate(target)) {
    std::optional<int64_t> c = d.getConstant();
    if (c && *c == 0 && !allowZero) {
      if (i >= s.size())
        return nc.error() << "shape entry #" << i
                          << " is 0 (copy) but the input has rank " << s.size();
      shape.push_back(s[i]);
    } else if (c && *c == -1) {
      if (inferAt >= 0)
        return nc.error() << "more than one -1 in shape";
      inferAt = i;
      shape.push_back(1);
    } else if (c && *c < 0) {
      return nc.error() << "invalid shape entry " << *c;
    } else if (!c && !symbols.provablyNonNegative(d)) {
      return nc.error() << "shape entry #" << i << " is " << symbols.str(d)
                        << ", which may be negative at run time";
    } else if (!c && !allowZero && symbols.range(d).first == 0 &&
               !(i < s.size() && symbols.equal(d, s[i]))) {
      return nc.error() << "shape entry #" << i << " is " << symbols.str(d)
                        << ", which may be 0 at run time, where allowzero=0 "
                           "would copy the input's dimension instead";
    } else {
      shape.push_back(d);
    }
  }
  SymExpr n(1), known(1);
  for (const SymExpr &e : s)
    n = n * e;
  for (const SymExpr &e : shape)
    known = known * e;
  if (inferAt >= 0) {
    SymShape others(shape);
    others.erase(others.begin() + inferAt);
    std::optional<SymExpr> q = inferredSize(symbols, s, others);
    if (!q)
      return nc.error() << "cannot infer -1 when reshaping " << imp.describe(x)
                        << " to [" << [&] {
                             std::string t;
                             llvm::raw_string_ostream os(t);
                             llvm::interleaveComma(target, os,
                                                   [&](const SymExpr &e) {
                                                     os << symbols.str(e);
                                                   });
                             return t;
                           }() << "]";
    shape[inferAt] = *q;
  } else if (!symbols.equal(n, known)) {
    return nc.error() << "shape mismatch: cannot reshape " << imp.describe(x)
                      << " (" << symbols.str(n) << " elements) to "
                      << symbols.str(known) << " elements";
  }
  nc.results.push_back(imp.reshape(nc.loc, x, shape));
  return success();
}

static LogicalResult importReshape(NodeContext &nc) {
  if (failed(checkArity(nc, 2, 2)))
    return failure();
  if (std::optional<Lit> t = nc.imp.getSymLit(nc.in(1));
      t && (t->isSymbolic() || Importer::isDynamic(nc.in(0))))
    return importReshapeDynamic(nc, t->syms);
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
  if (Importer::isDynamic(x)) {
    SymShape sym = nc.imp.symShape(x);
    SymExpr outer(1), inner(1);
    for (auto [d, e] : llvm::enumerate(sym)) {
      SymExpr &side = int64_t(d) < axis ? outer : inner;
      side = side * e;
    }
    nc.results.push_back(nc.imp.reshape(nc.loc, x, SymShape{outer, inner}));
    return success();
  }
  nc.results.push_back(nc.imp.reshape(
      nc.loc, x, ArrayRef<int64_t>{product(s.take_front(axis)),
                                   product(s.drop_front(axis))}));
  return success();
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
  SymShape sym = nc.imp.symShape(x);
  if (*axesOr) {
    auto n = normAxes(nc, **axesOr, s.size());
    if (failed(n))
      return failure();
    axes = *n;
  } else {
    for (auto [i, d] : llvm::enumerate(sym)) {
      if (d.getConstant() == std::optional<int64_t>(1))
        axes.push_back(i);
      else if (!d.isConstant() && nc.imp.symbols.range(d).first <= 1)
        return nc.error() << "without axes, dimension " << i << " ("
                          << nc.imp.symbols.str(d)
                          << ") would be squeezed when it is 1 at run time; "
                             "give the axes";
    }
  }
  SymShape shape;
  for (auto [i, d] : llvm::enumerate(sym)) {
    if (!llvm::is_contained(axes, static_cast<int64_t>(i))) {
      shape.push_back(d);
      continue;
    }
    if (d.getConstant() != std::optional<int64_t>(1))
      return nc.error() << "cannot squeeze dimension " << i << " of size "
                        << nc.imp.symbols.str(d);
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
  SymShape sym = nc.imp.symShape(x), shape;
  size_t j = 0;
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(llvm::is_contained(*axes, i) ? SymExpr(1) : sym[j++]);
  nc.results.push_back(nc.imp.reshape(nc.loc, x, shape));
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
      r = imp.reshape(nc.loc, x, ArrayRef<int64_t>{n, b, b, c / (b * b), h, w});
      r = imp.transpose(nc.loc, r, {0, 3, 4, 1, 5, 2});
    } else if (mode == "CRD") {
      r = imp.reshape(nc.loc, x, ArrayRef<int64_t>{n, c / (b * b), b, b, h, w});
      r = imp.transpose(nc.loc, r, {0, 1, 4, 2, 5, 3});
    } else {
      return nc.error() << "unknown mode '" << mode << "'";
    }
    r = imp.reshape(nc.loc, r, ArrayRef<int64_t>{n, c / (b * b), h * b, w * b});
  } else {
    if (h % b != 0 || w % b != 0)
      return nc.error() << "height and width must be multiples of blocksize "
                        << b;
    r = imp.reshape(nc.loc, x, ArrayRef<int64_t>{n, c, h / b, b, w / b, b});
    r = imp.transpose(nc.loc, r, {0, 3, 5, 1, 2, 4});
    r = imp.reshape(nc.loc, r, ArrayRef<int64_t>{n, c * b * b, h / b, w / b});
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
  if (std::optional<Lit> t = nc.imp.getSymLit(nc.in(1));
      t && (t->isSymbolic() || Importer::isDynamic(nc.in(0)))) {
    // Expand broadcasts both ways, as numpy: the target may have 1s where
    // the input has larger dims.
    SymShape target(t->syms.begin(), t->syms.end());
    FailureOr<SymShape> shape = nc.imp.broadcastSymShapes(
        nc, {nc.imp.symShape(nc.in(0)), target});
    if (failed(shape))
      return failure();
    nc.results.push_back(nc.imp.broadcastTo(nc.loc, nc.in(0), *shape));
    return success();
  }
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
  Importer &imp = nc.imp;
  for (Value v : nc.inputs) {
    if (!v)
      return nc.error() << "empty input name";
    SymShape s = imp.symShape(v), f = imp.symShape(first);
    bool ok = static_cast<int64_t>(s.size()) == rank &&
              Importer::elemOf(v) == Importer::elemOf(first);
    for (int64_t d = 0; ok && d < rank; ++d) {
      if (d == *axis || imp.symbols.equal(s[d], f[d]))
        continue;
      // Dynamic sizes that must agree (checked at run time).
      std::string why;
      ok = !s[d].isConstant() && !f[d].isConstant() &&
           imp.symbols.unify(s[d], f[d], why);
    }
    if (!ok)
      return nc.error() << "shape mismatch: cannot concatenate "
                        << imp.describe(first) << " and " << imp.describe(v)
                        << " along axis " << *axis;
    // Zero-sized pieces (common in KV-cache graphs) contribute nothing.
    if (s[*axis].getConstant() != std::optional<int64_t>(0))
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

/// A Slice bound (`start` or `end`) into [0, dim] as ONNX clamps it
/// (negative values count from the end), when the symbols' bounds decide
/// the clamping; an error at the node otherwise.
static FailureOr<SymExpr> clampSliceBound(NodeContext &nc, const SymExpr &v,
                                          const SymExpr &dim, StringRef what) {
  const ShapeSymbols &symbols = nc.imp.symbols;
  SymExpr x = v;
  if (std::optional<int64_t> c = v.getConstant()) {
    // INT64_MAX / INT64_MIN: "to the end" / "from the start".
    if (*c >= kMaxTensorElements)
      return dim;
    if (*c <= -kMaxTensorElements)
      return SymExpr(0);
    if (*c < 0)
      x = dim + SymExpr(*c);
  } else if (!symbols.provablyNonNegative(v)) {
    return nc.error() << "Slice " << what << " " << symbols.str(v)
                      << " may be negative at run time (counting from the "
                         "end); compile with a static --input-shape";
  }
  x = symbols.canonical(x);
  if (symbols.provablyNonNegative(x) && symbols.provablyNonNegative(dim - x))
    return x;
  if (symbols.provablyNonNegative(x - dim))
    return dim;
  if (symbols.provablyNonNegative(-x))
    return SymExpr(0);
  return nc.error() << "Slice " << what << " " << symbols.str(v)
                    << " is clamped into a dimension of " << symbols.str(dim)
                    << " depending on its run-time size; compile with a "
                       "static --input-shape";
}

/// Slice's optional axes (default 0..n-1) and steps (default 1), checked
/// against the `n` starts and `numEnds` ends.
static LogicalResult sliceAxesAndSteps(NodeContext &nc, size_t n,
                                       size_t numEnds,
                                       SmallVectorImpl<int64_t> &axes,
                                       SmallVectorImpl<int64_t> &steps) {
  if (nc.in(3)) {
    auto a = nc.constInts(3, "axes");
    if (failed(a))
      return failure();
    axes.assign(a->begin(), a->end());
  } else {
    for (size_t i = 0; i < n; ++i)
      axes.push_back(static_cast<int64_t>(i));
  }
  if (nc.in(4)) {
    auto st = nc.constInts(4, "steps");
    if (failed(st))
      return failure();
    steps.assign(st->begin(), st->end());
  } else {
    steps.assign(n, 1);
  }
  if (numEnds != n || axes.size() != n || steps.size() != n)
    return nc.error() << "starts, ends, axes and steps must have equal lengths";
  return success();
}

/// Slice of a tensor with dynamic dimensions, or with starts/ends computed
/// from them: steps of 1, bounds whose clamping the symbols decide.
static LogicalResult importSliceDynamic(NodeContext &nc) {
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  SymShape s = imp.symShape(x);
  int64_t rank = s.size();
  auto starts = nc.symInts(1, "starts");
  auto ends = nc.symInts(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (failed(sliceAxesAndSteps(nc, starts->size(), ends->size(), axes, steps)))
    return failure();
  SymShape offs(rank, SymExpr(0)), sizes = s;
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> ax = nc.normAxis(axes[i], rank);
    if (failed(ax))
      return failure();
    if (steps[i] != 1)
      return nc.error() << "step " << steps[i] << " of a dynamic slice is not "
                        << "supported (steps of 1 are); compile with a static "
                           "--input-shape";
    FailureOr<SymExpr> start =
        clampSliceBound(nc, (*starts)[i], s[*ax], "start");
    FailureOr<SymExpr> end = clampSliceBound(nc, (*ends)[i], s[*ax], "end");
    if (failed(start) || failed(end))
      return failure();
    SymExpr size = imp.symbols.canonical(*end - *start);
    if (!imp.symbols.provablyNonNegative(size)) {
      if (!imp.symbols.provablyNonNegative(-size))
        return nc.error() << "Slice [" << imp.symbols.str(*start) << ", "
                          << imp.symbols.str(*end)
                          << ") may be empty or not depending on run-time "
                             "sizes; compile with a static --input-shape";
      size = 0;
      *start = 0; // an empty slice at an in-bounds offset
    }
    offs[*ax] = *start;
    sizes[*ax] = size;
  }
  nc.results.push_back(imp.extractSlice(nc.loc, x, offs, sizes,
                                        SmallVector<int64_t>(rank, 1)));
  return success();
}

static LogicalResult importSlice(NodeContext &nc) {
  if (failed(checkArity(nc, 3, 5)))
    return failure();
  Importer &imp = nc.imp;
  Value x = nc.in(0);
  auto symbolic = [&](size_t i) {
    std::optional<Lit> l = imp.getSymLit(nc.in(i));
    return l && l->isSymbolic();
  };
  if (Importer::isDynamic(x) || symbolic(1) || symbolic(2))
    return importSliceDynamic(nc);
  ArrayRef<int64_t> s = Importer::shapeOf(x);
  int64_t rank = s.size();
  auto starts = nc.constInts(1, "starts");
  auto ends = nc.constInts(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (failed(sliceAxesAndSteps(nc, starts->size(), ends->size(), axes, steps)))
    return failure();

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

void onnx_import::registerShapeOps(OpRegistry &r) {
  r.add("DepthToSpace", {13},
        [](NodeContext &nc) { return importDepthSpace(nc, true); });
  r.add("SpaceToDepth", {13},
        [](NodeContext &nc) { return importDepthSpace(nc, false); });
  r.add("Tile", {13}, importTile);
  constexpr ShapeSupport dyn = ShapeSupport::Dynamic;
  r.add("Shape", {13, 15, 19, 21}, importShape, dyn);
  r.add("Size", {13, 19, 21}, importSize, dyn);
  r.add("Reshape", {13, 14, 19, 21}, importReshape, dyn);
  r.add("Flatten", {13, 21}, importFlatten, dyn);
  r.add("Squeeze", {13, 21}, importSqueeze, dyn);
  r.add("Unsqueeze", {13, 21}, importUnsqueeze, dyn);
  r.add("Transpose", {13, 21}, importTranspose, dyn);
  r.add("Expand", {13}, importExpand, dyn);
  r.add("Concat", {13}, importConcat, dyn);
  r.add("Split", {13, 18}, importSplit);
  r.add("Slice", {13}, importSlice, dyn);
}
