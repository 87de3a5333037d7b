//===- AttentionToLinalg.cpp - fp8.attention as its reference computation -===//
//
// Part of fp8-opt. fp8.attention becomes the computation its definition
// states (dialects/FP8/FP8Ops.td, docs/Dialect.md), on tensors:
//
//   scores  = sum_d q * k          contraction, FP32 accumulator
//   t       = scores * scale + mask, -inf where causal masks
//   m       = max_j t              row reduction
//   e       = exp(t - m)           (m = -inf: a row with nothing to attend)
//   l       = sum_j e              row reduction
//   p       = e / l                (l = 0: 0), rounded to a 16-bit operand type
//   o       = sum_j p * v          contraction, FP32 accumulator
//
// Grouped-query heads are read through the indexing map `h floordiv G`
// (never materialized); the reductions run over the innermost dimension, so
// the GPU's row reductions (warp per row) and the element-wise fusion apply
// as they do to an imported softmax. The CPU and GPU pipelines both use it
// (the GPU until a fused kernel claims the op).
//
//===----------------------------------------------------------------------===//

#include "LoweringHelpers.h"

#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::linalg_lowering;

namespace {

using utils::IteratorType;

/// An FP32 tensor of `sizes` filled with `value` (an f32 constant).
Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
             Value value) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

/// A row reduction of `x` ([B, H, S, N] -> [B, H, S]) with `combine`,
/// starting from `init` (an f32 constant).
Value reduceRows(
    OpBuilder &b, Location loc, Value x, Value init,
    ArrayRef<OpFoldResult> rowSizes,
    function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  MLIRContext *ctx = b.getContext();
  Value acc = filled(b, loc, rowSizes, init);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(4, ctx),
                              AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx)};
  SmallVector<IteratorType> iters(3, IteratorType::parallel);
  iters.push_back(IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, acc.getType(), ValueRange{x}, ValueRange{acc}, maps, iters,
             [&](OpBuilder &bb, Location l, ValueRange args) {
               linalg::YieldOp::create(bb, l, combine(bb, l, args[0], args[1]));
             })
      .getResult(0);
}

struct LowerAttention : OpConversionPattern<AttentionOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Value q = adaptor.getQuery(), k = adaptor.getKey(), v = adaptor.getValue();
    Type operandType = op.getQuery().getType().getElementType();
    if (op.isFP8()) {
      // The definition: attention of the dequantized operands in FP32.
      ScaleLayoutAttr layout = op.getScaleLayoutOrDefault();
      auto dequantize = [&](Value x, Value scale) -> Value {
        auto type = cast<RankedTensorType>(x.getType());
        return DequantizeOp::create(rewriter, loc,
                                    type.clone(rewriter.getF32Type()), x, scale,
                                    layout);
      };
      q = dequantize(q, adaptor.getQueryScale());
      k = dequantize(k, adaptor.getKeyScale());
      v = dequantize(v, adaptor.getValueScale());
      operandType = rewriter.getF32Type();
    }
    auto resultType = op.getType();
    const int64_t group = op.getGroupSize();
    const float scale = op.getScale().convertToFloat();

    auto size = [&](Value t, int64_t dim) {
      return tensor::getMixedSize(rewriter, loc, t, dim);
    };
    OpFoldResult batch = size(q, 0), heads = size(q, 1), sq = size(q, 2),
                 skv = size(k, 2), dv = size(v, 3);
    SmallVector<OpFoldResult> rowSizes{batch, heads, sq};
    SmallVector<OpFoldResult> scoreSizes{batch, heads, sq, skv};
    SmallVector<OpFoldResult> outSizes{batch, heads, sq, dv};
    // The constants every body below reads, created once.
    const float negInf = -std::numeric_limits<float>::infinity();
    Value ninf = f32Const(rewriter, loc, negInf);
    Value scaleV = scale != 1.0f ? f32Const(rewriter, loc, scale) : Value();
    Value zero = f32Const(rewriter, loc, 0.0f);

    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    // The key/value head of query head d1.
    AffineExpr kvHead = group == 1 ? d(1) : d(1).floorDiv(group);
    auto contraction = [&](Value lhs, Value rhs, AffineMap lhsMap,
                           AffineMap rhsMap,
                           ArrayRef<OpFoldResult> sizes) -> Value {
      Value acc = filled(rewriter, loc, sizes, zero);
      SmallVector<IteratorType> iters(4, IteratorType::parallel);
      iters.push_back(IteratorType::reduction);
      SmallVector<AffineMap> maps{
          lhsMap, rhsMap, AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)};
      return linalg::GenericOp::create(
                 rewriter, loc, acc.getType(), ValueRange{lhs, rhs},
                 ValueRange{acc}, maps, iters,
                 [&](OpBuilder &b, Location l, ValueRange args) {
                   Value p = arith::MulFOp::create(b, l, toF32(b, l, args[0]),
                                                   toF32(b, l, args[1]));
                   linalg::YieldOp::create(
                       b, l, ValueRange{arith::AddFOp::create(b, l, args[2], p)});
                 })
          .getResult(0);
    };

    // scores[b, h, i, j] = sum_c q[b, h, i, c] k[b, h / G, j, c]
    Value scores = contraction(
        q, k, AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx),
        AffineMap::get(5, 0, {d(0), kvHead, d(3), d(4)}, ctx), scoreSizes);

    // t = scores * scale + mask, -inf above the causal diagonal.
    AffineMap id4 = AffineMap::getMultiDimIdentityMap(4, ctx);
    SmallVector<Value> ins{scores};
    SmallVector<AffineMap> maps{id4};
    Value mask = adaptor.getMask();
    if (mask) {
      auto maskType = cast<RankedTensorType>(mask.getType());
      auto scoreType = cast<RankedTensorType>(scores.getType());
      SmallVector<AffineExpr> exprs;
      for (int64_t i = 0; i < 4; ++i)
        exprs.push_back(maskType.getDimSize(i) == 1 &&
                                scoreType.getDimSize(i) != 1
                            ? getAffineConstantExpr(0, ctx)
                            : d(i));
      ins.push_back(mask);
      maps.push_back(AffineMap::get(4, 0, exprs, ctx));
    }
    maps.push_back(id4);
    // The last key row i may see: j <= i + (Skv - Sq).
    Value diagonal;
    if (op.getCausal()) {
      Value sqV = getValueOrCreateConstantIndexOp(rewriter, loc, sq);
      Value skvV = getValueOrCreateConstantIndexOp(rewriter, loc, skv);
      diagonal = arith::SubIOp::create(rewriter, loc, skvV, sqV);
    }
    Value scoresInit =
        tensor::EmptyOp::create(rewriter, loc, scoreSizes, rewriter.getF32Type());
    SmallVector<IteratorType> parallel4(4, IteratorType::parallel);
    Value t = linalg::GenericOp::create(
                  rewriter, loc, scoresInit.getType(), ins,
                  ValueRange{scoresInit}, maps, parallel4,
                  [&](OpBuilder &b, Location l, ValueRange args) {
                    Value x = args[0];
                    if (scaleV)
                      x = arith::MulFOp::create(b, l, x, scaleV);
                    if (mask)
                      x = arith::AddFOp::create(b, l, x, toF32(b, l, args[1]));
                    if (diagonal) {
                      Value i = linalg::IndexOp::create(b, l, 2);
                      Value j = linalg::IndexOp::create(b, l, 3);
                      Value last = arith::AddIOp::create(b, l, i, diagonal);
                      Value masked = arith::CmpIOp::create(
                          b, l, arith::CmpIPredicate::sgt, j, last);
                      x = arith::SelectOp::create(b, l, masked, ninf, x);
                    }
                    linalg::YieldOp::create(b, l, x);
                  })
                  .getResult(0);

    // Softmax over j in FP32, as the importer writes it (max, exp of the
    // difference, sum, division).
    Value rowMax = reduceRows(rewriter, loc, t, ninf, rowSizes,
                              [](OpBuilder &b, Location l, Value x, Value acc) {
                                return arith::MaximumFOp::create(b, l, x, acc);
                              });
    AffineMap rowMap = AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx);
    Value e =
        linalg::GenericOp::create(
            rewriter, loc, scoresInit.getType(), ValueRange{t, rowMax},
            ValueRange{scoresInit}, ArrayRef<AffineMap>{id4, rowMap, id4},
            parallel4,
            [&](OpBuilder &b, Location l, ValueRange args) {
              // A row with nothing to attend has max -inf: subtracting 0
              // keeps every exp 0 (instead of NaN from -inf - -inf).
              Value m = args[1];
              Value none = arith::CmpFOp::create(
                  b, l, arith::CmpFPredicate::OEQ, m, ninf);
              m = arith::SelectOp::create(b, l, none, zero, m);
              Value x = arith::SubFOp::create(b, l, args[0], m);
              linalg::YieldOp::create(b, l,
                                      ValueRange{math::ExpOp::create(b, l, x)});
            })
            .getResult(0);
    Value rowSum = reduceRows(rewriter, loc, e, zero, rowSizes,
                              [](OpBuilder &b, Location l, Value x, Value acc) {
                                return arith::AddFOp::create(b, l, x, acc);
                              });
    // Probabilities, in the operand type when that has 16 bits (the P V
    // product reads them as it reads v).
    Type probType = operandType.isF32() ? rewriter.getF32Type() : operandType;
    Value probInit =
        tensor::EmptyOp::create(rewriter, loc, scoreSizes, probType);
    Value p = linalg::GenericOp::create(
                  rewriter, loc, probInit.getType(), ValueRange{e, rowSum},
                  ValueRange{probInit}, ArrayRef<AffineMap>{id4, rowMap, id4},
                  parallel4,
                  [&](OpBuilder &b, Location l, ValueRange args) {
                    // The sum is >= 1 unless the row is all -inf (sum 0).
                    Value x = arith::DivFOp::create(b, l, args[0], args[1]);
                    Value empty = arith::CmpFOp::create(
                        b, l, arith::CmpFPredicate::OEQ, args[1], zero);
                    x = arith::SelectOp::create(b, l, empty, zero, x);
                    if (!probType.isF32())
                      x = arith::TruncFOp::create(b, l, probType, x);
                    linalg::YieldOp::create(b, l, x);
                  })
                  .getResult(0);

    // o[b, h, i, n] = sum_j p[b, h, i, j] v[b, h / G, j, n]
    Value o = contraction(
        p, v, AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx),
        AffineMap::get(5, 0, {d(0), kvHead, d(4), d(3)}, ctx), outSizes);
    Type resultElt = resultType.getElementType();
    if (!resultElt.isF32()) {
      Value init = tensor::EmptyOp::create(rewriter, loc, outSizes, resultElt);
      o = linalg::GenericOp::create(
              rewriter, loc, init.getType(), ValueRange{o}, ValueRange{init},
              ArrayRef<AffineMap>{id4, id4}, parallel4,
              [&](OpBuilder &b, Location l, ValueRange args) {
                linalg::YieldOp::create(
                    b, l,
                    ValueRange{arith::TruncFOp::create(b, l, resultElt, args[0])});
              })
              .getResult(0);
    }
    if (op.getSequenceMajor()) {
      Value init = tensor::EmptyOp::create(
          rewriter, loc, SmallVector<OpFoldResult>{batch, sq, heads, dv},
          resultElt);
      o = linalg::TransposeOp::create(rewriter, loc, o, init,
                                      ArrayRef<int64_t>{0, 2, 1, 3})
              .getResult()[0];
    }
    if (o.getType() != resultType)
      o = tensor::CastOp::create(rewriter, loc, resultType, o);
    rewriter.replaceOp(op, o);
    return success();
  }
};

} // namespace

void fp8::populateFP8AttentionToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LowerAttention>(patterns.getContext());
}
