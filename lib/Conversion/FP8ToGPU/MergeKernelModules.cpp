//===- MergeKernelModules.cpp - One gpu.module for all kernels ------------===//
//
// Part of fp8-opt. One cubin per model: a single ptxas run at compile time
// and a single module load when the library is opened.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_FP8GPUMERGEKERNELMODULES
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;

namespace {
struct MergeKernelModulesPass
    : fp8::impl::FP8GPUMergeKernelModulesBase<MergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources(module.getOps<gpu::GPUModuleOp>());
    if (sources.size() <= 1)
      return;
    for (gpu::GPUModuleOp m : sources)
      if (m.getTargetsAttr() || m.getOffloadingHandlerAttr()) {
        m.emitError("fp8-gpu-merge-kernel-modules runs before "
                    "nvvm-attach-target: modules must not have targets yet");
        return signalPassFailure();
      }
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    SymbolTable top(module);
    std::string name = "fp8_kernels";
    for (unsigned i = 0; top.lookup(name); ++i)
      name = "fp8_kernels_" + std::to_string(i);
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), name);
    SymbolTable mergedSymbols(merged);
    // Old (module, symbol) -> new symbol, for the launches.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp m : sources) {
      SmallVector<Operation *> ops;
      for (Operation &op : m.getBody()->without_terminator())
        ops.push_back(&op);
      // A kernel alone in its module (what outlining makes) takes the
      // module's name, which is already unique; other symbols keep theirs
      // unless that collides.
      bool single = ops.size() == 1;
      for (Operation *op : ops) {
        auto symName =
            op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
        if (symName) {
          std::string wanted =
              single ? m.getName().str() : symName.getValue().str();
          std::string fresh = wanted;
          for (unsigned i = 0; mergedSymbols.lookup(fresh); ++i)
            fresh = wanted + "_" + std::to_string(i);
          if (fresh != symName.getValue()) {
            if (failed(SymbolTable::replaceAllSymbolUses(
                    op, b.getStringAttr(fresh), m))) {
              op->emitError("cannot rename while merging kernel modules");
              return signalPassFailure();
            }
            SymbolTable::setSymbolName(op, fresh);
          }
          renamed[{m.getNameAttr(), symName}] = b.getStringAttr(fresh);
        }
        op->moveBefore(merged.getBody(), merged.getBody()->end());
        if (symName)
          mergedSymbols.insert(op);
      }
    }
    WalkResult r = module.walk([&](gpu::LaunchFuncOp launch) {
      SymbolRefAttr ref = launch.getKernel();
      auto it = renamed.find({ref.getRootReference(), ref.getLeafReference()});
      if (it == renamed.end()) {
        launch.emitError("launches a kernel that is not in a gpu.module");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp m : sources)
      m.erase();
  }
};
} // namespace
