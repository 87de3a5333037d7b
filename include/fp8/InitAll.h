//===- InitAll.h - Register everything fp8-opt provides ----------*- C++ -*-===//
//
// Part of fp8-opt. Embedders call these once, before parsing or running
// passes, like MLIR's registerAllDialects / registerAllPasses.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_INITALL_H
#define FP8_INITALL_H

namespace mlir {
class DialectRegistry;
namespace fp8 {

/// The fp8 dialect plus every upstream dialect (and its interface
/// implementations) that fp8-opt's passes and pipelines create.
void registerAllFP8Dialects(DialectRegistry &registry);

/// fp8-opt's passes and pass pipelines, for textual pipelines and
/// command-line tools.
void registerAllFP8Passes();

} // namespace fp8
} // namespace mlir

#endif // FP8_INITALL_H
