//===- PackExternalWeights.cpp - Weight quantization for the packer -------===//
//
// Part of fp8-opt. See Passes.td (fp8-pack-external-weights) and the
// descriptions of fp8.packed_weight and fp8.rounded_weight: local rewrites
// that fold the recipe's quantization of a weight that stays in its file,
// then its K-major transpose, then its zero padding, into one
// fp8.packed_weight; and a high-precision product's BF16 rounding of one,
// then its transpose, into one fp8.rounded_weight.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8PACKEXTERNALWEIGHTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// A copy of `op` with other result types and permutation.
PackedWeightOp clonePacked(PatternRewriter &rewriter, PackedWeightOp op,
                           Type result, Type scale,
                           DenseI64ArrayAttr permutation) {
  return PackedWeightOp::create(
      rewriter, op.getLoc(), result, scale, op.getNameAttr(),
      op.getLocationAttr(), op.getOffsetAttr(), op.getLengthAttr(),
      op.getSourceTypeAttr(), op.getLayoutAttr(), op.getRecipeAttr(),
      op.getFormatAttr(), permutation);
}

/// quantize(w, compute_scale(amax(w))) of an external weight w.
struct PackQuantizedWeight : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto weight = op.getInput().getDefiningOp<ExternalWeightOp>();
    if (!weight)
      return rewriter.notifyMatchFailure(op, "not an external weight");
    auto source = cast<RankedTensorType>(weight.getType());
    if (!isa<Float32Type, Float16Type, BFloat16Type>(source.getElementType()))
      return rewriter.notifyMatchFailure(op, "no FP32/FP16/BF16 source");
    auto scale = op.getScale().getDefiningOp<ComputeScaleOp>();
    if (!scale || scale.getPrevious() || scale.getRecipe().usesHistory())
      return rewriter.notifyMatchFailure(op, "not a scale of the weight alone");
    auto amax = scale.getAmax().getDefiningOp<AmaxOp>();
    if (!amax || amax.getInput() != op.getInput() ||
        amax.getLayout() != op.getLayout())
      return rewriter.notifyMatchFailure(op, "not the weight's own amax");
    if (getFormat(op.getType().getElementType()) != scale.getFormat())
      return rewriter.notifyMatchFailure(op, "format mismatch");
    auto packed = PackedWeightOp::create(
        rewriter, op.getLoc(), op.getType(), scale.getType(),
        weight.getNameAttr(), weight.getLocationAttr(),
        weight.getOffsetAttr(), weight.getLengthAttr(), TypeAttr::get(source),
        op.getLayoutAttr(), scale.getRecipeAttr(), scale.getFormatAttr(),
        DenseI64ArrayAttr());
    // The scales are the packed op's too: every user of them takes those.
    rewriter.replaceAllUsesWith(scale.getResult(), packed.getScale());
    rewriter.replaceOp(op, packed.getResult());
    return success();
  }
};

/// A pass-through transpose (K-major weights) of a packed weight.
struct PackTransposedWeight : OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto packed = op.getInput().getDefiningOp<PackedWeightOp>();
    if (!packed || op.getScale() != packed.getScale() ||
        packed.getPermutation() ||
        packed.getResult().getType().getShape() !=
            ArrayRef<int64_t>(packed.getPermutedShape()))
      return rewriter.notifyMatchFailure(op, "not an unpermuted packed weight");
    if (!op.isPassThrough())
      return rewriter.notifyMatchFailure(op, "re-quantizes");
    auto transposed =
        clonePacked(rewriter, packed, op.getResult().getType(),
                    op.getResultScale().getType(), op.getPermutationAttr());
    rewriter.replaceOp(op, transposed.getResults());
    return success();
  }
};

/// tensor.pad of a packed weight's data with FP8 zeros at the high end.
struct PackPaddedWeight : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp op,
                                PatternRewriter &rewriter) const override {
    auto packed = op.getSource().getDefiningOp<PackedWeightOp>();
    if (!packed)
      return rewriter.notifyMatchFailure(op, "not a packed weight");
    if (!op.getResultType().hasStaticShape() ||
        !llvm::all_of(op.getMixedLowPad(), isZeroInteger))
      return rewriter.notifyMatchFailure(op, "not a static high padding");
    FloatAttr zero;
    Value padding = op.getConstantPaddingValue();
    if (!padding || !matchPattern(padding, m_Constant(&zero)) ||
        !zero.getValue().bitcastToAPInt().isZero())
      return rewriter.notifyMatchFailure(op, "padding is not +0");
    auto padded = clonePacked(rewriter, packed, op.getResultType(),
                              packed.getScale().getType(),
                              packed.getPermutationAttr());
    // Same scales: their users take the padded weight's, so that one
    // packed weight (and one copy of its scales) remains.
    rewriter.replaceAllUsesWith(packed.getScale(), padded.getScale());
    rewriter.replaceOp(op, padded.getResult());
    return success();
  }
};

/// A rounded weight of the bytes `file` (an fp8.external_weight or
/// fp8.rounded_weight) names, of type `source` (`permutation` empty: none).
template <typename FileOp>
RoundedWeightOp createRounded(PatternRewriter &rewriter, Location loc,
                              Type result, FileOp file, Type source,
                              ArrayRef<int64_t> permutation) {
  return RoundedWeightOp::create(
      rewriter, loc, result, file.getNameAttr(), file.getLocationAttr(),
      file.getOffsetAttr(), file.getLengthAttr(), TypeAttr::get(source),
      permutation.empty() ? DenseI64ArrayAttr()
                          : rewriter.getDenseI64ArrayAttr(permutation));
}

/// arith.truncf to BF16 (round to nearest even) of an external FP32 weight,
/// or of the exact arith.extf to FP32 of an external FP16/BF16 one: what
/// fp8-high-precision-products makes of a product's weight.
struct RoundExternalWeight : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !type.getElementType().isBF16())
      return rewriter.notifyMatchFailure(op, "not a tensor rounded to bf16");
    if (op.getRoundingmodeAttr() &&
        *op.getRoundingmode() != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "not to nearest even");
    Value in = op.getIn();
    if (auto ext = in.getDefiningOp<arith::ExtFOp>())
      in = ext.getIn(); // f16/bf16 -> f32 is exact
    auto weight = in.getDefiningOp<ExternalWeightOp>();
    if (!weight)
      return rewriter.notifyMatchFailure(op, "not an external weight");
    if (!isa<Float32Type, Float16Type, BFloat16Type>(
            weight.getType().getElementType()))
      return rewriter.notifyMatchFailure(op, "no FP32/FP16/BF16 source");
    rewriter.replaceOp(op, createRounded(rewriter, op.getLoc(), type, weight,
                                         weight.getType(), {}));
    return success();
  }
};

/// linalg.transpose of an unpermuted rounded weight, or of an external
/// BF16 weight (which needs no rounding).
struct RoundTransposedWeight : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    Value in = op.getInput();
    RoundedWeightOp permuted;
    if (auto rounded = in.getDefiningOp<RoundedWeightOp>()) {
      if (rounded.getPermutation())
        return rewriter.notifyMatchFailure(op, "already permuted");
      permuted = createRounded(rewriter, op.getLoc(), type, rounded,
                               rounded.getSourceType(), op.getPermutation());
    } else if (auto weight = in.getDefiningOp<ExternalWeightOp>();
               weight && weight.getType().getElementType().isBF16()) {
      permuted = createRounded(rewriter, op.getLoc(), type, weight,
                               weight.getType(), op.getPermutation());
    } else {
      return rewriter.notifyMatchFailure(op, "not a rounded weight");
    }
    rewriter.replaceOp(op, permuted.getResult());
    return success();
  }
};

struct PackExternalWeightsPass
    : fp8::impl::FP8PackExternalWeightsBase<PackExternalWeightsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populatePackExternalWeightsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void fp8::populatePackExternalWeightsPatterns(RewritePatternSet &patterns) {
  patterns.add<PackQuantizedWeight, PackTransposedWeight, PackPaddedWeight,
               RoundExternalWeight, RoundTransposedWeight>(
      patterns.getContext());
}
