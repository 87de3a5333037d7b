//===- OutlineAttention.cpp - fp8.attention into kernel functions ---------===//
//
// Part of fp8-opt. Each fp8.attention becomes a call to a private function
// `@__fp8_attention_<i>` (Outlining.h) whose body is the op and whose
// `fp8.attention` dictionary ({scale, causal, has_mask}) tells
// convert-fp8-attention-to-gpu what the fused kernel must compute. After
// bufferization the function takes (q, k, v, [mask], out) memrefs.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8.h"

#include "Outlining.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8OUTLINEATTENTION
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct OutlineAttentionPass
    : fp8::impl::FP8OutlineAttentionBase<OutlineAttentionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<AttentionOp> ops;
    module.walk([&](AttentionOp op) {
      auto func = op->getParentOfType<func::FuncOp>();
      if (!func || !func->hasAttr(kAttentionAttrName))
        ops.push_back(op);
    });
    KernelOutliner outliner(module, kAttentionFuncPrefix, kAttentionAttrName);
    for (AttentionOp op : ops) {
      Builder b(op.getContext());
      outliner.outline(
          op, b.getDictionaryAttr(
                  {b.getNamedAttr("scale", op.getScaleAttr()),
                   b.getNamedAttr("causal", b.getBoolAttr(op.getCausal())),
                   b.getNamedAttr("has_mask", b.getBoolAttr(bool(op.getMask())))}));
    }
  }
};
} // namespace
