//===- FuseIntoForall.cpp - Element-wise producers into scf.forall --------===//
//
// Part of fp8-opt. See Passes.td (fp8-fuse-into-forall) for the contract.
// A decode step's cache update (fp8-kv-cache-in-place) is an scf.forall
// whose threads each read one element of the fresh keys and values and
// write it at its slot; the fresh values are element-wise generics (RoPE
// and the cast to the cache's FP8 type) that the GPU ran as kernels of
// their own, writing buffers the update kernel read back. Here each thread
// evaluates its element of the producer instead.
//
// Written by hand, not with upstream's tile-and-fuse
// (tensor::replaceExtractSliceWithTiledProducer): tiling keeps the
// producer's indexing maps on the tile, which is wrong for RoPE's rotated
// read `(d + 64) mod 128` (the tile's slice starts at the map's value and
// the map is applied again inside it). One element needs no tile: the
// producer's body is cloned at the element's loop indices, each input read
// with tensor.extract at its map's value there, whatever the map.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8FUSEINTOFORALL
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

/// Whether `slice` takes one element (every size 1, unit strides).
bool isOneElement(tensor::ExtractSliceOp slice) {
  return slice.hasUnitStride() &&
         llvm::all_of(slice.getMixedSizes(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); });
}

/// The input of an element-wise generic (all loops parallel) that reads
/// `v`, when that is `v`'s only use.
OpOperand *elementwiseInput(Value v) {
  if (!v.hasOneUse())
    return nullptr;
  OpOperand &use = *v.getUses().begin();
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!consumer || !consumer.isDpsInput(&use) ||
      consumer.getNumReductionLoops() != 0)
    return nullptr;
  return &use;
}

/// A read of one element of an element-wise producer inside the loop: a
/// one-element slice that an element-wise generic reads as an input, or a
/// tensor.extract.
bool isElementRead(Operation *user) {
  if (isa<tensor::ExtractOp>(user))
    return true;
  auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
  if (!slice || !isOneElement(slice))
    return false;
  OpOperand *use = elementwiseInput(slice.getResult());
  // (An input whose value the body no longer reads is not a read.)
  return use && !cast<linalg::GenericOp>(use->getOwner())
                     .getMatchingBlockArgument(use)
                     .use_empty();
}

/// `v`'s producer, when it can be evaluated per element in `forall`: an
/// element-wise generic outside the loop (all loops parallel, one result
/// written through an identity map and not read, a body free of memory
/// effects) every use of which is an element read inside `forall`.
linalg::GenericOp fusableProducer(Value v, scf::ForallOp forall) {
  auto result = dyn_cast<OpResult>(v);
  auto producer = result ? dyn_cast<linalg::GenericOp>(result.getOwner())
                         : linalg::GenericOp();
  if (!producer || forall->isAncestor(producer) ||
      !producer.hasPureTensorSemantics() || producer->getNumResults() != 1 ||
      producer.getNumReductionLoops() != 0 ||
      !producer.getIndexingMapsArray().back().isIdentity() ||
      !producer.getMatchingBlockArgument(producer.getDpsInitOperand(0))
           .use_empty())
    return {};
  for (Operation &op : producer.getRegion().front().without_terminator())
    if (!isa<linalg::IndexOp>(op) && !isMemoryEffectFree(&op))
      return {};
  for (Operation *user : result.getUsers())
    if (!forall->isAncestor(user) || !isElementRead(user))
      return {};
  return producer;
}

/// `producer`'s element at loop indices `ivs`, computed at the rewriter's
/// insertion point: its body cloned with each input read at its map's
/// value there.
Value evaluateAt(RewriterBase &rewriter, Location loc,
                 linalg::GenericOp producer, ArrayRef<OpFoldResult> ivs) {
  Block &body = producer.getRegion().front();
  SmallVector<Value> ivValues = getValueOrCreateConstantIndexOp(
      rewriter, loc, SmallVector<OpFoldResult>(ivs));
  IRMapping map;
  for (OpOperand *in : producer.getDpsInputOperands()) {
    BlockArgument arg = producer.getMatchingBlockArgument(in);
    if (arg.use_empty())
      continue;
    Value source = in->get();
    if (!isa<RankedTensorType>(source.getType())) {
      map.map(arg, source);
      continue;
    }
    AffineMap m = producer.getMatchingIndexingMap(in);
    SmallVector<Value> indices;
    for (AffineExpr e : m.getResults())
      indices.push_back(getValueOrCreateConstantIndexOp(
          rewriter, loc,
          affine::makeComposedFoldedAffineApply(
              rewriter, loc, AffineMap::get(m.getNumDims(), 0, e), ivs)));
    map.map(arg, tensor::ExtractOp::create(rewriter, loc, source, indices));
  }
  for (Operation &op : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(op)) {
      map.map(index.getResult(), ivValues[index.getDim()]);
      continue;
    }
    rewriter.clone(op, map);
  }
  return map.lookupOrDefault(
      cast<linalg::YieldOp>(body.getTerminator()).getValues()[0]);
}

/// Replaces the element read `user` of `producer` by the element computed
/// in place: a tensor.extract by the value; a one-element slice by the
/// value in its generic's body (the slice's input is then unused, and
/// erased by the clean-up).
void inlineRead(RewriterBase &rewriter, Operation *user,
                linalg::GenericOp producer) {
  Location loc = user->getLoc();
  if (auto extract = dyn_cast<tensor::ExtractOp>(user)) {
    rewriter.setInsertionPoint(extract);
    SmallVector<OpFoldResult> ivs = getAsOpFoldResult(extract.getIndices());
    rewriter.replaceOp(extract, evaluateAt(rewriter, loc, producer, ivs));
    return;
  }
  auto slice = cast<tensor::ExtractSliceOp>(user);
  OpOperand *use = elementwiseInput(slice.getResult());
  auto consumer = cast<linalg::GenericOp>(use->getOwner());
  rewriter.setInsertionPoint(consumer);
  Value element = evaluateAt(rewriter, loc, producer, slice.getMixedOffsets());
  BlockArgument arg = consumer.getMatchingBlockArgument(use);
  rewriter.replaceAllUsesWith(arg, element);
}

struct FP8FuseIntoForallPass
    : fp8::impl::FP8FuseIntoForallBase<FP8FuseIntoForallPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // Each round inlines the producers the loops read directly; what those
    // read (a producer of a producer) comes into the loop as a
    // tensor.extract and is taken by the next round.
    for (bool again = true; again;) {
      again = false;
      SmallVector<std::pair<Operation *, linalg::GenericOp>> reads;
      getOperation()->walk([&](scf::ForallOp forall) {
        forall.getBody()->walk([&](Operation *op) {
          if (!isElementRead(op))
            return;
          Value source = op->getOperand(0);
          if (linalg::GenericOp p = fusableProducer(source, forall))
            reads.emplace_back(op, p);
        });
      });
      for (auto [user, producer] : reads)
        inlineRead(rewriter, user, producer);
      again = !reads.empty();
      if (again) {
        // The generics' inputs that no longer read anything, then the
        // producers nothing reads.
        RewritePatternSet patterns(&getContext());
        linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
        if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
