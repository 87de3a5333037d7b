//===- Pipelines.cpp - fp8-opt pass pipelines -----------------------------===//
//
// Part of fp8-opt. Everything after the FP8-specific passes is upstream
// MLIR; this file only decides the order.
//
//===----------------------------------------------------------------------===//

#include "fp8/Pipelines/Pipelines.h"

#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void fp8::buildFP8QuantizePipeline(OpPassManager &pm,
                                   const QuantizePipelineOptions &options) {
  FP8InsertScalesOptions insert;
  insert.recipe = options.recipe;
  insert.format = options.format;
  insert.pow2 = options.pow2;
  insert.history = options.history;
  insert.amaxAlgo = options.amaxAlgo;
  insert.margin = options.margin;
  insert.mxRounding = options.mxRounding;
  insert.includeAttention = options.includeAttention;
  insert.keepFirstLast = options.keepFirstLast;
  insert.policyFile = options.policyFile;
  insert.reportFile = options.reportFile;
  insert.analyze = options.analyze;
  insert.calibrationFile = options.calibrationFile;
  pm.addPass(createFP8InsertScales(insert));
  pm.addPass(createFP8TrackAmax());
  if (options.kMajorRhs) {
    FP8TransposeRescaleOptions transpose;
    transpose.remarks = false;
    pm.addPass(createFP8TransposeRescale(transpose));
  }
  pm.addPass(createFP8BlockLayout());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void fp8::buildFP8CPULoweringPipeline(
    OpPassManager &pm, const CPULoweringPipelineOptions &options) {
  // FP8 semantics first, while everything is still on tensors.
  pm.addPass(createConvertFP8ToLinalg());
  // Element-wise arith/math on whole tensors (as importers and users write
  // them) become linalg.generic, which bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createFP8ExpandArithCasts());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createFP8FuseElementwise());
  // Scalar loops are what the CPU path runs: put contiguous loops innermost
  // so that LLVM vectorizes them (results are bit-identical).
  pm.addNestedPass<func::FuncOp>(createLinalgGeneralizeNamedOpsPass());
  pm.addNestedPass<func::FuncOp>(createFP8ContiguousInnerLoops());

  // Tensors to buffers.
  pm.addPass(createFP8CopyStoredState());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (options.modelABI) {
    // Results are written into buffers the caller passes (fp8rt ABI).
    bufferization::BufferResultsToOutParamsPassOptions outParams;
    outParams.hoistStaticAllocs = true;
    outParams.modifyPublicFunctions = true;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  }
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  // Returned globals are cloned by the deallocation pipeline; clones become
  // alloc + copy here.
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Loops and the LLVM dialect.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = options.modelABI;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void fp8::registerFP8Pipelines() {
  PassPipelineRegistration<QuantizePipelineOptions>(
      "fp8-quantize-pipeline",
      "Run the chosen matrix products in FP8 with a scaling recipe "
      "(fp8-insert-scales, fp8-track-amax, folding of weight quantization)",
      buildFP8QuantizePipeline);
  PassPipelineRegistration<CPULoweringPipelineOptions>(
      "fp8-cpu-lowering-pipeline",
      "Lower func/tensor code using the fp8 dialect to the LLVM dialect for "
      "the host CPU (FP8 ops to linalg, exact FP8 casts, bufferization, "
      "loops, LLVM)",
      buildFP8CPULoweringPipeline);
}
