//===- RequireStaticShapes.cpp - Refuse dynamic shapes on the GPU ---------===//
//
// Part of fp8-opt. The GPU path's kernels (GEMM, attention, mapped loops)
// are built for static shapes; a dynamic model gets one clear error at the
// start of the pipeline instead of a legalization failure in its middle.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8GPUREQUIRESTATICSHAPES
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

bool isDynamic(Type t) {
  auto shaped = dyn_cast<ShapedType>(t);
  return shaped && shaped.hasRank() && !shaped.hasStaticShape();
}

constexpr const char *kHowTo =
    ": the GPU targets take static shapes only (dynamic shapes are "
    "CPU-only for now); give every dimension one size (fp8-compile / "
    "fp8-translate --input-shape name=2x48 or --dim name=N), or use the "
    "CPU pipeline";

std::string typeString(Type t) {
  std::string s;
  llvm::raw_string_ostream(s) << t;
  return s;
}

/// "'input_ids' (argument #0)" or "argument #0".
std::string describe(func::FuncOp func, unsigned i, bool result) {
  const char *kind = result ? "result" : "argument";
  StringAttr name =
      result ? func.getResultAttrOfType<StringAttr>(i, "onnx.name")
             : func.getArgAttrOfType<StringAttr>(i, "onnx.name");
  std::string s = std::string(kind) + " #" + std::to_string(i);
  return name ? "'" + name.str() + "' (" + s + ")" : s;
}

struct RequireStaticShapesPass
    : fp8::impl::FP8GPURequireStaticShapesBase<RequireStaticShapesPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal()) // runtime declarations take memref<?x...>
        continue;
      FunctionType type = func.getFunctionType();
      for (auto [i, t] : llvm::enumerate(type.getInputs()))
        if (isDynamic(t))
          return refuse(func, "input " + describe(func, i, false) + " of @" +
                                  func.getSymName().str() + " is " +
                                  typeString(t));
      for (auto [i, t] : llvm::enumerate(type.getResults()))
        if (isDynamic(t))
          return refuse(func, "output " + describe(func, i, true) + " of @" +
                                  func.getSymName().str() + " is " +
                                  typeString(t));
    }
    WalkResult walk = getOperation().walk([&](Operation *op) {
      for (Type t : op->getResultTypes())
        if (isDynamic(t)) {
          op->emitError() << "'" << op->getName() << "' has a result of "
                          << "dynamic shape " << t << kHowTo;
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }

  void refuse(func::FuncOp func, const std::string &what) {
    func.emitError() << what << kHowTo;
    signalPassFailure();
  }
};

} // namespace
