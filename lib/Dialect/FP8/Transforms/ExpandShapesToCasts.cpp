//===- ExpandShapesToCasts.cpp - Dynamic expand_shape as reinterpret_cast -===//
//
// Part of fp8-opt. Works around MLIR 22's expand-strided-metadata, which
// crashes on a memref.expand_shape with more than one dynamic size in a
// reassociation group (llvm-project issue 186830; the reproducer is in
// test/Dialect/FP8/Transforms/expand-shapes-to-casts.mlir); see Passes.td.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "fp8-expand-shapes-to-casts"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8EXPANDSHAPESTOCASTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

/// Whether some reassociation group of `op` has more than one dynamic size.
bool hasMultiDynamicGroup(memref::ExpandShapeOp op) {
  ArrayRef<int64_t> shape = op.getResultType().getShape();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) {
          return ShapedType::isDynamic(shape[d]);
        }) > 1)
      return true;
  return false;
}

/// `a * b` as an OpFoldResult: a constant when both are.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult x,
                      OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  if (cx == 1)
    return y;
  if (cy == 1)
    return x;
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

/// `op` as a reinterpret_cast of its source (hasMultiDynamicGroup).
LogicalResult rewriteToCast(RewriterBase &rewriter, memref::ExpandShapeOp op) {
  MemRefType srcType = op.getSrcType(), resultType = op.getResultType();
  SmallVector<int64_t> srcStrides, resultStrides;
  int64_t srcOffset, resultOffset;
  if (failed(srcType.getStridesAndOffset(srcStrides, srcOffset)) ||
      failed(resultType.getStridesAndOffset(resultStrides, resultOffset)))
    return op.emitError("an expand_shape of a non-strided memref");
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  // The source's dynamic strides and offset, read once if needed.
  memref::ExtractStridedMetadataOp meta;
  auto metadata = [&] {
    if (!meta)
      meta =
          memref::ExtractStridedMetadataOp::create(rewriter, loc, op.getSrc());
    return meta;
  };
  SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
  SmallVector<OpFoldResult> strides(sizes.size());
  for (auto [src, group] : llvm::enumerate(op.getReassociationIndices())) {
    OpFoldResult stride =
        ShapedType::isDynamic(srcStrides[src])
            ? OpFoldResult(metadata().getStrides()[src])
            : OpFoldResult(rewriter.getIndexAttr(srcStrides[src]));
    for (auto [k, d] : llvm::enumerate(llvm::reverse(group))) {
      // The result type's static strides are what the reinterpret_cast
      // verifier compares with: those stay constants.
      strides[d] = ShapedType::isDynamic(resultStrides[d])
                       ? stride
                       : rewriter.getIndexAttr(resultStrides[d]);
      if (k + 1 < group.size())
        stride = multiply(rewriter, loc, stride, sizes[d]);
    }
  }
  OpFoldResult offset = ShapedType::isDynamic(srcOffset)
                            ? OpFoldResult(metadata().getOffset())
                            : OpFoldResult(rewriter.getIndexAttr(srcOffset));
  rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
      op, resultType, op.getSrc(), offset, sizes, strides);
  return success();
}

struct FP8ExpandShapesToCastsPass
    : fp8::impl::FP8ExpandShapesToCastsBase<FP8ExpandShapesToCastsPass> {
  void runOnOperation() override {
    // Only the ops upstream cannot lower: nothing else in the IR changes.
    SmallVector<memref::ExpandShapeOp> ops;
    getOperation()->walk([&](memref::ExpandShapeOp op) {
      if (hasMultiDynamicGroup(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (memref::ExpandShapeOp op : ops)
      if (failed(rewriteToCast(rewriter, op)))
        return signalPassFailure();
  }
};
} // namespace
