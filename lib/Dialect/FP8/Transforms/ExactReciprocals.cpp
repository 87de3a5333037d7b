//===- ExactReciprocals.cpp - Power-of-two divisions as multiplications ---===//
//
// Part of fp8-opt. See Passes.td (fp8-exact-reciprocals). What a divisor's
// reciprocal is, and whether it is exact (`classify`), is decided apart
// from the rewrite (`DivisionByExactReciprocal`), which builds it.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "RewriteConfig.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8EXACTRECIPROCALS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

constexpr uint32_t kF32MantissaBits = 0x007FFFFFu;
constexpr unsigned kMaxDepth = 6;

/// The i32 `bits` has a zero mantissa field: masked by an `andi` with a
/// constant that clears it, or shifted left by at least 23.
bool hasZeroMantissaBits(Value bits) {
  APInt c;
  if (auto andi = bits.getDefiningOp<arith::AndIOp>())
    return (matchPattern(andi.getRhs(), m_ConstantInt(&c)) ||
            matchPattern(andi.getLhs(), m_ConstantInt(&c))) &&
           (c.getZExtValue() & kF32MantissaBits) == 0;
  if (auto shl = bits.getDefiningOp<arith::ShLIOp>())
    return matchPattern(shl.getRhs(), m_ConstantInt(&c)) &&
           c.getZExtValue() >= 23 && c.getZExtValue() < 32;
  return false;
}

/// `v` (f32) is +-2^k with k in [-126, 127], +-0 or +-inf: its reciprocal is
/// exact (2^-127 is a representable subnormal), and never NaN.
bool hasZeroMantissa(Value v, unsigned depth = 0) {
  if (!v.getType().isF32() || depth > kMaxDepth)
    return false;
  APFloat c(0.0f);
  if (matchPattern(v, m_ConstantFloat(&c)))
    return (c.bitcastToAPInt().getZExtValue() & kF32MantissaBits) == 0;
  if (auto cast = v.getDefiningOp<arith::BitcastOp>())
    return cast.getIn().getType().isInteger(32) &&
           hasZeroMantissaBits(cast.getIn());
  if (auto sel = v.getDefiningOp<arith::SelectOp>())
    return hasZeroMantissa(sel.getTrueValue(), depth + 1) &&
           hasZeroMantissa(sel.getFalseValue(), depth + 1);
  return false;
}

/// `1.0 / e` (no fast-math flags) with a zero-mantissa `e`: returns `e`.
Value reciprocalOperand(Value v) {
  auto div = v.getDefiningOp<arith::DivFOp>();
  if (!div || div.getFastmath() != arith::FastMathFlags::none ||
      !matchPattern(div.getLhs(), m_OneFloat()) ||
      !hasZeroMantissa(div.getRhs()))
    return {};
  return div.getRhs();
}

/// How a divisor's exact reciprocal is had.
enum class Reciprocal {
  None,     // not provably exact
  Free,     // the divisor is 1/e (then e) or a constant
  Computed, // one 1/s next to the divisor
};

Reciprocal classify(Value s, unsigned depth = 0) {
  if (!s.getType().isF32() || depth > kMaxDepth)
    return Reciprocal::None;
  if (reciprocalOperand(s))
    return Reciprocal::Free;
  if (matchPattern(s, m_Constant()))
    return hasZeroMantissa(s, depth) ? Reciprocal::Free : Reciprocal::None;
  if (auto sel = s.getDefiningOp<arith::SelectOp>()) {
    Reciprocal t = classify(sel.getTrueValue(), depth + 1);
    Reciprocal f = classify(sel.getFalseValue(), depth + 1);
    if (t == Reciprocal::None || f == Reciprocal::None)
      return Reciprocal::None;
    return t == Reciprocal::Computed || f == Reciprocal::Computed
               ? Reciprocal::Computed
               : Reciprocal::Free;
  }
  return hasZeroMantissa(s, depth) ? Reciprocal::Computed : Reciprocal::None;
}

/// Builds 1/s for a divisor `classify` accepted, next to the values it
/// derives from (so it is computed where `s` is, once).
Value buildReciprocal(RewriterBase &rewriter, Value s) {
  if (Value e = reciprocalOperand(s))
    return e;
  OpBuilder::InsertionGuard guard(rewriter);
  Location loc = s.getLoc();
  APFloat c(0.0f);
  if (matchPattern(s, m_ConstantFloat(&c))) {
    APFloat r(1.0f);
    r.divide(c, APFloat::rmNearestTiesToEven); // exact: c is 2^k, 0 or inf
    rewriter.setInsertionPointAfterValue(s);
    return arith::ConstantOp::create(
        rewriter, loc, rewriter.getF32Type(),
        rewriter.getFloatAttr(rewriter.getF32Type(), r));
  }
  if (auto sel = s.getDefiningOp<arith::SelectOp>()) {
    Value t = buildReciprocal(rewriter, sel.getTrueValue());
    Value f = buildReciprocal(rewriter, sel.getFalseValue());
    rewriter.setInsertionPointAfter(sel);
    return arith::SelectOp::create(rewriter, loc, sel.getCondition(), t, f);
  }
  rewriter.setInsertionPointAfterValue(s);
  Value one =
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(1.0f));
  return arith::DivFOp::create(rewriter, loc, one, s);
}

/// How many divisions use `s` as their divisor.
unsigned divisionsBy(Value s) {
  unsigned n = 0;
  for (OpOperand &use : s.getUses())
    if (isa<arith::DivFOp>(use.getOwner()) && use.getOperandNumber() == 1)
      ++n;
  return n;
}

struct DivisionByExactReciprocal : OpRewritePattern<arith::DivFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::DivFOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getFastmath() != arith::FastMathFlags::none)
      return rewriter.notifyMatchFailure(op, "fast-math flags");
    Value s = op.getRhs();
    Reciprocal kind = classify(s);
    if (kind == Reciprocal::None)
      return rewriter.notifyMatchFailure(op, "divisor not provably 2^k");
    if (matchPattern(op.getLhs(), m_OneFloat())) {
      // 1/s is what a computed reciprocal would build again.
      if (kind == Reciprocal::Computed)
        return rewriter.notifyMatchFailure(op, "a reciprocal");
      rewriter.replaceOp(op, buildReciprocal(rewriter, s));
      return success();
    }
    // A computed reciprocal is one more division: it pays where it is
    // shared (several divisions, or a loop around this one).
    if (kind == Reciprocal::Computed && divisionsBy(s) < 2 &&
        s.getParentBlock() == op->getBlock())
      return rewriter.notifyMatchFailure(op, "single division by s");
    Value r = buildReciprocal(rewriter, s);
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, op.getLhs(), r);
    return success();
  }
};

struct FP8ExactReciprocalsPass
    : fp8::impl::FP8ExactReciprocalsBase<FP8ExactReciprocalsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DivisionByExactReciprocal>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     fp8::localRewriteConfig())))
      return signalPassFailure();
  }
};

} // namespace
