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
#include "mlir/IR/IRMapping.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FOLDPRODUCTROUNDING
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// A plain FP32 -> f16/bf16 rounding: no rounding mode, no fast-math flags.
bool isPlainRounding(arith::TruncFOp trunc) {
  Type to = getElementTypeOrSelf(trunc.getType());
  return getElementTypeOrSelf(trunc.getIn().getType()).isF32() &&
         (to.isF16() || to.isBF16()) && !trunc.getRoundingmodeAttr() &&
         trunc.getFastmath().value_or(arith::FastMathFlags::none) ==
             arith::FastMathFlags::none;
}

/// The FP32 -> f16/bf16 rounding `op` applies to each element of its one
/// operand: an `arith.truncf` on tensors, or a linalg.generic with identity
/// maps, parallel loops and a body that only truncates its input. Returns
/// the operand; null when `op` is no such rounding.
Value roundedOperand(Operation *op) {
  if (auto trunc = dyn_cast<arith::TruncFOp>(op))
    return isa<RankedTensorType>(trunc.getType()) && isPlainRounding(trunc)
               ? trunc.getIn()
               : Value();
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
      !isPlainRounding(trunc))
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
    SmallVector<Operation *> chain;
    ScaledMatmulOp product = roundedProduct(operand, chain);
    if (!product || !product.getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a product's only use");
    // The product and its reshapes again, each with the narrow element type.
    Type narrow = getElementTypeOrSelf(op->getResult(0).getType());
    chain.insert(chain.begin(), product);
    IRMapping map;
    Value v;
    for (Operation *old : chain) {
      rewriter.setInsertionPoint(old);
      Operation *copy = rewriter.clone(*old, map);
      auto type = cast<RankedTensorType>(old->getResult(0).getType());
      copy->getResult(0).setType(type.clone(narrow));
      map.map(old->getResult(0), copy->getResult(0));
      v = copy->getResult(0);
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
