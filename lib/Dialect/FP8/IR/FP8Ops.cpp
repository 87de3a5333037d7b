//===- FP8Ops.cpp - FP8 dialect operations --------------------------------===//
//
// Part of fp8-opt. Verifiers, constant folders and canonicalizations. The
// folders evaluate with the scalar definitions in fp8/Numerics, so a
// quantization of constant weights happens once, at compile time, with the
// same bits the runtime kernels produce.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

using namespace mlir;
using namespace mlir::fp8;

#define GET_OP_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Ops.cpp.inc"

namespace {
/// Folding works on materialised values (FP32 copies of the operands):
/// beyond this many elements (1 GiB of FP32) it is left to the kernels.
/// Weights in files never come here: the packer quantizes them, streaming
/// (fp8.packed_weight).
constexpr int64_t kMaxFoldElements = int64_t(1) << 28;

bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

LogicalResult verifyLayout(Operation *op, ScaleLayoutAttr layout, Type data,
                           Type scale, StringRef what) {
  return layout.verifyScaleType(
      [&] { return op->emitOpError() << what << ": "; },
      cast<ShapedType>(data), cast<ShapedType>(scale));
}

/// Maps each element of a row-major tensor to the row-major index of the
/// scale that covers it.
class ScaleIndexer {
public:
  ScaleIndexer(ArrayRef<int64_t> shape, ScaleLayoutAttr layout)
      : shape(shape) {
    perTensor = layout.isPerTensor();
    if (perTensor)
      return;
    block = *layout.getExpandedBlock(shape);
    scaleShape = *layout.getScaleShape(shape);
  }
  int64_t scaleIndex(int64_t linear) const {
    if (perTensor)
      return 0;
    int64_t result = 0, stride = 1;
    for (int64_t d = shape.size() - 1; d >= 0; --d) {
      int64_t idx = linear % shape[d];
      linear /= shape[d];
      result += (idx / block[d]) * stride;
      stride *= scaleShape[d];
    }
    return result;
  }

private:
  SmallVector<int64_t> shape, block, scaleShape;
  bool perTensor = false;
};

/// Float values of an f32, f16 or bf16 resource blob (raw little-endian
/// elements), widened exactly.
std::optional<SmallVector<float>>
getResourceFloats(DenseResourceElementsAttr resource) {
  int64_t n = resource.getNumElements();
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  Type elt = resource.getElementType();
  if (!blob || n > kMaxFoldElements ||
      !isa<Float32Type, Float16Type, BFloat16Type>(elt))
    return std::nullopt;
  ArrayRef<char> raw = blob->getData();
  const size_t width = elt.getIntOrFloatBitWidth() / 8;
  if (raw.size() != size_t(n) * width)
    return std::nullopt;
  SmallVector<float> out(n);
  for (int64_t i = 0; i < n; ++i) {
    if (width == 4) {
      std::memcpy(&out[i], raw.data() + 4 * i, 4);
      continue;
    }
    uint16_t bits;
    std::memcpy(&bits, raw.data() + 2 * i, 2);
    out[i] = elt.isF16() ? numerics::f16ToFloat(bits)
                         : numerics::bf16ToFloat(bits);
  }
  return out;
}

/// Float values of a constant FP tensor (f32/f16/bf16/f8), or nothing when
/// the attribute is not a dense FP constant small enough to fold.
std::optional<SmallVector<float>> getFloats(Attribute attr) {
  // Large initializers arrive as resource blobs (the importer's choice for
  // weights): fold them too, so weights are quantized at compile time.
  if (auto resource = dyn_cast_if_present<DenseResourceElementsAttr>(attr))
    return getResourceFloats(resource);
  auto dense = dyn_cast_if_present<DenseElementsAttr>(attr);
  if (!dense || dense.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  Type elt = dense.getElementType();
  SmallVector<float> out;
  out.reserve(dense.getNumElements());
  if (std::optional<Format> fmt = getFormat(elt)) {
    numerics::Fmt nf = toNumericsFormat(*fmt);
    for (APFloat v : dense.getValues<APFloat>())
      out.push_back(numerics::fp8ToFloat(
          static_cast<uint8_t>(v.bitcastToAPInt().getZExtValue()), nf));
    return out;
  }
  if (isa<Float8E8M0FNUType>(elt)) {
    for (APFloat v : dense.getValues<APFloat>())
      out.push_back(numerics::e8m0ToFloat(
          static_cast<uint8_t>(v.bitcastToAPInt().getZExtValue())));
    return out;
  }
  if (!isa<Float32Type, Float16Type, BFloat16Type>(elt))
    return std::nullopt;
  for (APFloat v : dense.getValues<APFloat>()) {
    bool lost;
    v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    out.push_back(v.convertToFloat());
  }
  return out;
}

/// A dense constant of `type` (f32/f16/bf16) from float values.
Attribute makeFloatAttr(ShapedType type, ArrayRef<float> values) {
  Type elt = type.getElementType();
  if (elt.isF32())
    return DenseElementsAttr::get(type, values);
  const llvm::fltSemantics &sem = cast<FloatType>(elt).getFloatSemantics();
  SmallVector<APFloat> converted;
  converted.reserve(values.size());
  for (float v : values) {
    APFloat a(v);
    bool lost;
    a.convert(sem, APFloat::rmNearestTiesToEven, &lost);
    converted.push_back(a);
  }
  return DenseElementsAttr::get(type, converted);
}

/// A dense constant of an 8-bit float type from bit patterns (one byte per
/// element is the raw storage of 8-bit types).
Attribute makeByteAttr(ShapedType type, ArrayRef<uint8_t> bits) {
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(reinterpret_cast<const char *>(bits.data()),
                           bits.size()));
}

bool isStatic(Type t) { return cast<ShapedType>(t).hasStaticShape(); }
} // namespace

//===----------------------------------------------------------------------===//
// QuantizeOp
//===----------------------------------------------------------------------===//

LogicalResult QuantizeOp::verify() {
  return verifyLayout(*this, getLayout(), getInput().getType(),
                      getScale().getType(), "scale");
}

OpFoldResult QuantizeOp::fold(FoldAdaptor adaptor) {
  if (!isStatic(getInput().getType()))
    return {};
  auto x = getFloats(adaptor.getInput());
  auto s = getFloats(adaptor.getScale());
  if (!x || !s)
    return {};
  numerics::Fmt fmt =
      toNumericsFormat(*getFormat(getType().getElementType()));
  ScaleIndexer indexer(getType().getShape(), getLayout());
  SmallVector<uint8_t> bits(x->size());
  for (size_t i = 0; i < x->size(); ++i)
    bits[i] = numerics::castToFP8((*x)[i] / (*s)[indexer.scaleIndex(i)], fmt);
  return makeByteAttr(getType(), bits);
}

namespace {
/// quantize(dequantize(q, s), s) -> q, when q comes from a quantize (so it
/// holds no infinities and only the canonical NaN) and every value of the
/// constant scale s keeps q * s and (q * s) / s in FP32's normal range: the
/// round trip is then exact to within one FP32 ulp, far from any FP8
/// rounding boundary, and rounds back to q.
struct FoldQuantizeOfDequantize : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    auto deq = op.getInput().getDefiningOp<DequantizeOp>();
    if (!deq || deq.getScale() != op.getScale() ||
        deq.getLayout() != op.getLayout() ||
        deq.getInput().getType() != op.getType() ||
        !deq.getType().getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a matching round trip");
    if (!deq.getInput().getDefiningOp<QuantizeOp>())
      return rewriter.notifyMatchFailure(op, "FP8 value of unknown origin");
    Attribute scaleAttr;
    if (!matchPattern(op.getScale(), m_Constant(&scaleAttr)))
      return rewriter.notifyMatchFailure(op, "scale is not constant");
    auto scales = getFloats(scaleAttr);
    if (!scales)
      return failure();
    Format fmt = *getFormat(op.getType().getElementType());
    for (float s : *scales)
      if (!isExactRoundTripScale(s, fmt, rewriter.getF32Type()))
        return rewriter.notifyMatchFailure(op, "scale outside the safe range");
    rewriter.replaceOp(op, deq.getInput());
    return success();
  }
};
} // namespace

void QuantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                             MLIRContext *context) {
  results.add<FoldQuantizeOfDequantize>(context);
}

//===----------------------------------------------------------------------===//
// DequantizeOp
//===----------------------------------------------------------------------===//

LogicalResult DequantizeOp::verify() {
  return verifyLayout(*this, getLayout(), getInput().getType(),
                      getScale().getType(), "scale");
}

OpFoldResult DequantizeOp::fold(FoldAdaptor adaptor) {
  if (!isStatic(getInput().getType()))
    return {};
  auto q = getFloats(adaptor.getInput());
  auto s = getFloats(adaptor.getScale());
  if (!q || !s)
    return {};
  ScaleIndexer indexer(getType().getShape(), getLayout());
  SmallVector<float> out(q->size());
  for (size_t i = 0; i < q->size(); ++i)
    out[i] = (*q)[i] * (*s)[indexer.scaleIndex(i)];
  return makeFloatAttr(getType(), out);
}

//===----------------------------------------------------------------------===//
// AmaxOp
//===----------------------------------------------------------------------===//

LogicalResult AmaxOp::verify() {
  return verifyLayout(*this, getLayout(), getInput().getType(), getType(),
                      "result");
}

OpFoldResult AmaxOp::fold(FoldAdaptor adaptor) {
  if (!isStatic(getInput().getType()) || !getType().hasStaticShape())
    return {};
  auto x = getFloats(adaptor.getInput());
  if (!x)
    return {};
  ScaleIndexer indexer(getInput().getType().getShape(), getLayout());
  SmallVector<float> amax(getType().getNumElements(), 0.0f);
  for (size_t i = 0; i < x->size(); ++i) {
    float &m = amax[indexer.scaleIndex(i)];
    float a = std::fabs((*x)[i]);
    if (std::isnan(a) || std::isnan(m))
      m = NAN;
    else if (a > m)
      m = a;
  }
  return makeFloatAttr(getType(), amax);
}

//===----------------------------------------------------------------------===//
// ComputeScaleOp
//===----------------------------------------------------------------------===//

LogicalResult ComputeScaleOp::verify() {
  RecipeAttrInterface recipe = getRecipe();
  if (getFormat() == Format::Hybrid)
    return emitOpError("needs a concrete format (e4m3 or e5m2): hybrid only "
                       "selects a format per tensor");
  Type scaleElt = getType().getElementType();
  if (recipe.usesE8M0Scales() != isa<Float8E8M0FNUType>(scaleElt))
    return emitOpError() << "recipe " << recipe << " produces "
                         << (recipe.usesE8M0Scales() ? "f8E8M0FNU" : "f32")
                         << " scales, but the result is " << getType();
  ArrayRef<int64_t> amaxShape = getAmax().getType().getShape();
  ArrayRef<int64_t> scaleShape = getType().getShape();
  if (recipe.usesHistory()) {
    if (!getPrevious())
      return emitOpError("delayed scaling needs the 'previous' scale, which "
                         "is kept when the history holds no usable amax");
    if (getPrevious().getType() != getType())
      return emitOpError() << "'previous' has type "
                           << getPrevious().getType() << " but the result is "
                           << getType();
    auto delayed = cast<DelayedScalingAttr>(recipe);
    if (amaxShape.size() != scaleShape.size() + 1 ||
        !dimsCompatible(amaxShape[0], delayed.getHistory()))
      return emitOpError() << "amax history must have shape "
                           << delayed.getHistory() << "x(scale shape), got "
                           << formatShape(amaxShape);
    amaxShape = amaxShape.drop_front();
  } else if (getPrevious()) {
    return emitOpError() << "'previous' is only used by delayed scaling, not "
                         << recipe;
  }
  if (amaxShape.size() != scaleShape.size() ||
      !llvm::all_of(llvm::zip_equal(amaxShape, scaleShape), [](auto p) {
        return dimsCompatible(std::get<0>(p), std::get<1>(p));
      }))
    return emitOpError() << "amax shape " << formatShape(amaxShape)
                         << " does not match scale shape "
                         << formatShape(scaleShape);
  return success();
}

OpFoldResult ComputeScaleOp::fold(FoldAdaptor adaptor) {
  if (!getType().hasStaticShape() || !getAmax().getType().hasStaticShape())
    return {};
  auto amax = getFloats(adaptor.getAmax());
  if (!amax)
    return {};
  numerics::Fmt fmt = toNumericsFormat(getFormat());
  const int64_t n = getType().getNumElements();
  RecipeAttrInterface recipe = getRecipe();
  if (auto mx = dyn_cast<MXScalingAttr>(recipe)) {
    auto rounding = mx.getRounding() == E8M0Rounding::RCeil
                        ? numerics::MXRounding::RCeil
                        : numerics::MXRounding::Floor;
    SmallVector<uint8_t> bits(n);
    for (int64_t i = 0; i < n; ++i)
      bits[i] = numerics::mxScale((*amax)[i], fmt, rounding);
    return makeByteAttr(getType(), bits);
  }
  SmallVector<float> scales(n);
  if (auto delayed = dyn_cast<DelayedScalingAttr>(recipe)) {
    auto previous = getFloats(adaptor.getPrevious());
    if (!previous)
      return {};
    auto algo = delayed.getAlgo() == AmaxAlgo::Max
                    ? numerics::HistoryAlgo::Max
                    : numerics::HistoryAlgo::MostRecent;
    const int64_t length = getAmax().getType().getDimSize(0);
    for (int64_t i = 0; i < n; ++i)
      scales[i] = numerics::delayedScale(
          numerics::reduceHistory(amax->data() + i, length, n, algo),
          (*previous)[i], fmt, delayed.getMargin(), delayed.getPow2());
    return makeFloatAttr(getType(), scales);
  }
  const float eps = getScaleEps(recipe);
  const bool pow2 = recipe.usesPowerOfTwoScales();
  for (int64_t i = 0; i < n; ++i)
    scales[i] = numerics::currentScale((*amax)[i], fmt, eps, pow2);
  return makeFloatAttr(getType(), scales);
}

//===----------------------------------------------------------------------===//
// HistoryUpdateOp
//===----------------------------------------------------------------------===//

LogicalResult HistoryUpdateOp::verify() {
  ArrayRef<int64_t> h = getHistory().getType().getShape();
  ArrayRef<int64_t> a = getAmax().getType().getShape();
  if (h.size() != a.size() + 1)
    return emitOpError() << "history must have rank " << a.size() + 1
                         << " ([length] + amax shape), got rank " << h.size();
  for (auto [hd, ad] : llvm::zip_equal(h.drop_front(), a))
    if (!dimsCompatible(hd, ad))
      return emitOpError() << "history shape " << formatShape(h)
                           << " does not extend amax shape " << formatShape(a);
  if (!ShapedType::isDynamic(h[0]) && h[0] < 1)
    return emitOpError("history length must be at least 1");
  return success();
}

OpFoldResult HistoryUpdateOp::fold(FoldAdaptor adaptor) {
  if (!getType().hasStaticShape())
    return {};
  auto h = getFloats(adaptor.getHistory());
  auto a = getFloats(adaptor.getAmax());
  if (!h || !a)
    return {};
  SmallVector<float> out(h->size());
  const size_t n = a->size();
  std::copy(a->begin(), a->end(), out.begin());
  std::copy(h->begin(), h->end() - n, out.begin() + n);
  return makeFloatAttr(getType(), out);
}

//===----------------------------------------------------------------------===//
// ScaledMatmulOp
//===----------------------------------------------------------------------===//

int64_t ScaledMatmulOp::getM() {
  ArrayRef<int64_t> s = getLhs().getType().getShape();
  return s[s.size() - 2];
}
int64_t ScaledMatmulOp::getK() {
  ArrayRef<int64_t> s = getLhs().getType().getShape();
  return s.back();
}
int64_t ScaledMatmulOp::getN() {
  ArrayRef<int64_t> s = getRhs().getType().getShape();
  return getTransposeRhs() ? s[s.size() - 2] : s.back();
}

/// Size `dim` of `v`: the static size, or a tensor.dim (folded where it can).
static OpFoldResult sizeOf(OpBuilder &b, Location loc, Value v, int64_t dim) {
  return tensor::getMixedSize(b, loc, v, dim);
}

// [batch..., M] of lhs, then N of rhs (reified for callers that allocate
// the result, e.g. the GPU outlining's destination of a dynamic product).
LogicalResult
ScaledMatmulOp::reifyResultShapes(OpBuilder &b,
                                  ReifiedRankedShapedTypeDims &shapes) {
  const int64_t rank = getType().getRank();
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d + 1 < rank; ++d)
    sizes.push_back(sizeOf(b, getLoc(), getLhs(), d));
  const int64_t rhsRank = getRhs().getType().getRank();
  sizes.push_back(sizeOf(b, getLoc(), getRhs(),
                         getTransposeRhs() ? rhsRank - 2 : rhsRank - 1));
  shapes.push_back(std::move(sizes));
  return success();
}

FailureOr<SmallVector<int64_t>> ScaledMatmulOp::getCanonicalLhsScaleShape() {
  return getLhsLayout().getScaleShape(getLhs().getType().getShape());
}

SmallVector<int64_t> fp8::mMajorScaleShape(ArrayRef<int64_t> canonical,
                                           int64_t pad) {
  SmallVector<int64_t> shape(canonical);
  if (shape.size() < 2)
    return shape;
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  if (!ShapedType::isDynamic(shape.back()))
    shape.back() = llvm::alignTo(shape.back(), pad);
  return shape;
}

LogicalResult ScaledMatmulOp::verify() {
  const bool lhsBF16 = getLhs().getType().getElementType().isBF16();
  const bool rhsBF16 = getRhs().getType().getElementType().isBF16();
  if (lhsBF16 != rhsBF16)
    return emitOpError("operands must both be FP8 or both be BF16");
  if (lhsBF16 && (!getLhsLayout().isPerTensor() ||
                  !getRhsLayout().isPerTensor() ||
                  !getLhsScale().getType().getElementType().isF32() ||
                  !getRhsScale().getType().getElementType().isF32()))
    return emitOpError("BF16 operands take per-tensor f32 scales");
  ArrayRef<int64_t> lhs = getLhs().getType().getShape();
  ArrayRef<int64_t> rhs = getRhs().getType().getShape();
  ArrayRef<int64_t> res = getType().getShape();
  if (lhs.size() < 2 || rhs.size() < 2)
    return emitOpError("operands must have rank >= 2 ([batch...,] rows, cols)");
  if (rhs.size() != 2 && rhs.size() != lhs.size())
    return emitOpError() << "rhs must have rank 2 (shared by every batch) or "
                            "the rank of lhs ("
                         << lhs.size() << "), got " << rhs.size();
  ArrayRef<int64_t> batch = lhs.drop_back(2);
  if (rhs.size() == lhs.size())
    for (auto [a, b] : llvm::zip_equal(batch, rhs.drop_back(2)))
      if (!dimsCompatible(a, b))
        return emitOpError() << "batch dimensions differ: lhs "
                             << formatShape(lhs) << ", rhs " << formatShape(rhs);
  int64_t rhsK = getTransposeRhs() ? rhs.back() : rhs[rhs.size() - 2];
  if (!dimsCompatible(getK(), rhsK))
    return emitOpError() << "contraction sizes differ: lhs " << formatShape(lhs)
                         << " has K = " << getK() << ", rhs "
                         << formatShape(rhs) << " has K = " << rhsK
                         << (getTransposeRhs() ? " (rhs is N x K)"
                                               : " (rhs is K x N)");
  SmallVector<int64_t> expected(batch);
  expected.push_back(getM());
  expected.push_back(getN());
  if (res.size() != expected.size() ||
      !llvm::all_of(llvm::zip_equal(res, expected), [](auto p) {
        return dimsCompatible(std::get<0>(p), std::get<1>(p));
      }))
    return emitOpError() << "result shape " << formatShape(res)
                         << " does not match the product shape "
                         << formatShape(expected);
  if (std::optional<int64_t> pad = getLhsScaleMMajor()) {
    if (getLhsLayout().isPerTensor())
      return emitOpError("m_major needs lhs scales that vary along M (a row "
                         "or block layout), not per-tensor");
    FailureOr<SmallVector<int64_t>> canonical = getCanonicalLhsScaleShape();
    if (failed(canonical))
      return emitOpError("lhs layout does not fit lhs");
    SmallVector<int64_t> expected = mMajorScaleShape(*canonical, *pad);
    ArrayRef<int64_t> got = getLhsScale().getType().getShape();
    if (got.size() != expected.size() ||
        !llvm::all_of(llvm::zip_equal(got, expected), [](auto p) {
          return dimsCompatible(std::get<0>(p), std::get<1>(p));
        }))
      return emitOpError() << "m_major(" << *pad
                           << ") lhs scale must have shape "
                           << formatShape(expected) << " (the layout's "
                           << formatShape(*canonical)
                           << " transposed, M padded), got " << formatShape(got);
  } else if (failed(verifyLayout(*this, getLhsLayout(), getLhs().getType(),
                                 getLhsScale().getType(), "lhs scale"))) {
    return failure();
  }
  if (failed(verifyLayout(*this, getRhsLayout(), getRhs().getType(),
                          getRhsScale().getType(), "rhs scale")))
    return failure();
  if (Value bias = getBias()) {
    ArrayRef<int64_t> b = cast<ShapedType>(bias.getType()).getShape();
    bool ok = (b.size() == 1 && dimsCompatible(b[0], getN())) ||
              (b.size() == res.size() &&
               llvm::all_of(llvm::zip_equal(b, res), [](auto p) {
                 return dimsCompatible(std::get<0>(p), std::get<1>(p));
               }));
    if (!ok)
      return emitOpError() << "bias must have shape [N] = [" << getN()
                           << "] or the result shape, got " << formatShape(b);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

int64_t AttentionOp::getGroupSize() {
  int64_t hq = getQuery().getType().getDimSize(1);
  int64_t hkv = getKey().getType().getDimSize(1);
  return hkv > 0 ? hq / hkv : 1; // no heads at all: an empty result
}

// [B, Hq, Sq] of the query, then Dv of the value.
LogicalResult
AttentionOp::reifyResultShapes(OpBuilder &b,
                               ReifiedRankedShapedTypeDims &shapes) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < 3; ++d)
    sizes.push_back(sizeOf(b, getLoc(), getQuery(), d));
  sizes.push_back(sizeOf(b, getLoc(), getValue(), 3));
  shapes.push_back(std::move(sizes));
  return success();
}

LogicalResult AttentionOp::verify() {
  auto q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType();
  auto res = getType();
  for (auto [type, what] : {std::pair(q, "query"), std::pair(k, "key"),
                            std::pair(v, "value"), std::pair(res, "result")})
    if (type.getRank() != 4)
      return emitOpError() << what << " must have rank 4 ([B, H, S, D]), got "
                           << formatShape(type.getShape());
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return emitOpError() << "query, key and value must have one element type, "
                            "got "
                         << q.getElementType() << ", " << k.getElementType()
                         << ", " << v.getElementType();
  Value scales[] = {getQueryScale(), getKeyScale(), getValueScale()};
  if (isFP8()) {
    if (!scales[0] || !scales[1] || !scales[2])
      return emitOpError() << "FP8 query, key and value need dequantization "
                              "scales (scales(%sq, %sk, %sv))";
    ScaleLayoutAttr layout = getScaleLayoutOrDefault();
    if (!layout.isPerTensor()) {
      // Blocks of positions of one (batch, head), over the whole head dim.
      ArrayRef<int64_t> block = layout.getBlock();
      if (layout.getGranularity() != Granularity::Block || block.size() != 2 ||
          ShapedType::isDynamic(q.getDimSize(3)) ||
          ShapedType::isDynamic(v.getDimSize(3)) ||
          block[1] < std::max(q.getDimSize(3), v.getDimSize(3)))
        return emitOpError()
               << "scale_layout must be tensor or block TxD with D covering "
                  "the head dimensions (static), got "
               << layout;
      // Blocks of positions split the sequence dims: static extents (as
      // block amaxes need).
      if (q.isDynamicDim(2) || k.isDynamicDim(2) || v.isDynamicDim(2) ||
          k.isDynamicDim(3))
        return emitOpError() << "scale_layout " << layout
                             << " needs static sequence lengths and head "
                                "dims; use per-tensor scales";
    }
    for (auto [s, data, what] :
         {std::tuple(scales[0], q, "query"), std::tuple(scales[1], k, "key"),
          std::tuple(scales[2], v, "value")})
      if (failed(layout.verifyScaleType(
              [&, what = what]() {
                return emitOpError() << what << " scale: ";
              },
              data, cast<ShapedType>(s.getType()))))
        return failure();
  } else if (scales[0] || scales[1] || scales[2] || getScaleLayoutAttr()) {
    return emitOpError() << "dequantization scales apply to FP8 operands only, "
                            "got "
                         << q.getElementType();
  }
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  auto mismatch = [&](StringRef what) {
    return emitOpError() << what << " differ: query " << formatShape(qs)
                         << ", key " << formatShape(ks) << ", value "
                         << formatShape(vs);
  };
  if (!dimsCompatible(qs[0], ks[0]) || !dimsCompatible(qs[0], vs[0]))
    return mismatch("batch sizes");
  if (!dimsCompatible(ks[1], vs[1]))
    return mismatch("key and value head counts");
  if (!dimsCompatible(ks[2], vs[2]))
    return mismatch("key and value sequence lengths");
  if (!dimsCompatible(qs[3], ks[3]))
    return mismatch("query and key head sizes");
  if (ShapedType::isDynamic(qs[1]) || ShapedType::isDynamic(ks[1]) ||
      ShapedType::isDynamic(vs[1]))
    return emitOpError() << "head counts must be static: query "
                         << formatShape(qs) << ", key " << formatShape(ks)
                         << ", value " << formatShape(vs);
  if (ks[1] == 0 ? qs[1] != 0 : qs[1] % ks[1] != 0)
    return emitOpError() << "query heads (" << qs[1]
                         << ") must be a multiple of key/value heads ("
                         << ks[1] << ")";
  SmallVector<int64_t> expected{qs[0], qs[1], qs[2], vs[3]};
  if (getSequenceMajor())
    std::swap(expected[1], expected[2]);
  for (auto [got, want] : llvm::zip_equal(res.getShape(), expected))
    if (!dimsCompatible(got, want))
      return emitOpError() << "result shape " << formatShape(res.getShape())
                           << " must be "
                           << (getSequenceMajor() ? "[B, Sq, Hq, Dv]"
                                                  : "[B, Hq, Sq, Dv]")
                           << " = " << formatShape(expected);
  if (Value mask = getMask()) {
    ArrayRef<int64_t> ms = cast<RankedTensorType>(mask.getType()).getShape();
    SmallVector<int64_t> scores{qs[0], qs[1], qs[2], ks[2]};
    bool ok = ms.size() == 4;
    for (size_t i = 0; ok && i < 4; ++i)
      ok = ms[i] == 1 || dimsCompatible(ms[i], scores[i]);
    if (!ok)
      return emitOpError() << "mask " << formatShape(ms)
                           << " must have rank 4 and broadcast to the scores "
                              "[B, Hq, Sq, Skv] = "
                           << formatShape(scores);
  }
  if (!std::isfinite(getScale().convertToFloat()))
    return emitOpError("scale must be finite");
  return success();
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

bool TransposeOp::isPassThrough() {
  ArrayRef<int64_t> perm = getPermutation();
  if (getSrcLayout().isPerTensor())
    return getDstLayout().isPerTensor();
  if (getDstLayout().isPerTensor())
    return false;
  auto src = getSrcLayout().getExpandedBlock(getInput().getType().getShape());
  auto dst = getDstLayout().getExpandedBlock(getResult().getType().getShape());
  if (failed(src) || failed(dst))
    return false;
  for (size_t i = 0; i < perm.size(); ++i)
    if ((*src)[perm[i]] != (*dst)[i])
      return false;
  return true;
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> perm = getPermutation();
  auto inType = getInput().getType();
  auto outType = getResult().getType();
  if (static_cast<int64_t>(perm.size()) != inType.getRank())
    return emitOpError() << "permutation has " << perm.size()
                         << " entries for an input of rank "
                         << inType.getRank();
  SmallVector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
      return emitOpError("permutation must be a permutation of [0, rank)");
    seen[p] = true;
  }
  if (outType.getRank() != inType.getRank())
    return emitOpError("result rank differs from input rank");
  for (size_t i = 0; i < perm.size(); ++i)
    if (!dimsCompatible(outType.getDimSize(i), inType.getDimSize(perm[i])))
      return emitOpError() << "result shape " << formatShape(outType.getShape())
                           << " is not the input shape "
                           << formatShape(inType.getShape()) << " permuted";
  if (failed(verifyLayout(*this, getSrcLayout(), inType,
                          getScale().getType(), "input scale")) ||
      failed(verifyLayout(*this, getDstLayout(), outType,
                          getResultScale().getType(), "result scale")))
    return failure();
  if (isPassThrough()) {
    if (outType.getElementType() != inType.getElementType() ||
        getResultScale().getType().getElementType() !=
            getScale().getType().getElementType())
      return emitOpError("a transpose that keeps the scale layout moves "
                         "values unchanged: element types must match");
    return success();
  }
  auto recipe = getRecipeAttr();
  if (!recipe)
    return emitOpError() << "layout " << getSrcLayout()
                         << " does not survive this permutation as "
                         << getDstLayout()
                         << ": the values must be re-quantized, so a recipe "
                            "is required to compute the new scales";
  if (recipe.usesHistory())
    return emitOpError("re-quantization needs a recipe that scales from the "
                       "tensor itself (current, block or mxfp8), not delayed");
  if (recipe.usesE8M0Scales() !=
      isa<Float8E8M0FNUType>(getResultScale().getType().getElementType()))
    return emitOpError() << "recipe " << recipe
                         << " does not produce scales of type "
                         << getResultScale().getType().getElementType();
  return success();
}

/// Permutes the elements of a dense constant (row-major) by `perm`.
static Attribute permuteConstant(DenseElementsAttr attr, ShapedType resultType,
                                 ArrayRef<int64_t> perm) {
  if (attr.isSplat())
    return attr.resizeSplat(resultType);
  auto inShape = attr.getType().getShape();
  const int64_t rank = inShape.size();
  const size_t elemBytes =
      llvm::divideCeil(attr.getElementType().getIntOrFloatBitWidth(), 8);
  ArrayRef<char> raw = attr.getRawData();
  if (raw.size() != size_t(attr.getNumElements()) * elemBytes)
    return {}; // packed i1 and other exotic storage: not folded
  SmallVector<int64_t> inStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    inStrides[d] = inStrides[d + 1] * inShape[d + 1];
  auto outShape = resultType.getShape();
  std::vector<char> out(raw.size());
  SmallVector<int64_t> index(rank, 0);
  for (int64_t linear = 0, n = attr.getNumElements(); linear < n; ++linear) {
    int64_t src = 0;
    for (int64_t d = 0; d < rank; ++d)
      src += index[d] * inStrides[perm[d]];
    std::memcpy(&out[linear * elemBytes], &raw[src * elemBytes], elemBytes);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < outShape[d])
        break;
      index[d] = 0;
    }
  }
  return DenseElementsAttr::getFromRawBuffer(resultType, out);
}

LogicalResult TransposeOp::fold(FoldAdaptor adaptor,
                                SmallVectorImpl<OpFoldResult> &results) {
  ArrayRef<int64_t> perm = getPermutation();
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto e) {
    return static_cast<int64_t>(e.index()) == e.value();
  });
  if (identity && getSrcLayout() == getDstLayout() &&
      getInput().getType() == getResult().getType() &&
      getScale().getType() == getResultScale().getType()) {
    results.push_back(getInput());
    results.push_back(getScale());
    return success();
  }
  // A pass-through transpose of constants (quantized weights made K-major)
  // moves bytes at compile time.
  // A per-tensor scale is the same value before and after.
  auto data = dyn_cast_if_present<DenseElementsAttr>(adaptor.getInput());
  if (!data || !isPassThrough() || !getResult().getType().hasStaticShape() ||
      data.getNumElements() > kMaxFoldElements)
    return failure();
  OpFoldResult newScale;
  if (getSrcLayout().isPerTensor() &&
      getScale().getType() == getResultScale().getType()) {
    newScale = getScale();
  } else {
    auto scale = dyn_cast_if_present<DenseElementsAttr>(adaptor.getScale());
    if (!scale)
      return failure();
    Attribute permuted =
        permuteConstant(scale, getResultScale().getType(), perm);
    if (!permuted)
      return failure();
    newScale = permuted;
  }
  Attribute newData = permuteConstant(data, getResult().getType(), perm);
  if (!newData)
    return failure();
  results.push_back(newData);
  results.push_back(newScale);
  return success();
}

//===----------------------------------------------------------------------===//
// ExternalWeightOp
//===----------------------------------------------------------------------===//

/// Checks that `length` bytes hold a tensor of `type` in the file layout
/// (a byte-multiple element type, row-major).
static LogicalResult verifyFileTensor(Operation *op, RankedTensorType type,
                                      int64_t length, StringRef location) {
  Type elt = type.getElementType();
  if (!elt.isIntOrFloat() || elt.isInteger(1) ||
      elt.getIntOrFloatBitWidth() % 8 != 0)
    return op->emitOpError() << "element type " << elt
                             << " has no byte-per-element file layout";
  if (!type.hasStaticShape())
    return op->emitOpError() << "a file holds a static shape, not " << type;
  uint64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  for (int64_t d : type.getShape())
    if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes))
      return op->emitOpError("the tensor's size overflows");
  if (uint64_t(length) != bytes)
    return op->emitOpError() << "length " << length << " bytes, but " << type
                             << " holds " << bytes;
  if (location.empty())
    return op->emitOpError("an empty location");
  return success();
}

LogicalResult ExternalWeightOp::verify() {
  return verifyFileTensor(*this, cast<RankedTensorType>(getResult().getType()),
                          getLength(), getLocation());
}

//===----------------------------------------------------------------------===//
// PackedWeightOp
//===----------------------------------------------------------------------===//

SmallVector<int64_t> PackedWeightOp::getPermutedShape() {
  auto shape = cast<RankedTensorType>(getSourceType()).getShape();
  std::optional<ArrayRef<int64_t>> perm = getPermutation();
  if (!perm)
    return SmallVector<int64_t>(shape);
  SmallVector<int64_t> out;
  for (int64_t p : *perm)
    out.push_back(shape[p]);
  return out;
}

LogicalResult PackedWeightOp::verify() {
  auto source = cast<RankedTensorType>(getSourceType());
  if (failed(verifyFileTensor(*this, source, getLength(), getLocation())))
    return failure();
  RecipeAttrInterface recipe = getRecipe();
  if (recipe.usesHistory())
    return emitOpError("weights are quantized with a recipe that scales from "
                       "the tensor itself (current, block or mxfp8), not ")
           << recipe;
  if (getFormat() == Format::Hybrid)
    return emitOpError("needs a concrete format (e4m3 or e5m2)");
  if (getFormat() != *fp8::getFormat(getResult().getType().getElementType()))
    return emitOpError() << "format " << stringifyFormat(getFormat())
                         << " but the result is " << getResult().getType();
  Type scaleElt = getScale().getType().getElementType();
  if (recipe.usesE8M0Scales() != isa<Float8E8M0FNUType>(scaleElt))
    return emitOpError() << "recipe " << recipe << " produces "
                         << (recipe.usesE8M0Scales() ? "f8E8M0FNU" : "f32")
                         << " scales, not " << scaleElt;
  ScaleLayoutAttr layout = getLayout();
  FailureOr<SmallVector<int64_t>> scaleShape =
      layout.getScaleShape(source.getShape());
  if (failed(scaleShape))
    return emitOpError() << "layout " << layout << " does not fit "
                         << source;
  const int64_t rank = source.getRank();
  SmallVector<int64_t> shape(source.getShape());
  if (std::optional<ArrayRef<int64_t>> perm = getPermutation()) {
    SmallVector<bool> seen(rank, false);
    if (int64_t(perm->size()) != rank ||
        !llvm::all_of(*perm, [&](int64_t p) {
          return p >= 0 && p < rank && !std::exchange(seen[p], true);
        }))
      return emitOpError() << "permutation must be a permutation of [0, "
                           << rank << ")";
    if (!layout.isPerTensor()) {
      SmallVector<int64_t> permutedScale;
      for (int64_t p : *perm)
        permutedScale.push_back((*scaleShape)[p]);
      *scaleShape = permutedScale;
    }
    shape = getPermutedShape();
  }
  if (getScale().getType().getShape() != ArrayRef<int64_t>(*scaleShape))
    return emitOpError() << "scale must have shape "
                         << formatShape(*scaleShape) << ", got "
                         << formatShape(getScale().getType().getShape());
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (int64_t(result.size()) != rank ||
      !llvm::all_of(llvm::zip_equal(result, shape), [](auto p) {
        return std::get<0>(p) >= std::get<1>(p);
      }))
    return emitOpError() << "result shape " << formatShape(result)
                         << " must be the (permuted) weight shape "
                         << formatShape(shape) << ", or larger (padded)";
  return success();
}

//===----------------------------------------------------------------------===//
// RoundedWeightOp
//===----------------------------------------------------------------------===//

LogicalResult RoundedWeightOp::verify() {
  auto source = cast<RankedTensorType>(getSourceType());
  if (failed(verifyFileTensor(*this, source, getLength(), getLocation())))
    return failure();
  const int64_t rank = source.getRank();
  SmallVector<int64_t> shape(source.getShape());
  if (std::optional<ArrayRef<int64_t>> perm = getPermutation()) {
    SmallVector<bool> seen(rank, false);
    if (int64_t(perm->size()) != rank || !llvm::all_of(*perm, [&](int64_t p) {
          return p >= 0 && p < rank && !std::exchange(seen[p], true);
        }))
      return emitOpError() << "permutation must be a permutation of [0, "
                           << rank << ")";
    for (auto [i, p] : llvm::enumerate(*perm))
      shape[i] = source.getDimSize(p);
  }
  ArrayRef<int64_t> result = getResult().getType().getShape();
  if (result != ArrayRef<int64_t>(shape))
    return emitOpError() << "result shape " << formatShape(result)
                         << " must be the (permuted) weight shape "
                         << formatShape(shape);
  return success();
}

bool fp8::isWeight(Value value) {
  return matchPattern(value, m_Constant()) ||
         value.getDefiningOp<ExternalWeightOp>() ||
         value.getDefiningOp<RoundedWeightOp>();
}
