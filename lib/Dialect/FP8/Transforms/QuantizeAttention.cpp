//===- QuantizeAttention.cpp - fp8.attention on FP8 operands -------------===//
//
// Part of fp8-opt. fp8-quantize-attention (dialects/FP8/Passes.td): the
// query, key and value of every high-precision fp8.attention are quantized
// with current scaling -- a scale per block of positions of one (batch,
// head), or per tensor -- and the op takes them with their dequantization
// scales.
//
//===----------------------------------------------------------------------===//

#include "Quantization.h"

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <algorithm>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8QUANTIZEATTENTION
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// `block T x D` over the positions of one (batch, head) when every
/// sequence and head dim is static (block amaxes need static extents), else
/// per tensor.
ScaleLayoutAttr chooseLayout(AttentionOp op, int64_t blockTokens) {
  MLIRContext *ctx = op.getContext();
  auto q = op.getQuery().getType(), k = op.getKey().getType(),
       v = op.getValue().getType();
  const bool staticDims = !q.isDynamicDim(2) && !q.isDynamicDim(3) &&
                          !k.isDynamicDim(2) && !k.isDynamicDim(3) &&
                          !v.isDynamicDim(2) && !v.isDynamicDim(3);
  if (blockTokens <= 0 || !staticDims)
    return ScaleLayoutAttr::get(ctx, Granularity::Tensor);
  const int64_t d = std::max(q.getDimSize(3), v.getDimSize(3));
  return ScaleLayoutAttr::get(ctx, Granularity::Block,
                              ArrayRef<int64_t>{blockTokens, d});
}

struct FP8QuantizeAttentionPass
    : fp8::impl::FP8QuantizeAttentionBase<FP8QuantizeAttentionPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<AttentionOp> ops;
    getOperation().walk([&](AttentionOp op) {
      if (!op.isFP8())
        ops.push_back(op);
    });
    if (blockTokens < 0) {
      getOperation().emitError()
          << "fp8-quantize-attention: block-tokens must be >= 0, got "
          << static_cast<int64_t>(blockTokens);
      return signalPassFailure();
    }
    for (AttentionOp op : ops) {
      OpBuilder b(op);
      Location loc = op.getLoc();
      ScaleLayoutAttr layout =
          chooseLayout(op, static_cast<int64_t>(blockTokens));
      // Current scaling, f32 scales.
      auto quantize = [&](Value x) {
        return quantizeFromAmax(
            b, loc, x, layout,
            CurrentScalingAttr::get(b.getContext(), 0.0f, /*pow2=*/false),
            format, b.getF32Type());
      };
      auto [q, sq] = quantize(op.getQuery());
      auto [k, sk] = quantize(op.getKey());
      auto [v, sv] = quantize(op.getValue());
      auto fp8 = AttentionOp::create(
          b, loc, op.getType(), q, k, v, op.getMask(), sq, sk, sv,
          layout.isPerTensor() ? ScaleLayoutAttr() : layout, op.getScaleAttr(),
          op.getCausalAttr(), op.getSequenceMajorAttr());
      fp8->setDiscardableAttrs(op->getDiscardableAttrDictionary());
      op.replaceAllUsesWith(fp8.getResult());
      op.erase();
    }
  }
};

} // namespace
