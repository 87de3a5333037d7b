//===- fp8-translate.cpp - Translations into fp8-opt's input IR -----------===//
//
// Part of fp8-opt. `fp8-translate --import-onnx model.onnx -o out.mlir`
// imports an ONNX model (binary, or ONNX text format for `.onnxtext`) into
// a func/linalg/tensor/arith/math module that fp8-opt's pipelines consume.
//
//===----------------------------------------------------------------------===//

#include "fp8/Import/ONNXImporter.h"

#include "fp8/Support/OutputFiles.h"
#include "fp8/Support/Version.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("fp8-translate options");

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input file>"),
                                          cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFilename("o", cl::desc("Output filename"),
                                           cl::value_desc("filename"),
                                           cl::init("-"), cl::cat(category));
static cl::opt<bool> importONNX("import-onnx",
                                cl::desc("Import an ONNX model (.onnx binary "
                                         "or .onnxtext text format)"),
                                cl::cat(category));
static cl::opt<bool>
    textInput("onnx-text",
              cl::desc("Read the input as ONNX text format regardless of "
                       "its extension"),
              cl::cat(category));
static cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Shape of a graph input: name=2x48, each dimension a size or "
             "LO..HI bounds of a dynamic one (ids=1..8x1..8192); repeatable, "
             "or comma-separated: a=1x32,b=1x32; 'name=scalar' for rank 0"),
    cl::value_desc("name=DxD..."), cl::cat(category));
static cl::list<std::string> dims(
    "dim",
    cl::desc("Size or bounds of a symbolic dimension (dim_param) of the "
             "model's inputs: batch=1..8, past=0..8192, seq=128 (repeatable, "
             "or comma-separated)"),
    cl::value_desc("name=LO..HI"), cl::cat(category));
static cl::opt<bool> fuseAttention(
    "fuse-attention",
    cl::desc("Import attention chains (MatMul, scale, mask, Softmax, MatMul) "
             "as one fp8.attention each (default); false keeps the plain "
             "decomposition"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> printGeneric("mlir-print-op-generic-form",
                                  cl::desc("Print the generic op form"),
                                  cl::Hidden, cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  fp8::hideOptionsOutside(category);
  fp8::setVersionPrinter("fp8-translate");
  cl::ParseCommandLineOptions(argc, argv, "fp8-opt translation tool\n");

  if (!importONNX) {
    llvm::errs() << "fp8-translate: choose a translation (--import-onnx)\n";
    return 1;
  }
  fp8::ImportOptions opts;
  opts.fuseAttention = fuseAttention;
  for (const std::string &spec : inputShapes) {
    std::string err = fp8::parseInputShapeSpec(spec, opts);
    if (!err.empty()) {
      llvm::errs() << "fp8-translate: " << err << "\n";
      return 1;
    }
  }
  for (const std::string &spec : dims) {
    std::string err = fp8::parseDimSpec(spec, opts);
    if (!err.empty()) {
      llvm::errs() << "fp8-translate: " << err << "\n";
      return 1;
    }
  }

  MLIRContext ctx;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &ctx);

  FailureOr<OwningOpRef<ModuleOp>> module;
  SmallVector<std::string> externalFiles;
  if (textInput) {
    std::string err;
    auto file = openInputFile(inputFilename, &err);
    if (!file) {
      llvm::errs() << "fp8-translate: " << err << "\n";
      return 1;
    }
    opts.externalDataDir = llvm::sys::path::parent_path(inputFilename).str();
    module = fp8::importONNXBuffer(file->getBuffer(), /*isText=*/true,
                                   inputFilename, ctx, opts, &externalFiles);
  } else {
    module = fp8::importONNXFile(inputFilename, ctx, opts, &externalFiles);
  }
  if (failed(module))
    return 1;

  // Never over the model or its external data.
  fp8::OutputGuard guard;
  guard.addInput(inputFilename, "the input model");
  for (const std::string &file : externalFiles)
    guard.addInput(file, "the model's external data");
  std::string err = guard.checkOutput(outputFilename, "-o");
  OpPrintingFlags flags;
  if (printGeneric)
    flags.printGenericOpForm();
  if (err.empty())
    err = fp8::writeOutput(outputFilename, [&](raw_ostream &os) {
      (*module)->print(os, flags);
      os << "\n";
    });
  if (!err.empty()) {
    llvm::errs() << "fp8-translate: error: " << err << "\n";
    return 1;
  }
  return 0;
}
