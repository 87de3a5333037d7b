//===- CastsToNVVM.cpp - FP8 arith casts to PTX cvt -----------------------===//
//
// Part of fp8-opt. MLIR 22 lowers no arith.truncf/extf with f8E4M3FN or
// f8E5M2 to NVVM. On the GPU the hardware conversions are both the fastest
// and the reference: `cvt.rn.satfinite.{e4m3,e5m2}x2.f32` rounds to nearest
// even and saturates exactly as fp8-opt defines an FP8 rounding (the CPU
// path's fp8-expand-arith-casts emits integer code for the same function),
// and `cvt.rn.f16x2.{e4m3,e5m2}x2` decodes exactly (every FP8 value is an
// f16). The one choice PTX leaves open, the bits of a NaN result, is pinned
// to the canonical 0x7F that the CPU path produces.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8CASTSTONVVM
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
bool isFP8(Type t) { return isa<Float8E4M3FNType, Float8E5M2Type>(t); }

bool isConstant(Value v, float value) {
  APFloat c(0.0f);
  return matchPattern(v, m_ConstantFloat(&c)) && c.isExactlyValue(value);
}

/// `x` when `v` is the clamp a saturating FP8 rounding starts with,
/// `maximumf(minimumf(x, max), -max)` with `max` the format's largest
/// finite value: `.satfinite` saturates to +-max (infinities included) and
/// keeps NaN, so the clamp changes no result. Otherwise `v`.
Value withoutSaturatingClamp(Value v, Type f8) {
  const float max = APFloat::getLargest(cast<FloatType>(f8).getFloatSemantics())
                        .convertToFloat();
  auto lower = v.getDefiningOp<arith::MaximumFOp>();
  if (!lower || !isConstant(lower.getRhs(), -max))
    return v;
  auto upper = lower.getLhs().getDefiningOp<arith::MinimumFOp>();
  if (!upper || !isConstant(upper.getRhs(), max))
    return v;
  return upper.getLhs();
}

/// f32/f16/bf16 -> f8E4M3FN/f8E5M2 (scalars).
struct TruncFToCvt : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type dst = op.getType();
    Type src = op.getIn().getType();
    if (!isFP8(dst))
      return rewriter.notifyMatchFailure(op, "not a scalar cast to FP8");
    if (!isa<Float32Type, Float16Type, BFloat16Type>(src))
      return rewriter.notifyMatchFailure(op, "source is not f32/f16/bf16");
    if (auto mode = op.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "only round-to-nearest-even");
    Location loc = op.getLoc();
    Value x =
        src.isF32() ? withoutSaturatingClamp(op.getIn(), dst) : op.getIn();
    if (!src.isF32()) // exact
      x = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), x);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0f));
    // The value converted from the second operand lands in the low byte.
    Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
        rewriter, loc, rewriter.getI16Type(), zero, x,
        NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
        /*relu=*/false, dst);
    Value byte = arith::TruncIOp::create(rewriter, loc, rewriter.getI8Type(),
                                         pair);
    Value isNaN = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::UNO,
                                        x, x);
    Value canonicalNaN = arith::ConstantOp::create(
        rewriter, loc, rewriter.getI8IntegerAttr(0x7F));
    byte = arith::SelectOp::create(rewriter, loc, isNaN, canonicalNaN, byte);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, dst, byte);
    return success();
  }
};

/// f8E4M3FN/f8E5M2 -> f32/f16/bf16 (scalars).
struct ExtFToCvt : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type src = op.getIn().getType();
    Type dst = op.getType();
    if (!isFP8(src))
      return rewriter.notifyMatchFailure(op, "not a scalar cast from FP8");
    if (!isa<Float32Type, Float16Type, BFloat16Type>(dst))
      return rewriter.notifyMatchFailure(op, "result is not f32/f16/bf16");
    Location loc = op.getLoc();
    Type i8 = rewriter.getI8Type();
    auto v2i8 = VectorType::get({2}, i8);
    auto v2f16 = VectorType::get({2}, rewriter.getF16Type());
    Value byte = arith::BitcastOp::create(rewriter, loc, i8, op.getIn());
    Value pair = vector::BroadcastOp::create(rewriter, loc, v2i8, byte);
    Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
        rewriter, loc, v2f16, pair, /*relu=*/false, src);
    Value h = vector::ExtractOp::create(rewriter, loc, halves,
                                        ArrayRef<int64_t>{0});
    if (dst.isF16()) {
      rewriter.replaceOp(op, h);
      return success();
    }
    Value f = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), h);
    if (dst.isF32())
      rewriter.replaceOp(op, f);
    else // bf16: every FP8 value is exact in bf16
      rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, dst, f);
    return success();
  }
};

struct ConvertFP8CastsToNVVMPass
    : fp8::impl::ConvertFP8CastsToNVVMBase<ConvertFP8CastsToNVVMPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncFToCvt, ExtFToCvt>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult left = getOperation()->walk([](Operation *op) {
      if (isa<arith::TruncFOp, arith::ExtFOp>(op) &&
          (isFP8(getElementTypeOrSelf(op->getResult(0).getType())) ||
           isFP8(getElementTypeOrSelf(op->getOperand(0).getType())))) {
        op->emitOpError("FP8 cast that the GPU lowering cannot handle "
                        "(only scalar f32/f16/bf16 <-> E4M3FN/E5M2 casts, "
                        "round to nearest even)");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
