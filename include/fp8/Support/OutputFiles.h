//===- OutputFiles.h - Writing what a tool produces, safely -----*- C++ -*-===//
//
// Part of fp8-opt. Every file fp8-compile, fp8-translate and the passes
// write (libraries, objects, IR, reports) goes through these helpers:
//
//  * an output is never one of the tool's inputs (the model, its external
//    data, policy/calibration/scale files) nor another output: compared by
//    file identity (device and inode, after symbolic links), not by name;
//  * a regular file (or a new one) is written to a temporary file beside it
//    and renamed into place, so a failed run never leaves a half-written
//    file where the user's old one was;
//  * an existing file that is not regular (/dev/null, /dev/stdout, a FIFO)
//    is written into, never replaced by a regular file; a directory is
//    refused; a symbolic link is followed (its target is what gets written).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_SUPPORT_OUTPUTFILES_H
#define FP8_SUPPORT_OUTPUTFILES_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::fp8 {

/// The files a tool reads and the outputs it has been asked for.
class OutputGuard {
public:
  /// Records an input; `what` names it in errors ("the input model").
  void addInput(StringRef path, StringRef what);
  /// Checks an output path against every input and every output checked
  /// before it; records it as an output. Returns an error message, or an
  /// empty string when `path` may be written.
  std::string checkOutput(StringRef path, StringRef what);

private:
  struct Entry {
    std::string path, what;
    bool output;
  };
  SmallVector<Entry> entries;
};

/// Moves the finished temporary file `tmp` to `path` by the rules above
/// (rename for regular files, copy into non-regular ones). `tmp` is removed
/// in every case. Returns an error message, or an empty string.
std::string commitOutput(StringRef tmp, StringRef path);

/// A temporary path beside `path` (same directory, so the rename stays on
/// one file system) that does not exist yet; "" with `error` set on failure.
std::string temporaryPathFor(StringRef path, std::string &error);

/// Writes what `print` prints to `path` ("-" is stdout) by these rules.
/// Returns an error message, or an empty string.
std::string writeOutput(StringRef path,
                        function_ref<void(llvm::raw_ostream &)> print);

} // namespace mlir::fp8

#endif // FP8_SUPPORT_OUTPUTFILES_H
