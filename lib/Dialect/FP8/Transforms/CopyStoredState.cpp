//===- CopyStoredState.cpp - Protect ml_program stores from bufferization -===//
//
// Part of fp8-opt. Works around MLIR 22's bufferization model of
// ml_program.global_store (it claims not to read its operand, so an
// out-of-place store buffer is never filled); see Passes.td.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/Builders.h"

#define DEBUG_TYPE "fp8-copy-stored-state"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8COPYSTOREDSTATE
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
struct FP8CopyStoredStatePass
    : fp8::impl::FP8CopyStoredStateBase<FP8CopyStoredStatePass> {
  void runOnOperation() override {
    getOperation()->walk([](ml_program::GlobalStoreOp store) {
      Value value = store.getValue();
      auto tensorType = dyn_cast<RankedTensorType>(value.getType());
      if (!tensorType)
        return;
      // Already a private copy that only this store uses.
      if (value.getDefiningOp<bufferization::AllocTensorOp>() &&
          value.hasOneUse())
        return;
      OpBuilder b(store);
      auto copy = bufferization::AllocTensorOp::create(
          b, store.getLoc(), tensorType, ValueRange{}, /*copy=*/value);
      store.getValueMutable().assign(copy);
    });
  }
};
} // namespace
