//===- Compiler.h - ONNX model to model library, as a library ---*- C++ -*-===//
//
// Part of fp8-opt. The one entry point that fp8-compile and embedding users
// share: import an ONNX model, apply an FP8 recipe, lower it for a target
// and write a model library (and its weights file). The options are typed
// and declared here once; `CompileOptions::validate` checks them once;
// `compileModel` projects them onto the pass and pipeline options.
//
//   fp8::CompileOptions o;
//   o.input = "model.onnx";
//   o.output = "model.so";
//   o.target = fp8::CompileTarget::SM90a;
//   o.recipe = fp8::RecipeKind::Block;
//   if (llvm::Error e = fp8::compileModel(o))
//     llvm::errs() << llvm::toString(std::move(e)) << "\n";
//
//===----------------------------------------------------------------------===//

#ifndef FP8_COMPILER_COMPILER_H
#define FP8_COMPILER_COMPILER_H

#include "fp8/Dialect/FP8/Transforms/RecipeOptions.h"
#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Target/ExternalWeights.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fp8 {

// RecipeKind and ScaleStorage are the passes' own option types
// (fp8/Dialect/FP8/Transforms/RecipeOptions.h); the format is the
// dialect's Format (e4m3, e5m2, hybrid).
enum class CompileTarget { CPU, SM90a, SM89 };
using FormatKind = Format;
enum class EmitKind { MLIR, LLVM, Object, SharedLibrary, PTX };
enum class KVCacheFormat { None, E4M3, E5M2 };

/// Everything fp8-compile's flags set, typed. Defaults are fp8-compile's.
struct CompileOptions {
  /// The ONNX model and the file to write (library, object, IR or PTX).
  std::string input, output;
  CompileTarget target = CompileTarget::CPU;
  EmitKind emit = EmitKind::SharedLibrary;
  /// Shapes for graph inputs, `name=2x48` each; a dimension may be bounds
  /// `LO..HI` of a dynamic one (`ids=1..8x1..8192`).
  std::vector<std::string> inputShapes;
  /// Sizes or bounds of the model's symbolic dimensions, `batch=1..8` each.
  std::vector<std::string> dims;
  /// Attention chains become fp8.attention ops at import (not with an FP8
  /// recipe's includeAttention, whose products stay the decomposition's).
  bool fuseAttention = true;

  // The FP8 recipe (fp8-quantize-pipeline).
  RecipeKind recipe = RecipeKind::None;
  FormatKind format = FormatKind::E4M3;
  /// The products the recipe keeps out of FP8; unset: BF16 with a recipe,
  /// FP32 without.
  std::optional<HighPrecision> highPrecision;
  std::string policyFile, reportFile, calibrationFile;
  bool includeAttention = false, keepFirstLast = true, analyze = false;
  /// Fused attention on FP8 q, k, v (fp8-quantize-attention); needs a
  /// recipe and fused attention.
  bool fp8Attention = false;
  bool kMajorRhs = true, exposeQuantized = false, strict = false;
  int64_t history = 1024;
  /// Unset: TMA order for GPU targets, canonical for the CPU.
  std::optional<ScaleStorage> scaleStorage;

  // The FP8 KV cache (fp8-kv-cache).
  KVCacheFormat kvCache = KVCacheFormat::None;
  double kvCacheScale = 1.0;
  std::string kvCacheScalesFile;
  std::string kvCacheInputs = "^past", kvCacheOutputs = "^present";
  /// fp8-kv-cache-in-place: a decode step's caches updated in place at the
  /// slots of a new input (named kvCachePositionInput), outputs tied.
  bool kvCacheInPlace = false;
  std::string kvCachePositionInput = "cache_position";

  // Weights (docs/Weights.md).
  WeightsMode weightsMode = WeightsMode::Auto;
  /// Default: `output` with the extension .fp8w.
  std::string weightsFile;
  /// External-data initializers larger than this many bytes are left to
  /// the packer (0: read every one).
  uint64_t weightsReadLimit = 1024;
  /// Whether `weightsReadLimit` was chosen (an IR dump reads every weight
  /// unless it was).
  bool weightsReadLimitSet = false;
  bool packWeights = true;

  // Code generation.
  /// GPU: FP8 products on tensor cores; false: loops (a debugging reference).
  bool tensorCores = true;
  bool fastAccumulation = false;
  /// GPU: f16/bf16 exp and f16 division by approximate f32 instructions
  /// (fp8-gpu-approx-narrow-math; within one f16 ulp).
  bool approxNarrowMath = true;
  /// GPU: row reductions read again by their stages hold the row in
  /// registers (fp8-gpu-map-loops{register-rows}).
  bool registerRows = true;
  /// GPU: products' element-wise consumers in the GEMM epilogues
  /// (fp8-fuse-gemm-epilogues; off: measured slower, docs/PERFORMANCE.md).
  bool gemmEpilogues = false;
  /// GPU: decode steps' products (at most 64 rows) compute their element-wise
  /// consumer in the GEMM epilogue (fp8-fuse-gemm-epilogues{max-rows=64};
  /// bit-identical to the unfused step, docs/GPU.md).
  bool decodeEpilogues = true;
  /// GPU: residual adds in the epilogue of products of any size
  /// (fp8-fuse-gemm-epilogues{residual-only}; bit-identical).
  bool residualEpilogues = true;
  /// GPU: decode GEMMs' consumers keep several K tiles' wgmmas in flight
  /// between promotions (convert-fp8-gemm-to-gpu{pipelined-promotion}).
  bool pipelinedPromotion = true;
  /// GPU: with pipelinedPromotion, decode GEMMs' K tiles split over this many
  /// consumer warpgroups (convert-fp8-gemm-to-gpu{decode-k-groups}; 1 or 2).
  unsigned decodeKGroups = 1;
  /// GPU: most pipeline stages of decode GEMMs, 1..32
  /// (convert-fp8-gemm-to-gpu{decode-stages}).
  unsigned decodeStages = 16;
  /// GPU: CTA tile M of promoting GEMMs, 0 (the heuristic's), 128, 192 or
  /// 256 (convert-fp8-gemm-to-gpu{tile-m}).
  unsigned gemmTileM = 0;
  /// GPU: products with a fused consumer may take three consumer warpgroups
  /// (convert-fp8-gemm-to-gpu{fused-three-consumers}).
  bool gemmFusedThreeConsumers = false;
  /// Products of one activation with constant weights as one product over
  /// the concatenated weights (fp8-merge-sibling-products); unset: on for
  /// the GPU targets (fewer kernels), off for the CPU (no gain there).
  std::optional<bool> mergeProducts;
  /// GPU: FlashAttention-3's ping-pong in the fused FP8 attention kernel.
  bool attentionPingPong = true;
  /// GPU: decode steps' attention as the split-key kernel (else the
  /// FlashAttention kernel with one query per tile).
  bool attentionDecodeKernel = true;
  /// GPU: that kernel's tensor-core loop for FP8 caches whose scales fold
  /// out (power-of-two scales; else its CUDA-core loop).
  bool attentionDecodeTensorCores = true;
  /// Host CPU for code generation: native, generic or an LLVM CPU name.
  std::string cpu = "native";
  /// The CUDA toolkit (ptxas, driver stub); empty: $CUDA_ROOT, then the
  /// toolkit fp8-opt was built with, then /usr/local/cuda.
  std::string cudaRoot;
  /// Where libfp8rt_cpu.a / libfp8rt_cuda.a / libfp8rt_cuda_model.a are;
  /// empty: ../lib next to the running executable (an installed prefix).
  std::string runtimeDir;
  /// The runtime archive to link instead of the one in runtimeDir.
  std::string runtimeLib;

  /// No progress lines (stage names and times).
  bool quiet = false;

  bool isGPU() const { return target != CompileTarget::CPU; }
  /// What `highPrecision` resolves to.
  HighPrecision effectiveHighPrecision() const;
  /// The weights file and its manifest.
  std::string weightsPath() const;
  /// Checks the combination; an empty string when it is valid, else what is
  /// wrong, naming fp8-compile's flag.
  std::string validate() const;
};

/// Imports, applies the recipe, lowers and writes `options.output` (with a
/// weights file or manifest where weights go out). Nothing the call reads
/// is overwritten, and outputs are committed only when complete. MLIR
/// diagnostics (naming the ONNX node) and progress lines go to
/// `diagnostics`; the returned error says which stage failed.
llvm::Error compileModel(const CompileOptions &options,
                         llvm::raw_ostream &diagnostics = llvm::errs());

// Flag values <-> enums (fp8-compile's spellings). Each parser returns
// nothing for an unknown value; the error names the accepted ones.
std::optional<CompileTarget> parseCompileTarget(llvm::StringRef text);
std::optional<RecipeKind> parseRecipeKind(llvm::StringRef text);
std::optional<FormatKind> parseFormatKind(llvm::StringRef text);
std::optional<EmitKind> parseEmitKind(llvm::StringRef text);
std::optional<ScaleStorage> parseScaleStorage(llvm::StringRef text);
std::optional<KVCacheFormat> parseKVCacheFormat(llvm::StringRef text);
llvm::StringRef stringifyCompileTarget(CompileTarget target);
llvm::StringRef stringifyFormatKind(FormatKind format);

} // namespace mlir::fp8

#endif // FP8_COMPILER_COMPILER_H
