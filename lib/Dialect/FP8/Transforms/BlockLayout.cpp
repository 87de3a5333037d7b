//===- BlockLayout.cpp - Pad FP8 products to whole scale blocks -----------===//
//
// Part of fp8-opt. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "RewriteConfig.h"

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"

#include <numeric>

#define DEBUG_TYPE "fp8-block-layout"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8BLOCKLAYOUT
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// Block size along each dimension of a static operand (1 where the layout
/// does not split the dimension into multi-element blocks).
SmallVector<int64_t> blockSizes(ScaleLayoutAttr layout, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> sizes(shape.size(), 1);
  if (layout.getGranularity() != Granularity::Block)
    return sizes;
  SmallVector<int64_t> expanded = *layout.getExpandedBlock(shape);
  for (auto [i, b] : llvm::enumerate(expanded))
    sizes[i] = b;
  return sizes;
}

Value padTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> target) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getShape() == target)
    return v;
  SmallVector<OpFoldResult> low, high;
  for (auto [d, t] : llvm::zip_equal(type.getShape(), target)) {
    low.push_back(b.getIndexAttr(0));
    high.push_back(b.getIndexAttr(t - d));
  }
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  return tensor::PadOp::create(b, loc, type.clone(target), v, low, high, zero);
}

/// Stores the lhs scales of a product M-major, 16-byte aligned along M
/// (TMA's stride rule): linalg.transpose of the two trailing dims, then a
/// pad (with scale 1, never read: marked kUnreadPaddingAttr) to the aligned
/// size; marks the op m_major.
struct StoreLhsScalesMMajor : OpRewritePattern<ScaledMatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ScaledMatmulOp op,
                                PatternRewriter &b) const override {
    auto scaleType = cast<RankedTensorType>(op.getLhsScale().getType());
    if (op.getLhsScaleMMajor() || op.getLhsLayout().isPerTensor() ||
        !scaleType.hasStaticShape() || scaleType.getRank() < 2)
      return b.notifyMatchFailure(op, "m_major, per-tensor or dynamic");
    Type elt = scaleType.getElementType();
    const int64_t bytes = std::max<int64_t>(1, elt.getIntOrFloatBitWidth() / 8);
    const int64_t pad = 16 / bytes;
    SmallVector<int64_t> canonical(scaleType.getShape());
    const int64_t r = canonical.size();
    SmallVector<int64_t> swapped(canonical);
    std::swap(swapped[r - 1], swapped[r - 2]);
    SmallVector<int64_t> stored = mMajorScaleShape(canonical, pad);
    Location loc = op.getLoc();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
    std::swap(perm[r - 1], perm[r - 2]);
    Value init = tensor::EmptyOp::create(b, loc, swapped, elt);
    Value t = linalg::TransposeOp::create(b, loc, op.getLhsScale(), init, perm)
                  ->getResult(0);
    if (stored != swapped) {
      SmallVector<OpFoldResult> low(r, b.getIndexAttr(0)), high;
      for (auto [d, s] : llvm::zip_equal(swapped, stored))
        high.push_back(b.getIndexAttr(s - d));
      Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(elt, 1.0));
      auto padOp = tensor::PadOp::create(b, loc, scaleType.clone(stored), t,
                                         low, high, one);
      // The kernel never stores the rows these entries scale:
      // fp8-untie-shared-fills leaves them undefined (no fill kernel).
      padOp->setAttr(kUnreadPaddingAttr, b.getUnitAttr());
      t = padOp;
    }
    b.modifyOpInPlace(op, [&] {
      op.getLhsScaleMutable().assign(t);
      op.setLhsScaleMMajor(pad);
    });
    return success();
  }
};

/// A static product whose M, N or K is not a multiple of its blocks,
/// computed on operands zero-padded to whole blocks (then rounded up to
/// `multiple`), its result sliced back.
struct PadBlockedProduct : OpRewritePattern<ScaledMatmulOp> {
  PadBlockedProduct(MLIRContext *ctx, int64_t multiple)
      : OpRewritePattern(ctx), multiple(multiple) {}

  LogicalResult matchAndRewrite(ScaledMatmulOp op,
                                PatternRewriter &b) const override {
    auto lhsType = op.getLhs().getType(), rhsType = op.getRhs().getType();
    if (!lhsType.hasStaticShape() || !rhsType.hasStaticShape())
      return b.notifyMatchFailure(op, "dynamic operand");
    // A product without elements (an empty batch) has nothing to pad, and
    // no slice of an empty dimension is in bounds (fuzzing: a 0x4 batch
    // made a tensor.extract_slice that failed to verify).
    if (op.getType().getNumElements() == 0)
      return b.notifyMatchFailure(op, "empty product");
    const bool t = op.getTransposeRhs();
    const int64_t lr = lhsType.getRank(), rr = rhsType.getRank();
    SmallVector<int64_t> lb = blockSizes(op.getLhsLayout(), lhsType.getShape());
    SmallVector<int64_t> rb = blockSizes(op.getRhsLayout(), rhsType.getShape());
    // Block sizes along M, N and K (both operands must be whole along K).
    const int64_t bm = lb[lr - 2];
    const int64_t bk = std::lcm(lb[lr - 1], t ? rb[rr - 1] : rb[rr - 2]);
    const int64_t bn = t ? rb[rr - 2] : rb[rr - 1];
    auto round = [&](int64_t d, int64_t b) -> int64_t {
      if (b <= 1 || d % b == 0)
        return d;
      return int64_t(llvm::alignTo(llvm::alignTo(d, b), multiple));
    };
    const int64_t m = op.getM(), n = op.getN(), k = op.getK();
    const int64_t m2 = round(m, bm), n2 = round(n, bn), k2 = round(k, bk);
    if (m2 == m && n2 == n && k2 == k)
      return b.notifyMatchFailure(op, "whole blocks already");

    Location loc = op.getLoc();
    SmallVector<int64_t> lshape(lhsType.getShape());
    lshape[lr - 2] = m2;
    lshape[lr - 1] = k2;
    SmallVector<int64_t> rshape(rhsType.getShape());
    rshape[rr - 2] = t ? n2 : k2;
    rshape[rr - 1] = t ? k2 : n2;
    auto resultType = op.getType();
    SmallVector<int64_t> oshape(resultType.getShape());
    oshape[oshape.size() - 2] = m2;
    oshape[oshape.size() - 1] = n2;
    Value bias = op.getBias();
    SmallVector<int64_t> bshape;
    if (bias) {
      auto biasType = cast<RankedTensorType>(bias.getType());
      bshape.assign(biasType.getShape().begin(), biasType.getShape().end());
      bshape.back() = n2;
      if (bshape.size() > 1)
        bshape[bshape.size() - 2] = m2;
    }
    // The scales keep their shapes: ceil(d / b) is the same for d and its
    // padded size, as the padding completes the last, partial block. A
    // padded product that would not verify is left alone.
    Value lhs = padTo(b, loc, op.getLhs(), lshape);
    Value rhs = padTo(b, loc, op.getRhs(), rshape);
    if (bias)
      bias = padTo(b, loc, bias, bshape);
    auto padded = ScaledMatmulOp::create(
        b, loc, resultType.clone(oshape), lhs, op.getLhsScale(), rhs,
        op.getRhsScale(), bias, op.getLhsLayout(), op.getRhsLayout(), t,
        op.getEpilogue(), op.getLhsScaleMMajorAttr());
    if (failed(mlir::verify(padded))) {
      b.eraseOp(padded);
      for (Value v : {lhs, rhs, bias})
        if (v && v.use_empty() && v.getDefiningOp<tensor::PadOp>())
          b.eraseOp(v.getDefiningOp());
      return b.notifyMatchFailure(op, "the padded product does not verify");
    }
    SmallVector<OpFoldResult> offsets(oshape.size(), b.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(oshape.size(), b.getIndexAttr(1));
    for (int64_t d : resultType.getShape())
      sizes.push_back(b.getIndexAttr(d));
    b.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, resultType, padded.getResult(), offsets, sizes, strides);
    return success();
  }

private:
  int64_t multiple;
};

/// Padding first, then (scale-storage=tma) the M-major lhs scales, each
/// as its patterns alone (RewriteConfig.h).
struct FP8BlockLayoutPass : fp8::impl::FP8BlockLayoutBase<FP8BlockLayoutPass> {
  using Base::Base;

  void runOnOperation() override {
    if (multiple < 1 || multiple > kMaxBlockSize) {
      getOperation()->emitError()
          << "fp8-block-layout: multiple must be in [1, " << kMaxBlockSize
          << "]";
      return signalPassFailure();
    }
    RewritePatternSet pads(&getContext());
    populateFP8BlockLayoutPatterns(pads, multiple);
    if (failed(applyPatternsGreedily(getOperation(), std::move(pads),
                                     localRewriteConfig())))
      return signalPassFailure();
    if (scaleStorage != ScaleStorage::TMA)
      return;
    RewritePatternSet mMajor(&getContext());
    populateFP8LhsScalesMMajorPatterns(mMajor);
    if (failed(applyPatternsGreedily(getOperation(), std::move(mMajor),
                                     localRewriteConfig())))
      signalPassFailure();
  }
};
} // namespace

void fp8::populateFP8BlockLayoutPatterns(RewritePatternSet &patterns,
                                         int64_t multiple) {
  patterns.add<PadBlockedProduct>(patterns.getContext(), multiple);
}

void fp8::populateFP8LhsScalesMMajorPatterns(RewritePatternSet &patterns) {
  patterns.add<StoreLhsScalesMMajor>(patterns.getContext());
}
