//===- MergeSiblingProducts.cpp - One GEMM per activation's weights -------===//
//
// Part of fp8-opt. See Passes.td (fp8-merge-sibling-products). Which
// products may merge (`siblingKey`, `canMerge`) is separate from how their
// weights are concatenated (`concatConstants`, `tensor.concat` of packed
// weights) and from the rewrite (`mergeGroup`).
//
// A walk over each block rather than a rewrite pattern: a group is all the
// products of one activation in a block, found together, and merging them
// one pair at a time would concatenate the weights once per pair.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/MapVector.h"

#include <string>

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8MERGESIBLINGPRODUCTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// Where a product's weight and its scales come from.
enum class WeightSource { Constant, Packed };

std::optional<WeightSource> weightSource(ScaledMatmulOp op) {
  Value data = op.getRhs(), scale = op.getRhsScale();
  if (matchPattern(data, m_Constant()) && matchPattern(scale, m_Constant()))
    return WeightSource::Constant;
  auto packed = data.getDefiningOp<PackedWeightOp>();
  if (packed && data == packed.getResult() && scale == packed.getScale())
    return WeightSource::Packed;
  return std::nullopt;
}

/// Whether `op` may be part of a merged product: a rank-2 K-major constant
/// weight whose scales concatenate along N with it.
bool canMerge(ScaledMatmulOp op) {
  auto rhs = cast<RankedTensorType>(op.getRhs().getType());
  if (!op.getTransposeRhs() || op.getBias() || rhs.getRank() != 2 ||
      !rhs.hasStaticShape() ||
      cast<RankedTensorType>(op.getRhsScale().getType()).getRank() != 2 ||
      !weightSource(op))
    return false;
  FailureOr<SmallVector<int64_t>> block =
      op.getRhsLayout().getExpandedBlock(rhs.getShape());
  // The block's rows divide N: no scale block straddles two weights. (A
  // per-tensor or per-column layout's block spans every row: refused below,
  // where the merged shape's block differs.)
  return succeeded(block) && rhs.getDimSize(0) % (*block)[0] == 0;
}

/// Products with equal keys read the same activation the same way and
/// differ only in their weights.
using SiblingKey =
    std::tuple<Value, Value, Attribute, Attribute, std::optional<int64_t>,
               Epilogue, Type, Type, Type, int64_t, WeightSource>;

SiblingKey siblingKey(ScaledMatmulOp op) {
  auto rhs = cast<RankedTensorType>(op.getRhs().getType());
  return {op.getLhs(),
          op.getLhsScale(),
          op.getLhsLayoutAttr(),
          op.getRhsLayoutAttr(),
          op.getLhsScaleMMajor(),
          op.getEpilogue(),
          getElementTypeOrSelf(op.getType()),
          rhs.getElementType(),
          getElementTypeOrSelf(op.getRhsScale().getType()),
          rhs.getDimSize(1),
          *weightSource(op)};
}

/// Appends the raw little-endian bytes of a constant tensor's elements (a
/// splat repeated) to `out`; false for what has no byte-per-element storage
/// (i1) or is not a dense constant.
bool appendRawBytes(Attribute attr, RankedTensorType type, std::string &out) {
  Type elt = type.getElementType();
  if (!elt.isIntOrFloat() || elt.getIntOrFloatBitWidth() % 8 != 0)
    return false;
  const size_t width = elt.getIntOrFloatBitWidth() / 8;
  const size_t count = type.getNumElements();
  ArrayRef<char> raw;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return false;
    raw = blob->getData();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    raw = dense.getRawData();
    if (dense.isSplat() && raw.size() == width) {
      for (size_t i = 0; i < count; ++i)
        out.append(raw.data(), width);
      return true;
    }
  } else {
    return false;
  }
  if (raw.size() != count * width)
    return false;
  out.append(raw.data(), raw.size());
  return true;
}

/// The constants `values` concatenated along dimension 0 (row-major: their
/// bytes one after the other), or nothing when one of them is not a plain
/// dense constant.
std::optional<DenseElementsAttr> concatConstants(ValueRange values,
                                                 RankedTensorType type) {
  std::string bytes;
  bytes.reserve(type.getNumElements() * (type.getElementTypeBitWidth() / 8));
  for (Value v : values) {
    Attribute attr;
    if (!matchPattern(v, m_Constant(&attr)) ||
        !appendRawBytes(attr, cast<RankedTensorType>(v.getType()), bytes))
      return std::nullopt;
  }
  // A dense attribute, as the constant folders make (FP8 bytes, FP32
  // scales): what the lowering to globals takes for every element type.
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(bytes.data(), bytes.size()));
}

/// The shapes of `values` concatenated along dimension 0.
RankedTensorType concatType(ValueRange values) {
  auto first = cast<RankedTensorType>(values.front().getType());
  SmallVector<int64_t> shape(first.getShape());
  shape[0] = 0;
  for (Value v : values)
    shape[0] += cast<RankedTensorType>(v.getType()).getDimSize(0);
  return first.clone(shape);
}

/// `values` (packed-weight results, or constants already concatenated
/// into `folded`) concatenated along N.
Value concatWeights(OpBuilder &b, Location loc, ValueRange values,
                    std::optional<DenseElementsAttr> folded) {
  RankedTensorType type = concatType(values);
  if (folded)
    return arith::ConstantOp::create(b, loc, type, *folded);
  return tensor::ConcatOp::create(b, loc, type, /*dim=*/0, values);
}

/// Replaces the products of `group` (in block order, >= 2) by one product
/// over their concatenated weights, unless the merged scale layout differs
/// or a constant cannot be read (then nothing changes).
void mergeGroup(ArrayRef<ScaledMatmulOp> group) {
  ScaledMatmulOp first = group.front();
  SmallVector<Value> data, scales;
  for (ScaledMatmulOp op : group) {
    data.push_back(op.getRhs());
    scales.push_back(op.getRhsScale());
  }
  RankedTensorType dataType = concatType(data);
  ScaleLayoutAttr layout = first.getRhsLayoutAttr();
  FailureOr<SmallVector<int64_t>> mergedBlock =
      layout.getExpandedBlock(dataType.getShape());
  for (ScaledMatmulOp op : group)
    if (failed(mergedBlock) ||
        layout.getExpandedBlock(
            cast<RankedTensorType>(op.getRhs().getType()).getShape()) !=
            *mergedBlock)
      return;

  // Constants are concatenated here: all of them readable, or no change.
  std::optional<DenseElementsAttr> foldedData, foldedScales;
  if (*weightSource(first) == WeightSource::Constant) {
    foldedData = concatConstants(data, dataType);
    foldedScales = concatConstants(scales, concatType(scales));
    if (!foldedData || !foldedScales)
      return;
  }

  // The weights have no operands: their definitions move above the first
  // product, where the merged one goes.
  for (Value v : llvm::concat<Value>(data, scales))
    if (Operation *def = v.getDefiningOp();
        def && def->getBlock() == first->getBlock() &&
        first->isBeforeInBlock(def))
      def->moveBefore(first);
  OpBuilder b(first);
  Location loc = b.getFusedLoc(llvm::map_to_vector(
      group, [](ScaledMatmulOp op) { return op.getLoc(); }));
  Value mergedData = concatWeights(b, loc, data, foldedData);
  Value mergedScales = concatWeights(b, loc, scales, foldedScales);

  auto resultType = cast<RankedTensorType>(first.getType());
  const int64_t rank = resultType.getRank();
  SmallVector<int64_t> shape(resultType.getShape());
  shape[rank - 1] = dataType.getDimSize(0);
  auto merged = ScaledMatmulOp::create(
      b, loc, resultType.clone(shape),
      ValueRange{first.getLhs(), first.getLhsScale(), mergedData, mergedScales},
      first->getAttrs());

  // Each slice has the merged result's sizes (a dynamic M or batch as
  // tensor.dim of it) but N.
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, merged),
                            strides(rank, b.getIndexAttr(1));
  int64_t offset = 0;
  for (ScaledMatmulOp op : group) {
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[rank - 1] = b.getIndexAttr(offset);
    sizes[rank - 1] = b.getIndexAttr(type.getDimSize(rank - 1));
    offset += type.getDimSize(rank - 1);
    Value slice = tensor::ExtractSliceOp::create(b, op.getLoc(), type, merged,
                                                 offsets, sizes, strides);
    op.getResult().replaceAllUsesWith(slice);
  }
  // Last: the builder inserts before the first of them.
  for (ScaledMatmulOp op : group)
    op.erase();
}

struct MergeSiblingProductsPass
    : fp8::impl::FP8MergeSiblingProductsBase<MergeSiblingProductsPass> {
  void runOnOperation() override {
    // Per block, in order of the first product of each group.
    llvm::MapVector<std::pair<Block *, SiblingKey>, SmallVector<ScaledMatmulOp>>
        groups;
    getOperation()->walk([&](ScaledMatmulOp op) {
      if (canMerge(op))
        groups[{op->getBlock(), siblingKey(op)}].push_back(op);
    });
    for (auto &entry : groups)
      if (entry.second.size() > 1)
        mergeGroup(entry.second);
  }
};

} // namespace
