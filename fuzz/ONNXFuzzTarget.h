//===- ONNXFuzzTarget.h - One fuzz input through import + quantize -*- C++ -*-===//
//
// Part of fp8-opt. The code path shared by the libFuzzer target
// (fp8-onnx-fuzzer, built with -DFP8_ENABLE_FUZZER=ON) and by the replay
// tool (fp8-fuzz-replay, built in every configuration and run by the test
// suite over the seeds and every fuzz regression): bytes -> ONNX import
// (binary or text) -> verification -> fp8-quantize-pipeline.
//
// Contract: whatever the bytes, the process neither crashes nor leaks; a
// model that is refused is refused with a diagnostic. A module that imports
// and verifies must also go through the quantize pipeline: the pipeline's
// passes only refuse bad options, so a failure there (e.g. a pass producing
// IR that does not verify) is a bug, reported as Outcome::PipelineFailed.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_FUZZ_ONNXFUZZTARGET_H
#define FP8_FUZZ_ONNXFUZZTARGET_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace fp8fuzz {

enum class Outcome {
  /// Not an ONNX model, or a model the importer refuses (with a diagnostic).
  Refused,
  /// The importer built a module that does not verify; it reported so
  /// ("imported module failed to verify"), but that is a missing check in
  /// the importer: the verifier is its safety net, not its error path.
  ImportVerifyFailed,
  /// Imported, verified, and every quantize pipeline run succeeded.
  Quantized,
  /// Imported and verified, but a quantize pipeline run failed: a bug.
  PipelineFailed,
  /// The quantized module did not print and parse back to a valid module.
  RoundTripFailed,
};

const char *outcomeName(Outcome o);

struct Config {
  /// Run the quantize pipeline with every recipe (delayed, current, block,
  /// mxfp8) instead of the one the input's hash picks. The replay tool does;
  /// the fuzzer runs one per input (cheaper, and still deterministic).
  bool allRecipes = false;
  /// Print the module and parse it back after the pipeline (exercises the
  /// fp8 dialect's printers and parsers).
  bool roundTrip = true;
  /// Importer budget for constants made from model data. Smaller than the
  /// importer's default (2^28) so that out-of-memory stays a real finding.
  int64_t maxConstantElements = int64_t(1) << 20;
  /// Keep the diagnostics (for -verbose replay and crash reports).
  bool keepDiagnostics = false;
};

/// Registers dialects and makes the external-data directory (a fresh empty
/// temporary directory holding one 256-byte file, `data.bin`, so that
/// external-data offsets and lengths are exercised; removed at exit).
/// Idempotent.
void initialize();

/// Text or binary: ONNX text starts with '<' (the model header) after
/// whitespace and '//' or '#' comment lines; a binary ModelProto never does.
bool looksLikeText(llvm::StringRef bytes);

/// Runs one input. `diagnostics`, when given and Config::keepDiagnostics is
/// set, receives every diagnostic.
Outcome runOne(llvm::StringRef bytes, const Config &config,
               std::string *diagnostics = nullptr);

} // namespace fp8fuzz

#endif // FP8_FUZZ_ONNXFUZZTARGET_H
