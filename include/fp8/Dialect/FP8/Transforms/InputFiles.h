//===- InputFiles.h - Files that passes read --------------------*- C++ -*-===//
//
// Part of fp8-opt. The policy, calibration and KV-cache scale files that
// fp8-insert-scales and fp8-kv-cache read come from users (or from whoever
// handed them a model): reading one must never hang, exhaust memory or
// overflow the stack, whatever it holds.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_INPUTFILES_H
#define FP8_DIALECT_FP8_TRANSFORMS_INPUTFILES_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

namespace mlir::fp8 {

/// JSON nesting deeper than this is refused before parsing
/// (llvm::json::parse recurses once per level; every file we read is at
/// most three levels deep).
inline constexpr unsigned kMaxJSONDepth = 64;
/// Input files larger than this are refused (64 MiB).
inline constexpr uint64_t kMaxJSONFileBytes = uint64_t(64) << 20;

/// The maximum nesting depth of `text` ('[' and '{' outside strings).
unsigned jsonNestingDepth(StringRef text);

/// Reads and parses the JSON file `path`. `what` names it in diagnostics
/// ("policy", "calibration", ...). Refused with a diagnostic from
/// `emitError`: a file that is not a regular file (a FIFO would block, a
/// device never end), larger than kMaxJSONFileBytes, nested deeper than
/// kMaxJSONDepth, or not valid JSON.
FailureOr<llvm::json::Value>
readJSONFile(StringRef path, StringRef what,
             function_ref<InFlightDiagnostic()> emitError);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_TRANSFORMS_INPUTFILES_H
