//===- DropTiedResults.cpp - Results that are updated arguments -----------===//
//
// Part of fp8-opt. See Passes.td (fp8-drop-tied-results). Upstream's
// drop-equivalent-buffer-results drops every result equivalent to an
// argument, for private functions only, and keeps no record: the model ABI
// needs the pairs fp8-kv-cache-in-place chose, in a public function, and a
// copy where bufferization could not work in place.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8DROPTIEDRESULTS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

/// `v` with casts that keep the buffer looked through.
Value stripCasts(Value v) {
  while (auto cast = v.getDefiningOp<memref::CastOp>())
    v = cast.getSource();
  return v;
}

struct FP8DropTiedResultsPass
    : fp8::impl::FP8DropTiedResultsBase<FP8DropTiedResultsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(dropTied(func)))
        return signalPassFailure();
    }
  }

  LogicalResult dropTied(func::FuncOp func) {
    auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
    llvm::BitVector drop(func.getNumResults());
    for (unsigned r = 0; r < func.getNumResults(); ++r) {
      auto tied = func.getResultAttrOfType<IntegerAttr>(r, kTiedInputAttr);
      if (!tied)
        continue;
      int64_t i = tied.getInt();
      if (i < 0 || i >= func.getNumArguments() ||
          func.getArgument(i).getType() != ret.getOperand(r).getType())
        return func.emitError()
               << "fp8-drop-tied-results: result " << r << " is tied to "
               << "argument " << i << ", which does not exist or has another "
               << "type";
      Value arg = func.getArgument(i);
      Value v = ret.getOperand(r);
      if (stripCasts(v) != arg) {
        std::string name = "#" + std::to_string(r);
        if (auto n = func.getResultAttrOfType<StringAttr>(r, "onnx.name"))
          name = "'" + n.str() + "'";
        func.emitWarning() << "output " << name
                           << " is not updated in place: bufferization "
                              "wrote it elsewhere, so each run copies it "
                              "into its input's buffer";
        OpBuilder b(ret);
        memref::CopyOp::create(b, ret.getLoc(), v, arg);
      }
      drop.set(r);
    }
    if (drop.none())
      return success();
    SmallVector<Value> kept;
    for (unsigned r = 0; r < ret.getNumOperands(); ++r)
      if (!drop.test(r))
        kept.push_back(ret.getOperand(r));
    ret->setOperands(kept);
    return func.eraseResults(drop);
  }
};
} // namespace
