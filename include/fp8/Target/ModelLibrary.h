//===- ModelLibrary.h - Compiled models as shared libraries -----*- C++ -*-===//
//
// Part of fp8-opt. The steps that turn a lowered module into a shared
// library with the fp8rt C ABI (runtime/include/fp8rt/fp8rt.h):
//
//   1. prepareModelFunction: name the graph function __fp8_model_main and
//      record its signature (names, dtypes, static shapes) as text;
//   2. lower with fp8-cpu-lowering-pipeline{model-abi=true} (results become
//      out-parameters, memrefs bare pointers);
//   3. externalizeWeights (ExternalWeights.h): the large constants go to
//      the weights file, read through slots (GPU: redirectGlobalsToDevice
//      for the rest); addModelEntryPoints: emit __fp8_model_signature and
//      __fp8_model_entry(void **args) in the LLVM dialect;
//   4. translateAndEmit: LLVM IR, optimized, to an object file (or .ll);
//   5. linkModelLibrary: the object plus libfp8rt_cpu.a into a .so.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_MODELLIBRARY_H
#define FP8_TARGET_MODELLIBRARY_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::fp8 {

/// Symbol of the graph function inside a model library.
constexpr llvm::StringLiteral kModelMainName = "__fp8_model_main";
/// Globals whose names start with this are the model's persistent state
/// (fp8-track-amax's amax histories and scales); the runtime saves and
/// loads them.
constexpr llvm::StringLiteral kModelStatePrefix = "fp8_state_";

/// Module attribute of a model with dynamic dimensions, set by
/// prepareModelFunction: every argument's static shape (-1 where dynamic),
/// inputs then outputs. Such a model is lowered with memref descriptors at
/// its boundary (fp8-cpu-lowering-pipeline{model-abi-descriptors=true}),
/// which addModelEntryPoints builds from the run's dimensions.
constexpr llvm::StringLiteral kModelArgShapesAttr = "fp8.model_arg_shapes";

/// ONNX TensorProto.DataType of an element type (= fp8rt_dtype), if the
/// model ABI and the weights file have it.
std::optional<int> abiDtype(Type type);

/// Renames `entryName` to kModelMainName and returns the signature text the
/// runtime shim parses. Fails (with a diagnostic) on dynamic shapes or
/// element types the ABI has no code for.
FailureOr<std::string> prepareModelFunction(ModuleOp module,
                                            StringRef entryName = "main");

/// Adds the ABI entry points to a module already lowered to the LLVM
/// dialect with the model ABI.
LogicalResult addModelEntryPoints(ModuleOp module, StringRef signature);

/// For GPU targets, before addModelEntryPoints: every global of the lowered
/// host module (the memref globals: weights, constants, FP8 state) is read
/// by kernels, so the host code must pass device copies. Each use of a
/// global's address in host functions becomes a load from a pointer slot
/// `__fp8_device_<name>`, and a table `__fp8_model_device_globals` of
/// {host address, bytes, slot address} (ending with a null entry) lets the
/// CUDA runtime shim upload the globals and fill the slots when a model is
/// created.
LogicalResult redirectGlobalsToDevice(ModuleOp module);

/// The PTX text of every gpu.binary object in `module` (after
/// gpu-module-to-binary with format=isa), concatenated.
FailureOr<std::string> collectPTX(ModuleOp module);

struct CodegenOptions {
  /// Target CPU: "native" (the host, default) or an LLVM CPU name such as
  /// "x86-64-v3"; "generic" for the baseline of the triple.
  std::string cpu = "native";
  unsigned optLevel = 3;
};

/// Translates to LLVM IR, optimizes, and writes an object file (or textual
/// LLVM IR when `emitLLVMIR`) to `path`.
LogicalResult translateAndEmit(ModuleOp module, StringRef path,
                               const CodegenOptions &options, bool emitLLVMIR);

/// Links `object` and the runtime archive into the shared library `output`
/// with the system C compiler driver; `error` receives the linker's words.
LogicalResult linkModelLibrary(StringRef object, StringRef runtimeArchive,
                               StringRef output, std::string &error);

/// Links a CUDA model library: the object, the CUDA model shim and runtime
/// archives (whole), libcuda (the toolkit's stub at link time; the driver's
/// libcuda.so.1 at run time), libstdc++, libpthread, libm.
LogicalResult linkCUDAModelLibrary(StringRef object, StringRef shimArchive,
                                   StringRef runtimeArchive,
                                   StringRef cudaStubDir, StringRef output,
                                   std::string &error);

} // namespace mlir::fp8

#endif // FP8_TARGET_MODELLIBRARY_H
