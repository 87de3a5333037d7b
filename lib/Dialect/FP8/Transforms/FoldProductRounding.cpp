//===- FoldProductRounding.cpp - Products write their consumer's type ----===//
//
// Part of fp8-opt. See Passes.td (fp8-fold-product-rounding). The decision
// (`roundedProduct`: which rounding a product absorbs) is separate from the
// rewrite (`FoldRoundingIntoProduct`).
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "RewriteConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FOLDPRODUCTROUNDING
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// The FP32 -> f16/bf16 rounding `op` applies to each element of its one
/// operand: an `arith.truncf` on tensors, or a linalg.generic with identity
/// maps, parallel loops and a body that only truncates its input. Returns
/// the operand; null when `op` is no such rounding.
Value roundedOperand(Operation *op) {
  auto isNarrowFloat = [](Type t) {
    Type e = getElementTypeOrSelf(t);
    return e.isF16() || e.isBF16();
  };
  if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
    if (!isa<RankedTensorType>(trunc.getType()) ||
        !getElementTypeOrSelf(trunc.getIn().getType()).isF32() ||
        !isNarrowFloat(trunc.getType()) || trunc.getRoundingmodeAttr() ||
        trunc.getFastmath().value_or(arith::FastMathFlags::none) !=
            arith::FastMathFlags::none)
      return {};
    return trunc.getIn();
  }
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureTensorSemantics() ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return {};
  Block &body = generic.getRegion().front();
  if (body.getOperations().size() != 2)
    return {};
  auto trunc = dyn_cast<arith::TruncFOp>(body.front());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (!trunc || trunc.getIn() != body.getArgument(0) ||
      yield.getValues().size() != 1 || yield.getValues()[0] != trunc ||
      trunc.getRoundingmodeAttr() || !trunc.getIn().getType().isF32() ||
      !isNarrowFloat(trunc.getType()))
    return {};
  return generic.getDpsInputs()[0];
}

/// The product whose FP32 result `v` is, through reshapes that nothing else
/// reads, when nothing else reads the product either; `reshapes` receives
/// the reshapes from the product outwards.
ScaledMatmulOp roundedProduct(Value v, SmallVectorImpl<Operation *> &reshapes) {
  while (v.hasOneUse()) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return {};
    if (auto product = dyn_cast<ScaledMatmulOp>(def)) {
      std::reverse(reshapes.begin(), reshapes.end());
      return product;
    }
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(def))
      return {};
    reshapes.push_back(def);
    v = def->getOperand(0);
  }
  return {};
}

/// `round(product)` -> `product` rounding once to the narrow type. The
/// product's definition is an FP32 value rounded once to its result type,
/// so an FP32 result rounded again equals the narrow result: bit-identical,
/// and the GPU kernel writes 2 bytes per element instead of 4 plus a kernel
/// that reads them back.
struct FoldRoundingIntoProduct : RewritePattern {
  FoldRoundingIntoProduct(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    Value operand = roundedOperand(op);
    if (!operand)
      return failure();
    SmallVector<Operation *> reshapes;
    ScaledMatmulOp product = roundedProduct(operand, reshapes);
    if (!product || !product.getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a product's only use");
    Type narrow = getElementTypeOrSelf(op->getResult(0).getType());
    rewriter.setInsertionPoint(product);
    Operation *rounded = rewriter.clone(*product);
    rounded->getResult(0).setType(product.getType().clone(narrow));
    Value v = rounded->getResult(0);
    for (Operation *reshape : reshapes) {
      rewriter.setInsertionPoint(reshape);
      auto type = cast<RankedTensorType>(reshape->getResult(0).getType());
      if (auto c = dyn_cast<tensor::CollapseShapeOp>(reshape))
        v = tensor::CollapseShapeOp::create(rewriter, c.getLoc(),
                                            type.clone(narrow), v,
                                            c.getReassociationIndices());
      else {
        auto e = cast<tensor::ExpandShapeOp>(reshape);
        v = tensor::ExpandShapeOp::create(
            rewriter, e.getLoc(), type.clone(narrow), v,
            e.getReassociationIndices(), e.getMixedOutputShape());
      }
    }
    rewriter.replaceOp(op, v);
    return success();
  }
};

struct FP8FoldProductRoundingPass
    : fp8::impl::FP8FoldProductRoundingBase<FP8FoldProductRoundingPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFP8FoldProductRoundingPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     localRewriteConfig())))
      return signalPassFailure();
  }
};
} // namespace

void fp8::populateFP8FoldProductRoundingPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldRoundingIntoProduct>(patterns.getContext());
}
