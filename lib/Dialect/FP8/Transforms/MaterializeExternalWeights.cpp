//===- MaterializeExternalWeights.cpp - Weights that stay in files --------===//
//
// Part of fp8-opt. Each fp8.external_weight, and each used result of an
// fp8.packed_weight, becomes a read-only tensor view of an uninitialized
// constant memref.global, which bufferization and the lowerings treat as
// any constant; the module attribute fp8.external_weights says where each
// global's bytes are and, for packed weights, how the packer makes them
// (fp8::externalizeWeights, lib/Target/ExternalWeights.cpp). A
// tensor.concat of packed weights (fp8-merge-sibling-products) becomes one
// global whose entry lists its parts.
//
// A module-level walk rather than a rewrite pattern: each op creates a
// symbol in the module and an entry in a module attribute, which one pass
// over the module with a SymbolTable does in order and deterministically.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8MATERIALIZEEXTERNALWEIGHTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// The symbol for a weight named `name` (the ONNX initializer's): readable
/// names in the weights file.
std::string symbolFor(StringRef prefix, StringRef name, StringRef suffix) {
  std::string symbol = prefix.str();
  for (char c : name)
    symbol.push_back(llvm::isAlnum(c) ? c : '_');
  return symbol + suffix.str();
}

/// The packer's description of a packed weight's quantization (the
/// manifest's "quantization", runtime/include/fp8rt/pack.h), as attributes
/// of its fp8.external_weights entry.
void describeQuantization(PackedWeightOp op, Builder &b,
                          SmallVectorImpl<NamedAttribute> &entry) {
  auto source = cast<RankedTensorType>(op.getSourceType());
  SmallVector<int64_t> block =
      *op.getLayout().getExpandedBlock(source.getShape());
  RecipeAttrInterface recipe = op.getRecipe();
  const float eps = getScaleEps(recipe);
  bool rceil = true;
  if (auto mx = dyn_cast<MXScalingAttr>(recipe))
    rceil = mx.getRounding() == E8M0Rounding::RCeil;
  entry.append({
      b.getNamedAttr("source_type", op.getSourceTypeAttr()),
      b.getNamedAttr("format",
                     b.getStringAttr(stringifyFormat(op.getFormat()))),
      b.getNamedAttr("block", b.getDenseI64ArrayAttr(block)),
      b.getNamedAttr("scaling", b.getStringAttr(recipe.usesE8M0Scales()
                                                    ? "mx"
                                                    : "current")),
      b.getNamedAttr("eps", b.getF32FloatAttr(eps)),
      b.getNamedAttr("pow2", b.getBoolAttr(recipe.usesPowerOfTwoScales())),
      b.getNamedAttr("rceil", b.getBoolAttr(rceil)),
      b.getNamedAttr("permutation",
                     b.getDenseI64ArrayAttr(
                         op.getPermutation().value_or(ArrayRef<int64_t>{}))),
      b.getNamedAttr("data_shape", b.getDenseI64ArrayAttr(
                                       op.getResult().getType().getShape())),
  });
}

/// A concatenation along the first dimension of packed weights' data, or
/// of their scales (fp8-merge-sibling-products makes them).
bool isPackedConcat(tensor::ConcatOp op) {
  if (op.getDim() != 0 || op.getInputs().empty())
    return false;
  std::optional<bool> data;
  for (Value part : op.getInputs()) {
    auto packed = part.getDefiningOp<PackedWeightOp>();
    if (!packed || (data && *data != (part == packed.getResult())))
      return false;
    data = part == packed.getResult();
  }
  return true;
}

/// Globals and table entries for one module's weights in files.
class Materializer {
public:
  explicit Materializer(ModuleOp module) : module(module), symbols(module) {
    if (auto existing =
            module->getAttrOfType<DictionaryAttr>(kExternalWeightsAttr))
      table.append(existing.begin(), existing.end());
  }

  void run(ArrayRef<tensor::ConcatOp> concats, ArrayRef<Operation *> refs) {
    // Concatenations first: they use the packed weights' results, which
    // then need no global of their own.
    for (tensor::ConcatOp op : concats)
      materialize(op);
    for (Operation *op : refs) {
      if (auto weight = dyn_cast<ExternalWeightOp>(op))
        materialize(weight);
      else if (auto rounded = dyn_cast<RoundedWeightOp>(op))
        materialize(rounded);
      else
        materialize(cast<PackedWeightOp>(op));
    }
    module->setAttr(kExternalWeightsAttr,
                    DictionaryAttr::get(module.getContext(), table));
  }

private:
  /// A constant global of `type`'s shape and element type, uninitialized
  /// (its bytes are in the weights file), with its table entry.
  memref::GlobalOp createGlobal(Location loc, StringRef symbol,
                                RankedTensorType type,
                                ArrayRef<NamedAttribute> entry) {
    // In order of creation, at the top of the module: the weights file
    // lists the tensors in this order.
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    if (lastGlobal)
      b.setInsertionPointAfter(lastGlobal);
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    auto global = memref::GlobalOp::create(
        b, loc, symbol, b.getStringAttr("private"), memrefType,
        /*initial_value=*/Attribute(), /*constant=*/true,
        /*alignment=*/b.getI64IntegerAttr(256));
    symbols.insert(global, b.getInsertionPoint()); // renamed if taken
    lastGlobal = global;
    table.push_back(
        b.getNamedAttr(global.getSymName(), b.getDictionaryAttr(entry)));
    return global;
  }

  /// Replaces `value` with a read-only view of `global`.
  void replaceWithGlobal(OpBuilder &b, Value value, memref::GlobalOp global) {
    auto type = cast<RankedTensorType>(value.getType());
    Value buffer = memref::GetGlobalOp::create(b, value.getLoc(),
                                               global.getType(),
                                               global.getSymName());
    // restrict: the only tensor view of this buffer; not writable: a
    // consumer that writes gets a copy (the weights are mapped read-only).
    auto tensor = bufferization::ToTensorOp::create(
        b, value.getLoc(), type, buffer, /*restrict=*/true,
        /*writable=*/false);
    value.replaceAllUsesWith(tensor.getResult());
  }

  SmallVector<NamedAttribute> sourceEntry(Builder &b, StringAttr name,
                                          StringAttr location,
                                          IntegerAttr offset,
                                          IntegerAttr length) {
    return {b.getNamedAttr("name", name),
            b.getNamedAttr("location", location),
            b.getNamedAttr("offset", offset),
            b.getNamedAttr("length", length)};
  }

  void materialize(ExternalWeightOp op) {
    auto type = cast<RankedTensorType>(op.getType());
    // One global per (location, offset): the same bytes referenced twice
    // (a tied embedding) are one weight.
    std::string key = (op.getLocation() + "@" + Twine(op.getOffset()) + ":" +
                       Twine(op.getLength()))
                          .str();
    memref::GlobalOp &global = copies[key];
    OpBuilder b(op);
    if (!global || global.getType().getShape() != type.getShape() ||
        global.getType().getElementType() != type.getElementType())
      global = createGlobal(
          op.getLoc(), symbolFor("__fp8_external_", op.getName(), ""), type,
          sourceEntry(b, op.getNameAttr(), op.getLocationAttr(),
                      op.getOffsetAttr(), op.getLengthAttr()));
    replaceWithGlobal(b, op.getResult(), global);
    op.erase();
  }

  /// A weight the packer rounds to BF16 (and permutes): a "round" entry,
  /// shared by the ops of the same bytes and permutation; none for an
  /// unused one.
  void materialize(RoundedWeightOp op) {
    if (op.getResult().use_empty()) {
      op.erase();
      return;
    }
    // One global per (bytes, source type, permutation).
    std::string key;
    llvm::raw_string_ostream os(key);
    os << op.getLocation() << "@" << op.getOffset() << ":" << op.getLength()
       << ":" << op.getSourceType() << ":";
    for (int64_t p : op.getPermutation().value_or(ArrayRef<int64_t>{}))
      os << p << ",";
    OpBuilder b(op);
    memref::GlobalOp &global = rounded[key];
    if (!global) {
      SmallVector<NamedAttribute> entry =
          sourceEntry(b, op.getNameAttr(), op.getLocationAttr(),
                      op.getOffsetAttr(), op.getLengthAttr());
      entry.append(
          {b.getNamedAttr("kind", b.getStringAttr("round")),
           b.getNamedAttr("source_type", op.getSourceTypeAttr()),
           b.getNamedAttr("permutation",
                          b.getDenseI64ArrayAttr(op.getPermutation().value_or(
                              ArrayRef<int64_t>{})))});
      global =
          createGlobal(op.getLoc(), symbolFor("__fp8_bf16_", op.getName(), ""),
                       cast<RankedTensorType>(op.getResult().getType()), entry);
    }
    replaceWithGlobal(b, op.getResult(), global);
    op.erase();
  }

  /// The table entry of a packed weight's result: where its source is and
  /// how the packer quantizes it.
  SmallVector<NamedAttribute> packedEntry(Builder &b, PackedWeightOp op,
                                          bool data) {
    SmallVector<NamedAttribute> entry =
        sourceEntry(b, op.getNameAttr(), op.getLocationAttr(),
                    op.getOffsetAttr(), op.getLengthAttr());
    entry.push_back(
        b.getNamedAttr("kind", b.getStringAttr(data ? "data" : "scale")));
    describeQuantization(op, b, entry);
    return entry;
  }

  /// A global for each used result: "data" (the FP8 bytes) and "scale".
  void materialize(PackedWeightOp op) {
    OpBuilder b(op);
    for (auto [value, data] :
         {std::pair(op.getResult(), true), std::pair(op.getScale(), false)}) {
      if (value.use_empty())
        continue;
      memref::GlobalOp global = createGlobal(
          op.getLoc(),
          symbolFor("__fp8_packed_", op.getName(), data ? "" : "_scale"),
          cast<RankedTensorType>(value.getType()), packedEntry(b, op, data));
      replaceWithGlobal(b, value, global);
    }
    op.erase();
  }

  /// One global for packed weights concatenated along their first
  /// dimension (fp8-merge-sibling-products): a "concat" entry whose parts
  /// the packer writes one after the other.
  void materialize(tensor::ConcatOp op) {
    OpBuilder b(op);
    SmallVector<Attribute> parts;
    std::string names;
    bool data = false;
    for (Value part : op.getInputs()) {
      auto packed = part.getDefiningOp<PackedWeightOp>();
      data = part == packed.getResult();
      parts.push_back(b.getDictionaryAttr(packedEntry(b, packed, data)));
      names += (names.empty() ? "" : "_") + packed.getName().str();
    }
    SmallVector<NamedAttribute> entry = {
        b.getNamedAttr("kind", b.getStringAttr("concat")),
        b.getNamedAttr("parts", b.getArrayAttr(parts))};
    memref::GlobalOp global = createGlobal(
        op.getLoc(), symbolFor("__fp8_packed_", names, data ? "" : "_scale"),
        op.getResultType(), entry);
    replaceWithGlobal(b, op.getResult(), global);
    op.erase();
  }

  ModuleOp module;
  memref::GlobalOp lastGlobal;
  SymbolTable symbols;
  SmallVector<NamedAttribute> table;
  llvm::StringMap<memref::GlobalOp> copies, rounded;
};

struct MaterializeExternalWeightsPass
    : fp8::impl::FP8MaterializeExternalWeightsBase<
          MaterializeExternalWeightsPass> {
  void runOnOperation() override {
    SmallVector<Operation *> refs;
    SmallVector<tensor::ConcatOp> concats;
    getOperation().walk([&](Operation *op) {
      if (isa<ExternalWeightOp, PackedWeightOp, RoundedWeightOp>(op))
        refs.push_back(op);
      else if (auto concat = dyn_cast<tensor::ConcatOp>(op);
               concat && isPackedConcat(concat))
        concats.push_back(concat);
    });
    if (!refs.empty())
      Materializer(getOperation()).run(concats, refs);
  }
};

} // namespace
