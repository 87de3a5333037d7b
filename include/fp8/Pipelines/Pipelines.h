//===- Pipelines.h - fp8-opt pass pipelines ----------------------*- C++ -*-===//
//
// Part of fp8-opt. Pipelines are functions over an OpPassManager with an
// options struct; library users call them, `fp8-opt` users name them.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_PIPELINES_PIPELINES_H
#define FP8_PIPELINES_PIPELINES_H

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Dialect/FP8/Transforms/RecipeOptions.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::fp8 {

struct CPULoweringPipelineOptions
    : public PassPipelineOptions<CPULoweringPipelineOptions> {
  Option<bool> modelABI{
      *this, "model-abi",
      llvm::cl::desc("Lower for a model library: results become caller-owned "
                     "out-parameters and memrefs are passed as bare pointers "
                     "(needs static shapes), as fp8-compile's C ABI expects"),
      llvm::cl::init(false)};
  Option<bool> modelABIDescriptors{
      *this, "model-abi-descriptors",
      llvm::cl::desc("With model-abi: memrefs are passed as descriptors "
                     "(pointers, offset, sizes, strides) instead of bare "
                     "pointers, for a model with dynamic dimensions"),
      llvm::cl::init(false)};
  Option<bool> mergeSiblingProducts{
      *this, "merge-sibling-products",
      llvm::cl::desc("Products of one activation with constant weights "
                     "become one product over the concatenated weights "
                     "(fp8-merge-sibling-products; the GPU pipeline's "
                     "default, off here: one loop nest either way)"),
      llvm::cl::init(false)};
};

struct GPULoweringPipelineOptions
    : public PassPipelineOptions<GPULoweringPipelineOptions> {
  Option<bool> modelABI{
      *this, "model-abi",
      llvm::cl::desc("Lower for a model library (as for the CPU pipeline)"),
      llvm::cl::init(false)};
  Option<bool> modelABIDescriptors{
      *this, "model-abi-descriptors",
      llvm::cl::desc("With model-abi: the host function takes memref "
                     "descriptors instead of bare pointers, for a model with "
                     "dynamic dimensions (kernels take bare pointers and the "
                     "dynamic sizes: fp8-gpu-dynamic-kernel-operands)"),
      llvm::cl::init(false)};
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("sm_90a (Hopper, wgmma) or sm_89"),
                           llvm::cl::init("sm_90a")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features (ISA version)"),
                               llvm::cl::init("+ptx84")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary: fatbin (cubin + PTX, runs ptxas and "
                     "fatbinary), bin (cubin), isa (PTX text), or none "
                     "(stop before serialization)"),
      llvm::cl::init("fatbin")};
  Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root for ptxas (default: $CUDA_ROOT, "
                     "else /usr/local/cuda)"),
      llvm::cl::init("")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block of the "
                                           "element-wise/row-wise kernels"),
                            llvm::cl::init(256)};
  Option<int64_t> vectorWidth{
      *this, "vector-width",
      llvm::cl::desc("Elements per thread along the innermost dimension of "
                     "the element-wise kernels and row reductions, moved as "
                     "vectors (fp8-gpu-map-loops; 1: one element per thread)"),
      llvm::cl::init(8)};
  Option<bool> registerRows{
      *this, "register-rows",
      llvm::cl::desc("Row reductions whose later passes read the row again "
                     "(a per-row quantization after its amax) get enough "
                     "warps a row to hold it in registers, whatever the "
                     "number of rows (fp8-gpu-map-loops{register-rows})"),
      llvm::cl::init(true)};
  Option<bool> tensorCores{
      *this, "tensor-cores",
      llvm::cl::desc("FP8 products on tensor cores (convert-fp8-gemm-to-gpu); "
                     "false keeps the reference loops"),
      llvm::cl::init(true)};
  Option<bool> gemmEpilogues{
      *this, "gemm-epilogues",
      llvm::cl::desc("A product's element-wise consumer computed in its GEMM "
                     "kernel's epilogue (fp8-fuse-gemm-epilogues); off by "
                     "default: the register epilogue is not overlapped with "
                     "the next tile's products, and measured slower than the "
                     "consumer's own kernel on the H200"),
      llvm::cl::init(false)};
  Option<bool> decodeEpilogues{
      *this, "decode-epilogues",
      llvm::cl::desc("Products of at most 64 rows (decode steps) take their "
                     "element-wise consumer (a residual add) into the GEMM "
                     "kernel's epilogue, before element-wise fusion: one "
                     "kernel less per consumer, where the epilogue is a few "
                     "rows (fp8-fuse-gemm-epilogues{max-rows=64}); "
                     "bit-identical to the unfused step (docs/GPU.md)"),
      llvm::cl::init(true)};
  Option<bool> residualEpilogues{
      *this, "residual-epilogues",
      llvm::cl::desc("Products of any size take a residual add (an arith "
                     "consumer reading at most one other full tensor) into "
                     "the GEMM kernel's epilogue, staged through its TMA-store "
                     "tile, before element-wise fusion "
                     "(fp8-fuse-gemm-epilogues{residual-only}): the o and "
                     "down projections write the residual stream; "
                     "bit-identical, measured faster (docs/PERFORMANCE.md)"),
      llvm::cl::init(true)};
  Option<bool> gemmPipelinedPromotion{
      *this, "gemm-pipelined-promotion",
      llvm::cl::desc("Decode GEMMs' consumers keep several K tiles' wgmmas "
                     "in flight between FP32 promotions (convert-fp8-gemm-"
                     "to-gpu{pipelined-promotion}; the same promotions in the "
                     "same order)"),
      llvm::cl::init(true)};
  Option<unsigned> gemmDecodeKGroups{
      *this, "gemm-decode-k-groups",
      llvm::cl::desc("With gemm-pipelined-promotion: decode GEMMs' K tiles "
                     "split over this many consumer warpgroups (1 or 2; "
                     "convert-fp8-gemm-to-gpu{decode-k-groups})"),
      llvm::cl::init(1)};
  Option<unsigned> gemmDecodeStages{
      *this, "gemm-decode-stages",
      llvm::cl::desc("Most pipeline stages of decode GEMMs (1..32; as many "
                     "as fit up to this; convert-fp8-gemm-to-gpu"
                     "{decode-stages})"),
      llvm::cl::init(16)};
  Option<unsigned> gemmTileM{
      *this, "gemm-tile-m",
      llvm::cl::desc("CTA tile M of promoting GEMMs (block scales): 128, "
                     "192 (three consumer warpgroups) or 256 (two row bands "
                     "per consumer); 0: the heuristic's "
                     "(convert-fp8-gemm-to-gpu{tile-m})"),
      llvm::cl::init(0)};
  Option<bool> gemmFusedThreeConsumers{
      *this, "gemm-fused-three-consumers",
      llvm::cl::desc("Products with a fused consumer may take three consumer "
                     "warpgroups where they assemble "
                     "(convert-fp8-gemm-to-gpu{fused-three-consumers})"),
      llvm::cl::init(false)};
  Option<bool> mergeSiblingProducts{
      *this, "merge-sibling-products",
      llvm::cl::desc("Products of one activation with constant weights "
                     "(q, k, v; gate, up) become one GEMM over the "
                     "concatenated weights (fp8-merge-sibling-products)"),
      llvm::cl::init(true)};
  Option<bool> fusedAttention{
      *this, "fused-attention",
      llvm::cl::desc("fp8.attention as one fused kernel (fp8-outline-"
                     "attention, convert-fp8-attention-to-gpu) where it "
                     "serves; false: its reference lowering (loop kernels)"),
      llvm::cl::init(true)};
  Option<bool> attentionPingPong{
      *this, "attention-ping-pong",
      llvm::cl::desc("The fused FP8 attention kernel's two consumer "
                     "warpgroups take turns on the tensor cores (convert-fp8-"
                     "attention-to-gpu{ping-pong}: FlashAttention-3's "
                     "ping-pong)"),
      llvm::cl::init(true)};
  Option<bool> attentionDecodeTensorCores{
      *this, "attention-decode-tensor-cores",
      llvm::cl::desc("The decode split kernel's tensor-core loop for FP8 "
                     "caches whose scales fold out (convert-fp8-attention-"
                     "to-gpu{decode-tensor-cores}); false: CUDA cores only"),
      llvm::cl::init(true)};
  Option<bool> attentionDecodeKernel{
      *this, "attention-decode-kernel",
      llvm::cl::desc("Decode steps' attention (one query per head) as the "
                     "split-key kernel and the kernel that combines its "
                     "splits (fp8-outline-attention{decode-kernel}); false: "
                     "the FlashAttention kernel"),
      llvm::cl::init(true)};
  Option<bool> gridDependency{
      *this, "grid-dependency",
      llvm::cl::desc("sm_90 and later: every kernel waits for its stream "
                     "predecessor with griddepcontrol.wait and lets its "
                     "successor launch early (fp8-gpu-grid-dependency; the "
                     "runtime then launches with programmatic dependent "
                     "launch, FP8RT_PDL=0 turns that off)"),
      llvm::cl::init(true)};
  Option<bool> approxNarrowMath{
      *this, "approx-narrow-math",
      llvm::cl::desc("f16/bf16 exponentials and f16 divisions by the GPU's "
                     "approximate f32 instructions, then rounded to 16 bits "
                     "(fp8-gpu-approx-narrow-math: within one f16 ulp of "
                     "the correctly rounded result); false: IEEE f32 "
                     "functions"),
      llvm::cl::init(true)};
  Option<bool> gemmTmaPipeline{
      *this, "gemm-tma-pipeline",
      llvm::cl::desc("GEMM tiles loaded by TMA through a multi-stage "
                     "mbarrier pipeline (convert-fp8-gemm-to-gpu"
                     "{tma-pipeline}); false: thread copies, one stage"),
      llvm::cl::init(true)};
  Option<bool> gemmWarpSpecialized{
      *this, "gemm-warp-specialized",
      llvm::cl::desc("GEMMs with M >= 128 and TMA loads get the "
                     "warp-specialized kernel (convert-fp8-gemm-to-gpu"
                     "{warp-specialized}); false: single warpgroup"),
      llvm::cl::init(true)};
  Option<bool> gemmFastAccumulation{
      *this, "gemm-fast-accumulation",
      llvm::cl::desc("Products whose scales do not vary along K accumulate "
                     "the whole K in the tensor cores with 128x256 tiles, as "
                     "cuBLAS's fast accumulation (convert-fp8-gemm-to-gpu"
                     "{fast-accumulation}): faster, less accurate; default: "
                     "FP32 promotion every 128 K"),
      llvm::cl::init(false)};
};

/// How the products a recipe keeps out of FP8 are computed.
enum class HighPrecision {
  /// FP32 operands, exact products (linalg: loop kernels on the GPU).
  FP32,
  /// Operands rounded to BF16, FP32 accumulation: BF16 tensor cores on the
  /// GPU (fp8-high-precision-products).
  BF16,
};

struct QuantizePipelineOptions
    : public PassPipelineOptions<QuantizePipelineOptions> {
  Option<RecipeKind> recipe{
      *this, "recipe", llvm::cl::desc("The scaling recipe"),
      llvm::cl::init(RecipeKind::Current), recipeKindValues()};
  Option<Format> format{*this, "format", llvm::cl::desc("The FP8 format"),
                        llvm::cl::init(Format::E4M3), formatValues()};
  Option<bool> pow2{*this, "pow2",
                    llvm::cl::desc("Power-of-two scales (current, delayed)"),
                    llvm::cl::init(false)};
  Option<int64_t> history{*this, "history",
                          llvm::cl::desc("Amax history length (delayed)"),
                          llvm::cl::init(1024)};
  Option<AmaxAlgo> amaxAlgo{
      *this, "amax-algo", llvm::cl::desc("Amax history reduction (delayed)"),
      llvm::cl::init(AmaxAlgo::Max),
      llvm::cl::values(
          clEnumValN(AmaxAlgo::Max, "max", "the history's maximum"),
          clEnumValN(AmaxAlgo::MostRecent, "most_recent", "the latest amax"))};
  Option<int64_t> margin{*this, "margin", llvm::cl::desc("Margin (delayed)"),
                         llvm::cl::init(0)};
  Option<E8M0Rounding> mxRounding{
      *this, "mx-rounding", llvm::cl::desc("E8M0 rounding (mxfp8)"),
      llvm::cl::init(E8M0Rounding::RCeil),
      llvm::cl::values(clEnumValN(E8M0Rounding::RCeil, "rceil",
                                  "amax / max rounded up to a power of two"),
                       clEnumValN(E8M0Rounding::Floor, "floor",
                                  "OCP MX v1.0: 2^(floor(log2 amax) - emax)"))};
  Option<bool> includeAttention{
      *this, "include-attention",
      llvm::cl::desc("Also quantize attention's batched products"),
      llvm::cl::init(false)};
  Option<bool> keepFirstLast{
      *this, "keep-first-last",
      llvm::cl::desc("Keep the first and last linear layer in high precision"),
      llvm::cl::init(true)};
  Option<bool> fp8Attention{
      *this, "fp8-attention",
      llvm::cl::desc("Fused attention on FP8 query, key and value "
                     "(fp8-quantize-attention: current scales per 128 positions)"),
      llvm::cl::init(false)};
  Option<std::string> policyFile{*this, "policy-file",
                                 llvm::cl::desc("JSON per-node policy"),
                                 llvm::cl::init("")};
  Option<bool> kMajorRhs{
      *this, "k-major-rhs",
      llvm::cl::desc("Make right operands K-major (fp8-transpose-rescale), "
                     "as Hopper's FP8 tensor cores read them"),
      llvm::cl::init(true)};
  Option<ScaleStorage> scaleStorage{
      *this, "scale-storage",
      llvm::cl::desc("Order of activation scale tensors (fp8-block-layout)"),
      llvm::cl::init(ScaleStorage::Canonical), scaleStorageValues()};
  Option<bool> analyze{
      *this, "analyze",
      llvm::cl::desc("Numerics analysis build (fp8-insert-scales analyze)"),
      llvm::cl::init(false)};
  Option<std::string> calibrationFile{
      *this, "calibration-file",
      llvm::cl::desc("Calibrated activation amaxes (JSON)"),
      llvm::cl::init("")};
  Option<std::string> reportFile{*this, "report-file",
                                 llvm::cl::desc("Write decisions as JSON"),
                                 llvm::cl::init("")};
  Option<bool> strict{
      *this, "strict",
      llvm::cl::desc("A policy rule that decides no product is an error"),
      llvm::cl::init(false)};
  Option<HighPrecision> highPrecision{
      *this, "high-precision",
      llvm::cl::desc("The products kept out of FP8: fp32 (exact) or bf16 "
                     "(fp8-high-precision-products: tensor cores)"),
      llvm::cl::init(HighPrecision::FP32),
      llvm::cl::values(clEnumValN(HighPrecision::FP32, "fp32", "FP32"),
                       clEnumValN(HighPrecision::BF16, "bf16", "BF16"))};
};

/// The FP8 recipe passes: fp8-insert-scales with the options, then
/// fp8-track-amax (delayed scaling state), fp8-transpose-rescale (K-major
/// right operands), fp8-block-layout (whole blocks), with
/// `high-precision=bf16` fp8-high-precision-products (the other products in
/// BF16), then canonicalize + cse, which quantize and transpose constant
/// weights at compile time.
void buildFP8QuantizePipeline(OpPassManager &pm,
                              const QuantizePipelineOptions &options);

/// Lowers a module of func + tensor-level code that may use the fp8 dialect
/// to the LLVM dialect for the host CPU:
///   convert-fp8-to-linalg, convert-elementwise-to-linalg,
///   fp8-expand-arith-casts, canonicalize/cse, fp8-fuse-elementwise,
///   linalg-generalize-named-ops, fp8-contiguous-inner-loops,
///   fp8-copy-stored-state,
///   one-shot-bufferize (function boundaries), buffer deallocation,
///   convert-linalg-to-loops, and the standard *-to-llvm conversions.
void buildFP8CPULoweringPipeline(OpPassManager &pm,
                                 const CPULoweringPipelineOptions &options);

/// Lowers the same input as the CPU pipeline to host LLVM dialect code that
/// launches NVVM kernels (gpu.binary holding a cubin for `chip`):
///   fp8-outline-scaled-matmuls, convert-fp8-to-linalg,
///   convert-elementwise-to-linalg, canonicalize/cse, fp8-fuse-elementwise,
///   fp8-copy-stored-state, one-shot-bufferize, fp8-distinct-result-buffers,
///   buffer-results-to-out-params,
///   buffer deallocation, convert-fp8-gemm-to-gpu (tensor-core products),
///   inline, fp8-gpu-map-loops (every other loop nest becomes a kernel),
///   gpu-kernel-outlining, nvvm-attach-target, in each gpu.module
///   convert-fp8-casts-to-nvvm + convert-gpu-to-nvvm, then the host's
///   *-to-llvm conversions (allocations through _mlir_memref_to_llvm_alloc,
///   which the CUDA runtime serves from device memory), gpu-to-llvm and
///   gpu-module-to-binary.
void buildFP8GPULoweringPipeline(OpPassManager &pm,
                                 const GPULoweringPipelineOptions &options);

/// Registers `fp8-quantize-pipeline`, `fp8-cpu-lowering-pipeline` and
/// `fp8-gpu-lowering-pipeline` with
/// the global pass registry.
void registerFP8Pipelines();

} // namespace mlir::fp8

#endif // FP8_PIPELINES_PIPELINES_H
