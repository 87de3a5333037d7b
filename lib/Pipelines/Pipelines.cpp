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
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
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
  insert.strict = options.strict;
  insert.analyze = options.analyze;
  insert.calibrationFile = options.calibrationFile;
  pm.addPass(createFP8InsertScales(insert));
  pm.addPass(createFP8TrackAmax());
  if (options.fp8Attention) {
    FP8QuantizeAttentionOptions attention;
    attention.format =
        options.format == Format::E5M2 ? Format::E5M2 : Format::E4M3;
    pm.addNestedPass<func::FuncOp>(createFP8QuantizeAttention(attention));
  }
  if (options.kMajorRhs) {
    FP8TransposeRescaleOptions transpose;
    transpose.remarks = false;
    pm.addPass(createFP8TransposeRescale(transpose));
  }
  FP8BlockLayoutOptions layout;
  layout.scaleStorage = options.scaleStorage;
  pm.addPass(createFP8BlockLayout(layout));
  if (options.highPrecision == HighPrecision::BF16) {
    FP8HighPrecisionProductsOptions bf16;
    bf16.kMajorRhs = options.kMajorRhs;
    pm.addPass(createFP8HighPrecisionProducts(bf16));
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

/// One-shot bufferization across function boundaries (identity layouts at
/// the boundaries), optionally results as out-parameters (`publicOutParams`:
/// also for public functions, as the model ABI needs), then ownership-based
/// deallocation. fp8-copy-stored-state first: MLIR 22 bufferizes an
/// ml_program.global_store of an in-place tensor without its copy; and
/// fp8-untie-shared-fills: a fill CSE shared between reductions would
/// bufferize as one fill plus a copy per reduction.
/// The number of an `sm_NN[a]` chip name (0 when it is not one).
static int chipNumber(llvm::StringRef chip) {
  int number = 0;
  if (!chip.consume_front("sm_"))
    return 0;
  chip.consume_back("a");
  return chip.getAsInteger(10, number) ? 0 : number;
}

static void addBufferization(OpPassManager &pm, bool outParams,
                             bool publicOutParams) {
  pm.addPass(fp8::createFP8UntieSharedFills());
  pm.addPass(fp8::createFP8CopyStoredState());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // In-place updates at run-time positions (fp8-kv-cache-in-place) are
  // scf.forall loops: as scf.parallel, both targets lower them as any loop.
  pm.addPass(createForallToParallelLoopPass());
  // The model ABI passes an argument updated in place once, as the input.
  if (publicOutParams)
    pm.addPass(fp8::createFP8DropTiedResults());
  if (outParams) {
    // Results written into an argument (the GPU outlining's destinations
    // of dynamic shape) are that argument: no result, no out-parameter.
    pm.addPass(bufferization::createDropEquivalentBufferResultsPass());
    // One buffer per result: the hoisting below replaces a returned
    // allocation by one out-parameter.
    pm.addPass(fp8::createFP8DistinctResultBuffers());
    bufferization::BufferResultsToOutParamsPassOptions out;
    if (publicOutParams) {
      // The private functions first (the outlined kernels' results become
      // the caller's allocations), then a returned view of an allocation
      // becomes an allocation of the returned shape: the model's output
      // is written in place, not copied.
      bufferization::BufferResultsToOutParamsPassOptions inner;
      inner.hoistStaticAllocs = true;
      pm.addPass(bufferization::createBufferResultsToOutParamsPass(inner));
      pm.addPass(fp8::createFP8ReturnAllocations());
    }
    out.hoistStaticAllocs = true;
    out.modifyPublicFunctions = publicOutParams;
    // The model's outputs are marked (`bufferize.result`): the runtime
    // passes buffers apart from every input and other output, so the GPU
    // mapping may treat them as buffers of their own (RowReductions.h).
    out.addResultAttribute = publicOutParams;
    pm.addPass(bufferization::createBufferResultsToOutParamsPass(out));
  }
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  // Returned globals are cloned by the deallocation pipeline; clones become
  // alloc + copy here.
  pm.addPass(createConvertBufferizationToMemRefPass());
}

/// Host loops and memrefs to the LLVM dialect. `deviceAllocations`: every
/// allocation calls _mlir_memref_to_llvm_alloc/free (the CUDA runtime's
/// device pool) and the host does no math; otherwise math goes to libm.
static void addHostToLLVM(OpPassManager &pm, bool barePointers,
                          bool deviceAllocations) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // Reshapes of dynamic dimensions that MLIR 22 cannot expand itself.
  pm.addPass(fp8::createFP8ExpandShapesToCasts());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = deviceAllocations;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  if (!deviceAllocations) {
    pm.addPass(createConvertMathToLibmPass());
    pm.addPass(createConvertMathToLLVMPass());
  }
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  ConvertFuncToLLVMPassOptions funcOptions;
  funcOptions.useBarePtrCallConv = barePointers;
  pm.addPass(createConvertFuncToLLVMPass(funcOptions));
}

void fp8::buildFP8CPULoweringPipeline(
    OpPassManager &pm, const CPULoweringPipelineOptions &options) {
  // A bare-pointer entry holds no sizes: one error for a dynamic boundary.
  if (options.modelABI && !options.modelABIDescriptors)
    pm.addPass(createFP8RequireStaticModelABI());
  // Weights that stay in files: their quantization goes to the packer, and
  // they become constant globals (docs/Weights.md).
  pm.addPass(createFP8PackExternalWeights());
  if (options.mergeSiblingProducts)
    pm.addNestedPass<func::FuncOp>(createFP8MergeSiblingProducts());
  pm.addPass(createFP8MaterializeExternalWeights());
  // FP8 semantics first, while everything is still on tensors.
  pm.addPass(createConvertFP8ToLinalg());
  // Element-wise arith/math on whole tensors (as importers and users write
  // them) become linalg.generic, which bufferizes.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // BF16 arithmetic (a BF16 graph's Relu, Add, ...) in f32 between casts,
  // which fp8-expand-arith-casts then turns into integer code: LLVM's x86
  // backend promotes bf16 operations the same way but rounds back through
  // __truncsfbf2, which Debian 12's libgcc does not have. Bit-identical:
  // f32 holds every bf16 sum, product and quotient to within the one
  // rounding to bf16.
  arith::ArithEmulateUnsupportedFloatsOptions bf16InF32;
  bf16InF32.sourceTypeStrs = {"bf16"};
  bf16InF32.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(bf16InF32));
  pm.addPass(createFP8ExpandArithCasts());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createFP8FuseElementwise());
  // Scalar loops are what the CPU path runs: put contiguous loops innermost
  // so that LLVM vectorizes them (results are bit-identical).
  pm.addNestedPass<func::FuncOp>(createLinalgGeneralizeNamedOpsPass());
  pm.addNestedPass<func::FuncOp>(createFP8ContiguousInnerLoops());

  // Tensors to buffers; results are written into buffers the caller passes
  // (fp8rt ABI) when lowering for a model library.
  addBufferization(pm, /*outParams=*/options.modelABI,
                   /*publicOutParams=*/options.modelABI);

  // Loops and the LLVM dialect.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  addHostToLLVM(pm,
                /*barePointers=*/options.modelABI &&
                    !options.modelABIDescriptors,
                /*deviceAllocations=*/false);
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void fp8::buildFP8GPULoweringPipeline(
    OpPassManager &pm, const GPULoweringPipelineOptions &options) {
  // A bare-pointer entry holds no sizes: one error for a dynamic boundary.
  if (options.modelABI && !options.modelABIDescriptors)
    pm.addPass(createFP8RequireStaticModelABI());
  // Tensor level: the same as the CPU path, except that FP8 products and
  // attention are outlined for the GEMM and attention kernels and FP8 casts
  // stay arith casts (the GPU lowers them to cvt instructions).
  pm.addPass(createFP8PackExternalWeights());
  // Products write the 16-bit type their consumer rounds to (no FP32
  // result and cast kernel), before they leave the graph.
  pm.addNestedPass<func::FuncOp>(createFP8FoldProductRounding());
  // Then products of one activation (q, k, v; gate, up) become one GEMM:
  // after the rounding fold, so that the merged GEMM writes 16 bits too.
  if (options.mergeSiblingProducts)
    pm.addNestedPass<func::FuncOp>(createFP8MergeSiblingProducts());
  pm.addPass(createFP8MaterializeExternalWeights());
  pm.addPass(createFP8OutlineScaledMatmuls());
  if (options.fusedAttention) {
    FP8OutlineAttentionOptions outline;
    outline.decodeKernel = options.attentionDecodeKernel;
    pm.addPass(createFP8OutlineAttention(outline));
  }
  ConvertFP8ToLinalgOptions toLinalg;
  toLinalg.splitTensorAmax = true; // per-tensor amax as a reduction tree
  pm.addPass(createConvertFP8ToLinalg(toLinalg));
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Residual adds, at any size: the add reads one tensor besides the
  // product, which the kernel stages under its products, and the residual
  // stream is then written once by the projection's kernel instead of
  // recomputed by every norm and add that reads it.
  if (options.tensorCores && options.residualEpilogues) {
    FP8FuseGemmEpiloguesOptions residual;
    residual.residualOnly = true;
    pm.addPass(createFP8FuseGemmEpilogues(residual));
  }
  // Decode steps' products (at most 64 rows) take their element-wise
  // consumer into the GEMM epilogue first: a few rows of epilogue cost less
  // than a kernel, and element-wise fusion would duplicate a residual add
  // into the next RMSNorm's row kernel, leaving the product two uses.
  if (options.tensorCores && options.decodeEpilogues) {
    FP8FuseGemmEpiloguesOptions decode;
    decode.maxRows = 64;
    pm.addPass(createFP8FuseGemmEpilogues(decode));
  }
  // On the GPU, recomputing a cheap producer in each consumer beats writing
  // and re-reading it (attention's scaled, masked scores).
  FP8FuseElementwiseOptions fuse;
  fuse.intoReductions = true;
  fuse.duplicateCheap = true;
  fuse.throughReshapes = true;
  fuse.recomputeIntoRowKernels = true;
  pm.addNestedPass<func::FuncOp>(createFP8FuseElementwise(fuse));
  // A decode step's cache update computes the new token's keys and values
  // in its own threads (no kernels and buffers of their own).
  pm.addNestedPass<func::FuncOp>(createFP8FuseIntoForall());
  // Then, on request, a product's (fused) element-wise consumer joins its
  // GEMM function: the kernel's epilogue computes it.
  if (options.tensorCores && options.gemmEpilogues)
    pm.addPass(createFP8FuseGemmEpilogues());

  // Buffers. Results always become out-parameters: the outlined products
  // must be destination-passing for the kernels.
  addBufferization(pm, /*outParams=*/true,
                   /*publicOutParams=*/options.modelABI);
  pm.addPass(createCanonicalizerPass());

  // Kernels: tensor-core products, then every remaining loop nest.
  if (options.tensorCores) {
    ConvertFP8GemmToGPUOptions gemm;
    gemm.chip = options.chip;
    gemm.tmaPipeline = options.gemmTmaPipeline;
    gemm.warpSpecialized = options.gemmWarpSpecialized;
    gemm.fastAccumulation = options.gemmFastAccumulation;
    gemm.pipelinedPromotion = options.gemmPipelinedPromotion;
    gemm.decodeKGroups = options.gemmDecodeKGroups;
    gemm.decodeStages = options.gemmDecodeStages;
    gemm.tileM = options.gemmTileM;
    gemm.fusedThreeConsumers = options.gemmFusedThreeConsumers;
    gemm.gridDependency =
        options.gridDependency && chipNumber(options.chip) >= 90;
    // The kernels come as gpu.funcs in their own gpu.modules (with the
    // attributes and parameters outlining would drop) and launch_funcs.
    pm.addPass(createConvertFP8GemmToGPU(gemm));
  }
  if (options.fusedAttention) {
    ConvertFP8AttentionToGPUOptions attention;
    attention.pingPong = options.attentionPingPong;
    attention.decodeTensorCores = options.attentionDecodeTensorCores;
    pm.addPass(createConvertFP8AttentionToGPU(attention));
  }
  pm.addPass(createInlinerPass());
  FP8GPUMapLoopsOptions map;
  map.blockSize = options.blockSize;
  map.vectorWidth = options.vectorWidth;
  map.registerRows = options.registerRows;
  pm.addNestedPass<func::FuncOp>(createFP8GPUMapLoops(map));
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createFP8GPUMergeKernelModules());
  // Kernels take bare pointers: memrefs of dynamic shape enter as their
  // base pointer and sizes.
  pm.addPass(createFP8GPUDynamicKernelOperands());
  // Programmatic dependent launch: griddepcontrol needs sm_90.
  if (options.gridDependency && chipNumber(options.chip) >= 90)
    pm.addPass(createFP8GPUGridDependency());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Device code.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  {
    OpPassManager &device = pm.nest<gpu::GPUModuleOp>();
    // Quantizations by power-of-two scales multiply (bit-identical).
    device.addPass(fp8::createFP8ExactReciprocals());
    if (options.approxNarrowMath)
      device.addPass(createFP8GPUApproxNarrowMath());
    device.addPass(createConvertFP8CastsToNVVM());
    device.addPass(createConvertNVGPUToNVVMPass());
    device.addPass(memref::createExpandStridedMetadataPass());
    device.addPass(createLowerAffinePass());
    device.addPass(createSCFToControlFlowPass());
    ConvertGpuOpsToNVVMOpsOptions nvvm;
    nvvm.useBarePtrCallConv = true;
    device.addPass(createConvertGpuOpsToNVVMOps(nvvm));
    device.addPass(createConvertNVVMToLLVMPass());
    device.addPass(createCanonicalizerPass());
    device.addPass(createCSEPass());
    device.addPass(createReconcileUnrealizedCastsPass());
  }

  // Host code. Allocations call _mlir_memref_to_llvm_alloc/free, which the
  // CUDA runtime implements with device memory (a caching pool).
  const bool hostBarePointers =
      options.modelABI && !options.modelABIDescriptors;
  addHostToLLVM(pm, /*barePointers=*/hostBarePointers,
                /*deviceAllocations=*/true);
  GpuToLLVMConversionPassOptions toLLVM;
  toLLVM.hostBarePtrCallConv = hostBarePointers;
  toLLVM.kernelBarePtrCallConv = true;
  pm.addPass(createGpuToLLVMConversionPass(toLLVM));
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  if (options.format != "none") {
    GpuModuleToBinaryPassOptions binary;
    binary.compilationTarget = options.format;
    binary.toolkitPath = options.toolkit;
    pm.addPass(createGpuModuleToBinaryPass(binary));
  }
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
  PassPipelineRegistration<GPULoweringPipelineOptions>(
      "fp8-gpu-lowering-pipeline",
      "Lower func/tensor code using the fp8 dialect to host LLVM dialect code "
      "that launches NVVM kernels (sm_90a/sm_89): FP8 products on tensor "
      "cores, every other loop nest as a kernel, FP8 casts as cvt",
      buildFP8GPULoweringPipeline);
}
