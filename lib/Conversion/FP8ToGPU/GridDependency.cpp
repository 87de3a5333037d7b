//===- GridDependency.cpp - Programmatic dependent launch of kernels ------===//
//
// Part of fp8-opt. Every kernel waits for its stream predecessor with
// griddepcontrol.wait and lets its successor launch early; the module says
// so to the runtime with a marker global (see fp8-gpu-grid-dependency in
// dialects/Conversion/Passes.td).
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "KernelIR.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8GPUGRIDDEPENDENCY
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {

/// The symbol the CUDA runtime looks up (runtime/cuda/fp8rt_cuda.cpp).
constexpr llvm::StringLiteral kMarker = "__fp8_grid_dependency";

/// Whether `kernel` already controls its grid dependency itself.
bool hasGridDependencyControl(gpu::GPUFuncOp kernel) {
  return kernel
      .walk([](NVVM::GriddepcontrolOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

void waitAtEntry(gpu::GPUFuncOp kernel) {
  OpBuilder b = OpBuilder::atBlockBegin(&kernel.getBody().front());
  fp8::waitForGridDependency(b, kernel.getLoc());
}

void addMarker(gpu::GPUModuleOp module) {
  SymbolTable symbols(module);
  if (symbols.lookup(kMarker))
    return;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto i32 = b.getI32Type();
  LLVM::GlobalOp::create(b, module.getLoc(), i32, /*isConstant=*/true,
                         LLVM::Linkage::External, kMarker,
                         b.getI32IntegerAttr(1));
}

struct GridDependencyPass
    : fp8::impl::FP8GPUGridDependencyBase<GridDependencyPass> {
  void runOnOperation() override {
    for (gpu::GPUModuleOp module : getOperation().getOps<gpu::GPUModuleOp>()) {
      bool any = false;
      for (gpu::GPUFuncOp f : module.getOps<gpu::GPUFuncOp>()) {
        if (!f.isKernel())
          continue;
        any = true;
        if (!hasGridDependencyControl(f))
          waitAtEntry(f);
      }
      if (any)
        addMarker(module);
    }
  }
};

} // namespace
