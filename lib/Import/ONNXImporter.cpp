//===- ONNXImporter.cpp - ONNX import entry points ------------------------===//
//
// Part of fp8-opt. The public entry points of the importer
// (include/fp8/Import/ONNXImporter.h): reading a model file or buffer
// (ONNXProtoIO.cpp), the --input-shape syntax and the dialects the imported
// IR uses. The import itself is the Importer's (GraphWalk.cpp).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "ONNXProtoIO.h"

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

//===----------------------------------------------------------------------===//
// Options and entry points
//===----------------------------------------------------------------------===//

/// Parses one dimension: "48" or "LO..HI". Returns an error message naming
/// `entry`, or an empty string.
static std::string parseDim(StringRef text, StringRef entry, StringRef flag,
                            DimBounds &out) {
  auto bad = [&](StringRef why) {
    return ("malformed dimension '" + text + "' in " + flag + " '" + entry +
            "'" + why)
        .str();
  };
  auto [loText, hiText] = text.trim().split("..");
  int64_t lo, hi;
  if (loText.trim().getAsInteger(10, lo) || lo < 0)
    return bad(" (expected a size, or LO..HI bounds of a dynamic one)");
  hi = lo;
  if (text.contains("..") &&
      (hiText.trim().getAsInteger(10, hi) || hi < lo))
    return bad(" (expected LO..HI with 0 <= LO <= HI)");
  // No tensor of a real model has more elements than kMaxTensorElements.
  if (hi > kMaxTensorElements)
    return bad(" (at most 2^40)");
  out = {lo, hi};
  return {};
}

std::string fp8::parseInputShapeSpec(StringRef spec, ImportOptions &opts) {
  SmallVector<StringRef> entries;
  spec.split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    auto [name, dims] = entry.trim().rsplit('=');
    if (name.empty() || dims.empty() || !entry.contains('='))
      return ("malformed --input-shape entry '" + entry +
              "' (expected name=D0xD1x..., each D a size or LO..HI)")
          .str();
    SmallVector<DimBounds> shape;
    // "name=" with a scalar is spelled "name=scalar".
    if (dims != "scalar") {
      SmallVector<StringRef> parts;
      dims.split(parts, 'x');
      for (StringRef part : parts) {
        DimBounds d;
        if (std::string err = parseDim(part, entry, "--input-shape", d);
            !err.empty())
          return err;
        shape.push_back(d);
      }
    }
    if (!opts.inputShapes.try_emplace(name.trim(), shape).second)
      return ("--input-shape gives '" + name.trim() +
              "' more than once; give each input one shape")
          .str();
  }
  return {};
}

std::string fp8::parseDimSpec(StringRef spec, ImportOptions &opts) {
  SmallVector<StringRef> entries;
  spec.split(entries, ',', -1, /*KeepEmpty=*/false);
  for (StringRef entry : entries) {
    auto [name, value] = entry.trim().rsplit('=');
    if (name.trim().empty() || value.empty() || !entry.contains('='))
      return ("malformed --dim entry '" + entry +
              "' (expected name=LO..HI or name=SIZE, the name a dim_param "
              "of the model)")
          .str();
    DimBounds d;
    if (std::string err = parseDim(value, entry, "--dim", d); !err.empty())
      return err;
    if (!opts.dimBounds.try_emplace(name.trim(), d).second)
      return ("--dim gives '" + name.trim() +
              "' more than once; give each dimension one size or range")
          .str();
  }
  return {};
}

void fp8::registerONNXImportDialects(DialectRegistry &registry) {
  registry.insert<fp8::FP8Dialect, arith::ArithDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
}

std::string fp8::detail::stripSlashComments(StringRef text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    if (line.ltrim().starts_with("//"))
      out.append(line.size(), ' ');
    else
      out.append(line.begin(), line.end());
    if (text.size() != line.size())
      out.push_back('\n');
    text = rest;
  }
  return out;
}

FailureOr<OwningOpRef<ModuleOp>>
fp8::importONNXBuffer(StringRef bytes, bool isText, StringRef bufferName,
                      MLIRContext &ctx, const ImportOptions &opts,
                      SmallVectorImpl<std::string> *externalFiles,
                      std::vector<ExternalDataRead> *externalReads) {
  DialectRegistry registry;
  registerONNXImportDialects(registry);
  ctx.appendDialectRegistry(registry);
  ctx.loadAllAvailableDialects();

  Location fileLoc = FileLineColLoc::get(&ctx, bufferName, 0, 0);
  onnx::ModelProto model;
  std::string err = isText
                        ? detail::parseTextModel(detail::stripSlashComments(bytes), model)
                        : detail::parseBinaryModel(bytes, model);
  if (!err.empty())
    return emitError(fileLoc) << "cannot read ONNX model: " << err;

  Importer importer(ctx, opts, bufferName);
  importer.externalFiles = externalFiles;
  importer.externalReads = externalReads;
  return importer.importModel(model);
}

FailureOr<OwningOpRef<ModuleOp>>
fp8::importONNXFile(StringRef path, MLIRContext &ctx, const ImportOptions &opts,
                    SmallVectorImpl<std::string> *externalFiles,
                    std::vector<ExternalDataRead> *externalReads) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/false,
                                                   /*RequiresNullTerminator=*/false);
  if (std::error_code ec = buffer.getError())
    return emitError(FileLineColLoc::get(&ctx, path, 0, 0))
           << "cannot open ONNX model: " << ec.message();
  bool isText = path.ends_with(".onnxtext") || path.ends_with(".onnxtxt");
  ImportOptions fileOpts = opts;
  if (fileOpts.externalDataDir.empty())
    fileOpts.externalDataDir = llvm::sys::path::parent_path(path).str();
  return importONNXBuffer((*buffer)->getBuffer(), isText, path, ctx, fileOpts,
                          externalFiles, externalReads);
}
