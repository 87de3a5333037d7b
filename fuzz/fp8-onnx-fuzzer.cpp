//===- fp8-onnx-fuzzer.cpp - libFuzzer entry points ------------------------===//
//
// Part of fp8-opt. Built only with -DFP8_ENABLE_FUZZER=ON (clang,
// -fsanitize=fuzzer,address,undefined); scripts/fuzz.sh builds and runs it.
// Every input goes through ONNXFuzzTarget.cpp's runOne: import (binary or
// text), verification, fp8-quantize-pipeline, print + parse back.
//
// A crash, a sanitizer report, a leak or a hang is a finding, and so is an
// outcome that is a bug without a signal (the importer's module failing to
// verify, a pipeline failure on a verified module, a failed round trip):
// those abort after printing the diagnostics. FP8_FUZZ_ONLY_CRASHES=1 keeps
// the campaign going past them.
//
//===----------------------------------------------------------------------===//

#include "ONNXFuzzTarget.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

static bool onlyCrashes = false;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fp8fuzz::initialize();
  const char *env = std::getenv("FP8_FUZZ_ONLY_CRASHES");
  onlyCrashes = env && *env && *env != '0';
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  fp8fuzz::Config config;
  fp8fuzz::Outcome outcome = fp8fuzz::runOne(bytes, config);
  if (onlyCrashes || outcome == fp8fuzz::Outcome::Refused ||
      outcome == fp8fuzz::Outcome::Quantized)
    return 0;
  // Run it again keeping the diagnostics, for the report.
  std::string diags;
  config.keepDiagnostics = true;
  fp8fuzz::runOne(bytes, config, &diags);
  llvm::errs() << "fp8-onnx-fuzzer: " << fp8fuzz::outcomeName(outcome)
               << "\n"
               << diags;
  llvm::errs().flush();
  std::abort();
}
