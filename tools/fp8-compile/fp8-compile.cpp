//===- fp8-compile.cpp - One-shot ONNX to model library driver ------------===//
//
// Part of fp8-opt.
//
//   fp8-compile model.onnx -o model.so [--target=cpu|sm_90a|sm_89]
//       [--recipe=none|delayed|current|rowwise|block|mxfp8] [--format=e4m3|e5m2|hybrid]
//       [--policy rules.json] [--report decisions.json] [--include-attention]
//       [--high-precision=bf16|fp32]
//       [--emit=mlir|llvm|obj|so|ptx] [--input-shape name=2x48,...]
//       [--cpu=native|generic|<llvm cpu>] [--runtime-lib libfp8rt_cpu.a]
//       [--kv-cache=none|e4m3|e5m2 [--kv-cache-scale S] [--kv-cache-scales F]]
//
// Imports the model, applies the FP8 recipe (fp8-quantize-pipeline),
// lowers it with fp8-cpu-lowering-pipeline{model-abi=true} (or, for a GPU
// target, fp8-gpu-lowering-pipeline: NVVM kernels in a cubin, host code that
// launches them through fp8rt_cuda), and emits a shared library with the
// fp8rt C ABI (runtime/include/fp8rt/fp8rt.h), or an intermediate form.
// Each stage reports its time on stderr.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/Passes.h"
#include "fp8/Import/ONNXImporter.h"
#include "fp8/InitAll.h"
#include "fp8/Pipelines/Pipelines.h"
#include "fp8/Support/OutputFiles.h"
#include "fp8/Support/Version.h"
#include "fp8/Target/ExternalWeights.h"
#include "fp8/Target/ModelLibrary.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <set>
#include <tuple>
#include <initializer_list>

using namespace mlir;
namespace cl = llvm::cl;

/// fp8-compile's own options; --help shows only these (--help-hidden shows
/// LLVM's too).
static cl::OptionCategory category("fp8-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.onnx>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::Required,
                                       cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("Target: cpu (the host), sm_90a (Hopper: wgmma FP8 "
                    "GEMMs; 'cuda' means sm_90a) or sm_89 (Ada)"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    cudaRoot("cuda-root",
             cl::desc("CUDA toolkit for ptxas and the driver stub (default: "
                      "$CUDA_ROOT, else the toolkit fp8-opt was built with)"),
             cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool> tensorCores(
    "tensor-cores",
    cl::desc("GPU: FP8 products on tensor cores (default); false runs them "
             "as plain loops (a reference for debugging)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> fastAccumulation(
    "fast-accumulation",
    cl::desc("GPU: products whose scales do not vary along K (current, "
             "delayed, rowwise) accumulate the whole K in the tensor cores, "
             "as cuBLAS's fast accumulation: 10-30% faster, but sums of "
             "same-sign products lose up to ~7% at K = 4096 "
             "(docs/Numerics.md); default: FP32 promotion every 128 K"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string>
    recipe("recipe",
           cl::desc("FP8 scaling recipe: none (FP32 throughout), delayed, "
                    "current, rowwise (per row of activations, per output "
                    "channel of weights), block (1x128 activations, 128x128 weights, "
                    "power-of-two scales) or mxfp8 (1x32 along K, E8M0 rceil)"),
           cl::init("none"), cl::cat(category));
static cl::opt<fp8::HighPrecision> highPrecision(
    "high-precision",
    cl::desc("The products kept out of FP8 (first/last linear layers, "
             "attention's products, policy skips; every product with "
             "--recipe=none): bf16 (operands rounded to BF16, FP32 "
             "accumulation: tensor cores on the GPU; the default with an FP8 "
             "recipe) or fp32 (exact; the default with --recipe=none)"),
    cl::values(clEnumValN(fp8::HighPrecision::FP32, "fp32", "FP32 products"),
               clEnumValN(fp8::HighPrecision::BF16, "bf16", "BF16 products")),
    cl::cat(category));
static cl::opt<std::string> format("format",
                                   cl::desc("FP8 format: e4m3, e5m2, hybrid"),
                                   cl::init("e4m3"), cl::cat(category));
static cl::opt<std::string>
    policy("policy", cl::desc("JSON policy file with per-node rules"),
           cl::value_desc("path"), cl::cat(category));
static cl::opt<std::string> report("report",
                                   cl::desc("Write the FP8 decisions as JSON"),
                                   cl::value_desc("path"), cl::cat(category));
static cl::opt<bool>
    includeAttention("include-attention",
                     cl::desc("Also run attention's batched products in FP8"),
                     cl::cat(category));
static cl::opt<bool> keepFirstLast(
    "keep-first-last",
    cl::desc("Keep the first and last linear layer in high precision"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> analyze(
    "analyze",
    cl::desc("Numerics analysis build: the library also records, per FP8 "
             "product, operand SQNR and output error against its FP32 twin "
             "(read the state with scripts/fp8_report.py)"),
    cl::cat(category));
static cl::opt<std::string> calibration(
    "calibration",
    cl::desc("Calibrated activation amaxes (JSON from fp8_report.py): "
             "static per-tensor scales, or the start of delayed histories"),
    cl::value_desc("path"), cl::cat(category));
static cl::opt<bool>
    kMajorRhs("k-major-rhs",
              cl::desc("Store FP8 right operands K-major (default; exact)"),
              cl::init(true), cl::cat(category));
static cl::opt<int64_t> history("history",
                                cl::desc("Amax history length (delayed)"),
                                cl::init(1024), cl::cat(category));
static cl::opt<std::string>
    emit("emit",
         cl::desc("What to write: mlir (tensor-level module before lowering), "
                  "llvm (LLVM IR), obj (object file), so (shared library), "
                  "ptx (GPU targets: the kernels' PTX)"),
         cl::init("so"), cl::cat(category));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Static shape for a graph input, name=2x48 "
                         "(repeatable, or comma-separated)"),
                cl::cat(category));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("Target CPU: native (default), generic, or an LLVM "
                 "CPU name"),
        cl::init("native"), cl::cat(category));
static cl::opt<std::string>
    runtimeLib("runtime-lib",
               cl::desc("The fp8rt CPU runtime archive to link (default: "
                        "libfp8rt_cpu.a, or libfp8rt_cuda.a for GPU targets, "
                        "in ../lib next to fp8-compile)"),
               cl::cat(category));
static cl::opt<bool> exposeQuantized(
    "expose-quantized",
    cl::desc("Also return every quantized activation and its scales "
             "(fp8-expose-quantized), to compare targets bit for bit"),
    cl::cat(category));
static cl::opt<std::string> scaleStorage(
    "scale-storage",
    cl::desc("Order of activation scale tensors: canonical, or tma (M-major, "
             "16-byte aligned along M, as TMA loads them). Default: tma for "
             "GPU targets, canonical for the CPU"),
    cl::init(""), cl::cat(category));
static cl::opt<std::string> kvCache(
    "kv-cache",
    cl::desc("Store the KV cache inputs/outputs of a decoder graph in FP8 "
             "(fp8-kv-cache): none (default), e4m3 or e5m2"),
    cl::init("none"), cl::cat(category));
static cl::opt<double> kvCacheScale(
    "kv-cache-scale",
    cl::desc("Static dequantization scale of every cache tensor without an "
             "entry in --kv-cache-scales (default 1.0)"),
    cl::init(1.0), cl::cat(category));
static cl::opt<std::string> kvCacheScales(
    "kv-cache-scales",
    cl::desc("JSON file: cache tensor name -> scale or {\"amax\": A} "
             "(scripts/kv_cache_scales.py writes one from FP32 runs); tensors "
             "it does not name take --kv-cache-scale"),
    cl::cat(category));
static cl::opt<std::string> kvCacheInputs(
    "kv-cache-inputs",
    cl::desc("Regular expression selecting the cache inputs (default ^past)"),
    cl::init("^past"), cl::cat(category));
static cl::opt<std::string> kvCacheOutputs(
    "kv-cache-outputs",
    cl::desc("Regular expression selecting the cache outputs (default "
             "^present)"),
    cl::init("^present"), cl::cat(category));
static cl::opt<bool> strict(
    "strict",
    cl::desc("A --policy rule that decides no product is an error (else a "
             "warning)"),
    cl::cat(category));
static cl::opt<fp8::WeightsMode> weightsMode(
    "weights", cl::desc("Where the weights go (docs/Weights.md)"),
    cl::values(
        clEnumValN(fp8::WeightsMode::Auto, "auto",
                   "in a weights file beside the library when they exceed "
                   "64 MiB, else inside it (default)"),
        clEnumValN(fp8::WeightsMode::Embed, "embed", "inside the library"),
        clEnumValN(fp8::WeightsMode::External, "external",
                   "every constant of 4 KiB or more in the weights file")),
    cl::init(fp8::WeightsMode::Auto), cl::cat(category));
static cl::opt<std::string> weightsFile(
    "weights-file",
    cl::desc("The weights file to write (default: -o with the extension "
             ".fp8w); the library looks for a file of this name beside "
             "itself"),
    cl::value_desc("path"), cl::cat(category));
static cl::opt<uint64_t> weightsReadLimit(
    "weights-read-limit",
    cl::desc("Floating-point initializers in external data larger than this "
             "many bytes are never read by the compiler: the weights packer "
             "copies them, or quantizes them as the recipe does, from the "
             "model's files into the weights file. 0: read every "
             "initializer. Default 1 KiB: every weight of an export is "
             "packed, the bytes the library holds never depend on the data "
             "it was compiled with"),
    cl::init(uint64_t(1) << 10), cl::value_desc("bytes"), cl::cat(category));
static cl::opt<bool> packWeights(
    "pack-weights",
    cl::desc("Write the weights file (default). false: write the library and "
             "its weights manifest (<weights file>.json) only, for fp8-pack "
             "to write the file where the model's data is"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> quiet("quiet", cl::desc("No progress output"),
                           cl::cat(category));

namespace {
class Stage {
public:
  explicit Stage(const char *name)
      : name(name), start(std::chrono::steady_clock::now()) {
    if (!quiet)
      llvm::errs() << "fp8-compile: " << name << "...";
  }
  ~Stage() {
    if (quiet)
      return;
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             start)
                   .count();
    llvm::errs() << llvm::format(" %.2f s\n", s);
  }

private:
  const char *name;
  std::chrono::steady_clock::time_point start;
};

int fail(const llvm::Twine &msg) {
  llvm::errs() << "fp8-compile: error: " << msg << "\n";
  return 1;
}

/// Options that only configure the FP8 recipe or the KV cache: given
/// without what they configure, they would be ignored (and their files
/// never read), so they are refused.
int checkDependentOptions() {
  if (recipe == "none")
    for (const cl::Option *o : std::initializer_list<const cl::Option *>{
             &format, &policy, &report, &includeAttention, &keepFirstLast,
             &analyze, &calibration, &kMajorRhs, &history, &exposeQuantized,
             &strict})
      if (o->getNumOccurrences())
        return fail("--" + o->ArgStr.str() +
                    " configures the FP8 recipe: add --recipe=delayed, "
                    "current, block or mxfp8");
  if (kvCache == "none")
    for (const cl::Option *o : std::initializer_list<const cl::Option *>{
             &kvCacheScale, &kvCacheScales, &kvCacheInputs, &kvCacheOutputs})
      if (o->getNumOccurrences())
        return fail("--" + o->ArgStr.str() +
                    " configures the FP8 KV cache: add --kv-cache=e4m3 (or "
                    "e5m2)");
  if (strict && policy.empty())
    return fail("--strict checks the rules of a --policy file: give one");
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  fp8::hideOptionsOutside(category);
  fp8::setVersionPrinter("fp8-compile");
  cl::ParseCommandLineOptions(
      argc, argv,
      "fp8-compile: ONNX model to a model library (a shared library with the "
      "fp8rt C ABI, runtime/include/fp8rt/fp8rt.h)\n\n"
      "  fp8-compile model.onnx -o model.so [--recipe=block] "
      "[--target=sm_90a]\n");

  if (target == "cuda")
    target = "sm_90a";
  const bool gpu = target != "cpu";
  if (gpu && target != "sm_90a" && target != "sm_89")
    return fail("--target=" + target +
                ": expected cpu, sm_90a (or cuda) or sm_89");
  std::string toolkit = cudaRoot;
  if (toolkit.empty())
    if (const char *env = std::getenv("CUDA_ROOT"))
      toolkit = env;
#ifdef FP8_DEFAULT_CUDA_ROOT
  if (toolkit.empty())
    toolkit = FP8_DEFAULT_CUDA_ROOT;
#endif
  if (toolkit.empty())
    toolkit = "/usr/local/cuda";
  if (recipe != "none" && recipe != "delayed" && recipe != "current" &&
      recipe != "rowwise" && recipe != "block" && recipe != "mxfp8")
    return fail("--recipe=" + recipe +
                ": expected none, delayed, current, rowwise, block or mxfp8");
  if (scaleStorage.empty())
    scaleStorage = gpu ? "tma" : "canonical";
  if (scaleStorage != "canonical" && scaleStorage != "tma")
    return fail("--scale-storage=" + scaleStorage +
                ": expected canonical or tma");
  if (kvCache != "none" && kvCache != "e4m3" && kvCache != "e5m2")
    return fail("--kv-cache=" + kvCache + ": expected none, e4m3 or e5m2");
  if (int rc = checkDependentOptions())
    return rc;
  const fp8::HighPrecision highPrecisionChoice =
      highPrecision.getNumOccurrences() ? highPrecision.getValue()
      : recipe == "none"                ? fp8::HighPrecision::FP32
                                        : fp8::HighPrecision::BF16;
  if (emit != "mlir" && emit != "llvm" && emit != "obj" && emit != "so" &&
      emit != "ptx")
    return fail("--emit=" + emit + ": expected mlir, llvm, obj, so or ptx");
  if (emit == "ptx" && !gpu)
    return fail("--emit=ptx needs a GPU --target (sm_90a or sm_89)");
  if (weightsMode == fp8::WeightsMode::Embed && !weightsFile.empty())
    return fail("--weights-file names where external weights go: not with "
                "--weights=embed");
  if ((emit == "mlir" || emit == "ptx") &&
      (weightsMode.getNumOccurrences() || !weightsFile.empty()))
    return fail("--weights and --weights-file apply to --emit=so, obj and "
                "llvm");
  // The weights file: -o with the extension .fp8w unless named.
  std::string weightsPath = weightsFile;
  if (weightsPath.empty()) {
    SmallString<256> path(outputFile);
    llvm::sys::path::replace_extension(path, "fp8w");
    weightsPath = std::string(path);
  }
  // The weights manifest: what fp8-pack needs to write the file elsewhere.
  std::string manifestPath = weightsPath + ".json";

  fp8::ImportOptions importOptions;
  // Without a weights file every weight is read; an IR dump shows the
  // weights it would not read (fp8.external_weight) when asked to.
  bool dump = emit == "mlir" || emit == "ptx";
  if (weightsMode != fp8::WeightsMode::Embed &&
      (!dump || weightsReadLimit.getNumOccurrences()) && weightsReadLimit > 0)
    importOptions.externalWeightMinBytes =
        int64_t(std::min<uint64_t>(weightsReadLimit, INT64_MAX - 1)) + 1;
  for (const std::string &spec : inputShapes)
    if (std::string err = fp8::parseInputShapeSpec(spec, importOptions);
        !err.empty())
      return fail("--input-shape " + spec + ": " + err);

  DialectRegistry registry;
  fp8::registerAllFP8Dialects(registry);
  fp8::registerONNXImportDialects(registry);
  MLIRContext context(registry);
  // Errors, warnings and notes on stderr, located at the ONNX node (MLIR's
  // default handler prints errors only).
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // Nothing the tool reads may be overwritten by what it writes.
  fp8::OutputGuard guard;
  guard.addInput(inputFile, "the input model");
  for (auto [path, what] :
       {std::pair(&policy, "the policy file"),
        std::pair(&calibration, "the calibration file"),
        std::pair(&kvCacheScales, "the KV-cache scales file"),
        std::pair(&runtimeLib, "the runtime library")})
    if (!path->empty())
      guard.addInput(*path, what);

  OwningOpRef<ModuleOp> module;
  // The initializers the importer read from external data: their values
  // are in the library, so the weights manifest pins them.
  std::vector<fp8::ExternalDataRead> externalReads;
  {
    Stage stage("import");
    SmallVector<std::string> externalFiles;
    auto imported = fp8::importONNXFile(inputFile, context, importOptions,
                                        &externalFiles, &externalReads);
    if (failed(imported))
      return 1; // the importer has reported why, naming the node
    module = std::move(*imported);
    for (const std::string &file : externalFiles)
      guard.addInput(file, "the model's external data");
  }
  std::vector<std::pair<std::string, const char *>> outputs = {
      {outputFile, "-o"}, {report, "--report"}};
  if (weightsMode != fp8::WeightsMode::Embed && emit != "mlir" &&
      emit != "ptx") {
    outputs.push_back({weightsPath, "the weights file"});
    outputs.push_back({manifestPath, "the weights manifest"});
  }
  for (auto [path, what] : outputs)
    if (!path.empty())
      if (std::string err = guard.checkOutput(path, what); !err.empty())
        return fail(err);

  if (kvCache != "none") {
    std::string remarks;
    {
      Stage stage("FP8 KV cache (fp8-kv-cache)");
      PassManager pm(&context);
      fp8::FP8KVCacheOptions options;
      options.format = kvCache;
      options.scale = kvCacheScale;
      options.scalesFile = kvCacheScales;
      options.inputs = kvCacheInputs;
      options.outputs = kvCacheOutputs;
      options.remarks = true;
      pm.addPass(fp8::createFP8KVCache(options));
      // Each cache tensor's decision is a remark: print them after the stage.
      ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
        if (diag.getSeverity() != DiagnosticSeverity::Remark)
          return failure(); // errors go to the default handler
        remarks += "  " + diag.str() + "\n";
        return success();
      });
      if (failed(pm.run(*module)))
        return fail("the FP8 KV-cache pass failed");
    }
    if (!quiet)
      llvm::errs() << remarks;
  }

  if (recipe != "none") {
    Stage stage("FP8 recipe (fp8-quantize-pipeline)");
    PassManager pm(&context);
    fp8::QuantizePipelineOptions options;
    options.recipe = recipe;
    options.format = format;
    options.policyFile = policy;
    options.reportFile = report;
    options.includeAttention = includeAttention;
    options.keepFirstLast = keepFirstLast;
    options.history = history;
    options.kMajorRhs = kMajorRhs;
    options.scaleStorage = scaleStorage;
    options.analyze = analyze;
    options.calibrationFile = calibration;
    options.strict = strict;
    options.highPrecision = highPrecisionChoice;
    fp8::buildFP8QuantizePipeline(pm, options);
    if (exposeQuantized)
      pm.addPass(fp8::createFP8ExposeQuantized());
    if (failed(pm.run(*module)))
      return fail("the FP8 recipe passes failed");
  }

  if (recipe == "none" && highPrecisionChoice == fp8::HighPrecision::BF16) {
    Stage stage("BF16 products (fp8-high-precision-products)");
    PassManager pm(&context);
    fp8::FP8HighPrecisionProductsOptions options;
    options.kMajorRhs = gpu;
    pm.addPass(fp8::createFP8HighPrecisionProducts(options));
    if (failed(pm.run(*module)))
      return fail("the BF16 product pass failed");
  }

  auto writeText = [&](function_ref<void(raw_ostream &)> print) -> int {
    if (std::string err = fp8::writeOutput(outputFile, print); !err.empty())
      return fail(err);
    return 0;
  };
  // Binary outputs: written to a temporary file beside -o, then committed
  // (renamed, or copied into a non-regular file such as /dev/null).
  std::string tmp, tmpError;
  std::string weightsTmp;
  FailureOr<fp8::ExternalWeights> weights = fp8::ExternalWeights();
  auto commit = [&]() -> int {
    // The weights first: a library never lands without its file (or, with
    // --pack-weights=false, its manifest).
    if (!weightsTmp.empty())
      if (std::string err = fp8::commitOutput(weightsTmp, weightsPath);
          !err.empty())
        return fail(err);
    if (!weights->empty())
      if (std::string err = fp8::writeManifest(*weights, manifestPath);
          !err.empty())
        return fail(err);
    if (std::string err = fp8::commitOutput(tmp, outputFile); !err.empty())
      return fail(err);
    return 0;
  };
  if (emit == "mlir")
    return writeText([&](raw_ostream &os) { module->print(os); });

  FailureOr<std::string> signature = fp8::prepareModelFunction(*module);
  if (failed(signature))
    return 1;
  if (gpu) {
    Stage stage("lower (fp8-gpu-lowering-pipeline, ptxas)");
    PassManager pm(&context);
    fp8::GPULoweringPipelineOptions options;
    options.modelABI = true;
    options.chip = target;
    // A fatbin holds the cubin and its PTX: the driver JIT-compiles the PTX
    // where the cubin does not fit the GPU (an sm_89 library on a newer
    // GPU; an sm_90a one only runs on sm_90a).
    options.format = emit == "ptx" ? "isa" : "fatbin";
    options.toolkit = toolkit;
    options.tensorCores = tensorCores;
    options.gemmFastAccumulation = fastAccumulation;
    fp8::buildFP8GPULoweringPipeline(pm, options);
    if (failed(pm.run(*module)))
      return fail("lowering for " + target + " failed");
    if (emit == "ptx") {
      FailureOr<std::string> ptx = fp8::collectPTX(*module);
      if (failed(ptx))
        return 1;
      return writeText([&](raw_ostream &os) { os << *ptx; });
    }
  } else {
    Stage stage("lower (fp8-cpu-lowering-pipeline)");
    PassManager pm(&context);
    fp8::CPULoweringPipelineOptions options;
    options.modelABI = true;
    fp8::buildFP8CPULoweringPipeline(pm, options);
    if (failed(pm.run(*module)))
      return fail("lowering failed");
  }
  // Large constants leave the module for the weights file (written after
  // the library links); the host code reads them through slots.
  fp8::WeightsOptions weightsOptions;
  weightsOptions.mode = weightsMode;
  weightsOptions.fileName = llvm::sys::path::filename(weightsPath).str();
  weights = fp8::externalizeWeights(*module, *signature, weightsOptions);
  if (failed(weights))
    return 1;
  std::set<std::tuple<std::string, uint64_t, uint64_t>> pinned;
  for (const fp8::ExternalDataRead &r : externalReads)
    if (pinned.insert({r.location, r.offset, r.length}).second)
      weights->manifest.compiledIn.push_back(
          {r.name, r.location, r.offset, r.length, r.hash});
  if (gpu && failed(fp8::redirectGlobalsToDevice(*module)))
    return 1;
  if (failed(fp8::addModelEntryPoints(*module, *signature)))
    return 1;

  fp8::CodegenOptions codegen;
  codegen.cpu = cpu;
  tmp = fp8::temporaryPathFor(outputFile, tmpError);
  if (tmp.empty())
    return fail(tmpError);
  // Temporary files go on every path out: errors, and signals (Ctrl-C).
  SmallString<128> object;
  llvm::sys::RemoveFileOnSignal(tmp);
  llvm::scope_exit cleanup([&] {
    if (!weightsTmp.empty()) {
      llvm::sys::fs::remove(weightsTmp);
      llvm::sys::DontRemoveFileOnSignal(weightsTmp);
    }
    llvm::sys::fs::remove(tmp);
    llvm::sys::DontRemoveFileOnSignal(tmp);
    if (!object.empty()) {
      llvm::sys::fs::remove(object);
      llvm::sys::DontRemoveFileOnSignal(object);
    }
  });
  if (!weights->empty() && !packWeights) {
    if (!weights->packableFromData())
      return fail("--pack-weights=false: " +
                  std::to_string(weights->literals.size()) +
                  " constants computed by the compiler go to the weights "
                  "file, which fp8-pack cannot write from the model's data: "
                  "use --weights=auto (they stay in the library) or pack here");
    if (!quiet)
      llvm::errs() << llvm::format(
                          "fp8-compile: weights manifest: %zu tensors, %.1f "
                          "MB for fp8-pack -> ",
                          weights->manifest.tensors.size(),
                          weights->bytes / 1e6)
                   << manifestPath << "\n";
  } else if (!weights->empty()) {
    Stage stage("weights file (packer)");
    weightsTmp = fp8::temporaryPathFor(weightsPath, tmpError);
    if (weightsTmp.empty())
      return fail(tmpError);
    llvm::sys::RemoveFileOnSignal(weightsTmp);
    if (std::string err = fp8::writeWeightsFile(*weights, weightsTmp);
        !err.empty())
      return fail(err);
    if (!quiet)
      llvm::errs() << llvm::format(" %zu tensors, %.1f MB ->",
                                   weights->manifest.tensors.size(),
                                   weights->bytes / 1e6)
                   << " " << weightsPath << ",";
  }
  if (emit == "llvm" || emit == "obj") {
    Stage stage("codegen");
    if (failed(fp8::translateAndEmit(*module, tmp, codegen,
                                     /*emitLLVMIR=*/emit == "llvm")))
      return 1;
    return commit();
  }

  auto libPath = [&](StringRef name) {
    std::string self =
        llvm::sys::fs::getMainExecutable(argv[0], (void *)&fail);
    SmallString<256> path(llvm::sys::path::parent_path(self));
    llvm::sys::path::append(path, "..", "lib", name);
    return std::string(path);
  };
  std::string runtime = runtimeLib;
  if (runtime.empty())
    runtime = libPath(gpu ? "libfp8rt_cuda.a" : "libfp8rt_cpu.a");
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fp8-model", "o", object)) {
    object.clear();
    return fail("cannot create a temporary object file: " + ec.message());
  }
  llvm::sys::RemoveFileOnSignal(object);
  {
    Stage stage("codegen");
    if (failed(fp8::translateAndEmit(*module, object, codegen, false)))
      return 1;
  }
  {
    Stage stage("link");
    // Link to a temporary name, then commit: a failed compile never leaves
    // a half-written library where an old one was.
    std::string error;
    SmallString<256> stubs(toolkit);
    llvm::sys::path::append(stubs, "lib64", "stubs");
    LogicalResult linked =
        gpu ? fp8::linkCUDAModelLibrary(object,
                                        libPath("libfp8rt_cuda_model.a"),
                                        runtime, stubs, tmp, error)
            : fp8::linkModelLibrary(object, runtime, tmp, error);
    if (failed(linked))
      return fail(error);
    return commit();
  }
}
