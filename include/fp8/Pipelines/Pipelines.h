//===- Pipelines.h - fp8-opt pass pipelines ----------------------*- C++ -*-===//
//
// Part of fp8-opt. Pipelines are functions over an OpPassManager with an
// options struct; library users call them, `fp8-opt` users name them.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_PIPELINES_PIPELINES_H
#define FP8_PIPELINES_PIPELINES_H

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
};

/// Lowers a module of func + tensor-level code that may use the fp8 dialect
/// to the LLVM dialect for the host CPU:
///   convert-fp8-to-linalg, convert-elementwise-to-linalg,
///   fp8-expand-arith-casts, canonicalize/cse, fp8-copy-stored-state,
///   one-shot-bufferize (function boundaries), buffer deallocation,
///   convert-linalg-to-loops, and the standard *-to-llvm conversions.
void buildFP8CPULoweringPipeline(OpPassManager &pm,
                                 const CPULoweringPipelineOptions &options);

/// Registers `fp8-cpu-lowering-pipeline` with the global pass registry.
void registerFP8Pipelines();

} // namespace mlir::fp8

#endif // FP8_PIPELINES_PIPELINES_H
