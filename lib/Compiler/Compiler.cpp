//===- Compiler.cpp - ONNX model to model library, as a library -----------===//
//
// Part of fp8-opt. The stages of `compileModel`, each a member of
// `Compilation`: import, the FP8 KV cache, the recipe (or BF16 products
// without one), lowering, weights, code generation and linking. Outputs
// are written to temporary files beside their destination and committed
// at the end (weights first), so a failure never leaves a half-written
// library where an old one was.
//
//===----------------------------------------------------------------------===//

#include "fp8/Compiler/Compiler.h"

#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Import/ONNXImporter.h"
#include "fp8/InitAll.h"
#include "fp8/Support/OutputFiles.h"
#include "fp8/Target/ModelLibrary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"

#include <chrono>
#include <cstdlib>
#include <set>
#include <tuple>

using namespace mlir;
using namespace mlir::fp8;

//===----------------------------------------------------------------------===//
// Flag spellings
//===----------------------------------------------------------------------===//

namespace {
template <typename E>
using Spellings = std::initializer_list<std::pair<llvm::StringLiteral, E>>;

template <typename E>
std::optional<E> parse(llvm::StringRef text, Spellings<E> table) {
  for (const auto &[name, value] : table)
    if (text == name)
      return value;
  return std::nullopt;
}
template <typename E>
llvm::StringRef stringify(E value, Spellings<E> table) {
  for (const auto &[name, v] : table)
    if (v == value)
      return name;
  return "";
}

// First spelling of a value is its canonical name.
const Spellings<CompileTarget> kTargets = {{"cpu", CompileTarget::CPU},
                                           {"sm_90a", CompileTarget::SM90a},
                                           {"cuda", CompileTarget::SM90a},
                                           {"sm_89", CompileTarget::SM89}};
const Spellings<EmitKind> kEmits = {{"mlir", EmitKind::MLIR},
                                    {"llvm", EmitKind::LLVM},
                                    {"obj", EmitKind::Object},
                                    {"so", EmitKind::SharedLibrary},
                                    {"ptx", EmitKind::PTX}};
const Spellings<KVCacheFormat> kKVFormats = {{"none", KVCacheFormat::None},
                                             {"e4m3", KVCacheFormat::E4M3},
                                             {"e5m2", KVCacheFormat::E5M2}};
} // namespace

std::optional<CompileTarget> fp8::parseCompileTarget(llvm::StringRef t) {
  return parse(t, kTargets);
}
std::optional<RecipeKind> fp8::parseRecipeKind(llvm::StringRef t) {
  return symbolizeRecipeKind(t);
}
std::optional<FormatKind> fp8::parseFormatKind(llvm::StringRef t) {
  return symbolizeFormat(t);
}
std::optional<EmitKind> fp8::parseEmitKind(llvm::StringRef t) {
  return parse(t, kEmits);
}
std::optional<ScaleStorage> fp8::parseScaleStorage(llvm::StringRef t) {
  return symbolizeScaleStorage(t);
}
std::optional<KVCacheFormat> fp8::parseKVCacheFormat(llvm::StringRef t) {
  return parse(t, kKVFormats);
}
llvm::StringRef fp8::stringifyCompileTarget(CompileTarget v) {
  return stringify(v, kTargets);
}
llvm::StringRef fp8::stringifyFormatKind(FormatKind v) {
  return stringifyFormat(v);
}

//===----------------------------------------------------------------------===//
// CompileOptions
//===----------------------------------------------------------------------===//

HighPrecision CompileOptions::effectiveHighPrecision() const {
  if (highPrecision)
    return *highPrecision;
  return recipe == RecipeKind::None ? HighPrecision::FP32 : HighPrecision::BF16;
}

std::string CompileOptions::weightsPath() const {
  if (!weightsFile.empty())
    return weightsFile;
  SmallString<256> path(output);
  llvm::sys::path::replace_extension(path, "fp8w");
  return std::string(path);
}

std::string CompileOptions::validate() const {
  if (input.empty())
    return "no input model";
  if (output.empty())
    return "no output file (-o)";
  if (emit == EmitKind::PTX && !isGPU())
    return "--emit=ptx needs a GPU --target (sm_90a or sm_89)";
  if (weightsMode == WeightsMode::Embed && !weightsFile.empty())
    return "--weights-file names where external weights go: not with "
           "--weights=embed";
  if ((emit == EmitKind::MLIR || emit == EmitKind::PTX) &&
      (weightsMode != WeightsMode::Auto || !weightsFile.empty()))
    return "--weights and --weights-file apply to --emit=so, obj and llvm";
  if (strict && policyFile.empty())
    return "--strict checks the rules of a --policy file: give one";
  return "";
}

//===----------------------------------------------------------------------===//
// compileModel
//===----------------------------------------------------------------------===//

namespace {

/// A stage's name, then its time when it ends (unless quiet).
class Stage {
public:
  Stage(llvm::raw_ostream &os, bool quiet, const char *name)
      : os(os), quiet(quiet), start(std::chrono::steady_clock::now()) {
    if (!quiet)
      os << "fp8-compile: " << name << "...";
  }
  ~Stage() {
    if (quiet)
      return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
    os << llvm::format(" %.2f s\n", s);
  }

private:
  llvm::raw_ostream &os;
  bool quiet;
  std::chrono::steady_clock::time_point start;
};

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
/// A failure whose reason the diagnostics already gave.
llvm::Error reported() { return error(""); }

/// The toolkit: the option, $CUDA_ROOT, the build's, /usr/local/cuda.
std::string cudaToolkit(const CompileOptions &o) {
  if (!o.cudaRoot.empty())
    return o.cudaRoot;
  if (const char *env = std::getenv("CUDA_ROOT"); env && *env)
    return env;
#ifdef FP8_DEFAULT_CUDA_ROOT
  return FP8_DEFAULT_CUDA_ROOT;
#else
  return "/usr/local/cuda";
#endif
}

class Compilation {
public:
  Compilation(const CompileOptions &o, llvm::raw_ostream &diag)
      : o(o), diag(diag), registry(makeRegistry()), context(registry),
        diagnostics(sourceMgr, &context, diag) {
    // Errors, warnings and notes located at the ONNX node (MLIR's default
    // handler prints errors only).
    context.printOpOnDiagnostic(false);
  }

  llvm::Error run() {
    if (llvm::Error e = import())
      return e;
    if (llvm::Error e = checkOutputs())
      return e;
    if (llvm::Error e = applyKVCache())
      return e;
    if (llvm::Error e = applyRecipe())
      return e;
    if (o.emit == EmitKind::MLIR)
      return writeText([&](raw_ostream &os) { module->print(os); });
    return lowerAndWrite();
  }

private:
  static DialectRegistry makeRegistry() {
    DialectRegistry r;
    registerAllFP8Dialects(r);
    registerONNXImportDialects(r);
    return r;
  }

  bool dump() const {
    return o.emit == EmitKind::MLIR || o.emit == EmitKind::PTX;
  }

  llvm::Error import() {
    ImportOptions importOptions;
    // Without a weights file every weight is read; an IR dump shows the
    // weights it would not read (fp8.external_weight) when asked to.
    if (o.weightsMode != WeightsMode::Embed &&
        (!dump() || o.weightsReadLimitSet) && o.weightsReadLimit > 0)
      importOptions.externalWeightMinBytes =
          int64_t(std::min<uint64_t>(o.weightsReadLimit, INT64_MAX - 1)) + 1;
    // FP8 attention products (--include-attention) come from the
    // decomposition: the fused op has no FP8 form yet.
    importOptions.fuseAttention =
        o.fuseAttention && !(o.recipe != RecipeKind::None && o.includeAttention);
    for (const std::string &spec : o.inputShapes)
      if (std::string err = parseInputShapeSpec(spec, importOptions);
          !err.empty())
        return error("--input-shape " + spec + ": " + err);
    for (const std::string &spec : o.dims)
      if (std::string err = parseDimSpec(spec, importOptions); !err.empty())
        return error("--dim " + spec + ": " + err);
    // Nothing the compilation reads may be overwritten by what it writes.
    guard.addInput(o.input, "the input model");
    for (auto [path, what] :
         {std::pair(&o.policyFile, "the policy file"),
          std::pair(&o.calibrationFile, "the calibration file"),
          std::pair(&o.kvCacheScalesFile, "the KV-cache scales file"),
          std::pair(&o.runtimeLib, "the runtime library")})
      if (!path->empty())
        guard.addInput(*path, what);
    Stage stage(diag, o.quiet, "import");
    SmallVector<std::string> externalFiles;
    auto imported = importONNXFile(o.input, context, importOptions,
                                   &externalFiles, &externalReads);
    if (failed(imported))
      return reported(); // the importer has said why, naming the node
    module = std::move(*imported);
    for (const std::string &file : externalFiles)
      guard.addInput(file, "the model's external data");
    return llvm::Error::success();
  }

  llvm::Error checkOutputs() {
    std::vector<std::pair<std::string, const char *>> outputs = {
        {o.output, "-o"}, {o.reportFile, "--report"}};
    if (o.weightsMode != WeightsMode::Embed && !dump()) {
      outputs.push_back({o.weightsPath(), "the weights file"});
      outputs.push_back({o.weightsPath() + ".json", "the weights manifest"});
    }
    for (auto [path, what] : outputs)
      if (!path.empty())
        if (std::string err = guard.checkOutput(path, what); !err.empty())
          return error(err);
    return llvm::Error::success();
  }

  llvm::Error applyKVCache() {
    if (o.kvCache == KVCacheFormat::None)
      return applyKVCacheInPlace();
    std::string remarks;
    {
      Stage stage(diag, o.quiet, "FP8 KV cache (fp8-kv-cache)");
      PassManager pm(&context);
      FP8KVCacheOptions options;
      options.format =
          o.kvCache == KVCacheFormat::E4M3 ? Format::E4M3 : Format::E5M2;
      options.scale = o.kvCacheScale;
      options.scalesFile = o.kvCacheScalesFile;
      options.inputs = o.kvCacheInputs;
      options.outputs = o.kvCacheOutputs;
      options.remarks = true;
      pm.addPass(createFP8KVCache(options));
      // Each cache tensor's decision is a remark: printed after the stage.
      ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
        if (d.getSeverity() != DiagnosticSeverity::Remark)
          return failure(); // errors go to the default handler
        remarks += "  " + d.str() + "\n";
        return success();
      });
      if (failed(pm.run(*module)))
        return error("the FP8 KV-cache pass failed");
    }
    if (!o.quiet)
      diag << remarks;
    return applyKVCacheInPlace();
  }

  /// After the FP8 cache (its new tokens are then quantized already).
  llvm::Error applyKVCacheInPlace() {
    if (!o.kvCacheInPlace)
      return llvm::Error::success();
    Stage stage(diag, o.quiet, "KV cache in place (fp8-kv-cache-in-place)");
    PassManager pm(&context);
    FP8KVCacheInPlaceOptions options;
    options.inputs = o.kvCacheInputs;
    options.outputs = o.kvCacheOutputs;
    options.positionInput = o.kvCachePositionInput;
    pm.addPass(createFP8KVCacheInPlace(options));
    if (failed(pm.run(*module)))
      return error("the in-place KV-cache pass failed");
    return llvm::Error::success();
  }

  llvm::Error applyRecipe() {
    const HighPrecision hp = o.effectiveHighPrecision();
    if (o.recipe != RecipeKind::None) {
      Stage stage(diag, o.quiet, "FP8 recipe (fp8-quantize-pipeline)");
      PassManager pm(&context);
      QuantizePipelineOptions options;
      options.recipe = o.recipe;
      options.format = o.format;
      options.policyFile = o.policyFile;
      options.reportFile = o.reportFile;
      options.includeAttention = o.includeAttention;
      options.keepFirstLast = o.keepFirstLast;
      options.fp8Attention = o.fp8Attention;
      options.history = o.history;
      options.kMajorRhs = o.kMajorRhs;
      options.scaleStorage = o.scaleStorage.value_or(
          o.isGPU() ? ScaleStorage::TMA : ScaleStorage::Canonical);
      options.analyze = o.analyze;
      options.calibrationFile = o.calibrationFile;
      options.strict = o.strict;
      options.highPrecision = hp;
      buildFP8QuantizePipeline(pm, options);
      if (o.exposeQuantized)
        pm.addPass(createFP8ExposeQuantized());
      if (failed(pm.run(*module)))
        return error("the FP8 recipe passes failed");
    } else if (hp == HighPrecision::BF16) {
      Stage stage(diag, o.quiet, "BF16 products (fp8-high-precision-products)");
      PassManager pm(&context);
      FP8HighPrecisionProductsOptions options;
      options.kMajorRhs = o.isGPU();
      pm.addPass(createFP8HighPrecisionProducts(options));
      if (failed(pm.run(*module)))
        return error("the BF16 product pass failed");
    }
    return llvm::Error::success();
  }

  llvm::Error writeText(function_ref<void(raw_ostream &)> print) {
    if (std::string err = writeOutput(o.output, print); !err.empty())
      return error(err);
    return llvm::Error::success();
  }

  llvm::Error lower() {
    if (o.isGPU()) {
      Stage stage(diag, o.quiet, "lower (fp8-gpu-lowering-pipeline, ptxas)");
      PassManager pm(&context);
      GPULoweringPipelineOptions options;
      options.modelABI = true;
      options.chip = o.target == CompileTarget::SM89 ? "sm_89" : "sm_90a";
      // A fatbin holds the cubin and its PTX: the driver JIT-compiles the
      // PTX where the cubin does not fit the GPU (an sm_89 library on a
      // newer GPU; an sm_90a one only runs on sm_90a).
      options.format = o.emit == EmitKind::PTX ? "isa" : "fatbin";
      options.toolkit = cudaToolkit(o);
      options.tensorCores = o.tensorCores;
      options.gemmFastAccumulation = o.fastAccumulation;
      options.approxNarrowMath = o.approxNarrowMath;
      options.registerRows = o.registerRows;
      options.gemmEpilogues = o.gemmEpilogues;
      options.decodeEpilogues = o.decodeEpilogues;
      options.residualEpilogues = o.residualEpilogues;
      options.gemmPipelinedPromotion = o.pipelinedPromotion;
      options.gemmDecodeKGroups = o.decodeKGroups;
      options.gemmDecodeStages = o.decodeStages;
      options.gemmTileM = o.gemmTileM;
      options.gemmFusedThreeConsumers = o.gemmFusedThreeConsumers;
      options.attentionPingPong = o.attentionPingPong;
      options.attentionDecodeKernel = o.attentionDecodeKernel;
      options.attentionDecodeTensorCores = o.attentionDecodeTensorCores;
      options.mergeSiblingProducts = o.mergeProducts.value_or(true);
      // Dynamic dimensions (prepareModelFunction): memref descriptors.
      options.modelABIDescriptors = (*module)->hasAttr(kModelArgShapesAttr);
      buildFP8GPULoweringPipeline(pm, options);
      if (failed(pm.run(*module)))
        return error("lowering for " + stringifyCompileTarget(o.target) +
                     " failed");
      return llvm::Error::success();
    }
    Stage stage(diag, o.quiet, "lower (fp8-cpu-lowering-pipeline)");
    PassManager pm(&context);
    CPULoweringPipelineOptions options;
    options.modelABI = true;
    // Dynamic dimensions (prepareModelFunction): memref descriptors.
    options.modelABIDescriptors = (*module)->hasAttr(kModelArgShapesAttr);
    options.mergeSiblingProducts = o.mergeProducts.value_or(false);
    buildFP8CPULoweringPipeline(pm, options);
    if (failed(pm.run(*module)))
      return error("lowering failed");
    return llvm::Error::success();
  }

  /// Large constants leave the module for the weights file (written after
  /// the library links); the host code reads them through slots.
  llvm::Error externalize(StringRef signature) {
    WeightsOptions weightsOptions;
    weightsOptions.mode = o.weightsMode;
    weightsOptions.fileName =
        llvm::sys::path::filename(o.weightsPath()).str();
    FailureOr<ExternalWeights> result =
        externalizeWeights(*module, signature, weightsOptions);
    if (failed(result))
      return reported();
    weights = std::move(*result);
    // The initializers the importer read from external data: their values
    // are in the library, so the weights manifest pins them.
    std::set<std::tuple<std::string, uint64_t, uint64_t>> pinned;
    for (const ExternalDataRead &r : externalReads)
      if (pinned.insert({r.location, r.offset, r.length}).second)
        weights.manifest.compiledIn.push_back(
            {r.name, r.location, r.offset, r.length, r.hash});
    return llvm::Error::success();
  }

  /// The weights file into a temporary (or, with packWeights = false, only
  /// the manifest for fp8-pack).
  llvm::Error writeWeights() {
    if (weights.empty())
      return llvm::Error::success();
    if (!o.packWeights) {
      if (!weights.packableFromData())
        return error("--pack-weights=false: " +
                     std::to_string(weights.literals.size()) +
                     " constants computed by the compiler go to the weights "
                     "file, which fp8-pack cannot write from the model's "
                     "data: use --weights=auto (they stay in the library) "
                     "or pack here");
      if (!o.quiet)
        diag << llvm::format("fp8-compile: weights manifest: %zu tensors, "
                             "%.1f MB for fp8-pack -> ",
                             weights.manifest.tensors.size(),
                             weights.bytes / 1e6)
             << o.weightsPath() << ".json\n";
      return llvm::Error::success();
    }
    Stage stage(diag, o.quiet, "weights file (packer)");
    std::string tmpError;
    weightsTmp = temporaryPathFor(o.weightsPath(), tmpError);
    if (weightsTmp.empty())
      return error(tmpError);
    llvm::sys::RemoveFileOnSignal(weightsTmp);
    if (std::string err = writeWeightsFile(weights, weightsTmp); !err.empty())
      return error(err);
    if (!o.quiet)
      diag << llvm::format(" %zu tensors, %.1f MB ->",
                           weights.manifest.tensors.size(), weights.bytes / 1e6)
           << " " << o.weightsPath() << ",";
    return llvm::Error::success();
  }

  /// The weights first: a library never lands without its file (or, with
  /// packWeights = false, its manifest).
  llvm::Error commit() {
    if (!weightsTmp.empty())
      if (std::string err = commitOutput(weightsTmp, o.weightsPath());
          !err.empty())
        return error(err);
    if (!weights.empty())
      if (std::string err =
              writeManifest(weights, o.weightsPath() + ".json");
          !err.empty())
        return error(err);
    if (std::string err = commitOutput(tmp, o.output); !err.empty())
      return error(err);
    return llvm::Error::success();
  }

  std::string runtimeArchive(StringRef name) const {
    SmallString<256> path;
    if (!o.runtimeDir.empty()) {
      path = o.runtimeDir;
    } else {
      static int anchor;
      std::string self = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
      path = llvm::sys::path::parent_path(self);
      llvm::sys::path::append(path, "..", "lib");
    }
    llvm::sys::path::append(path, name);
    return std::string(path);
  }

  llvm::Error link(StringRef object) {
    Stage stage(diag, o.quiet, "link");
    std::string runtime = o.runtimeLib;
    if (runtime.empty())
      runtime = runtimeArchive(o.isGPU() ? "libfp8rt_cuda.a" : "libfp8rt_cpu.a");
    std::string err;
    SmallString<256> stubs(cudaToolkit(o));
    llvm::sys::path::append(stubs, "lib64", "stubs");
    LogicalResult linked =
        o.isGPU() ? linkCUDAModelLibrary(object,
                                         runtimeArchive("libfp8rt_cuda_model.a"),
                                         runtime, stubs, tmp, err)
                  : linkModelLibrary(object, runtime, tmp, err);
    if (failed(linked))
      return error(err);
    return llvm::Error::success();
  }

  llvm::Error lowerAndWrite() {
    FailureOr<std::string> signature = prepareModelFunction(*module);
    if (failed(signature))
      return reported();
    if (llvm::Error e = lower())
      return e;
    if (o.emit == EmitKind::PTX) {
      FailureOr<std::string> ptx = collectPTX(*module);
      if (failed(ptx))
        return reported();
      return writeText([&](raw_ostream &os) { os << *ptx; });
    }
    if (llvm::Error e = externalize(*signature))
      return e;
    if (o.isGPU() && failed(redirectGlobalsToDevice(*module)))
      return reported();
    if (failed(addModelEntryPoints(*module, *signature)))
      return reported();

    std::string tmpError;
    tmp = temporaryPathFor(o.output, tmpError);
    if (tmp.empty())
      return error(tmpError);
    // Temporary files go on every path out: errors, and signals (Ctrl-C).
    SmallString<128> object;
    llvm::sys::RemoveFileOnSignal(tmp);
    llvm::scope_exit cleanup([&] {
      for (StringRef path : {StringRef(weightsTmp), StringRef(tmp),
                             StringRef(object)})
        if (!path.empty()) {
          llvm::sys::fs::remove(path);
          llvm::sys::DontRemoveFileOnSignal(path);
        }
    });
    if (llvm::Error e = writeWeights())
      return e;
    CodegenOptions codegen;
    codegen.cpu = o.cpu;
    if (o.emit == EmitKind::LLVM || o.emit == EmitKind::Object) {
      Stage stage(diag, o.quiet, "codegen");
      if (failed(translateAndEmit(*module, tmp, codegen,
                                  /*emitLLVMIR=*/o.emit == EmitKind::LLVM)))
        return reported();
      return commit();
    }
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("fp8-model", "o", object)) {
      object.clear();
      return error("cannot create a temporary object file: " + ec.message());
    }
    llvm::sys::RemoveFileOnSignal(object);
    {
      Stage stage(diag, o.quiet, "codegen");
      if (failed(translateAndEmit(*module, object, codegen, false)))
        return reported();
    }
    // Link to a temporary name, then commit.
    if (llvm::Error e = link(object))
      return e;
    return commit();
  }

  const CompileOptions &o;
  llvm::raw_ostream &diag;
  DialectRegistry registry;
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics;
  OutputGuard guard;
  OwningOpRef<ModuleOp> module;
  std::vector<ExternalDataRead> externalReads;
  ExternalWeights weights;
  std::string tmp, weightsTmp;
};

} // namespace

llvm::Error fp8::compileModel(const CompileOptions &options,
                              llvm::raw_ostream &diagnostics) {
  if (std::string err = options.validate(); !err.empty())
    return error(err);
  return Compilation(options, diagnostics).run();
}
