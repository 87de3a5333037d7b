//===- ReturnAllocations.cpp - Returned views as allocations --------------===//
//
// Part of fp8-opt. See Passes.td (fp8-return-allocations).
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Support/MemRefViews.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8RETURNALLOCATIONS
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

/// The reshapes from a static identity-layout allocation to `v`, last
/// first, with the allocation; nothing when `v` is not such a view.
std::optional<std::pair<memref::AllocOp, SmallVector<Operation *>>>
reshapedAllocation(Value v) {
  SmallVector<Operation *> chain;
  while (Operation *def = v.getDefiningOp()) {
    if (auto e = dyn_cast<memref::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<memref::CollapseShapeOp>(def))
      v = c.getSrc();
    else
      break;
    if (!fp8::isStaticIdentity(v.getType()))
      return std::nullopt;
    chain.push_back(def);
  }
  auto alloc = v.getDefiningOp<memref::AllocOp>();
  if (chain.empty() || !alloc || !fp8::isStaticIdentity(alloc.getType()))
    return std::nullopt;
  return std::make_pair(alloc, chain);
}

/// `result` (an allocation of the returned type) seen as the original
/// allocation: the chain's reshapes inverted, the returned end first.
Value inverseView(OpBuilder &b, Location loc, ArrayRef<Operation *> chain,
                  Value result) {
  for (Operation *r : chain) {
    if (auto e = dyn_cast<memref::ExpandShapeOp>(r))
      result = memref::CollapseShapeOp::create(b, loc, result,
                                               e.getReassociationIndices());
    else {
      auto c = cast<memref::CollapseShapeOp>(r);
      result =
          memref::ExpandShapeOp::create(b, loc, c.getSrcType().getShape(),
                                        result, c.getReassociationIndices());
    }
  }
  return result;
}

struct FP8ReturnAllocationsPass
    : fp8::impl::FP8ReturnAllocationsBase<FP8ReturnAllocationsPass> {
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        if (!fp8::isStaticIdentity(v.getType()))
          continue;
        auto found = reshapedAllocation(v);
        if (!found)
          continue;
        // (Named, not a structured binding: C++17 lambdas cannot capture
        // one.)
        memref::AllocOp alloc = found->first;
        SmallVector<Operation *> chain = found->second;
        // Another result of the same buffer keeps it as it is
        // (fp8-distinct-result-buffers gives repeats copies).
        if (llvm::any_of(ret->getOpOperands(), [&](OpOperand &other) {
              return &other != &operand &&
                     fp8::reshapeRoot(other.get()) == alloc.getResult();
            }))
          continue;
        OpBuilder b(alloc);
        auto returned = memref::AllocOp::create(
            b, alloc.getLoc(), cast<MemRefType>(v.getType()), ValueRange{},
            alloc.getAlignmentAttr());
        Value view = inverseView(b, alloc.getLoc(), chain, returned);
        alloc.getResult().replaceAllUsesWith(view);
        alloc.erase();
        operand.set(returned);
      }
    });
  }
};

} // namespace
