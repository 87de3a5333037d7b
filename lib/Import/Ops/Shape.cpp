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

void onnx_import::registerShapeOps(OpRegistry &r) {
  r.add("DepthToSpace", {13},
        [](NodeContext &nc) { return importDepthSpace(nc, true); });
  r.add("SpaceToDepth", {13},
        [](NodeContext &nc) { return importDepthSpace(nc, false); });
  r.add("Tile", {13}, importTile);
  r.add("Shape", {13, 15, 19, 21}, importShape);
  r.add("Size", {13, 19, 21}, importSize);
  r.add("Reshape", {13, 14, 19, 21}, importReshape);
  r.add("Flatten", {13, 21}, importFlatten);
  r.add("Squeeze", {13, 21}, importSqueeze);
  r.add("Unsqueeze", {13, 21}, importUnsqueeze);
  r.add("Transpose", {13, 21}, importTranspose);
  r.add("Expand", {13}, importExpand);
  r.add("Concat", {13}, importConcat);
  r.add("Split", {13, 18}, importSplit);
  r.add("Slice", {13}, importSlice);
}
