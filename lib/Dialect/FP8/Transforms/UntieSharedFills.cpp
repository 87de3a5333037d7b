//===- UntieSharedFills.cpp - One fill per destination --------------------===//
//
// Part of fp8-opt. See Passes.td: a fill that several ops write into
// bufferizes as one fill plus a copy per extra destination; an empty
// tensor that a returned value and other values are written into, as one
// buffer that becomes the caller's output; a pad whose padding nothing
// reads, as a fill and a copy.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "fp8-untie-shared-fills"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8UNTIESHAREDFILLS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// Whether `use` is the destination (init) operand of a destination-style
/// op: an operand that bufferizes in place, so that sharing it costs a copy.
bool isDestination(OpOperand &use) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return dps && dps.isDpsInit(&use);
}

/// Whether only other fills and their destinations stand between `fill`
/// and `user` (an op with several filled destinations has all of them
/// there).
bool nextToUser(linalg::FillOp fill, Operation *user) {
  for (Operation *op = fill->getNextNode(); op != user; op = op->getNextNode())
    if (!op || !isa<linalg::FillOp, tensor::EmptyOp>(op))
      return false;
  return true;
}

struct UntieSharedFill : OpRewritePattern<linalg::FillOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::FillOp fill,
                                PatternRewriter &rewriter) const override {
    if (!fill.hasPureTensorSemantics())
      return failure();
    Value result = fill.getResult(0);
    SmallVector<OpOperand *> destinations;
    unsigned uses = 0;
    for (OpOperand &use : result.getUses()) {
      ++uses;
      if (isDestination(use))
        destinations.push_back(&use);
    }
    if (destinations.empty())
      return failure();
    if (uses == 1) {
      // Its only user: put the fill right before it (same block).
      Operation *user = destinations.front()->getOwner();
      if (user->getBlock() != fill->getBlock() || nextToUser(fill, user))
        return failure();
      rewriter.moveOpBefore(fill, user);
      return success();
    }
    // Each destination gets its fill right before it: a reduction absorbs
    // the fill just before it into its kernel (fp8-gpu-map-loops).
    Value dest = fill.getDpsInitOperand(0)->get();
    auto empty = dest.getDefiningOp<tensor::EmptyOp>();
    for (OpOperand *use : destinations) {
      rewriter.setInsertionPoint(use->getOwner());
      Value init = empty ? rewriter.clone(*empty)->getResult(0) : dest;
      auto clone = linalg::FillOp::create(rewriter, fill.getLoc(),
                                          fill.getDpsInputOperand(0)->get(),
                                          init);
      rewriter.modifyOpInPlace(use->getOwner(),
                               [&] { use->set(clone.getResult(0)); });
    }
    if (result.use_empty())
      rewriter.eraseOp(fill);
    return success();
  }
};

/// A returned tensor's destination: the `tensor.empty` its producer (through
/// reshapes) writes into gets a clone of its own when other ops write into
/// it too. One-shot bufferization would otherwise give all of them one
/// buffer, which buffer-results-to-out-params then makes the caller's
/// output buffer: the other ops' values would live in the output (kernels
/// that cannot join their neighbours', whose buffers may alias it).
struct UntieResultInit : OpRewritePattern<func::ReturnOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(func::ReturnOp ret,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    for (Value v : ret.getOperands()) {
      while (Operation *def = v.getDefiningOp()) {
        if (auto e = dyn_cast<tensor::ExpandShapeOp>(def))
          v = e.getSrc();
        else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def))
          v = c.getSrc();
        else
          break;
      }
      auto dps = v.getDefiningOp<DestinationStyleOpInterface>();
      if (!dps || !dps.hasPureTensorSemantics())
        continue;
      OpOperand *init = dps.getTiedOpOperand(cast<OpResult>(v));
      auto empty = init->get().getDefiningOp<tensor::EmptyOp>();
      if (!empty || empty->hasOneUse())
        continue;
      rewriter.setInsertionPoint(dps);
      Value fresh = rewriter.clone(*empty)->getResult(0);
      rewriter.modifyOpInPlace(dps, [&] { init->set(fresh); });
      changed = true;
    }
    return success(changed);
  }
};

/// A tensor.pad marked kUnreadPaddingAttr (static): a fresh
/// `bufferization.alloc_tensor` (the padding left undefined: no fill) with
/// the source inserted; when the source is the one result of a linalg op
/// writing into a `tensor.empty` without reading it (the scales' transpose),
/// the op writes into the allocation's slice instead, so bufferization
/// computes it in place (no copy). After the last CSE, which would merge the
/// allocations.
struct UnreadPaddingInPlace : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    if (!pad->hasAttr(fp8::kUnreadPaddingAttr) ||
        !pad.getResultType().hasStaticShape() ||
        !pad.getSourceType().hasStaticShape() || !pad.getLow().empty() ||
        llvm::any_of(pad.getStaticLow(), [](int64_t l) { return l != 0; }))
      return failure();
    Location loc = pad.getLoc();
    const int64_t rank = pad.getSourceType().getRank();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        strides(rank, rewriter.getIndexAttr(1)), sizes;
    for (int64_t d : pad.getSourceType().getShape())
      sizes.push_back(rewriter.getIndexAttr(d));
    Value source = pad.getSource();
    // The producer may write into the slice when it only writes its
    // destination (a tensor.empty, which CSE may share with other ops).
    auto producer = source.getDefiningOp<linalg::LinalgOp>();
    OpOperand *init = nullptr;
    if (producer && source.hasOneUse() && producer->getNumResults() == 1 &&
        producer.getNumDpsInits() == 1) {
      init = producer.getDpsInitOperand(0);
      if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
          producer.payloadUsesValueFromOperand(init))
        init = nullptr;
    }
    rewriter.setInsertionPoint(init ? producer.getOperation()
                                    : pad.getOperation());
    Value alloc = bufferization::AllocTensorOp::create(
        rewriter, loc, pad.getResultType(), ValueRange{});
    if (init) {
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, pad.getSourceType(), alloc, offsets, sizes, strides);
      Operation *empty = init->get().getDefiningOp();
      rewriter.modifyOpInPlace(producer, [&] { init->set(slice); });
      if (empty->use_empty())
        rewriter.eraseOp(empty);
    }
    rewriter.setInsertionPoint(pad);
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(pad, source, alloc,
                                                       offsets, sizes, strides);
    return success();
  }
};

struct FP8UntieSharedFillsPass
    : fp8::impl::FP8UntieSharedFillsBase<FP8UntieSharedFillsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<UntieSharedFill, UntieResultInit, UnreadPaddingInPlace>(
        &getContext());
    // No folding or CSE here: it would merge the clones again.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      return signalPassFailure();
  }
};
} // namespace
