//===- RequireStaticModelABI.cpp - Static shapes at bare-pointer ABIs -----===//
//
// Part of fp8-opt. A model library's bare-pointer entry holds no sizes; a
// module with dynamic dimensions at its boundary needs the descriptor ABI,
// and gets one clear error instead of a half-lowered function.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8REQUIRESTATICMODELABI
#include "fp8/Dialect/FP8/Transforms/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

bool isDynamic(Type t) {
  auto shaped = dyn_cast<ShapedType>(t);
  return shaped && shaped.hasRank() && !shaped.hasStaticShape();
}

/// "input 'input_ids' (argument #0)" or "output result #1".
std::string describe(func::FuncOp func, unsigned i, bool result) {
  StringAttr name = result
                        ? func.getResultAttrOfType<StringAttr>(i, "onnx.name")
                        : func.getArgAttrOfType<StringAttr>(i, "onnx.name");
  std::string position =
      std::string(result ? "result #" : "argument #") + std::to_string(i);
  std::string what = result ? "output " : "input ";
  return what + (name ? "'" + name.str() + "' (" + position + ")" : position);
}

struct RequireStaticModelABIPass
    : fp8::impl::FP8RequireStaticModelABIBase<RequireStaticModelABIPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.isPublic())
        continue;
      FunctionType type = func.getFunctionType();
      for (auto [i, t] : llvm::enumerate(type.getInputs()))
        if (isDynamic(t))
          return refuse(func, describe(func, i, false), t);
      for (auto [i, t] : llvm::enumerate(type.getResults()))
        if (isDynamic(t))
          return refuse(func, describe(func, i, true), t);
    }
  }

  void refuse(func::FuncOp func, const std::string &what, Type type) {
    func.emitError() << what << " of @" << func.getSymName() << " is " << type
                     << ": a model library's bare-pointer entry takes static "
                        "shapes; lower with model-abi-descriptors=true (what "
                        "fp8-compile does for a model with dynamic "
                        "dimensions), or give every dimension one size "
                        "(--input-shape name=2x48)";
    signalPassFailure();
  }
};

} // namespace
