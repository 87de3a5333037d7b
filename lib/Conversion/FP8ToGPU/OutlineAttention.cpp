//===- OutlineAttention.cpp - fp8.attention into kernel functions ---------===//
//
// Part of fp8-opt. Each fp8.attention becomes a call to a private function
// `@__fp8_attention_<i>` (Outlining.h) whose body is the op and whose
// `fp8.attention` dictionary ({scale, causal, has_mask, sequence_major},
// and `scale_block` for FP8 scales per block of positions) tells
// convert-fp8-attention-to-gpu what the fused kernel must compute. After
// bufferization the function takes (q, k, v, [mask], out) memrefs; with FP8
// operands (q, k, v, [mask], q_scale, k_scale, v_scale, workspace, out);
// for a decode step that the split-key kernel serves (one query per head,
// 16-bit operands: attention::decodeAttentionSplits) (q, k, v, [mask],
// workspace, out), the workspace holding the splits' partial results; when
// its key and value are an FP8 cache's dequantization (fp8.dequantize with
// one f32 scale, then element casts: fp8-kv-cache's form) the function
// absorbs those and takes the cache itself: (k8, k_scale, v8, v_scale, q,
// [mask], workspace, out), `kv_dequant` listing the element type after
// each step.
// An attention whose only use is the transpose to [B, Sq, Hq, Dv] (what
// the exporters write before the output projection) becomes
// `sequence_major` first: the kernel writes that layout, and the transpose
// is no kernel of its own.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8.h"

#include "Attention/AttentionPlan.h"
#include "Outlining.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8OUTLINEATTENTION
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
/// `op` as `sequence_major` when its only use is a linalg.transpose by
/// [0, 2, 1, 3]: the new op replaces both.
AttentionOp foldOutputTranspose(AttentionOp op) {
  if (op.getSequenceMajor() || !op->hasOneUse())
    return op;
  auto transpose = dyn_cast<linalg::TransposeOp>(*op->getUsers().begin());
  if (!transpose || transpose.getInput() != op.getResult() ||
      transpose.getPermutation() != ArrayRef<int64_t>{0, 2, 1, 3})
    return op;
  OpBuilder b(transpose);
  auto folded = cast<AttentionOp>(b.clone(*op));
  folded.setSequenceMajor(true);
  folded.getResult().setType(
      cast<RankedTensorType>(transpose.getResult()[0].getType()));
  transpose.getResult()[0].replaceAllUsesWith(folded.getResult());
  transpose.erase();
  op.erase();
  return folded;
}

/// The FP8 cache read behind a decode step's key or value: `v` made by an
/// fp8.dequantize of an FP8 tensor with one f32 scale, then element-type
/// casts (arith.extf / arith.truncf on tensors) -- what fp8-kv-cache leaves
/// between the cache and the attention. Fills `ops` (dequantize first) and
/// `types` (the element type after each), or fails.
LogicalResult matchCacheDequant(Value v, SmallVectorImpl<Operation *> &ops,
                                SmallVectorImpl<Attribute> &types) {
  SmallVector<Operation *> chain;
  while (Operation *def = v.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(def) ||
        !isa<RankedTensorType>(v.getType()))
      break;
    chain.push_back(def);
    v = def->getOperand(0);
  }
  auto dq = v.getDefiningOp<DequantizeOp>();
  if (!dq || !dq.getLayout().isPerTensor() ||
      !isa<Float8E4M3FNType, Float8E5M2Type>(
          dq.getInput().getType().getElementType()) ||
      cast<ShapedType>(dq.getScale().getType()).getRank() != 0 ||
      !cast<ShapedType>(dq.getScale().getType()).getElementType().isF32())
    return failure();
  ops.push_back(dq);
  ops.append(chain.rbegin(), chain.rend());
  for (Operation *o : ops)
    types.push_back(
        TypeAttr::get(getElementTypeOrSelf(o->getResult(0).getType())));
  return success();
}

struct OutlineAttentionPass
    : fp8::impl::FP8OutlineAttentionBase<OutlineAttentionPass> {
  using Base::Base;
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
      op = foldOutputTranspose(op);
      OpBuilder b(op);
      // FP8 operands: the kernel's copy of v, K-major ([B, Hkv, Dv, Skv
      // rounded up to 32]), is scratch the caller allocates.
      SmallVector<Value> extra;
      auto v = op.getValue().getType();
      if (op.isFP8() && v.hasStaticShape()) {
        ArrayRef<int64_t> vs = v.getShape();
        extra.push_back(tensor::EmptyOp::create(
            b, op.getLoc(),
            ArrayRef<int64_t>{vs[0], vs[1], vs[3], (vs[2] + 31) / 32 * 32},
            v.getElementType()));
      }
      // A decode step: the splits' outputs, maxima and sums ([B, Hq,
      // splits, Dv + 2] f32).
      auto q = op.getQuery().getType(), key = op.getKey().getType();
      // The decode kernel also reads an FP8 cache itself: the key's and
      // value's dequantization (and casts) join the function.
      SmallVector<Operation *> absorbed;
      ArrayAttr cacheTypes;
      if (decodeKernel && !op.isFP8() && q.hasStaticShape() &&
          key.hasStaticShape() && v.hasStaticShape()) {
        ArrayRef<int64_t> qs = q.getShape(), ks = key.getShape();
        if (int64_t splits = attention::decodeAttentionSplits(
                qs[0], ks[1], qs[2], ks[2], qs[3], v.getShape()[3],
                q.getElementType())) {
          extra.push_back(tensor::EmptyOp::create(
              b, op.getLoc(),
              ArrayRef<int64_t>{qs[0], qs[1], splits, v.getShape()[3] + 2},
              b.getF32Type()));
          SmallVector<Operation *> kOps, vOps;
          SmallVector<Attribute> kTypes, vTypes;
          if (readCache &&
              succeeded(matchCacheDequant(op.getKey(), kOps, kTypes)) &&
              succeeded(matchCacheDequant(op.getValue(), vOps, vTypes)) &&
              kTypes == vTypes &&
              // (One chain for both -- k and v the same tensor -- would be
              // absorbed twice.)
              llvm::none_of(
                  kOps,
                  [&](Operation *o) { return llvm::is_contained(vOps, o); }) &&
              getElementTypeOrSelf(kOps.front()->getOperand(0)) ==
                  getElementTypeOrSelf(vOps.front()->getOperand(0))) {
            absorbed.append(kOps);
            absorbed.append(vOps);
            cacheTypes = b.getArrayAttr(kTypes);
          }
        }
      }
      SmallVector<NamedAttribute> info = {
          b.getNamedAttr("scale", op.getScaleAttr()),
          b.getNamedAttr("causal", b.getBoolAttr(op.getCausal())),
          b.getNamedAttr("has_mask", b.getBoolAttr(bool(op.getMask()))),
          b.getNamedAttr("sequence_major",
                         b.getBoolAttr(op.getSequenceMajor()))};
      // FP8 block scales: positions per block (the scales' memrefs alone
      // do not say it when a sequence fits in one block).
      if (ScaleLayoutAttr layout = op.getScaleLayoutAttr();
          layout && !layout.isPerTensor())
        info.push_back(
            b.getNamedAttr("scale_block", b.getI64IntegerAttr(
                                              layout.getBlock().front())));
      if (cacheTypes)
        info.push_back(b.getNamedAttr("kv_dequant", cacheTypes));
      if (failed(
              outliner.outline(op, b.getDictionaryAttr(info), extra, absorbed)))
        return signalPassFailure();
    }
  }
};
} // namespace
