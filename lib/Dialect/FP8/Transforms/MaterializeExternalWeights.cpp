//===- MaterializeExternalWeights.cpp - Weights that stay in files --------===//
//
// Part of fp8-opt. Each fp8.external_weight becomes a read-only tensor view
// of an uninitialized constant memref.global, which bufferization and the
// lowerings treat as any constant; the module attribute
// fp8.external_weights says where each global's bytes are, for
// fp8::externalizeWeights (lib/Target/ExternalWeights.cpp).
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
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringExtras.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8MATERIALIZEEXTERNALWEIGHTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

struct MaterializeExternalWeightsPass
    : fp8::impl::FP8MaterializeExternalWeightsBase<
          MaterializeExternalWeightsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<ExternalWeightOp> refs;
    module.walk([&](ExternalWeightOp op) { refs.push_back(op); });
    if (refs.empty())
      return;
    MLIRContext *ctx = module.getContext();
    SymbolTable symbols(module);
    SmallVector<NamedAttribute> table;
    if (auto existing =
            module->getAttrOfType<DictionaryAttr>(kExternalWeightsAttr))
      table.append(existing.begin(), existing.end());
    // One global per (location, offset): the same bytes referenced twice
    // (a tied embedding) are one weight.
    llvm::StringMap<memref::GlobalOp> byRange;
    OpBuilder b(ctx);
    for (ExternalWeightOp op : refs) {
      auto type = cast<RankedTensorType>(op.getType());
      auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
      std::string key = (op.getLocation() + "@" + Twine(op.getOffset()) + ":" +
                         Twine(op.getLength()))
                            .str();
      memref::GlobalOp &global = byRange[key];
      if (!global || global.getType() != memrefType) {
        b.setInsertionPointToStart(module.getBody());
        // Named after the initializer (the weights file's tensor names
        // stay readable): __fp8_external_<name>, made unique.
        std::string symbol = "__fp8_external_";
        for (char c : op.getName())
          symbol.push_back(llvm::isAlnum(c) ? c : '_');
        global = memref::GlobalOp::create(
            b, op.getLoc(), symbol, b.getStringAttr("private"),
            memrefType, /*initial_value=*/Attribute(), /*constant=*/true,
            /*alignment=*/b.getI64IntegerAttr(256));
        symbols.insert(global); // renamed if taken
        table.push_back(b.getNamedAttr(
            global.getSymName(),
            b.getDictionaryAttr(
                {b.getNamedAttr("name", op.getNameAttr()),
                 b.getNamedAttr("location", op.getLocationAttr()),
                 b.getNamedAttr("offset", op.getOffsetAttr()),
                 b.getNamedAttr("length", op.getLengthAttr())})));
      }
      b.setInsertionPoint(op);
      Value buffer = memref::GetGlobalOp::create(b, op.getLoc(), memrefType,
                                                 global.getSymName());
      // restrict: the only tensor view of this buffer; not writable: a
      // consumer that writes gets a copy (the weights are mapped read-only).
      auto tensor = bufferization::ToTensorOp::create(
          b, op.getLoc(), type, buffer, /*restrict=*/true,
          /*writable=*/false);
      op.replaceAllUsesWith(tensor.getResult());
      op.erase();
    }
    module->setAttr(kExternalWeightsAttr, DictionaryAttr::get(ctx, table));
  }
};

} // namespace
