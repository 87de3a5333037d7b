//===- GemmToGPU.cpp - FP8 GEMM kernels (wgmma / mma.sync) ----------------===//
//
// Part of fp8-opt. Replaces the body of every bufferized `@__fp8_gemm_<i>`
// function (made by fp8-outline-scaled-matmuls) with a `gpu.launch_func` of a
// tensor-core kernel built from gpu/nvvm/arith/scf/memref/llvm ops (a
// gpu.func in its own gpu.module, next to the function).
//
// The generator lives in Gemm/, one concern per file:
//   GemmPlan       what the function computes (GemmProblem: shapes, types,
//                  scale layouts, bias, activation) and how the kernel
//                  computes it (GemmConfig: BM/BN/BK, stages, warpgroups,
//                  cluster, swizzle, loader/kernel/epilogue kinds), with
//                  the heuristic that picks the configuration;
//   SmemLayout     tile offsets per stage, swizzle (none / 128B), wgmma
//                  matrix descriptors;
//   TileLoaders    global -> shared movers behind one interface (TMA with
//                  mbarriers; thread copies where TMA does not serve);
//   Mainloop       the K loop: wgmma steps per promotion unit;
//   Promotion      FP32 promotion of each unit with the K-dependent scales;
//   Epilogue       K-independent scales, bias, activation, rounding, stores;
//   WarpSpecialized  the producer/consumer warpgroups of the
//                  warp-specialized kernel (TMA, full/empty mbarriers);
//   GemmKernel     assembles the above into the launch;
//   KernelBuilder  shared IR helpers, launch-wide values, the accumulator
//                  fragment's geometry.
//
// The kernels (sm_90a, chooseGemmConfig decides): with TMA (K % 16 == 0)
// and M >= 128 the warp-specialized one -- a producer warpgroup issuing TMA
// loads into up to 8 128B-swizzled stages, two consumer warpgroups running
// m64nBNk32 wgmma on 64 rows each of a 128 x BN CTA tile, full/empty
// mbarriers per stage, setmaxnreg 40/232; otherwise one warpgroup per CTA
// computes a 64 x BN tile, from a TMA pipeline or (K % 16 != 0, or
// tma-pipeline=false) one stage filled by thread copies. Every kernel
// promotes in FP32 per K-block (128 K, 32 for MXFP8) and stores from the
// registers or through TMA. A function whose M (the lhs's and the output's
// row dimension) is dynamic gets two kernels behind a run-time choice (M <=
// 64: the decode configuration; else the warp-specialized one), M passed
// to the kernel. docs/GPU.md describes them.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "Gemm/GemmKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8GEMMTOGPU
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

struct ConvertFP8GemmToGPUPass
    : fp8::impl::ConvertFP8GemmToGPUBase<ConvertFP8GemmToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chip != "sm_90a" && chip != "sm_89") {
      module.emitError("convert-fp8-gemm-to-gpu: unknown chip '")
          << chip << "' (expected sm_90a or sm_89)";
      return signalPassFailure();
    }
    if (tileM != 0 && tileM != 128 && tileM != 192 && tileM != 256) {
      emitError(module.getLoc(), "convert-fp8-gemm-to-gpu: tile-m must be "
                                 "0, 128, 192 or 256, not ")
          << static_cast<int64_t>(tileM);
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kGemmAttrName))
        funcs.push_back(func);
    SymbolTable symbols(module);
    for (func::FuncOp func : funcs)
      convert(func, symbols);
  }

  void convert(func::FuncOp func, SymbolTable &symbols) {
    std::string why;
    gemm::GemmOptions options;
    options.tmaPipeline = tmaPipeline;
    options.stages = stages;
    options.warpSpecialized = warpSpecialized;
    options.wsStages = wsStages;
    options.persistent = persistent;
    options.smCount = smCount;
    options.clusterM = clusterM;
    options.fastAccumulation = fastAccumulation;
    options.tileN = tileN;
    options.tileM = tileM;
    options.fusedThreeConsumers = fusedThreeConsumers;
    options.stageScales = stageScales;
    options.tmaStore = tmaStore;
    options.stageEpilogueInput = stageEpilogueInput;
    options.decodeWarpSpecialized = decodeWarpSpecialized;
    options.pipelinedPromotion = pipelinedPromotion;
    options.decodeKGroups = decodeKGroups;
    options.decodeStages = decodeStages;
    options.clipLhsRows = clipLhsRows;
    options.gridDependency = gridDependency;
    FailureOr<SmallVector<gemm::GemmPlan, 2>> plans =
        gemm::planGemms(func, options, why);
    if (succeeded(plans) && chip == "sm_89") {
      plans = failure();
      why = "the sm_89 mma.sync kernel is not implemented yet";
    }
    // Served or not, the function is an ordinary one from here on (the
    // description would otherwise reach the LLVM dialect, which has no
    // translation for fp8 attributes).
    func->removeAttr(kGemmAttrName);
    if (failed(plans)) {
      if (remarks)
        func.emitRemark() << "fp8 gemm: keeping the reference body: " << why;
      return;
    }
    gemm::buildGemmKernel(func, *plans, symbols);
    if (remarks)
      for (const gemm::GemmPlan &plan : *plans)
        func.emitRemark() << "fp8 gemm: " << gemm::describeGemmPlan(plan);
  }
};

} // namespace
