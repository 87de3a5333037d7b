//===- Version.h - fp8-opt's version ----------------------------*- C++ -*-===//
//
// Part of fp8-opt. What --version prints (bug reports need it), and the
// command-line conventions every tool shares.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_SUPPORT_VERSION_H
#define FP8_SUPPORT_VERSION_H

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fp8 {

/// "0.1.0", the project version.
const char *getVersion();
/// The git revision the tools were built from ("abcdef123456", with
/// "-dirty" for uncommitted changes), or "unknown" outside a checkout.
const char *getGitRevision();
/// Prints "<tool> (fp8-opt) <version>, git <revision>", then the MLIR/LLVM
/// version; installed as every tool's --version printer.
void printVersion(llvm::raw_ostream &os, const char *tool);
/// cl::SetVersionPrinter for `tool` (call before ParseCommandLineOptions).
void setVersionPrinter(const char *tool);
/// Hides every registered option outside `category` (and LLVM's generic
/// --help/--version) from --help; unlike cl::HideUnrelatedOptions they stay
/// listed by --help-hidden (the backends' hundreds of flags).
void hideOptionsOutside(llvm::cl::OptionCategory &category);

} // namespace mlir::fp8

#endif // FP8_SUPPORT_VERSION_H
