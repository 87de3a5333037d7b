//===- ONNXFuzzTarget.cpp - One fuzz input through import + quantize ------===//
//
// Part of fp8-opt. See ONNXFuzzTarget.h.
//
//===----------------------------------------------------------------------===//

#include "ONNXFuzzTarget.h"

// Exception-safe protobuf/ONNX text parsing of the importer (lib/Import),
// used here only to pin symbolic input dimensions before importing.
#include "ONNXProtoIO.h"

#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/Import/ONNXImporter.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <mutex>

using namespace mlir;

namespace {

/// Dialects the importer and the quantize pipeline use. Not
/// registerAllFP8Dialects: the importer calls loadAllAvailableDialects, and
/// loading the LLVM, NVVM, GPU and vector dialects for every input would
/// triple the cost of an execution for code the quantize pipeline never
/// reaches (its passes load what they create as dependent dialects).
DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    fp8::registerONNXImportDialects(*reg);
    reg->insert<fp8::FP8Dialect>();
    return reg;
  }();
  return *r;
}

std::string &externalDataDir() {
  static std::string dir;
  return dir;
}

void removeExternalDataDir() {
  const std::string &dir = externalDataDir();
  if (dir.empty())
    return;
  llvm::SmallString<256> file(dir);
  llvm::sys::path::append(file, "data.bin");
  (void)llvm::sys::fs::remove(file);
  (void)llvm::sys::fs::remove(dir);
}

/// FNV-1a: picks the pipeline's options from the input, deterministically.
uint64_t hashBytes(llvm::StringRef bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

/// Parses as the importer will (same functions, same comment stripping),
/// so that bytes that are no ONNX model are refused before an MLIRContext
/// exists: creating one and loading the import dialects is most of the
/// cost of a typical mutated input.
std::string parseModel(llvm::StringRef bytes, bool isText,
                       onnx::ModelProto &model) {
  using namespace fp8::detail;
  return isText ? parseTextModel(stripSlashComments(bytes), model)
                : parseBinaryModel(bytes, model);
}

/// Graph inputs with symbolic or unknown dimensions get them pinned to 2
/// (as a user would with --input-shape), so that models exported with
/// dynamic axes are imported rather than refused at their first input.
void pinSymbolicInputs(const onnx::ModelProto &model,
                       fp8::ImportOptions &opts) {
  if (!model.has_graph())
    return;
  const onnx::GraphProto &graph = model.graph();
  for (const onnx::ValueInfoProto &vi : graph.input()) {
    if (!vi.type().has_tensor_type() ||
        !vi.type().tensor_type().has_shape())
      continue;
    bool isInitializer = false;
    for (const onnx::TensorProto &t : graph.initializer())
      if (t.name() == vi.name()) {
        isInitializer = true;
        break;
      }
    if (isInitializer)
      continue;
    llvm::SmallVector<fp8::DimBounds> shape;
    bool dynamic = false;
    for (const onnx::TensorShapeProto_Dimension &d :
         vi.type().tensor_type().shape().dim()) {
      if (d.has_dim_value() && d.dim_value() >= 0) {
        shape.push_back(fp8::DimBounds::fixed(d.dim_value()));
      } else {
        shape.push_back(fp8::DimBounds::fixed(2));
        dynamic = true;
      }
    }
    if (dynamic)
      opts.inputShapes.try_emplace(vi.name(), shape);
  }
}

/// The pipeline options for one run: the recipe is given, the rest comes
/// from the input's hash.
void pickOptions(fp8::QuantizePipelineOptions &o, fp8::RecipeKind recipe,
                 uint64_t h) {
  static const fp8::Format formats[] = {fp8::Format::E4M3, fp8::Format::E5M2,
                                        fp8::Format::Hybrid};
  o.recipe = recipe;
  o.format = formats[(h >> 8) % 3];
  o.pow2 = (h >> 12) & 1;
  o.history = 1 + (h >> 13) % 16;
  o.amaxAlgo = ((h >> 17) & 1) ? fp8::AmaxAlgo::MostRecent : fp8::AmaxAlgo::Max;
  o.margin = (h >> 18) % 3;
  o.mxRounding =
      ((h >> 20) & 1) ? fp8::E8M0Rounding::Floor : fp8::E8M0Rounding::RCeil;
  o.includeAttention = (h >> 21) & 1;
  o.keepFirstLast = (h >> 22) & 1;
  o.kMajorRhs = !((h >> 23) & 1);
  o.scaleStorage =
      ((h >> 24) & 1) ? fp8::ScaleStorage::TMA : fp8::ScaleStorage::Canonical;
  o.analyze = ((h >> 25) % 8) == 0;
}

} // namespace

const char *fp8fuzz::outcomeName(Outcome o) {
  switch (o) {
  case Outcome::Refused:
    return "refused";
  case Outcome::ImportVerifyFailed:
    return "IMPORT-VERIFY-FAILED";
  case Outcome::Quantized:
    return "quantized";
  case Outcome::PipelineFailed:
    return "PIPELINE-FAILED";
  case Outcome::RoundTripFailed:
    return "ROUND-TRIP-FAILED";
  }
  return "?";
}

void fp8fuzz::initialize() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)registry();
    llvm::SmallString<256> dir;
    if (llvm::sys::fs::createUniqueDirectory("fp8-fuzz-extdata", dir)) {
      // No directory: external data then resolves against a path that does
      // not exist, and every external tensor is refused. Still safe.
      externalDataDir() = "/nonexistent/fp8-fuzz-extdata";
      return;
    }
    externalDataDir() = dir.str().str();
    llvm::SmallString<256> file(dir);
    llvm::sys::path::append(file, "data.bin");
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    if (!ec)
      for (int i = 0; i < 256; ++i)
        os << static_cast<char>(i * 37 + 11);
    std::atexit(removeExternalDataDir);
  });
}

bool fp8fuzz::looksLikeText(llvm::StringRef bytes) {
  while (true) {
    bytes = bytes.ltrim();
    if (bytes.starts_with("//") || bytes.starts_with("#")) {
      size_t eol = bytes.find('\n');
      if (eol == llvm::StringRef::npos)
        return false;
      bytes = bytes.drop_front(eol + 1);
      continue;
    }
    return bytes.starts_with("<");
  }
}

fp8fuzz::Outcome fp8fuzz::runOne(llvm::StringRef bytes, const Config &config,
                                 std::string *diagnostics) {
  initialize();
  bool isText = looksLikeText(bytes);
  uint64_t h = hashBytes(bytes);
  fp8::ImportOptions opts;
  opts.maxConstantElements = config.maxConstantElements;
  opts.externalDataDir = externalDataDir();
  // Run-time index checks (the default) on three inputs in four.
  opts.boundsChecks = (h >> 26) % 4 != 0;
  {
    onnx::ModelProto model;
    std::string err = parseModel(bytes, isText, model);
    if (!err.empty()) {
      // importONNXBuffer refuses these bytes with this very message.
      if (config.keepDiagnostics && diagnostics)
        *diagnostics += "cannot read ONNX model: " + err + "\n";
      return Outcome::Refused;
    }
    pinSymbolicInputs(model, opts);
  }

  MLIRContext ctx(registry(), MLIRContext::Threading::DISABLED);
  bool importVerifyFailed = false;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error) {
      std::string msg = diag.str();
      if (llvm::StringRef(msg).contains("imported module failed to verify"))
        importVerifyFailed = true;
    }
    if (config.keepDiagnostics && diagnostics) {
      llvm::raw_string_ostream os(*diagnostics);
      os << diag.getLocation() << ": " << diag << "\n";
      for (const Diagnostic &note : diag.getNotes())
        os << "  note: " << note.getLocation() << ": " << note << "\n";
    }
    return success();
  });

  FailureOr<OwningOpRef<ModuleOp>> imported =
      fp8::importONNXBuffer(bytes, isText, "fuzz-input", ctx, opts);
  if (failed(imported))
    return importVerifyFailed ? Outcome::ImportVerifyFailed : Outcome::Refused;
  OwningOpRef<ModuleOp> module = std::move(*imported);
  if (failed(verify(*module)))
    return Outcome::ImportVerifyFailed;

  static const fp8::RecipeKind recipes[] = {
      fp8::RecipeKind::Current, fp8::RecipeKind::Delayed,
      fp8::RecipeKind::Block, fp8::RecipeKind::MXFP8};
  llvm::SmallVector<fp8::RecipeKind, 4> runs;
  if (config.allRecipes)
    runs.assign(std::begin(recipes), std::end(recipes));
  else
    runs.push_back(recipes[h % 4]);

  for (fp8::RecipeKind recipe : runs) {
    OwningOpRef<ModuleOp> work =
        runs.size() == 1 ? std::move(module) : module->clone();
    PassManager pm(&ctx);
    fp8::QuantizePipelineOptions options;
    pickOptions(options, recipe, h);
    fp8::buildFP8QuantizePipeline(pm, options);
    if (failed(pm.run(*work)))
      return Outcome::PipelineFailed;
    if (!config.roundTrip)
      continue;
    // The quantized module must print and parse back to a valid module.
    std::string text;
    {
      llvm::raw_string_ostream os(text);
      work->print(os);
    }
    ParserConfig parserConfig(&ctx);
    OwningOpRef<ModuleOp> reparsed =
        parseSourceString<ModuleOp>(text, parserConfig, "fuzz-roundtrip");
    if (!reparsed || failed(verify(*reparsed)))
      return Outcome::RoundTripFailed;
  }
  return Outcome::Quantized;
}
