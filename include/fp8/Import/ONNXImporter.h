//===- ONNXImporter.h - ONNX to MLIR importer -------------------*- C++ -*-===//
//
// Part of fp8-opt. Turns an ONNX ModelProto (binary `.onnx` or ONNX's text
// format `.onnxtext`) into a module holding one `func.func @main` written
// with upstream tensor-level dialects only: linalg, tensor, arith and math.
//
// Shapes are static, or dynamic within bounds: every symbolic or unknown
// input dimension is pinned to a size or given bounds with
// ImportOptions::inputShapes / dimBounds. Shape subgraphs (Shape, Gather,
// Concat, ...) are folded in the importer, to constants or, over dynamic
// dimensions, to sizes computed from them (lib/Import/SymbolicShapes.h),
// so that Reshape/Expand targets are known. Every refusal is an MLIR
// diagnostic located at the offending ONNX node.
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
#include <vector>

namespace mlir::fp8 {

/// A dimension given to the importer: a static size (lo == hi) or, for a
/// dynamic dimension, the inclusive bounds of its run-time size.
struct DimBounds {
  int64_t lo = 0, hi = 0;
  static DimBounds fixed(int64_t size) { return {size, size}; }
  bool isStatic() const { return lo == hi; }
  bool operator==(const DimBounds &o) const { return lo == o.lo && hi == o.hi; }
};

struct ImportOptions {
  /// Shapes for graph inputs, by ONNX input name, one entry per dimension:
  /// a static size, or bounds of a dynamic one (--input-shape
  /// ids=1..8x128). Required for every symbolic or unknown dimension that
  /// `dimBounds` does not give; a dimension the model fixes must be given
  /// that size. A dimension with a `dim_param` gives every dimension of the
  /// same name (in every input) its size or bounds.
  llvm::StringMap<llvm::SmallVector<DimBounds>> inputShapes;

  /// Sizes or bounds of the model's symbolic dimensions (`dim_param`), by
  /// name (--dim batch=1..8): for every input dimension of that name. Every
  /// dimension sharing a name is the same size at run time.
  llvm::StringMap<DimBounds> dimBounds;

  /// Initializers with more elements than this become
  /// DenseResourceElementsAttr blobs; smaller ones (and all int64 tensors,
  /// which are usually shapes) become DenseElementsAttr so they fold.
  int64_t maxDenseElements = 64;

  /// Directory that external-data locations are relative to. Defaults to
  /// the model file's directory for importONNXFile. A location must name a
  /// regular file inside it (after resolving symbolic links and `..`).
  std::string externalDataDir;

  /// Budget for the constants the importer itself creates from a model's
  /// data (ConstantOfShape, Range, folded shape computations): a node whose
  /// result would hold more elements is refused, naming the node. 2^28
  /// elements (1 GiB of f32) admits a 16384x16384 attention mask.
  int64_t maxConstantElements = int64_t(1) << 28;

  /// Data-dependent addressing (Gather, GatherElements, GatherND indices
  /// that are not constants) is checked at run time: the function returns
  /// one more result, a tensor<2xi64> status (see kCheckStatusAttr), and
  /// out-of-range indices are clamped so that nothing is read out of
  /// bounds. Without checks, out-of-range indices are clamped silently.
  bool boundsChecks = true;

  /// Floating-point initializers in external data of at least this many
  /// bytes are not read: they become fp8.external_weight ops (their file,
  /// offset and length), whose bytes fp8-compile streams into the library's
  /// weights file (docs/Weights.md). 0: every initializer is read.
  int64_t externalWeightMinBytes = 0;

  /// Attention chains (MatMul, scale, mask, Softmax, MatMul; grouped-query
  /// Expand) become one fp8.attention each (lib/Import/Attention.cpp);
  /// false keeps them as the plain decomposition.
  bool fuseAttention = true;
};

/// Result attribute of the run-time check status result of an imported
/// function: {failing check + 1 (0: none), offending value}.
inline constexpr llvm::StringLiteral kCheckStatusAttr = "fp8.check_status";
/// Function attribute: the checks' messages (an array of strings), indexed
/// by the status's first element minus one.
inline constexpr llvm::StringLiteral kChecksAttr = "fp8.checks";

/// An initializer whose external data the importer read: its bytes are part
/// of the imported module (and of a library compiled from it), so new
/// weights for that library must have the same bytes there. XXH64 (seed 0)
/// of the bytes, as the weights file hashes them.
struct ExternalDataRead {
  std::string name;
  std::string location; // relative to the model's directory
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t hash = 0;
};

/// Function attribute of an imported function with dynamic dimensions: its
/// symbols, an array of {name, lo, hi} dictionaries, in the order the
/// model ABI numbers them (s0, s1, ...).
inline constexpr llvm::StringLiteral kDimsAttr = "fp8.dims";
/// Argument and result attribute of such a function: the tensor's sizes,
/// an array of strings, each a static size ("16") or a polynomial over the
/// symbols ("s0", "s2+s1", "4*s0*s1"), the model ABI's syntax
/// (docs/RuntimeABI.md).
inline constexpr llvm::StringLiteral kShapeAttr = "fp8.shape";

/// Parses `spec` ("name=2x48", "ids=1..8x1..8192", or several joined by
/// ','; "name=scalar" for rank 0) into `opts.inputShapes`. Each dimension
/// is a size or LO..HI (0 <= LO <= HI; LO == HI is that static size).
/// Returns an error message, or an empty string on success. Naming an input
/// that `opts` already has a shape for is an error.
std::string parseInputShapeSpec(llvm::StringRef spec, ImportOptions &opts);

/// Parses `spec` ("batch=1..8", "past=0..8192", "seq=128", or several
/// joined by ',') into `opts.dimBounds`. Errors as parseInputShapeSpec.
std::string parseDimSpec(llvm::StringRef spec, ImportOptions &opts);

/// Imports a model file. Files ending in `.onnxtext` (or `.onnxtxt`) are read
/// as ONNX's text format, anything else as a binary ModelProto.
/// `externalFiles`, when given, receives the absolute real path of every
/// external-data file the model read (so that a tool never writes over
/// them). `externalReads`, when given, receives every initializer read
/// from external data.
FailureOr<OwningOpRef<ModuleOp>>
importONNXFile(llvm::StringRef path, MLIRContext &ctx,
               const ImportOptions &opts,
               llvm::SmallVectorImpl<std::string> *externalFiles = nullptr,
               std::vector<ExternalDataRead> *externalReads = nullptr);

/// Imports a model from memory. `bufferName` names the source in locations
/// and diagnostics.
FailureOr<OwningOpRef<ModuleOp>>
importONNXBuffer(llvm::StringRef bytes, bool isText, llvm::StringRef bufferName,
                 MLIRContext &ctx, const ImportOptions &opts,
                 llvm::SmallVectorImpl<std::string> *externalFiles = nullptr,
                 std::vector<ExternalDataRead> *externalReads = nullptr);

/// Registers the dialects that imported modules use.
void registerONNXImportDialects(DialectRegistry &registry);

} // namespace mlir::fp8

#endif // FP8_IMPORT_ONNXIMPORTER_H
