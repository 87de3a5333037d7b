//===- ExpandArithCasts.cpp - f32 <-> FP8 casts as integer code -----------===//
//
// Part of fp8-opt. MLIR 22 cannot lower arith.truncf/extf to or from
// f8E4M3FN/f8E5M2 to LLVM; upstream `arith-expand` covers only E8M0 and
// E2M1. These patterns emit exact, branch-free integer/FP32 code instead.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "fp8-expand-arith-casts"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8EXPANDARITHCASTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
/// Bit-level description of an OCP FP8 format.
struct F8Format {
  int mantissaBits;
  int bias;
  uint32_t maxBits; // largest finite magnitude
  bool hasInf;      // E5M2 (IEEE-like) vs E4M3FN (no infinities)
};

std::optional<F8Format> getF8Format(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return F8Format{3, 7, 0x7E, false};
  if (isa<Float8E5M2Type>(t))
    return F8Format{2, 15, 0x7B, true};
  return std::nullopt;
}

/// Builds scalar-or-vector/tensor constants shaped like a reference type.
class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, Type like) : b(b), loc(loc), like(like) {}

  Type shaped(Type elt) const {
    if (auto s = dyn_cast<ShapedType>(like))
      return s.clone(elt);
    return elt;
  }
  Value i32(uint32_t v) {
    Type t = shaped(b.getI32Type());
    return arith::ConstantOp::create(
        b, loc, t, wrap(t, b.getI32IntegerAttr(static_cast<int32_t>(v))));
  }
  Value f32(float v) {
    Type t = shaped(b.getF32Type());
    return arith::ConstantOp::create(b, loc, t, wrap(t, b.getF32FloatAttr(v)));
  }

private:
  TypedAttr wrap(Type t, TypedAttr scalar) {
    if (auto s = dyn_cast<ShapedType>(t))
      return DenseElementsAttr::get(s, cast<Attribute>(scalar));
    return scalar;
  }
  OpBuilder &b;
  Location loc;
  Type like;
};

/// truncf f32 -> f8 (round to nearest even, saturating, canonical NaN).
struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type outElt = getElementTypeOrSelf(op.getType());
    std::optional<F8Format> fmt = getF8Format(outElt);
    if (!fmt)
      return rewriter.notifyMatchFailure(op, "not a cast to E4M3FN/E5M2");
    if (auto mode = op.getRoundingmode();
        mode && *mode != arith::RoundingMode::to_nearest_even)
      return rewriter.notifyMatchFailure(op, "only round-to-nearest-even");
    Type inElt = getElementTypeOrSelf(op.getIn().getType());
    if (!isa<Float32Type, Float16Type, BFloat16Type>(inElt))
      return rewriter.notifyMatchFailure(op, "source is not f32/f16/bf16");

    Location loc = op.getLoc();
    Emitter e(rewriter, loc, op.getType());
    Value x = op.getIn();
    if (!inElt.isF32()) // exact
      x = arith::ExtFOp::create(rewriter, loc, e.shaped(rewriter.getF32Type()),
                                x);
    Type i32T = e.shaped(rewriter.getI32Type());
    const int shift = 23 - fmt->mantissaBits;
    const uint32_t minNormalBits = static_cast<uint32_t>(1 - fmt->bias + 127)
                                   << 23;
    const int magicExp = 1 - fmt->bias - fmt->mantissaBits + 23;

    Value u = arith::BitcastOp::create(rewriter, loc, i32T, x);
    Value sign = arith::AndIOp::create(rewriter, loc, u, e.i32(0x80000000u));
    Value a = arith::AndIOp::create(rewriter, loc, u, e.i32(0x7FFFFFFFu));
    Value isNaN = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ugt,
                                        a, e.i32(0x7F800000u));

    // Normal range: re-bias the exponent and round the 23-bit mantissa to
    // `mantissaBits` bits, ties to even; a carry moves into the exponent.
    Value r = arith::SubIOp::create(
        rewriter, loc, a, e.i32(static_cast<uint32_t>(127 - fmt->bias) << 23));
    Value lsb = arith::AndIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, r, e.i32(shift)),
        e.i32(1));
    Value rounded = arith::AddIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, r, e.i32((1u << (shift - 1)) - 1)),
        lsb);
    Value normal = arith::MinUIOp::create(
        rewriter, loc, arith::ShRUIOp::create(rewriter, loc, rounded, e.i32(shift)),
        e.i32(fmt->maxBits)); // saturate (also +-inf)

    // Subnormal range: adding 2^magicExp makes the FPU round |x| to a
    // multiple of the smallest subnormal (ties to even); the low bits of the
    // sum are then the FP8 encoding, including the carry into 2^emin.
    Value absF = arith::BitcastOp::create(rewriter, loc,
                                          e.shaped(rewriter.getF32Type()), a);
    Value magic = e.f32(std::ldexp(1.0f, magicExp));
    Value sum = arith::AddFOp::create(rewriter, loc, absF, magic);
    Value sub = arith::SubIOp::create(
        rewriter, loc, arith::BitcastOp::create(rewriter, loc, i32T, sum),
        arith::BitcastOp::create(rewriter, loc, i32T, magic));

    Value isSub = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult, a, e.i32(minNormalBits));
    Value mag = arith::SelectOp::create(rewriter, loc, isSub, sub, normal);
    Value signed_ = arith::OrIOp::create(
        rewriter, loc, mag,
        arith::ShRUIOp::create(rewriter, loc, sign, e.i32(24)));
    Value bits = arith::SelectOp::create(rewriter, loc, isNaN, e.i32(0x7F),
                                         signed_);
    Value byte = arith::TruncIOp::create(
        rewriter, loc, e.shaped(rewriter.getI8Type()), bits);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), byte);
    return success();
  }
};

/// extf f8 -> f32/f16/bf16 (exact).
struct ExpandExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type inElt = getElementTypeOrSelf(op.getIn().getType());
    std::optional<F8Format> fmt = getF8Format(inElt);
    if (!fmt)
      return rewriter.notifyMatchFailure(op, "not a cast from E4M3FN/E5M2");
    Type outElt = getElementTypeOrSelf(op.getType());
    if (!isa<Float32Type, Float16Type, BFloat16Type>(outElt))
      return rewriter.notifyMatchFailure(op, "result is not f32/f16/bf16");

    Location loc = op.getLoc();
    Emitter e(rewriter, loc, op.getType());
    Type i32T = e.shaped(rewriter.getI32Type());
    Type f32T = e.shaped(rewriter.getF32Type());
    const int mb = fmt->mantissaBits;
    const uint32_t expMask = (1u << (7 - mb)) - 1;

    Value byte = arith::BitcastOp::create(
        rewriter, loc, e.shaped(rewriter.getI8Type()), op.getIn());
    Value b = arith::ExtUIOp::create(rewriter, loc, i32T, byte);
    Value sign = arith::ShLIOp::create(
        rewriter, loc, arith::AndIOp::create(rewriter, loc, b, e.i32(0x80)),
        e.i32(24));
    Value mag = arith::AndIOp::create(rewriter, loc, b, e.i32(0x7F));
    Value expField = arith::ShRUIOp::create(rewriter, loc, mag, e.i32(mb));
    Value mant = arith::AndIOp::create(rewriter, loc, b, e.i32((1u << mb) - 1));

    // Normal: shift exponent+mantissa into place and re-bias.
    Value normal = arith::AddIOp::create(
        rewriter, loc, arith::ShLIOp::create(rewriter, loc, mag, e.i32(23 - mb)),
        e.i32(static_cast<uint32_t>(127 - fmt->bias) << 23));
    // Subnormal: mantissa * 2^(1 - bias - mb), exact in f32.
    Value subF = arith::MulFOp::create(
        rewriter, loc, arith::UIToFPOp::create(rewriter, loc, f32T, mant),
        e.f32(std::ldexp(1.0f, 1 - fmt->bias - mb)));
    Value sub = arith::BitcastOp::create(rewriter, loc, i32T, subF);
    Value isSub = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        expField, e.i32(0));
    Value bits = arith::SelectOp::create(rewriter, loc, isSub, sub, normal);

    if (fmt->hasInf) {
      // E5M2: exponent all ones is inf (mantissa 0) or NaN.
      Value isTop = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, expField, e.i32(expMask));
      Value isInf = arith::CmpIOp::create(rewriter, loc,
                                          arith::CmpIPredicate::eq, mant,
                                          e.i32(0));
      Value topBits = arith::SelectOp::create(rewriter, loc, isInf,
                                              e.i32(0x7F800000u),
                                              e.i32(0x7FC00000u));
      bits = arith::SelectOp::create(rewriter, loc, isTop, topBits, bits);
    } else {
      // E4M3FN: only S.1111.111 is special (NaN).
      Value isNaN = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, mag, e.i32(0x7F));
      bits = arith::SelectOp::create(rewriter, loc, isNaN, e.i32(0x7FC00000u),
                                     bits);
    }
    Value withSign = arith::OrIOp::create(rewriter, loc, bits, sign);
    Value f = arith::BitcastOp::create(rewriter, loc, f32T, withSign);
    if (outElt.isF32())
      rewriter.replaceOp(op, f);
    else // every FP8 value is exact in f16 and bf16
      rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), f);
    return success();
  }
};

struct FP8ExpandArithCastsPass
    : fp8::impl::FP8ExpandArithCastsBase<FP8ExpandArithCastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    fp8::populateExpandFP8ArithCastsPatterns(patterns);
    // BF16 (the high-precision products' operands) the same way: LLVM's x86
    // backend would otherwise call __truncsfbf2, which Debian 12's libgcc
    // does not have.
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace

void fp8::populateExpandFP8ArithCastsPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandTruncF, ExpandExtF>(patterns.getContext());
}
