//===- fp8-compile.cpp - One-shot ONNX to model library driver ------------===//
//
// Part of fp8-opt.
//
//   fp8-compile model.onnx -o model.so [--target=cpu|sm_90a|sm_89]
//       [--recipe=none|delayed|current|rowwise|block|mxfp8] [--format=e4m3|e5m2|hybrid]
//       [--policy rules.json] [--report decisions.json] [--include-attention]
//       [--fp8-attention]
//       [--fuse-attention=false]
//       [--high-precision=bf16|fp32]
//       [--emit=mlir|llvm|obj|so|ptx] [--input-shape name=2x48,...]
//       [--cpu=native|generic|<llvm cpu>] [--runtime-lib libfp8rt_cpu.a]
//       [--kv-cache=none|e4m3|e5m2 [--kv-cache-scale S] [--kv-cache-scales F]]
//
// The command line of fp8::compileModel (include/fp8/Compiler/Compiler.h):
// imports the model, applies the FP8 recipe (fp8-quantize-pipeline),
// lowers it with fp8-cpu-lowering-pipeline{model-abi=true} (or, for a GPU
// target, fp8-gpu-lowering-pipeline: NVVM kernels in a cubin, host code that
// launches them through fp8rt_cuda), and emits a shared library with the
// fp8rt C ABI (runtime/include/fp8rt/fp8rt.h), or an intermediate form.
// Each stage reports its time on stderr. This file only declares the flags
// and maps them onto fp8::CompileOptions.
//
//===----------------------------------------------------------------------===//

#include "fp8/Compiler/Compiler.h"
#include "fp8/Support/Version.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

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
static cl::opt<bool> approxNarrowMath(
    "approx-narrow-math",
    cl::desc("GPU: f16/bf16 exponentials and f16 divisions (an FP16 "
             "model's SiLU, softmax) by the approximate f32 instructions, "
             "rounded to 16 bits: within one f16 ulp of the correctly "
             "rounded result, as torch.compile's kernels (default); false: "
             "IEEE f32 functions"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> registerRows(
    "register-rows",
    cl::desc("GPU: a row reduction whose later passes read the row again "
             "(rowwise quantization of the FFN activation and of the norms' "
             "outputs) spreads each row over enough warps to keep it in "
             "registers, instead of reading it from memory once per pass "
             "(default; false: a warp a row where rows are many)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> gemmEpilogues(
    "gemm-epilogues",
    cl::desc("GPU: a product's element-wise consumer (SiLU(gate) * up, bias "
             "+ GELU, a residual add) computed in its GEMM kernel's epilogue "
             "(fp8-fuse-gemm-epilogues); off by default: on the H200 the "
             "epilogue is not overlapped with the next tile's products, so it "
             "is slower than the consumer's own kernel (docs/PERFORMANCE.md)"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> decodeEpilogues(
    "decode-epilogues",
    cl::desc("GPU: products of at most 64 rows (decode steps) compute their "
             "element-wise consumer (a residual add) in the GEMM kernel's "
             "epilogue: one kernel less each (fp8-fuse-gemm-epilogues"
             "{max-rows=64}; bit-identical to the unfused step; "
             "--decode-epilogues=false keeps them apart)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> residualEpilogues(
    "residual-epilogues",
    cl::desc("GPU: products of any size compute a residual add (an arith "
             "consumer reading at most one other full tensor) in the GEMM "
             "kernel's epilogue, that tensor staged through the TMA-store "
             "tile (fp8-fuse-gemm-epilogues{residual-only}; bit-identical; "
             "the Llama-3-8B layer 0.05-0.08 ms faster, docs/PERFORMANCE.md; "
             "--residual-epilogues=false keeps the add's own kernel)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> pipelinedPromotion(
    "pipelined-promotion",
    cl::desc("GPU: decode GEMMs' consumer warpgroups keep 4 K tiles' wgmmas "
             "in flight (2 past 48 columns) between FP32 promotions, instead "
             "of waiting for each tile's (convert-fp8-gemm-to-gpu"
             "{pipelined-promotion}; the same promotions in the same order, "
             "bit-identical; =false: a wgmma round trip per K tile)"),
    cl::init(true), cl::cat(category));
static cl::opt<unsigned> decodeKGroups(
    "decode-k-groups",
    cl::desc("GPU, with --pipelined-promotion: decode GEMMs' K tiles split "
             "over this many consumer warpgroups (1 or 2), each summing its "
             "share, added before the epilogue (convert-fp8-gemm-to-gpu"
             "{decode-k-groups})"),
    cl::init(1), cl::cat(category));
static cl::opt<unsigned> decodeStages(
    "decode-stages",
    cl::desc("GPU: most pipeline stages of decode GEMMs (1..32; as many as "
             "fit the shared memory up to this): the K tiles of weights a "
             "CTA keeps in flight (convert-fp8-gemm-to-gpu{decode-stages})"),
    cl::init(16), cl::cat(category));
static cl::opt<unsigned> gemmTileM(
    "gemm-tile-m",
    cl::desc("GPU: CTA tile M of promoting GEMMs (block scales): 128, 192 "
             "(three consumer warpgroups of 64 rows), 256 (two consumer "
             "warpgroups of two 64-row bands) or 0, the heuristic's choice "
             "(convert-fp8-gemm-to-gpu{tile-m})"),
    cl::init(0), cl::cat(category));
static cl::opt<bool> gemmFusedThreeConsumers(
    "gemm-fused-three-consumers",
    cl::desc("GPU: a block-scaled product with a fused consumer (a residual "
             "add in its epilogue) may take three consumer warpgroups of 64 "
             "rows where they assemble, as unfused ones do (the Llama-3-8B "
             "layer's o product); off by default until timed "
             "(convert-fp8-gemm-to-gpu{fused-three-consumers})"),
    cl::init(false), cl::cat(category));
static cl::opt<cl::boolOrDefault> mergeProducts(
    "merge-products",
    cl::desc("Products of one activation with constant weights (q, k, v; "
             "gate, up) as one product over the concatenated weights "
             "(fp8-merge-sibling-products): one GEMM kernel instead of "
             "three; the same values. Default: on for the GPU targets, off "
             "for the CPU. With --gemm-epilogues, SiLU(gate) * up then stays "
             "out of the (merged) up GEMM: --merge-products=false keeps it "
             "there"),
    cl::cat(category));
static cl::opt<bool> attentionDecodeKernel(
    "attention-decode-kernel",
    cl::desc("GPU: a decode step's attention (one query per head, 16-bit "
             "operands) as the split-key kernel -- the keys split over "
             "CTAs that each read their K and V rows once for the query "
             "heads sharing them, then a kernel that combines the splits "
             "(docs/GPU.md); =false: the FlashAttention kernel"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> attentionDecodeTensorCores(
    "attention-decode-tensor-cores",
    cl::desc("GPU: the decode split kernel reads an FP8 KV cache whose "
             "scales are powers of two (the default scale 1) on tensor cores "
             "(mma.sync, the GQA group's heads as the columns; docs/GPU.md); "
             "=false: its CUDA-core loop, which every other scale takes"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> attentionPingPong(
    "attention-ping-pong",
    cl::desc("GPU: the fused FP8 attention kernel's two consumer warpgroups "
             "take turns on the tensor cores, so that one's softmax runs "
             "under the other's products (FlashAttention-3's ping-pong; 7% "
             "faster at 8192 causal tokens on the H200; docs/GPU.md); "
             "=false: one after the other"),
    cl::init(true), cl::cat(category));
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
static cl::opt<bool> fuseAttention(
    "fuse-attention",
    cl::desc("Import attention chains (MatMul, scale, mask, Softmax, MatMul) "
             "as one fp8.attention each (default); false keeps the plain "
             "decomposition. --include-attention imports them unfused"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> fp8Attention(
    "fp8-attention",
    cl::desc("Fused attention on FP8 (E4M3; E5M2 with --format=e5m2) query, "
             "key and value with current scales per 128 positions of each "
             "head (per tensor where a length is dynamic): both of its "
             "products on FP8 tensor cores on the GPU"),
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
                cl::desc("Shape of a graph input, name=2x48, each dimension "
                         "a size or LO..HI bounds of a dynamic one "
                         "(ids=1..8x1..8192; repeatable, or comma-separated)"),
                cl::cat(category));
static cl::list<std::string>
    dims("dim",
         cl::desc("Size or bounds of a symbolic dimension (dim_param) of the "
                  "model's inputs: batch=1..8, past=0..8192, seq=128 "
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
static cl::opt<bool> kvCacheInPlace(
    "kv-cache-in-place",
    cl::desc("Decode step (one new token): update each cache input in place "
             "at the slot a new [batch] i64 input gives (fp8-kv-cache-in-"
             "place); the cache outputs are tied to their inputs (ABI 4)"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> kvCachePositionInput(
    "kv-cache-position-input",
    cl::desc("Name of --kv-cache-in-place's slot input (default "
             "cache_position)"),
    cl::init("cache_position"), cl::cat(category));
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
int fail(const llvm::Twine &msg) {
  llvm::errs() << "fp8-compile: error: " << msg << "\n";
  return 1;
}

/// Options that only configure the FP8 recipe or the KV cache: given
/// without what they configure, they would be ignored (and their files
/// never read), so they are refused.
std::string checkDependentOptions() {
  if (recipe == "none")
    for (const cl::Option *o : std::initializer_list<const cl::Option *>{
             &format, &policy, &report, &includeAttention, &fp8Attention,
             &keepFirstLast,
             &analyze, &calibration, &kMajorRhs, &history, &exposeQuantized,
             &strict})
      if (o->getNumOccurrences())
        return "--" + o->ArgStr.str() +
               " configures the FP8 recipe: add --recipe=delayed, current, "
               "block or mxfp8";
  if (fp8Attention && includeAttention)
    return "--fp8-attention quantizes the fused attention op; "
           "--include-attention imports attention unfused: choose one";
  if (fp8Attention && !fuseAttention)
    return "--fp8-attention quantizes the fused attention op: drop "
           "--fuse-attention=false";
  if (kvCache == "none")
    for (const cl::Option *o : std::initializer_list<const cl::Option *>{
             &kvCacheScale, &kvCacheScales})
      if (o->getNumOccurrences())
        return "--" + o->ArgStr.str() +
               " configures the FP8 KV cache: add --kv-cache=e4m3 (or e5m2)";
  if (kvCache == "none" && !kvCacheInPlace)
    for (const cl::Option *o : std::initializer_list<const cl::Option *>{
             &kvCacheInputs, &kvCacheOutputs})
      if (o->getNumOccurrences())
        return "--" + o->ArgStr.str() +
               " selects the KV cache: add --kv-cache=e4m3 (or e5m2) or "
               "--kv-cache-in-place";
  if (!kvCacheInPlace && kvCachePositionInput.getNumOccurrences())
    return "--kv-cache-position-input names --kv-cache-in-place's input: "
           "add --kv-cache-in-place";
  return "";
}

/// A string flag's value as the enum `parseFn` gives, or the error naming
/// the flag and the accepted values.
template <typename E, typename ParseFn>
std::string parseFlag(const cl::opt<std::string> &flag, ParseFn parseFn,
                      const char *expected, E &out) {
  std::optional<E> v = parseFn(flag.getValue());
  if (!v)
    return "--" + flag.ArgStr.str() + "=" + flag.getValue() + ": expected " +
           expected;
  out = *v;
  return "";
}

/// The flags as typed options; an error names the flag.
std::string toOptions(fp8::CompileOptions &o) {
  std::string err;
  (err = parseFlag(target, fp8::parseCompileTarget,
                   "cpu, sm_90a (or cuda) or sm_89", o.target)).empty() &&
      (err = parseFlag(recipe, fp8::parseRecipeKind,
                       "none, delayed, current, rowwise, block or mxfp8",
                       o.recipe)).empty() &&
      (err = parseFlag(format, fp8::parseFormatKind, "e4m3, e5m2 or hybrid",
                       o.format)).empty() &&
      (err = parseFlag(kvCache, fp8::parseKVCacheFormat,
                       "none, e4m3 or e5m2", o.kvCache)).empty() &&
      (err = parseFlag(emit, fp8::parseEmitKind, "mlir, llvm, obj, so or ptx",
                       o.emit)).empty();
  if (err.empty() && !scaleStorage.empty()) {
    fp8::ScaleStorage s = fp8::ScaleStorage::TMA;
    if ((err = parseFlag(scaleStorage, fp8::parseScaleStorage,
                         "canonical or tma", s)).empty())
      o.scaleStorage = s;
  }
  if (!err.empty())
    return err;
  if (std::string dep = checkDependentOptions(); !dep.empty())
    return dep;
  o.input = inputFile;
  o.output = outputFile;
  o.inputShapes = inputShapes;
  o.dims = dims;
  if (highPrecision.getNumOccurrences())
    o.highPrecision = highPrecision.getValue();
  o.policyFile = policy;
  o.reportFile = report;
  o.calibrationFile = calibration;
  o.includeAttention = includeAttention;
  o.fp8Attention = fp8Attention;
  o.fuseAttention = fuseAttention;
  o.keepFirstLast = keepFirstLast;
  o.analyze = analyze;
  o.kMajorRhs = kMajorRhs;
  o.exposeQuantized = exposeQuantized;
  o.strict = strict;
  o.history = history;
  o.kvCacheScale = kvCacheScale;
  o.kvCacheScalesFile = kvCacheScales;
  o.kvCacheInputs = kvCacheInputs;
  o.kvCacheOutputs = kvCacheOutputs;
  o.kvCacheInPlace = kvCacheInPlace;
  o.kvCachePositionInput = kvCachePositionInput;
  o.weightsMode = weightsMode;
  o.weightsFile = weightsFile;
  o.weightsReadLimit = weightsReadLimit;
  o.weightsReadLimitSet = weightsReadLimit.getNumOccurrences() > 0;
  o.packWeights = packWeights;
  o.tensorCores = tensorCores;
  o.fastAccumulation = fastAccumulation;
  o.approxNarrowMath = approxNarrowMath;
  o.registerRows = registerRows;
  o.gemmEpilogues = gemmEpilogues;
  o.decodeEpilogues = decodeEpilogues;
  o.residualEpilogues = residualEpilogues;
  o.pipelinedPromotion = pipelinedPromotion;
  o.decodeKGroups = decodeKGroups;
  o.decodeStages = decodeStages;
  if (gemmTileM != 0 && gemmTileM != 128 && gemmTileM != 192 &&
      gemmTileM != 256)
    return "--gemm-tile-m must be 0 (the heuristic's), 128, 192 or 256, not " +
           std::to_string(gemmTileM);
  o.gemmTileM = gemmTileM;
  o.gemmFusedThreeConsumers = gemmFusedThreeConsumers;
  o.attentionPingPong = attentionPingPong;
  o.attentionDecodeKernel = attentionDecodeKernel;
  o.attentionDecodeTensorCores = attentionDecodeTensorCores;
  if (mergeProducts != cl::BOU_UNSET)
    o.mergeProducts = mergeProducts == cl::BOU_TRUE;
  o.cpu = cpu;
  o.cudaRoot = cudaRoot;
  o.runtimeLib = runtimeLib;
  o.quiet = quiet;
  return "";
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
  fp8::CompileOptions options;
  if (std::string err = toOptions(options); !err.empty())
    return fail(err);
  if (llvm::Error e = fp8::compileModel(options)) {
    // An empty message: the diagnostics (naming the ONNX node) said why.
    std::string message = llvm::toString(std::move(e));
    return message.empty() ? 1 : fail(message);
  }
  return 0;
}
