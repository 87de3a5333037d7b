//===- FP8ToLinalg.cpp - Lower fp8 ops to linalg on tensors ---------------===//
//
// Part of fp8-opt. Every fp8 op becomes destination-style tensor code:
// element-wise linalg.generic ops that read each element's scale through an
// indexing map (d floordiv block), block reductions over a padded and
// expanded view for amax, and an FP32 contraction for scaled_matmul. FP8
// rounding is a clamp to +-max followed by arith.truncf (nearest even), so
// saturation is explicit and no backend's out-of-range behaviour matters.
//
//===----------------------------------------------------------------------===//

#include "LoweringHelpers.h"

#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cfloat>
#include <cmath>

#define DEBUG_TYPE "convert-fp8-to-linalg"

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8TOLINALG
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::linalg_lowering;

namespace {

//===----------------------------------------------------------------------===//
// Block views
//===----------------------------------------------------------------------===//

/// How one data dimension relates to its scale dimension.
enum class DimKind {
  Parallel, // block 1: one scale per index
  Full,     // the block covers the whole dimension
  Split     // blocks of `block` elements; the last one may be partial
};

struct BlockDim {
  DimKind kind;
  int64_t block;
};

/// Classifies every dimension of `shape` under `layout`; fails when a split
/// dimension is dynamic (the padding would have to be dynamic too).
FailureOr<SmallVector<BlockDim>> classify(ArrayRef<int64_t> shape,
                                          ScaleLayoutAttr layout) {
  FailureOr<SmallVector<int64_t>> expanded = layout.getExpandedBlock(shape);
  if (failed(expanded))
    return failure();
  SmallVector<BlockDim> dims;
  for (auto [d, b] : llvm::zip_equal(shape, *expanded)) {
    // A unit dimension with a unit block (not per tensor, whose scale has
    // rank 0) is one scale per index: parallel, so that it does not come
    // between the kept and the reduced dimensions of a block amax.
    if (b == 1 && (d != 1 || !layout.isPerTensor()))
      dims.push_back({DimKind::Parallel, 1});
    else if (b == d || (!ShapedType::isDynamic(d) && !ShapedType::isDynamic(b) &&
                        b >= d))
      dims.push_back({DimKind::Full, b});
    else if (ShapedType::isDynamic(d) || ShapedType::isDynamic(b))
      return failure();
    else
      dims.push_back({DimKind::Split, b});
  }
  return dims;
}

/// The map from the iteration space of an element-wise op over the data
/// (identity) to the scale tensor.
AffineMap scaleMap(MLIRContext *ctx, ArrayRef<BlockDim> dims,
                   ScaleLayoutAttr layout) {
  const unsigned rank = dims.size();
  if (layout.isPerTensor())
    return AffineMap::get(rank, 0, {}, ctx);
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i < rank; ++i) {
    switch (dims[i].kind) {
    case DimKind::Parallel:
      exprs.push_back(getAffineDimExpr(i, ctx));
      break;
    case DimKind::Full:
      exprs.push_back(getAffineConstantExpr(0, ctx));
      break;
    case DimKind::Split:
      exprs.push_back(getAffineDimExpr(i, ctx).floorDiv(dims[i].block));
      break;
    }
  }
  return AffineMap::get(rank, 0, exprs, ctx);
}

SmallVector<utils::IteratorType> parallel(unsigned n) {
  return SmallVector<utils::IteratorType>(n, utils::IteratorType::parallel);
}

Value emptyLike(OpBuilder &b, Location loc, Value shapeSource, Type elt) {
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(b, loc, shapeSource);
  return tensor::EmptyOp::create(b, loc, sizes, elt);
}

Value i32Const(OpBuilder &b, Location loc, uint32_t v) {
  return arith::ConstantOp::create(
      b, loc, b.getI32IntegerAttr(static_cast<int32_t>(v)));
}

/// Converts a scale element (f32 or E8M0) to f32.
Value scaleToF32(OpBuilder &b, Location loc, Value s) {
  if (s.getType().isF32())
    return s;
  // E8M0: 2^(b-127) is the f32 with exponent field b, except b = 0 (2^-127,
  // a subnormal: 0x00400000) and 0xFF (NaN).
  Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), s);
  Value w = arith::ExtUIOp::create(b, loc, b.getI32Type(), byte);
  Value bits = arith::ShLIOp::create(b, loc, w, i32Const(b, loc, 23));
  Value isZero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w,
                                       i32Const(b, loc, 0));
  Value isNaN = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w,
                                      i32Const(b, loc, 0xFF));
  bits = arith::SelectOp::create(b, loc, isZero, i32Const(b, loc, 0x00400000u),
                                 bits);
  bits = arith::SelectOp::create(b, loc, isNaN, i32Const(b, loc, 0x7FC00000u),
                                 bits);
  return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
}

/// Saturating round-to-nearest-even cast of an f32 to an FP8 type.
Value saturatingTrunc(OpBuilder &b, Location loc, Value x, Type f8) {
  float maxValue = getMaxFinite(*getFormat(f8));
  // minimumf/maximumf propagate NaN, and clamp +-inf to +-max.
  Value c = arith::MinimumFOp::create(b, loc, x, f32Const(b, loc, maxValue));
  c = arith::MaximumFOp::create(b, loc, c, f32Const(b, loc, -maxValue));
  return arith::TruncFOp::create(b, loc, f8, c);
}

//===----------------------------------------------------------------------===//
// quantize / dequantize
//===----------------------------------------------------------------------===//

/// An element-wise generic over `data` reading the covering scale.
template <typename BodyFn>
Value elementwiseWithScale(OpBuilder &b, Location loc, Value data, Value scale,
                           ScaleLayoutAttr layout, Type resultElt,
                           BodyFn body) {
  auto type = cast<RankedTensorType>(data.getType());
  SmallVector<BlockDim> dims = *classify(type.getShape(), layout);
  MLIRContext *ctx = b.getContext();
  const unsigned rank = type.getRank();
  AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  Value init = emptyLike(b, loc, data, resultElt);
  auto generic = linalg::GenericOp::create(
      b, loc, init.getType(), ValueRange{data, scale}, ValueRange{init},
      ArrayRef<AffineMap>{id, scaleMap(ctx, dims, layout), id},
      parallel(rank), [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value r = body(nb, nl, args[0], scaleToF32(nb, nl, args[1]));
        linalg::YieldOp::create(nb, nl, r);
      });
  return generic.getResult(0);
}

struct LowerQuantize : OpConversionPattern<QuantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(QuantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(classify(op.getInput().getType().getShape(), op.getLayout())))
      return rewriter.notifyMatchFailure(op, "dynamic blocked dimension");
    Type f8 = op.getType().getElementType();
    Value r = elementwiseWithScale(
        rewriter, op.getLoc(), adaptor.getInput(), adaptor.getScale(),
        op.getLayout(), f8, [&](OpBuilder &b, Location loc, Value x, Value s) {
          Value q = arith::DivFOp::create(b, loc, toF32(b, loc, x), s);
          return saturatingTrunc(b, loc, q, f8);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

struct LowerDequantize : OpConversionPattern<DequantizeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DequantizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(classify(op.getInput().getType().getShape(), op.getLayout())))
      return rewriter.notifyMatchFailure(op, "dynamic blocked dimension");
    Type outElt = op.getType().getElementType();
    Value r = elementwiseWithScale(
        rewriter, op.getLoc(), adaptor.getInput(), adaptor.getScale(),
        op.getLayout(), outElt,
        [&](OpBuilder &b, Location loc, Value q, Value s) -> Value {
          Value x = arith::ExtFOp::create(b, loc, b.getF32Type(), q);
          Value y = arith::MulFOp::create(b, loc, x, s);
          if (outElt.isF32())
            return y;
          return arith::TruncFOp::create(b, loc, outElt, y);
        });
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// amax
//===----------------------------------------------------------------------===//

/// max |x| per block: pads split dimensions with zeros (which cannot raise
/// an amax), expands each into (blocks, block) and reduces; NaN propagates
/// through arith.maximumf.
Value blockAmax(OpBuilder &b, Location loc, Value data, ScaleLayoutAttr layout,
                RankedTensorType resultType) {
  auto type = cast<RankedTensorType>(data.getType());
  SmallVector<BlockDim> dims = *classify(type.getShape(), layout);
  MLIRContext *ctx = b.getContext();
  Type elt = type.getElementType();

  // 1. Pad split dimensions to a multiple of their block.
  SmallVector<OpFoldResult> low, high;
  bool needsPad = false;
  for (auto [d, bd] : llvm::zip_equal(type.getShape(), dims)) {
    int64_t pad = 0;
    if (bd.kind == DimKind::Split)
      pad = llvm::alignTo(d, bd.block) - d;
    needsPad |= pad != 0;
    low.push_back(b.getIndexAttr(0));
    high.push_back(b.getIndexAttr(pad));
  }
  Value view = data;
  if (needsPad) {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
    SmallVector<int64_t> padded;
    for (auto [d, bd] : llvm::zip_equal(type.getShape(), dims))
      padded.push_back(bd.kind == DimKind::Split ? llvm::alignTo(d, bd.block)
                                                 : d);
    view = tensor::PadOp::create(b, loc, RankedTensorType::get(padded, elt),
                                 data, low, high, zero);
  }

  // 2. Expand each split dimension d into (d / block, block).
  SmallVector<ReassociationIndices> reassoc;
  SmallVector<int64_t> expandedShape;
  SmallVector<OpFoldResult> expandedSizes;
  SmallVector<utils::IteratorType> iters;
  SmallVector<AffineExpr> outExprs;
  unsigned loop = 0;
  for (auto [i, bd] : llvm::enumerate(dims)) {
    int64_t d = cast<RankedTensorType>(view.getType()).getDimSize(i);
    ReassociationIndices group;
    if (bd.kind == DimKind::Split) {
      group = {static_cast<int64_t>(expandedShape.size()),
               static_cast<int64_t>(expandedShape.size() + 1)};
      expandedShape.push_back(d / bd.block);
      expandedShape.push_back(bd.block);
      iters.push_back(utils::IteratorType::parallel);
      outExprs.push_back(getAffineDimExpr(loop++, ctx));
      iters.push_back(utils::IteratorType::reduction);
      ++loop;
    } else {
      group = {static_cast<int64_t>(expandedShape.size())};
      expandedShape.push_back(d);
      if (bd.kind == DimKind::Parallel) {
        iters.push_back(utils::IteratorType::parallel);
        outExprs.push_back(getAffineDimExpr(loop++, ctx));
      } else {
        iters.push_back(utils::IteratorType::reduction);
        ++loop;
      }
    }
    reassoc.push_back(group);
  }
  if (expandedShape.size() != dims.size()) {
    auto expandedType = RankedTensorType::get(expandedShape, elt);
    view = tensor::ExpandShapeOp::create(b, loc, expandedType, view, reassoc);
  }

  // 2b. Trailing reduction dimensions after a kept one (a block covering
  // whole trailing dimensions: `block 128xD` over [B, H, S, D] reduces
  // 128 x D contiguous elements) become one: a row reduction, which the GPU
  // runs as a warp per row instead of a thread per block.
  {
    size_t firstTrailing = iters.size();
    while (firstTrailing > 0 &&
           iters[firstTrailing - 1] == utils::IteratorType::reduction)
      --firstTrailing;
    const bool anyParallel =
        llvm::is_contained(iters, utils::IteratorType::parallel);
    const bool interleaved = llvm::any_of(
        ArrayRef(iters).take_front(firstTrailing),
        [](utils::IteratorType it) { return it != utils::IteratorType::parallel; });
    auto viewType = cast<RankedTensorType>(view.getType());
    if (anyParallel && !interleaved && iters.size() - firstTrailing >= 2 &&
        viewType.hasStaticShape()) {
      SmallVector<ReassociationIndices> groups;
      SmallVector<int64_t> shape;
      for (size_t i = 0; i < firstTrailing; ++i) {
        groups.push_back({static_cast<int64_t>(i)});
        shape.push_back(viewType.getDimSize(i));
      }
      ReassociationIndices tail;
      int64_t n = 1;
      for (size_t i = firstTrailing; i < iters.size(); ++i) {
        tail.push_back(static_cast<int64_t>(i));
        n *= viewType.getDimSize(i);
      }
      groups.push_back(tail);
      shape.push_back(n);
      view = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get(shape, elt), view, groups);
      iters.resize(firstTrailing + 1);
      loop = firstTrailing + 1;
    }
  }

  // 3. Reduce into the kept dimensions.
  SmallVector<OpFoldResult> outSizes;
  SmallVector<int64_t> outShape;
  for (auto [i, it] : llvm::enumerate(iters)) {
    if (it != utils::IteratorType::parallel)
      continue;
    outShape.push_back(cast<RankedTensorType>(view.getType()).getDimSize(i));
    outSizes.push_back(tensor::getMixedSize(b, loc, view, i));
  }
  Value init = tensor::EmptyOp::create(b, loc, outSizes, b.getF32Type());
  Value zero = f32Const(b, loc, 0.0f);
  init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  AffineMap inMap = AffineMap::getMultiDimIdentityMap(loop, ctx);
  AffineMap outMap = AffineMap::get(loop, 0, outExprs, ctx);
  Value reduced =
      linalg::GenericOp::create(
          b, loc, init.getType(), ValueRange{view}, ValueRange{init},
          ArrayRef<AffineMap>{inMap, outMap}, iters,
          [&](OpBuilder &nb, Location nl, ValueRange args) {
            Value a = math::AbsFOp::create(nb, nl, toF32(nb, nl, args[0]));
            Value m = arith::MaximumFOp::create(nb, nl, args[1], a);
            linalg::YieldOp::create(nb, nl, m);
          })
          .getResult(0);

  // 4. Re-insert the unit dimensions of row/col/full blocks.
  if (cast<RankedTensorType>(reduced.getType()).getRank() ==
      resultType.getRank())
    return reduced;
  // Each kept dimension takes the Full (unit) dimensions before it; trailing
  // Full dimensions join the last group.
  SmallVector<ReassociationIndices> outReassoc;
  ReassociationIndices pending;
  for (auto [i, bd] : llvm::enumerate(dims)) {
    pending.push_back(i);
    if (bd.kind != DimKind::Full) {
      outReassoc.push_back(pending);
      pending.clear();
    }
  }
  if (!pending.empty()) {
    if (outReassoc.empty())
      outReassoc.push_back(pending);
    else
      llvm::append_range(outReassoc.back(), pending);
  }
  if (cast<RankedTensorType>(reduced.getType()).getRank() == 0)
    outReassoc.clear();
  return tensor::ExpandShapeOp::create(b, loc, resultType, reduced, outReassoc);
}

struct LowerAmax : OpConversionPattern<AmaxOp> {
  LowerAmax(MLIRContext *ctx, bool split)
      : OpConversionPattern(ctx), split(split) {
    // A large per-tensor amax becomes a smaller one, lowered in turn.
    setHasBoundedRewriteRecursion();
  }
  LogicalResult
  matchAndRewrite(AmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (failed(classify(op.getInput().getType().getShape(), op.getLayout())))
      return rewriter.notifyMatchFailure(op, "dynamic blocked dimension");
    auto inType = op.getInput().getType();
    if (split && op.getLayout().isPerTensor() && inType.hasStaticShape()) {
      if (inType.getNumElements() > 2 * kRow) {
        rewriter.replaceOp(op,
                           splitTensorAmax(rewriter, op, adaptor.getInput()));
        return success();
      }
      // A small tensor: one row (1-D), so that the GPU runs it as a warp.
      // (Below.)
      if (inType.getRank() != 1) {
        rewriter.replaceOp(
            op,
            AmaxOp::create(rewriter, op.getLoc(), op.getType(),
                           flatten(rewriter, op.getLoc(), adaptor.getInput()),
                           op.getLayoutAttr()));
        return success();
      }
    }
    rewriter.replaceOp(op, blockAmax(rewriter, op.getLoc(), adaptor.getInput(),
                                     op.getLayout(), op.getType()));
    return success();
  }

private:
  /// `op`'s amax over `pieces` ([..., P, C], a view of its input): the
  /// maxima of the pieces along the last dimension (a row reduction per
  /// piece), then a new fp8.amax of `op`'s layout over them ([..., P]),
  /// which this pattern lowers in turn.
  static Value amaxOfPieces(OpBuilder &b, AmaxOp op, Value pieces) {
    Location loc = op.getLoc();
    ArrayRef<int64_t> shape =
        cast<RankedTensorType>(pieces.getType()).getShape();
    const int64_t rank = shape.size();
    SmallVector<int64_t> block(rank, 1), partialShape(shape);
    block.back() = shape.back();
    partialShape.back() = 1;
    Type f32 = op.getType().getElementType();
    Value partial = blockAmax(
        b, loc, pieces,
        ScaleLayoutAttr::get(b.getContext(), Granularity::Block, block),
        RankedTensorType::get(partialShape, f32));
    // [..., P, 1] -> [..., P].
    SmallVector<ReassociationIndices> groups;
    for (int64_t i = 0; i + 2 < rank; ++i)
      groups.push_back({i});
    groups.push_back({rank - 2, rank - 1});
    partialShape.pop_back();
    partial = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get(partialShape, f32), partial, groups);
    return AmaxOp::create(b, loc, op.getType(), partial, op.getLayoutAttr());
  }

  /// max |x| over the whole tensor as max over P contiguous rows of R
  /// elements, then (a new per-tensor fp8.amax, which this pattern splits
  /// again while it is large) over the P row maxima: x flattened
  /// (zero-padded to P * R) is viewed as [P, R] and reduced along its
  /// last dimension -- a row reduction, which the GPU runs as a warp per
  /// row with vector loads, and the last level (at most 2 kRow values,
  /// 1-D) as one warp. R is the tensor's own last dimension where that is
  /// a warp's row (kMinRow to kMaxRow elements: the first level's rows are
  /// the tensor's, so the kernel that produced them can reduce them too),
  /// else kRow. Two kernels for an 8192 x 4096 or 8192 x 14336
  /// activation. Bit-identical to one reduction: maximumf is
  /// order-independent and propagates NaN; zeros cannot raise an amax;
  /// |partial| = partial.
  static constexpr int64_t kRow = 4096, kMinRow = 1024, kMaxRow = 32768;

  static int64_t rowLength(RankedTensorType type) {
    const int64_t last = type.getShape().back();
    if (type.getRank() >= 2 && last >= kMinRow && last <= kMaxRow)
      return last;
    return kRow;
  }

  /// `input` (static) as a 1-D tensor.
  static Value flatten(OpBuilder &b, Location loc, Value input) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() == 1)
      return input;
    ReassociationIndices all;
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.push_back(i);
    return tensor::CollapseShapeOp::create(
        b, loc,
        RankedTensorType::get({type.getNumElements()}, type.getElementType()),
        input, ArrayRef<ReassociationIndices>{all});
  }

  Value splitTensorAmax(OpBuilder &b, AmaxOp op, Value input) const {
    Location loc = op.getLoc();
    auto inType = op.getInput().getType();
    Type elt = inType.getElementType();
    const int64_t n = inType.getNumElements();
    const int64_t row = rowLength(inType);
    const int64_t parts = llvm::divideCeil(n, row);
    Value flat = flatten(b, loc, input);
    if (row * parts != n) {
      Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elt));
      flat = tensor::PadOp::create(
          b, loc, RankedTensorType::get({row * parts}, elt), flat,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(row * parts - n)}, zero);
    }
    // The next level reads the maxima as one row (1-D: a row reduction).
    return amaxOfPieces(b, op,
                        tensor::ExpandShapeOp::create(
                            b, loc, RankedTensorType::get({parts, row}, elt),
                            flat, ArrayRef<ReassociationIndices>{{0, 1}}));
  }

  bool split;
};

//===----------------------------------------------------------------------===//
// compute_scale
//===----------------------------------------------------------------------===//

Value isUnusableAmax(OpBuilder &b, Location loc, Value a) {
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a, a);
  Value absA = math::AbsFOp::create(b, loc, a);
  Value isInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, absA,
                                      f32Const(b, loc, INFINITY));
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, a,
                                       f32Const(b, loc, 0.0f));
  return arith::OrIOp::create(b, loc,
                              arith::OrIOp::create(b, loc, isNaN, isInf),
                              isZero);
}

/// inf -> FLT_MAX, then optional round-down to a power of two.
Value finishEncodeScale(OpBuilder &b, Location loc, Value e, bool pow2) {
  Value isInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, e,
                                      f32Const(b, loc, INFINITY));
  e = arith::SelectOp::create(b, loc, isInf, f32Const(b, loc, FLT_MAX), e);
  if (pow2) {
    Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), e);
    bits = arith::AndIOp::create(b, loc, bits, i32Const(b, loc, 0xFF800000u));
    e = arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  }
  return e;
}

/// E8M0 exponent byte (as i32) for an amax, per the MX rounding rule.
Value mxExponent(OpBuilder &b, Location loc, Value amax, Format format,
                 E8M0Rounding rounding) {
  auto cmpI = [&](arith::CmpIPredicate p, Value x, uint32_t c) {
    return arith::CmpIOp::create(b, loc, p, x, i32Const(b, loc, c));
  };
  auto sel = [&](Value c, Value t, Value f) {
    return arith::SelectOp::create(b, loc, c, t, f);
  };
  const float maxValue = getMaxFinite(format);
  Value v = amax;
  if (rounding == E8M0Rounding::RCeil)
    v = arith::MulFOp::create(b, loc, amax, f32Const(b, loc, 1.0f / maxValue));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
  Value isInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v,
                                      f32Const(b, loc, INFINITY));
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v,
                                       f32Const(b, loc, 0.0f));
  Value result;
  if (rounding == E8M0Rounding::RCeil) {
    Value u = arith::BitcastOp::create(b, loc, b.getI32Type(), v);
    Value exp = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, u, i32Const(b, loc, 23)),
        i32Const(b, loc, 0xFF));
    Value man = arith::AndIOp::create(b, loc, u, i32Const(b, loc, 0x7FFFFF));
    Value roundUp = arith::AndIOp::create(
        b, loc,
        arith::AndIOp::create(b, loc, cmpI(arith::CmpIPredicate::ne, man, 0),
                              cmpI(arith::CmpIPredicate::ne, exp, 0xFE)),
        arith::XOrIOp::create(
            b, loc,
            arith::AndIOp::create(b, loc,
                                  cmpI(arith::CmpIPredicate::eq, exp, 0),
                                  cmpI(arith::CmpIPredicate::ule, man,
                                       0x400000)),
            arith::ConstantOp::create(b, loc, b.getBoolAttr(true))));
    result = sel(roundUp,
                 arith::AddIOp::create(b, loc, exp, i32Const(b, loc, 1)), exp);
  } else {
    // floor(log2(amax)) from the exponent field; subnormal amaxes are first
    // scaled by 2^64 (exact) so that their exponent field is meaningful.
    Value isSub = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, v,
                                        f32Const(b, loc, 0x1p-126f));
    Value scaled = sel(isSub,
                       arith::MulFOp::create(b, loc, v,
                                             f32Const(b, loc, 0x1p64f)),
                       v);
    Value u = arith::BitcastOp::create(b, loc, b.getI32Type(), scaled);
    Value exp = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, u, i32Const(b, loc, 23)),
        i32Const(b, loc, 0xFF));
    // biased = (exp - 127 - (isSub ? 64 : 0)) - emax_elem + 127
    Value adjust = sel(isSub, i32Const(b, loc, 64), i32Const(b, loc, 0));
    Value biased = arith::SubIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, exp,
                              i32Const(b, loc, numerics::emaxElem(
                                                   toNumericsFormat(format)))),
        adjust);
    biased = arith::MaxSIOp::create(b, loc, biased, i32Const(b, loc, 0));
    result = arith::MinSIOp::create(b, loc, biased, i32Const(b, loc, 254));
  }
  result = sel(isZero, i32Const(b, loc, 0), result);
  result = sel(isInf, i32Const(b, loc, 0xFE), result);
  return sel(isNaN, i32Const(b, loc, 0xFF), result);
}

struct LowerComputeScale : OpConversionPattern<ComputeScaleOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ComputeScaleOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    RecipeAttrInterface recipe = op.getRecipe();
    const Format format = op.getFormat();
    const float maxValue = getMaxFinite(format);
    Value amax = adaptor.getAmax();
    auto scaleType = op.getType();
    const unsigned rank = scaleType.getRank();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);

    if (auto delayed = dyn_cast<DelayedScalingAttr>(recipe)) {
      // Reduce the history (dimension 0) to one amax per scale element.
      auto histType = cast<RankedTensorType>(amax.getType());
      Value reduced;
      SmallVector<OpFoldResult> sizes;
      for (unsigned i = 1; i < histType.getRank(); ++i)
        sizes.push_back(tensor::getMixedSize(rewriter, loc, amax, i));
      if (delayed.getAlgo() == AmaxAlgo::MostRecent) {
        SmallVector<OpFoldResult> offsets(histType.getRank(),
                                          rewriter.getIndexAttr(0));
        SmallVector<OpFoldResult> sliceSizes{rewriter.getIndexAttr(1)};
        llvm::append_range(sliceSizes, sizes);
        SmallVector<OpFoldResult> strides(histType.getRank(),
                                          rewriter.getIndexAttr(1));
        reduced = tensor::ExtractSliceOp::create(
            rewriter, loc,
            RankedTensorType::get(histType.getShape().drop_front(),
                                  rewriter.getF32Type()),
            amax, offsets, sliceSizes, strides);
      } else {
        Value init = tensor::EmptyOp::create(rewriter, loc, sizes,
                                             rewriter.getF32Type());
        // Seeded with history[0] semantics by starting from -inf: maximumf
        // keeps NaN, and amaxes are >= 0.
        init = linalg::FillOp::create(rewriter, loc,
                                      f32Const(rewriter, loc, -INFINITY), init)
                   .getResult(0);
        SmallVector<AffineExpr> outExprs;
        for (unsigned i = 1; i <= rank; ++i)
          outExprs.push_back(getAffineDimExpr(i, ctx));
        SmallVector<utils::IteratorType> iters{utils::IteratorType::reduction};
        llvm::append_range(iters, parallel(rank));
        reduced =
            linalg::GenericOp::create(
                rewriter, loc, init.getType(), ValueRange{amax},
                ValueRange{init},
                ArrayRef<AffineMap>{
                    AffineMap::getMultiDimIdentityMap(rank + 1, ctx),
                    AffineMap::get(rank + 1, 0, outExprs, ctx)},
                iters,
                [&](OpBuilder &b, Location l, ValueRange args) {
                  linalg::YieldOp::create(
                      b, l,
                      ValueRange{arith::MaximumFOp::create(b, l, args[1],
                                                           args[0])});
                })
                .getResult(0);
      }
      const float twoToMargin = std::ldexp(1.0f, delayed.getMargin());
      const bool pow2 = delayed.getPow2();
      Value init = emptyLike(rewriter, loc, adaptor.getPrevious(),
                             rewriter.getF32Type());
      Value r =
          linalg::GenericOp::create(
              rewriter, loc, init.getType(),
              ValueRange{reduced, adaptor.getPrevious()}, ValueRange{init},
              ArrayRef<AffineMap>{id, id, id}, parallel(rank),
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value a = args[0];
                Value e = arith::DivFOp::create(b, l, f32Const(b, l, maxValue),
                                                a);
                e = arith::DivFOp::create(b, l, e, f32Const(b, l, twoToMargin));
                e = finishEncodeScale(b, l, e, pow2);
                Value s = arith::DivFOp::create(b, l, f32Const(b, l, 1.0f), e);
                s = arith::SelectOp::create(b, l, isUnusableAmax(b, l, a),
                                            args[1], s);
                linalg::YieldOp::create(b, l, s);
              })
              .getResult(0);
      rewriter.replaceOp(op, r);
      return success();
    }

    Value init = emptyLike(rewriter, loc, amax, scaleType.getElementType());
    Value r;
    if (auto mx = dyn_cast<MXScalingAttr>(recipe)) {
      Type e8m0 = scaleType.getElementType();
      r = linalg::GenericOp::create(
              rewriter, loc, init.getType(), ValueRange{amax}, ValueRange{init},
              ArrayRef<AffineMap>{id, id}, parallel(rank),
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value exp = mxExponent(b, l, args[0], format, mx.getRounding());
                Value byte =
                    arith::TruncIOp::create(b, l, b.getI8Type(), exp);
                linalg::YieldOp::create(
                    b, l, ValueRange{arith::BitcastOp::create(b, l, e8m0, byte)});
              })
              .getResult(0);
    } else {
      const float eps = getScaleEps(recipe);
      const bool pow2 = recipe.usesPowerOfTwoScales();
      r = linalg::GenericOp::create(
              rewriter, loc, init.getType(), ValueRange{amax}, ValueRange{init},
              ArrayRef<AffineMap>{id, id}, parallel(rank),
              [&](OpBuilder &b, Location l, ValueRange args) {
                Value a = args[0];
                Value epsV = f32Const(b, l, eps);
                Value lt = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OLT,
                                                 a, epsV);
                Value clamped = arith::SelectOp::create(b, l, lt, epsV, a);
                Value e = arith::DivFOp::create(b, l, f32Const(b, l, maxValue),
                                                clamped);
                e = finishEncodeScale(b, l, e, pow2);
                e = arith::SelectOp::create(b, l, isUnusableAmax(b, l, a),
                                            f32Const(b, l, 1.0f), e);
                Value s = arith::DivFOp::create(b, l, f32Const(b, l, 1.0f), e);
                linalg::YieldOp::create(b, l, s);
              })
              .getResult(0);
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// history_update
//===----------------------------------------------------------------------===//

struct LowerHistoryUpdate : OpConversionPattern<HistoryUpdateOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(HistoryUpdateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = op.getType();
    if (!type.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "dynamic history shape");
    Location loc = op.getLoc();
    const int64_t rank = type.getRank();
    const int64_t length = type.getDimSize(0);
    ArrayRef<int64_t> rest = type.getShape().drop_front();
    auto idx = [&](int64_t v) -> OpFoldResult {
      return rewriter.getIndexAttr(v);
    };
    SmallVector<OpFoldResult> ones(rank, idx(1));
    SmallVector<OpFoldResult> zeros(rank, idx(0));
    Value result = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                           type.getElementType());
    if (length > 1) {
      SmallVector<OpFoldResult> sizes{idx(length - 1)};
      for (int64_t d : rest)
        sizes.push_back(idx(d));
      Value older = tensor::ExtractSliceOp::create(
          rewriter, loc, adaptor.getHistory(), zeros, sizes, ones);
      SmallVector<OpFoldResult> offsets = zeros;
      offsets[0] = idx(1);
      result = tensor::InsertSliceOp::create(rewriter, loc, older, result,
                                             offsets, sizes, ones);
    }
    SmallVector<OpFoldResult> sizes{idx(1)};
    for (int64_t d : rest)
      sizes.push_back(idx(d));
    result = tensor::InsertSliceOp::create(rewriter, loc, adaptor.getAmax(),
                                           result, zeros, sizes, ones);
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// scaled_matmul
//===----------------------------------------------------------------------===//

struct LowerScaledMatmul : OpConversionPattern<ScaledMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScaledMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    Type f32 = rewriter.getF32Type();
    auto dequant = [&](Value q, Value s, ScaleLayoutAttr layout) -> Value {
      auto t = cast<RankedTensorType>(q.getType());
      return DequantizeOp::create(rewriter, loc, t.clone(f32), q, s, layout);
    };
    // M-major lhs scales: back to the layout's own order (drop the padding,
    // transpose the two trailing dims); pure data movement.
    Value lhsScale = adaptor.getLhsScale();
    if (op.getLhsScaleMMajor()) {
      SmallVector<int64_t> canonical = *op.getCanonicalLhsScaleShape();
      const int64_t r = canonical.size();
      SmallVector<int64_t> stored(canonical);
      std::swap(stored[r - 1], stored[r - 2]);
      SmallVector<OpFoldResult> offsets(r, rewriter.getIndexAttr(0)), sizes,
          strides(r, rewriter.getIndexAttr(1));
      for (int64_t d : stored)
        sizes.push_back(rewriter.getIndexAttr(d));
      auto scaleType = cast<RankedTensorType>(lhsScale.getType());
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, scaleType.clone(stored), lhsScale, offsets, sizes,
          strides);
      SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, r));
      std::swap(perm[r - 1], perm[r - 2]);
      Value init = tensor::EmptyOp::create(rewriter, loc, canonical,
                                           scaleType.getElementType());
      lhsScale = linalg::TransposeOp::create(rewriter, loc, slice, init, perm)
                     ->getResult(0);
    }
    Value lhs = dequant(adaptor.getLhs(), lhsScale, op.getLhsLayout());
    Value rhs =
        dequant(adaptor.getRhs(), adaptor.getRhsScale(), op.getRhsLayout());

    auto resultType = op.getType();
    const unsigned outRank = resultType.getRank();
    const unsigned batch = outRank - 2;
    const unsigned loops = outRank + 1; // batch..., m, n, k
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<AffineExpr> lhsE, rhsE, outE;
    for (unsigned i = 0; i < batch; ++i) {
      lhsE.push_back(d(i));
      outE.push_back(d(i));
    }
    const unsigned m = batch, n = batch + 1, k = batch + 2;
    lhsE.append({d(m), d(k)});
    outE.append({d(m), d(n)});
    if (cast<RankedTensorType>(rhs.getType()).getRank() != 2)
      for (unsigned i = 0; i < batch; ++i)
        rhsE.push_back(d(i));
    if (op.getTransposeRhs())
      rhsE.append({d(n), d(k)});
    else
      rhsE.append({d(k), d(n)});

    SmallVector<OpFoldResult> outSizes;
    for (unsigned i = 0; i < batch + 1; ++i)
      outSizes.push_back(tensor::getMixedSize(rewriter, loc, lhs, i));
    outSizes.push_back(tensor::getMixedSize(
        rewriter, loc, rhs,
        op.getTransposeRhs()
            ? cast<RankedTensorType>(rhs.getType()).getRank() - 2
            : cast<RankedTensorType>(rhs.getType()).getRank() - 1));
    Value acc = tensor::EmptyOp::create(rewriter, loc, outSizes, f32);
    acc = linalg::FillOp::create(rewriter, loc, f32Const(rewriter, loc, 0.0f),
                                 acc)
              .getResult(0);
    SmallVector<utils::IteratorType> iters = parallel(loops);
    iters[k] = utils::IteratorType::reduction;
    Value product =
        linalg::GenericOp::create(
            rewriter, loc, acc.getType(), ValueRange{lhs, rhs}, ValueRange{acc},
            ArrayRef<AffineMap>{AffineMap::get(loops, 0, lhsE, ctx),
                                AffineMap::get(loops, 0, rhsE, ctx),
                                AffineMap::get(loops, 0, outE, ctx)},
            iters,
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value p = arith::MulFOp::create(b, l, args[0], args[1]);
              linalg::YieldOp::create(
                  b, l, ValueRange{arith::AddFOp::create(b, l, args[2], p)});
            })
            .getResult(0);

    // Bias, epilogue and the single rounding to the result type.
    AffineMap id = AffineMap::getMultiDimIdentityMap(outRank, ctx);
    SmallVector<Value> ins{product};
    SmallVector<AffineMap> maps{id};
    if (Value bias = adaptor.getBias()) {
      ins.push_back(bias);
      maps.push_back(cast<RankedTensorType>(bias.getType()).getRank() == 1
                         ? AffineMap::get(outRank, 0, {d(outRank - 1)}, ctx)
                         : id);
    }
    maps.push_back(id);
    Value out = tensor::EmptyOp::create(rewriter, loc, outSizes,
                                        resultType.getElementType());
    const Epilogue epilogue = op.getEpilogue();
    const bool hasBias = static_cast<bool>(adaptor.getBias());
    Type outElt = resultType.getElementType();
    Value r = linalg::GenericOp::create(
                  rewriter, loc, resultType, ins, ValueRange{out}, maps,
                  parallel(outRank),
                  [&](OpBuilder &b, Location l, ValueRange args) {
                    Value x = args[0];
                    if (hasBias)
                      x = arith::AddFOp::create(b, l, x, toF32(b, l, args[1]));
                    x = buildEpilogue(b, l, x, epilogue);
                    if (!outElt.isF32())
                      x = arith::TruncFOp::create(b, l, outElt, x);
                    linalg::YieldOp::create(b, l, x);
                  })
                  .getResult(0);
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

struct LowerTranspose : OpConversionPattern<TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    ArrayRef<int64_t> perm = op.getPermutation();
    auto transpose = [&](Value v) -> Value {
      SmallVector<OpFoldResult> sizes;
      for (int64_t p : perm)
        sizes.push_back(tensor::getMixedSize(rewriter, loc, v, p));
      Value init = tensor::EmptyOp::create(
          rewriter, loc, sizes,
          cast<RankedTensorType>(v.getType()).getElementType());
      return linalg::TransposeOp::create(rewriter, loc, v, init, perm)
          .getResult()[0];
    };
    if (op.isPassThrough()) {
      Value data = transpose(adaptor.getInput());
      Value scale = adaptor.getScale();
      if (!op.getSrcLayout().isPerTensor())
        scale = transpose(scale);
      rewriter.replaceOp(op, {data, scale});
      return success();
    }
    // Re-quantize along the new layout from the dequantized values.
    auto inType = op.getInput().getType();
    Value x = DequantizeOp::create(
        rewriter, loc, inType.clone(rewriter.getF32Type()), adaptor.getInput(),
        adaptor.getScale(), op.getSrcLayout());
    Value xt = transpose(x);
    auto resultScaleType = op.getResultScale().getType();
    Value amax = AmaxOp::create(rewriter, loc,
                                resultScaleType.clone(rewriter.getF32Type()), xt,
                                op.getDstLayout());
    Format format = *getFormat(op.getResult().getType().getElementType());
    Value scale = ComputeScaleOp::create(rewriter, loc, resultScaleType, amax,
                                         Value(), op.getRecipeAttr(), format);
    Value q = QuantizeOp::create(rewriter, loc, op.getResult().getType(), xt,
                                 scale, op.getDstLayout());
    rewriter.replaceOp(op, {q, scale});
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

/// Reports, per op, what the lowering cannot handle, before rewriting.
LogicalResult checkLowerable(Operation *root) {
  bool ok = true;
  auto check = [&](Operation *op, Value data, ScaleLayoutAttr layout) {
    auto type = cast<RankedTensorType>(data.getType());
    if (succeeded(classify(type.getShape(), layout)))
      return;
    op->emitOpError() << "cannot be lowered: layout " << layout
                      << " splits a dynamic dimension of " << type
                      << " into blocks; specialise the shape first";
    ok = false;
  };
  root->walk([&](Operation *op) {
    if (auto q = dyn_cast<QuantizeOp>(op))
      check(op, q.getInput(), q.getLayout());
    else if (auto d = dyn_cast<DequantizeOp>(op))
      check(op, d.getInput(), d.getLayout());
    else if (auto a = dyn_cast<AmaxOp>(op))
      check(op, a.getInput(), a.getLayout());
    else if (auto m = dyn_cast<ScaledMatmulOp>(op)) {
      check(op, m.getLhs(), m.getLhsLayout());
      check(op, m.getRhs(), m.getRhsLayout());
      if (m.getLhsScaleMMajor() &&
          (!m.getLhsScale().getType().hasStaticShape() ||
           !m.getLhs().getType().hasStaticShape())) {
        op->emitOpError("cannot be lowered: m_major lhs scales need static "
                        "lhs and scale shapes (specialise the shape first)");
        ok = false;
      }
    } else if (auto t = dyn_cast<TransposeOp>(op)) {
      check(op, t.getInput(), t.getSrcLayout());
      check(op, t.getResult(), t.getDstLayout());
    } else if (auto h = dyn_cast<HistoryUpdateOp>(op)) {
      if (!h.getType().hasStaticShape()) {
        op->emitOpError("cannot be lowered: the history shape must be static");
        ok = false;
      }
    }
  });
  return success(ok);
}

/// A dialect conversion: every fp8 op is illegal, whatever else the
/// patterns create (linalg, tensor, arith, math) is legal; ops the patterns
/// create from the fp8 dialect (transpose's re-quantization, a split amax's
/// next level) are legalized in turn. checkLowerable runs first only for
/// its messages: what cannot be lowered is named with what to do, instead
/// of the driver's "failed to legalize".
struct ConvertFP8ToLinalgPass
    : fp8::impl::ConvertFP8ToLinalgBase<ConvertFP8ToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    Operation *root = getOperation();
    if (failed(checkLowerable(root)))
      return signalPassFailure();
    ConversionTarget target(getContext());
    target.addIllegalDialect<FP8Dialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(&getContext());
    populateFP8ToLinalgPatterns(patterns, splitTensorAmax);
    if (failed(applyPartialConversion(root, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace

Value fp8::buildEpilogue(OpBuilder &b, Location loc, Value x,
                         Epilogue epilogue) {
  switch (epilogue) {
  case Epilogue::None:
    return x;
  case Epilogue::Relu:
    return arith::MaxNumFOp::create(b, loc, x, f32Const(b, loc, 0.0f));
  case Epilogue::GeluTanh: {
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
    Value x3 = arith::MulFOp::create(b, loc, arith::MulFOp::create(b, loc, x, x),
                                     x);
    Value inner = arith::AddFOp::create(
        b, loc, x,
        arith::MulFOp::create(b, loc, f32Const(b, loc, 0.044715f), x3));
    inner = arith::MulFOp::create(b, loc,
                                  f32Const(b, loc, 0.7978845608028654f), inner);
    Value t = math::TanhOp::create(b, loc, inner);
    Value onePlus = arith::AddFOp::create(b, loc, f32Const(b, loc, 1.0f), t);
    return arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, f32Const(b, loc, 0.5f), x),
        onePlus);
  }
  case Epilogue::GeluErf: {
    Value e = math::ErfOp::create(
        b, loc,
        arith::MulFOp::create(b, loc, x,
                              f32Const(b, loc, 0.7071067811865476f)));
    Value onePlus = arith::AddFOp::create(b, loc, f32Const(b, loc, 1.0f), e);
    return arith::MulFOp::create(
        b, loc, arith::MulFOp::create(b, loc, f32Const(b, loc, 0.5f), x),
        onePlus);
  }
  case Epilogue::Silu: {
    Value negX = arith::NegFOp::create(b, loc, x);
    Value denom = arith::AddFOp::create(b, loc, f32Const(b, loc, 1.0f),
                                        math::ExpOp::create(b, loc, negX));
    return arith::DivFOp::create(b, loc, x, denom);
  }
  }
  llvm_unreachable("unknown epilogue");
}

void fp8::populateFP8ToLinalgPatterns(RewritePatternSet &patterns,
                                      bool splitTensorAmax) {
  patterns.add<LowerQuantize, LowerDequantize, LowerComputeScale,
               LowerHistoryUpdate, LowerScaledMatmul, LowerTranspose>(
      patterns.getContext());
  patterns.add<LowerAmax>(patterns.getContext(), splitTensorAmax);
  populateFP8AttentionToLinalgPatterns(patterns);
}
