//===- Version.cpp - fp8-opt's version ------------------------------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "fp8/Support/Version.h"

#include "fp8/Support/VersionInfo.inc"

#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"

const char *mlir::fp8::getVersion() { return FP8_VERSION; }
const char *mlir::fp8::getGitRevision() { return FP8_GIT_REVISION; }

void mlir::fp8::printVersion(llvm::raw_ostream &os, const char *tool) {
  os << tool << " (fp8-opt) " << getVersion() << ", git " << getGitRevision()
     << "\n  built with MLIR/LLVM " << LLVM_VERSION_STRING << "\n";
}

void mlir::fp8::setVersionPrinter(const char *tool) {
  llvm::cl::SetVersionPrinter(
      [tool](llvm::raw_ostream &os) { printVersion(os, tool); });
}

void mlir::fp8::hideOptionsOutside(llvm::cl::OptionCategory &category) {
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *o = entry.second;
    llvm::StringRef name = o->ArgStr;
    // LLVM's generic options (--help*, --version, --print-*options).
    bool generic = name.starts_with("help") || name == "h" ||
                   name == "version" || name.ends_with("print-options") ||
                   name == "print-all-options";
    if (!generic && !llvm::is_contained(o->Categories, &category) &&
        o->getOptionHiddenFlag() == llvm::cl::NotHidden)
      o->setHiddenFlag(llvm::cl::Hidden);
  }
}
