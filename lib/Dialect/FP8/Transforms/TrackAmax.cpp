//===- TrackAmax.cpp - Delayed scaling with persistent amax histories -----===//
//
// Part of fp8-opt. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#define DEBUG_TYPE "fp8-track-amax"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8TRACKAMAX
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {
struct FP8TrackAmaxPass : fp8::impl::FP8TrackAmaxBase<FP8TrackAmaxPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<ComputeScaleOp> tagged;
    module.walk([&](ComputeScaleOp op) {
      if (op->hasAttr("fp8.delayed"))
        tagged.push_back(op);
    });
    unsigned index = 0;
    for (ComputeScaleOp op : tagged) {
      auto delayed = dyn_cast<DelayedScalingAttr>(op->getAttr("fp8.delayed"));
      if (!delayed) {
        op.emitOpError("'fp8.delayed' must be a #fp8.delayed attribute");
        return signalPassFailure();
      }
      if (op.getRecipe().usesHistory() || op.getRecipe().usesE8M0Scales()) {
        op.emitOpError("only a current-scaling compute_scale can become "
                       "delayed scaling");
        return signalPassFailure();
      }
      auto scaleType = op.getType();
      if (!scaleType.hasStaticShape()) {
        op.emitOpError("delayed scaling needs a static scale shape");
        return signalPassFailure();
      }
      MLIRContext *ctx = &getContext();
      OpBuilder b(ctx);
      Location loc = op.getLoc();
      SmallVector<int64_t> histShape{delayed.getHistory()};
      llvm::append_range(histShape, scaleType.getShape());
      auto histType = RankedTensorType::get(histShape, b.getF32Type());

      // Module-level state, named after the op's position.
      b.setInsertionPointToStart(module.getBody());
      std::string base = "fp8_state_" + std::to_string(index++);
      // A calibrated amax (fp8-insert-scales{calibration-file}) starts the
      // history, so even the first run has a real scale.
      SmallVector<float> initial(histType.getNumElements(), 0.0f);
      if (auto calibrated =
              op->getAttrOfType<FloatAttr>("fp8.calibrated_amax")) {
        const int64_t perStep = scaleType.getNumElements();
        for (int64_t i = 0; i < perStep; ++i)
          initial[i] = calibrated.getValueAsDouble();
      }
      auto histGlobal = ml_program::GlobalOp::create(
          b, loc, base + "_history", histType, /*is_mutable=*/true,
          DenseElementsAttr::get(histType, ArrayRef<float>(initial)),
          b.getStringAttr("private"));
      auto scaleGlobal = ml_program::GlobalOp::create(
          b, loc, base + "_scale", scaleType, /*is_mutable=*/true,
          DenseElementsAttr::get(scaleType, 1.0f), b.getStringAttr("private"));
      symbols.insert(histGlobal);
      symbols.insert(scaleGlobal);

      b.setInsertionPoint(op);
      auto histRef = FlatSymbolRefAttr::get(histGlobal.getSymNameAttr());
      auto scaleRef = FlatSymbolRefAttr::get(scaleGlobal.getSymNameAttr());
      Value hist = ml_program::GlobalLoadOp::create(b, loc, histType, histRef);
      Value prev = ml_program::GlobalLoadOp::create(b, loc, scaleType, scaleRef);
      auto scale = ComputeScaleOp::create(b, loc, scaleType, hist, prev,
                                          delayed, op.getFormat());
      Value rolled =
          HistoryUpdateOp::create(b, loc, histType, hist, op.getAmax());
      ml_program::GlobalStoreOp::create(b, loc, histRef, rolled);
      ml_program::GlobalStoreOp::create(b, loc, scaleRef, scale);
      op.getResult().replaceAllUsesWith(scale.getResult());
      op.erase();
    }
  }
};
} // namespace
