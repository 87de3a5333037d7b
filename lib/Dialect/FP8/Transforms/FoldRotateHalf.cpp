//===- FoldRotateHalf.cpp - RoPE's rotate-half as an element-wise op ------===//
//
// Part of fp8-opt. Rotary embeddings multiply `rotate_half(x)` by the sines:
// exporters write it as two slices of x's last dimension, a negation of the
// second, and a concatenation of the two in swapped order -- after import,
// tensor.extract_slice x 2, a unary linalg.generic and tensor.insert_slice
// x 2. Element-wise fusion stops at the slices, so the GPU ran a negation
// kernel and two copy kernels per rotated tensor and its consumer re-read
// the concatenation. Here the pattern becomes one element-wise generic that
// reads x at (d + h) mod n along the rotated dimension and applies the
// first or second half's function by position; fusion then carries it into
// the sine product. Exact: the same elements, the same operations.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace {

/// One half of the concatenation: `fn(x[.., start : start + h, ..])`, `fn`
/// the unary element-wise generic `op` (null: the slice itself).
struct Half {
  Value source;
  int64_t start = 0;
  linalg::GenericOp op;
};

/// `v` as a function of a slice of `dim` of length `h` that is full in
/// every other dimension.
std::optional<Half> matchHalf(Value v, unsigned dim, int64_t h) {
  Half half;
  if (auto g = v.getDefiningOp<linalg::GenericOp>()) {
    if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
        g.getNumReductionLoops() != 0 || !g->hasOneUse() ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        !g.getRegion().front().getOps<linalg::IndexOp>().empty() ||
        !g.getRegion().front().getArgument(1).use_empty())
      return std::nullopt;
    half.op = g;
    v = g.getDpsInputOperand(0)->get();
  }
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !slice.hasUnitStride())
    return std::nullopt;
  auto sourceType = dyn_cast<RankedTensorType>(slice.getSourceType());
  if (!sourceType || !sourceType.hasStaticShape() ||
      slice.getType().getRank() != sourceType.getRank())
    return std::nullopt;
  for (unsigned i = 0; i < sourceType.getRank(); ++i) {
    if (slice.isDynamicOffset(i) || slice.isDynamicSize(i))
      return std::nullopt;
    int64_t off = slice.getStaticOffset(i), size = slice.getStaticSize(i);
    if (i == dim) {
      if (size != h)
        return std::nullopt;
      half.start = off;
    } else if (off != 0 || size != sourceType.getDimSize(i)) {
      return std::nullopt;
    }
  }
  half.source = slice.getSource();
  return half;
}

/// insert_slice(b, insert_slice(a, dest) at 0) at h along one dimension of
/// length 2h, with a = f(x[h : 2h]) and b = g(x[0 : h]) (either order of
/// the two inserts).
struct FoldRotateHalf : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp outer,
                                PatternRewriter &rewriter) const override {
    auto inner = outer.getDest().getDefiningOp<tensor::InsertSliceOp>();
    if (!inner || !inner->hasOneUse())
      return failure();
    RankedTensorType type = outer.getType();
    if (!type.hasStaticShape() || !outer.hasUnitStride() ||
        !inner.hasUnitStride())
      return failure();
    // The dimension both inserts cover half of; full in the others.
    std::optional<unsigned> dim;
    for (tensor::InsertSliceOp ins : {outer, inner}) {
      if (ins.getSourceType().getRank() != type.getRank())
        return failure();
      for (unsigned i = 0; i < type.getRank(); ++i) {
        if (ins.isDynamicOffset(i) || ins.isDynamicSize(i))
          return failure();
        if (ins.getStaticSize(i) == type.getDimSize(i) &&
            ins.getStaticOffset(i) == 0)
          continue;
        if (dim && *dim != i)
          return failure();
        dim = i;
      }
    }
    if (!dim)
      return failure();
    const int64_t n = type.getDimSize(*dim);
    if (n % 2 != 0)
      return failure();
    const int64_t h = n / 2;
    tensor::InsertSliceOp first = inner, second = outer;
    if (inner.getStaticOffset(*dim) == h)
      std::swap(first, second);
    if (first.getStaticOffset(*dim) != 0 || second.getStaticOffset(*dim) != h ||
        first.getStaticSize(*dim) != h || second.getStaticSize(*dim) != h)
      return failure();
    std::optional<Half> a = matchHalf(first.getSource(), *dim, h);
    std::optional<Half> b = matchHalf(second.getSource(), *dim, h);
    if (!a || !b || a->source != b->source || a->start != h || b->start != 0 ||
        cast<RankedTensorType>(a->source.getType()).getShape() !=
            type.getShape())
      return failure();
    for (const Half &half : {*a, *b}) {
      Type produced = half.op ? getElementTypeOrSelf(half.op->getResult(0))
                              : getElementTypeOrSelf(half.source);
      if (produced != type.getElementType())
        return failure();
    }

    Location loc = outer.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    const unsigned rank = type.getRank();
    SmallVector<AffineExpr> rotated;
    for (unsigned i = 0; i < rank; ++i) {
      AffineExpr d = getAffineDimExpr(i, ctx);
      rotated.push_back(i == *dim ? (d + h) % n : d);
    }
    AffineMap inMap = AffineMap::get(rank, 0, rotated, ctx);
    AffineMap outMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto fold = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{a->source}, ValueRange{init},
        ArrayRef<AffineMap>{inMap, outMap}, iters,
        [&](OpBuilder &bb, Location l, ValueRange args) {
          auto apply = [&](Half half) -> Value {
            if (!half.op)
              return args[0];
            IRMapping map;
            Block &body = half.op.getRegion().front();
            map.map(body.getArgument(0), args[0]);
            for (Operation &op : body.without_terminator())
              bb.clone(op, map);
            return map.lookup(body.getTerminator()->getOperand(0));
          };
          Value va = apply(*a), vb = apply(*b);
          Value pos = linalg::IndexOp::create(bb, l, *dim);
          Value inFirst =
              arith::CmpIOp::create(bb, l, arith::CmpIPredicate::ult, pos,
                                    arith::ConstantIndexOp::create(bb, l, h));
          linalg::YieldOp::create(
              bb, l,
              ValueRange{arith::SelectOp::create(bb, l, inFirst, va, vb)});
        });
    rewriter.replaceOp(outer, fold.getResults());
    return success();
  }
};

} // namespace

void fp8::populateFP8FoldRotateHalfPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldRotateHalf>(patterns.getContext());
}
