//===- ONNXImporter.h - ONNX to MLIR importer -------------------*- C++ -*-===//
//
// Part of fp8-opt. Turns an ONNX ModelProto (binary `.onnx` or ONNX's text
// format `.onnxtext`) into a module holding one `func.func @main` written
// with upstream tensor-level dialects only: linalg, tensor, arith and math.
//
// Shapes are fully static: symbolic input dimensions must be pinned with
// ImportOptions::inputShapes, and shape subgraphs (Shape, Gather, Concat,
// ...) are folded in the importer so that Reshape/Expand targets are known.
// Every refusal is an MLIR diagnostic located at the offending ONNX node.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_IMPORT_ONNXIMPORTER_H
#define FP8_IMPORT_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <string>

namespace mlir::fp8 {

struct ImportOptions {
  /// Static shapes for graph inputs, by ONNX input name. Required for every
  /// input with a symbolic or unknown dimension; when given for a static
  /// input, it must agree with the model.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;

  /// Initializers with more elements than this become
  /// DenseResourceElementsAttr blobs; smaller ones (and all int64 tensors,
  /// which are usually shapes) become DenseElementsAttr so they fold.
  int64_t maxDenseElements = 64;

  /// Directory that external-data locations are relative to. Defaults to
  /// the model file's directory for importONNXFile.
  std::string externalDataDir;
};

/// Parses `spec` ("name=2x48", or several joined by ',') into `opts`.
/// Returns an error message, or an empty string on success.
std::string parseInputShapeSpec(llvm::StringRef spec, ImportOptions &opts);

/// Imports a model file. Files ending in `.onnxtext` (or `.onnxtxt`) are read
/// as ONNX's text format, anything else as a binary ModelProto.
FailureOr<OwningOpRef<ModuleOp>> importONNXFile(llvm::StringRef path,
                                                MLIRContext &ctx,
                                                const ImportOptions &opts);

/// Imports a model from memory. `bufferName` names the source in locations
/// and diagnostics.
FailureOr<OwningOpRef<ModuleOp>>
importONNXBuffer(llvm::StringRef bytes, bool isText, llvm::StringRef bufferName,
                 MLIRContext &ctx, const ImportOptions &opts);

/// Registers the dialects that imported modules use.
void registerONNXImportDialects(DialectRegistry &registry);

} // namespace mlir::fp8

#endif // FP8_IMPORT_ONNXIMPORTER_H
