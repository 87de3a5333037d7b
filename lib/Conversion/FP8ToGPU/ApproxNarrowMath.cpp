//===- ApproxNarrowMath.cpp - 16-bit math by approximate f32 instructions -===//
//
// Part of fp8-opt. See Passes.td (fp8-gpu-approx-narrow-math): the f32
// approximations are far inside half an f16 ulp, so f16/bf16 exponentials
// and f16 divisions use them; f32 math keeps its correctly rounded
// libdevice functions.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8GPUAPPROXNARROWMATH
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

bool isNarrowFloat(Type t) { return isa<Float16Type, BFloat16Type>(t); }

/// Scalar f16/bf16 exponentials take `afn`: convert-gpu-to-nvvm then calls
/// the approximate f32 function on the operand's f32 extension.
template <typename ExpOp> struct ApproximateExp : OpRewritePattern<ExpOp> {
  using OpRewritePattern<ExpOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpOp op,
                                PatternRewriter &rewriter) const override {
    if (!isNarrowFloat(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a scalar f16/bf16");
    arith::FastMathFlags flags = op.getFastmath();
    if (arith::bitEnumContainsAll(flags, arith::FastMathFlags::afn))
      return rewriter.notifyMatchFailure(op, "already approximate");
    rewriter.modifyOpInPlace(
        op, [&] { op.setFastmath(flags | arith::FastMathFlags::afn); });
    return success();
  }
};

/// Scalar f16 `a / b` -> `a * rcp.approx.ftz(b)` in f32, rounded to f16
/// (`1.0 / b`: the rounded reciprocal alone).
struct ApproximateHalfDivision : OpRewritePattern<arith::DivFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::DivFOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.getType().isF16())
      return rewriter.notifyMatchFailure(op, "not a scalar f16 division");
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    Value b = arith::ExtFOp::create(rewriter, loc, f32, op.getRhs());
    Value r = NVVM::RcpApproxFtzF32Op::create(rewriter, loc, f32, b);
    if (!matchPattern(op.getLhs(), m_OneFloat())) {
      Value a = arith::ExtFOp::create(rewriter, loc, f32, op.getLhs());
      r = arith::MulFOp::create(rewriter, loc, a, r);
    }
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), r);
    return success();
  }
};

struct FP8GPUApproxNarrowMathPass
    : fp8::impl::FP8GPUApproxNarrowMathBase<FP8GPUApproxNarrowMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ApproximateExp<math::ExpOp>, ApproximateExp<math::Exp2Op>,
                 ApproximateHalfDivision>(&getContext());
    GreedyRewriteConfig config;
    config.enableFolding(false).enableConstantCSE(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
