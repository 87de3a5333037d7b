//===- DistinctResultBuffers.cpp - One buffer per returned result ---------===//
//
// Part of fp8-opt. See Passes.td (fp8-distinct-result-buffers).
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Support/MemRefViews.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8DISTINCTRESULTBUFFERS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

/// The buffer under casts and reshapes of `v` (the same elements).
Value bufferRoot(Value v) { return fp8::reshapeRoot(v, /*throughCasts=*/true); }

/// A new buffer of `v`'s type (its dynamic sizes read from `v`) holding a
/// copy of it, at `b`'s insertion point; failure for a layout other than
/// the identity (function boundaries here have identity layouts).
FailureOr<Value> copyOf(OpBuilder &b, Location loc, Value v) {
  auto type = cast<MemRefType>(v.getType());
  if (!type.getLayout().isIdentity())
    return failure();
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(memref::DimOp::create(b, loc, v, d));
  Value copy = memref::AllocOp::create(b, loc, type, sizes);
  memref::CopyOp::create(b, loc, v, copy);
  return copy;
}

struct FP8DistinctResultBuffersPass
    : fp8::impl::FP8DistinctResultBuffersBase<FP8DistinctResultBuffersPass> {
  void runOnOperation() override {
    WalkResult r = getOperation().walk([](func::ReturnOp ret) {
      // Per buffer, the result that keeps it: the first that returns the
      // buffer itself (an allocation buffer-results-to-out-params can
      // hoist), else the first view of it.
      llvm::SmallDenseMap<Value, unsigned> keeper;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        if (!isa<MemRefType>(v.getType()))
          continue;
        Value root = bufferRoot(v);
        auto [it, inserted] =
            keeper.try_emplace(root, operand.getOperandNumber());
        if (!inserted && v == root && ret.getOperand(it->second) != root)
          it->second = operand.getOperandNumber();
      }
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        if (!isa<MemRefType>(v.getType()) ||
            keeper.lookup(bufferRoot(v)) == operand.getOperandNumber())
          continue;
        FailureOr<Value> copy = copyOf(b, ret.getLoc(), v);
        if (failed(copy)) {
          ret.emitOpError() << "result " << operand.getOperandNumber()
                            << " repeats a buffer returned as another "
                               "result, with a non-identity layout: it "
                               "cannot be given a buffer of its own";
          return WalkResult::interrupt();
        }
        operand.set(*copy);
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
