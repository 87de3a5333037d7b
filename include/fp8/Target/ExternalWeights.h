//===- ExternalWeights.h - Weights in a file beside the library -*- C++ -*-===//
//
// Part of fp8-opt. After lowering, the large constant globals of a model
// (its weights in their final form: FP8 bytes and scales after the recipe's
// weight quantization, the rest as they are) leave the module for a weights
// file (runtime/include/fp8rt/fp8w.h): the host code reads each one's
// address from a slot that the library's shim fills when its first handle
// is created (CPU: the mapped file; CUDA: a device copy uploaded once).
// The library records the table of slots (`__fp8_model_weights`), the
// fingerprint the file must carry and the file's name. docs/Weights.md.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_TARGET_EXTERNALWEIGHTS_H
#define FP8_TARGET_EXTERNALWEIGHTS_H

#include "fp8rt/pack.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::fp8 {

enum class WeightsMode {
  /// External when the constants that could go out exceed autoBytes.
  Auto,
  /// Every constant stays in the library.
  Embed,
  /// Every constant of at least minBytes goes to the weights file.
  External,
};

struct WeightsOptions {
  WeightsMode mode = WeightsMode::Auto;
  /// Smaller constants stay in the library (masks, shapes, small tables).
  uint64_t minBytes = 4096;
  /// Auto's threshold: more than this many bytes of weights go out.
  uint64_t autoBytes = uint64_t(64) << 20;
  /// The weights file's name as the library looks for it, beside itself.
  std::string fileName;
};

/// Parses "auto", "embed" or "external".
std::optional<WeightsMode> parseWeightsMode(StringRef text);

/// What the module lost to the weights file: the weights manifest (every
/// tensor in file order: where its bytes come from and how the packer makes
/// them, runtime/include/fp8rt/pack.h) and the bytes of the literals the
/// compiler computed. Write it with writeWeightsFile and writeManifest.
struct ExternalWeights {
  fp8rt::pack::Manifest manifest;
  /// Literal tensors' bytes (owned by the MLIRContext), by tensor name.
  llvm::StringMap<ArrayRef<char>> literals;
  /// The model's directory: the sources' locations are relative to it.
  std::string dataDir;
  uint64_t bytes = 0;
  bool empty() const { return manifest.tensors.empty(); }
  /// Whether another machine can pack the file from the model's data and
  /// the manifest alone (no literal needs this compile's base file).
  bool packableFromData() const { return literals.empty(); }
};

/// Moves the module's large constant LLVM globals out (as WeightsOptions
/// decides; the weights that stayed in files, fp8-materialize-external-
/// weights' globals, always) and emits the table, fingerprint and file name the shim reads;
/// with nothing to move out, an empty table. `signature` (the model's
/// signature text, which fingerprints the compiled computation) goes into
/// the fingerprint. Run on the lowered host module, before
/// redirectGlobalsToDevice.
FailureOr<ExternalWeights> externalizeWeights(ModuleOp module,
                                              StringRef signature,
                                              const WeightsOptions &options);

/// Emits an empty weights table (every model library has one) unless the
/// module has a table already.
void addEmptyWeightsTable(ModuleOp module);

/// Whether a global is part of the weights table (slots, names, table,
/// fingerprint, file name): host data that stays on the host.
bool isWeightsTableGlobal(StringRef symbol);

/// Writes `weights` to `path` (a new file the caller commits) with the
/// packer: copies and quantized weights streamed from the model's data,
/// literals from memory. Returns an error message, or an empty string.
std::string writeWeightsFile(const ExternalWeights &weights, StringRef path,
                             bool verbose = false);

/// Writes the weights manifest (JSON) to `path` (a new file the caller
/// commits). Returns an error message, or an empty string.
std::string writeManifest(const ExternalWeights &weights, StringRef path);

} // namespace mlir::fp8

#endif // FP8_TARGET_EXTERNALWEIGHTS_H
