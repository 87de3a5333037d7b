//===- TransposeRescale.cpp - K-major right operands for FP8 products -----===//
//
// Part of fp8-opt. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "Quantization.h"
#include "RewriteConfig.h"

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <tuple>

#define DEBUG_TYPE "fp8-transpose-rescale"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8TRANSPOSERESCALE
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// The layout for an N x K operand whose expanded block (over all dims) is
/// `block`; named layouts where they fit.
ScaleLayoutAttr layoutFor(MLIRContext *ctx, ArrayRef<int64_t> shape,
                          ArrayRef<int64_t> block) {
  const size_t r = shape.size();
  if (block[r - 2] == 1 && block[r - 1] == shape[r - 1])
    return ScaleLayoutAttr::get(ctx, Granularity::Row);
  if (block[r - 2] == shape[r - 2] && block[r - 1] == 1)
    return ScaleLayoutAttr::get(ctx, Granularity::Col);
  return ScaleLayoutAttr::get(ctx, Granularity::Block,
                              ArrayRef<int64_t>{block[r - 2], block[r - 1]});
}

/// Whether a K-major kernel can apply scales of this block shape: constant
/// along N within a block row (per row, 1xB) or square blocks.
bool kMajorFriendly(ArrayRef<int64_t> block) {
  const size_t r = block.size();
  return block[r - 2] == 1 || block[r - 2] == block[r - 1];
}

/// A scaled_matmul with an N-major right operand made K-major (what the
/// tensor-core kernels read): a pass-through fp8.transpose where the
/// scales' blocks allow it, else a re-quantization along K -- from the
/// high-precision source when the operand is a quantize, by
/// dequantize-requantize otherwise.
struct MakeRhsKMajor : OpRewritePattern<ScaledMatmulOp> {
  MakeRhsKMajor(MLIRContext *ctx, bool remarks)
      : OpRewritePattern(ctx), remarks(remarks) {}

  LogicalResult matchAndRewrite(ScaledMatmulOp op,
                                PatternRewriter &b) const override {
    auto rhsType = op.getRhs().getType();
    if (op.getTransposeRhs() || !rhsType.hasStaticShape())
      return b.notifyMatchFailure(op, "rhs already K-major or dynamic");
    MLIRContext *ctx = b.getContext();
    const int64_t r = rhsType.getRank();
    SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
    std::swap(perm[r - 2], perm[r - 1]);
    SmallVector<int64_t> tShape;
    for (int64_t p : perm)
      tShape.push_back(rhsType.getDimSize(p));
    auto tType = rhsType.clone(tShape);
    ScaleLayoutAttr src = op.getRhsLayout();
    Location loc = op.getLoc();
    Type scaleElt = op.getRhsScale().getType().getElementType();

    ScaleLayoutAttr dst;
    Value q, scale;
    if (src.isPerTensor()) {
      dst = src;
    } else {
      SmallVector<int64_t> block = *src.getExpandedBlock(rhsType.getShape());
      SmallVector<int64_t> permuted;
      for (int64_t p : perm)
        permuted.push_back(block[p]);
      if (kMajorFriendly(permuted))
        dst = layoutFor(ctx, tShape, permuted);
    }
    if (dst) {
      auto scaleType =
          RankedTensorType::get(*dst.getScaleShape(tShape), scaleElt);
      auto t = TransposeOp::create(b, loc, tType, scaleType, op.getRhs(),
                                   op.getRhsScale(), src, perm, dst,
                                   RecipeAttrInterface());
      q = t.getResult();
      scale = t.getResultScale();
      remark(op, "rhs made K-major: the scales pass through (nothing "
                 "is rounded again)");
    } else {
      // Blocks along N: the same block size along K instead.
      SmallVector<int64_t> block = *src.getExpandedBlock(rhsType.getShape());
      int64_t size = block[r - 1];
      dst = ScaleLayoutAttr::get(ctx, Granularity::Block,
                                 ArrayRef<int64_t>{1, size});
      RecipeAttrInterface recipe;
      if (auto cs = op.getRhsScale().getDefiningOp<ComputeScaleOp>())
        if (!cs.getRecipe().usesHistory())
          recipe = cs.getRecipe();
      if (!recipe)
        recipe = isa<Float8E8M0FNUType>(scaleElt)
                     ? RecipeAttrInterface(
                           MXScalingAttr::get(ctx, E8M0Rounding::RCeil))
                     : RecipeAttrInterface(
                           CurrentScalingAttr::get(ctx, 0.0f, false));
      auto scaleType =
          RankedTensorType::get(*dst.getScaleShape(tShape), scaleElt);
      Format format = *getFormat(rhsType.getElementType());
      if (auto source = op.getRhs().getDefiningOp<QuantizeOp>()) {
        // Re-quantize from the high-precision values: one rounding only.
        Value x = source.getInput();
        auto xType = cast<RankedTensorType>(x.getType());
        Value init =
            tensor::EmptyOp::create(b, loc, tShape, xType.getElementType());
        Value xt =
            linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0];
        std::tie(q, scale) =
            quantizeFromAmax(b, loc, xt, dst, recipe, format, scaleElt);
        remark(op, "rhs re-quantized K-major from the high-precision "
                   "source (its blocks ran along N)");
      } else {
        auto t = TransposeOp::create(b, loc, tType, scaleType, op.getRhs(),
                                     op.getRhsScale(), src, perm, dst, recipe);
        q = t.getResult();
        scale = t.getResultScale();
        remark(op, "rhs re-quantized K-major by dequantize-requantize "
                   "(its blocks ran along N; no high-precision source "
                   "in reach)");
      }
    }
    b.replaceOpWithNewOp<ScaledMatmulOp>(
        op, op.getType(), op.getLhs(), op.getLhsScale(), q, scale, op.getBias(),
        op.getLhsLayout(), dst, /*transpose_rhs=*/true, op.getEpilogue(),
        op.getLhsScaleMMajorAttr());
    return success();
  }

private:
  void remark(Operation *op, const char *message) const {
    if (remarks)
      op->emitRemark(message);
  }
  bool remarks;
};

/// The patterns alone (no folding, no constant CSE, no region
/// simplification): the pass changes the products and nothing else.
struct FP8TransposeRescalePass
    : fp8::impl::FP8TransposeRescaleBase<FP8TransposeRescalePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFP8TransposeRescalePatterns(patterns, remarks);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     localRewriteConfig())))
      signalPassFailure();
  }
};
} // namespace

void fp8::populateFP8TransposeRescalePatterns(RewritePatternSet &patterns,
                                              bool remarks) {
  patterns.add<MakeRhsKMajor>(patterns.getContext(), remarks);
}
