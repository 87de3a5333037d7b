//===- HighPrecisionProducts.cpp - BF16 products outside FP8 --------------===//
//
// Part of fp8-opt. See Passes.td for what the pass does. The decision (which
// products qualify) is `isCandidate`; the rewrite is `toBF16Product`, with
// `roundConstant` folding a constant operand's rounding (and transpose) at
// compile time.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Numerics/Numerics.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"

#include <cstring>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8HIGHPRECISIONPRODUCTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// Largest constant rounded at compile time (elements); larger ones are
/// rounded by element-wise ops at run time.
constexpr int64_t kMaxFoldElements = int64_t(1) << 28;

bool isZeroFill(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && (matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
                  matchPattern(fill.getInputs()[0], m_Zero()));
}

/// The products this pass serves (not the FP32 twins of an analysis build,
/// which are the reference): default maps, f32/f16/bf16 operands of
/// one type, a zero-filled f32 (or operand-typed) accumulator; static or
/// dynamic shapes (the rounding is element-wise, the product's scales
/// per tensor).
bool isCandidate(linalg::LinalgOp op) {
  if (op->hasAttr(kFP32ReferenceAttrName))
    return false;
  auto named = dyn_cast<linalg::MatmulOp>(op.getOperation());
  auto batch = dyn_cast<linalg::BatchMatmulOp>(op.getOperation());
  if ((named && named.hasUserDefinedMaps()) ||
      (batch && batch.hasUserDefinedMaps()) || (!named && !batch))
    return false;
  Value lhs = op.getDpsInputs()[0], rhs = op.getDpsInputs()[1];
  Value init = op.getDpsInits()[0];
  Type elt = getElementTypeOrSelf(lhs.getType());
  Type acc = getElementTypeOrSelf(init.getType());
  return isa<Float32Type, Float16Type, BFloat16Type>(elt) &&
         getElementTypeOrSelf(rhs.getType()) == elt &&
         (acc == elt || acc.isF32()) && isZeroFill(init);
}

/// Element `i` of a constant f32/f16/bf16 tensor, widened exactly.
struct ConstantReader {
  ArrayRef<char> raw;                  // resource blobs and raw dense data
  DenseElementsAttr dense;             // dense splats
  Type elt;
  bool splat = false;

  static std::optional<ConstantReader> get(Attribute attr) {
    ConstantReader r;
    if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
      AsmResourceBlob *blob = res.getRawHandle().getBlob();
      if (!blob)
        return std::nullopt;
      r.raw = blob->getData();
      r.elt = res.getElementType();
    } else if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
      r.dense = dense;
      r.elt = dense.getElementType();
      r.splat = dense.isSplat();
      if (!r.splat)
        r.raw = dense.getRawData();
    } else {
      return std::nullopt;
    }
    if (!isa<Float32Type, Float16Type, BFloat16Type>(r.elt))
      return std::nullopt;
    return r;
  }

  float at(int64_t i) const {
    if (splat) {
      APFloat v = dense.getSplatValue<APFloat>();
      bool lost;
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      return v.convertToFloat();
    }
    if (elt.isF32()) {
      float f;
      std::memcpy(&f, raw.data() + 4 * i, 4);
      return f;
    }
    uint16_t bits;
    std::memcpy(&bits, raw.data() + 2 * i, 2);
    return elt.isF16() ? numerics::f16ToFloat(bits)
                       : numerics::bf16ToFloat(bits);
  }
};

/// `value` (a constant) rounded to BF16 and, with `transpose`, its two
/// trailing dimensions swapped; null when it is not a foldable constant.
Value roundConstant(OpBuilder &b, Location loc, Value value, bool transpose) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return {};
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getNumElements() > kMaxFoldElements)
    return {};
  std::optional<ConstantReader> reader = ConstantReader::get(attr);
  if (!reader)
    return {};
  if (!reader->splat &&
      reader->raw.size() !=
          size_t(type.getNumElements()) * (reader->elt.isF32() ? 4 : 2))
    return {};
  SmallVector<int64_t> shape(type.getShape());
  const int64_t rank = shape.size();
  const int64_t rows = shape[rank - 2], cols = shape[rank - 1];
  const int64_t batches = type.getNumElements() / (rows * cols);
  if (transpose)
    std::swap(shape[rank - 2], shape[rank - 1]);
  std::vector<uint16_t> out(type.getNumElements());
  for (int64_t bi = 0; bi < batches; ++bi)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t src = (bi * rows + r) * cols + c;
        const int64_t dst =
            transpose ? (bi * cols + c) * rows + r : src;
        out[dst] = numerics::floatToBF16(reader->at(src));
      }
  auto outType = RankedTensorType::get(shape, b.getBF16Type());
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(reinterpret_cast<const char *>(out.data()),
                     out.size() * 2),
      alignof(uint16_t));
  auto result = DenseResourceElementsAttr::get(outType, "__fp8_bf16_weight",
                                               std::move(blob));
  return arith::ConstantOp::create(b, loc, outType, result);
}

/// `value` rounded to BF16 by element-wise ops (FP16 goes through FP32:
/// arith.truncf needs a narrower result), transposed with `transpose`.
Value roundAtRunTime(OpBuilder &b, Location loc, Value value, bool transpose) {
  auto type = cast<RankedTensorType>(value.getType());
  Value x = value;
  if (type.getElementType().isF16())
    x = arith::ExtFOp::create(b, loc, type.clone(b.getF32Type()), x);
  if (!type.getElementType().isBF16())
    x = arith::TruncFOp::create(b, loc, type.clone(b.getBF16Type()), x);
  if (!transpose)
    return x;
  const int64_t rank = type.getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, x);
  std::swap(shape[rank - 1], shape[rank - 2]);
  Value init = tensor::EmptyOp::create(b, loc, shape, b.getBF16Type());
  return linalg::TransposeOp::create(b, loc, x, init, perm)->getResult(0);
}

Value toBF16(OpBuilder &b, Location loc, Value value, bool transpose) {
  if (Value folded = roundConstant(b, loc, value, transpose))
    return folded;
  return roundAtRunTime(b, loc, value, transpose);
}

/// The product as an fp8.scaled_matmul of BF16 operands with unit scales.
void toBF16Product(linalg::LinalgOp op, bool kMajorRhs) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value lhs = toBF16(b, loc, op.getDpsInputs()[0], /*transpose=*/false);
  Value rhs = toBF16(b, loc, op.getDpsInputs()[1], kMajorRhs);
  auto scalar = RankedTensorType::get({}, b.getF32Type());
  Value one = arith::ConstantOp::create(
      b, loc, scalar, DenseElementsAttr::get(scalar, 1.0f));
  auto tensorLayout = ScaleLayoutAttr::get(b.getContext(), Granularity::Tensor);
  auto product = ScaledMatmulOp::create(
      b, loc, op->getResult(0).getType(), lhs, one, rhs, one, /*bias=*/Value(),
      tensorLayout, tensorLayout, kMajorRhs, Epilogue::None,
      /*lhs_scale_m_major=*/IntegerAttr());
  op->getResult(0).replaceAllUsesWith(product.getResult());
  op->erase();
}

/// Attention's two products with BF16 operands: query, key and value
/// rounded to BF16 (the op rounds its probabilities to the operand type);
/// the result type stays.
void toBF16Attention(AttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  for (OpOperand *operand :
       {&op.getQueryMutable(), &op.getKeyMutable(), &op.getValueMutable()})
    operand->set(toBF16(b, loc, operand->get(), /*transpose=*/false));
}

struct FP8HighPrecisionProductsPass
    : fp8::impl::FP8HighPrecisionProductsBase<FP8HighPrecisionProductsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> products;
    SmallVector<AttentionOp> attentions;
    getOperation().walk([&](Operation *op) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (linalgOp && isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          isCandidate(linalgOp))
        products.push_back(linalgOp);
      // FP8 attention (fp8-quantize-attention) keeps its operands.
      if (auto attention = dyn_cast<AttentionOp>(op);
          attention && !attention.isFP8() &&
          !attention.getQuery().getType().getElementType().isBF16())
        attentions.push_back(attention);
    });
    for (linalg::LinalgOp op : products)
      toBF16Product(op, kMajorRhs);
    for (AttentionOp op : attentions)
      toBF16Attention(op);
  }
};

} // namespace
