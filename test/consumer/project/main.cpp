//===- main.cpp - A downstream user of the installed FP8Opt package --------===//
//
// Parses a module that quantizes a tensor with MXFP8 scales, runs fp8-opt's
// passes through the C++ API (fold check, then the whole CPU pipeline), and
// checks the results; then, given `model.onnx out.so runtime-dir`, compiles
// the model into a library with the block recipe through
// fp8::compileModel (run.sh runs it). Exits non-zero on any failure.
//
//===----------------------------------------------------------------------===//

#include "fp8/Compiler/Compiler.h"
#include "fp8/Conversion/Passes.h"
#include "fp8/Dialect/FP8/IR/FP8.h"
#include "fp8/InitAll.h"
#include "fp8/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cstdio>

using namespace mlir;

static const char *kModule = R"mlir(
func.func @scales() -> tensor<1x1xf8E8M0FNU> {
  %x = arith.constant dense<[[1.0, 2.0, 448.0, 3.0]]> : tensor<1x4xf32>
  %a = fp8.amax %x layout<block 1x32> : tensor<1x4xf32> -> tensor<1x1xf32>
  %s = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e4m3)
      : tensor<1x1xf32> -> tensor<1x1xf8E8M0FNU>
  return %s : tensor<1x1xf8E8M0FNU>
}
func.func @quantize(%x: tensor<2x64xf32>) -> tensor<2x64xf8E4M3FN> {
  %a = fp8.amax %x layout<block 1x32> : tensor<2x64xf32> -> tensor<2x2xf32>
  %s = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e4m3)
      : tensor<2x2xf32> -> tensor<2x2xf8E8M0FNU>
  %q = fp8.quantize %x, %s layout<block 1x32>
      : tensor<2x64xf32>, tensor<2x2xf8E8M0FNU> -> tensor<2x64xf8E4M3FN>
  return %q : tensor<2x64xf8E4M3FN>
}
)mlir";

static int fail(const char *what) {
  std::fprintf(stderr, "fp8-consumer: FAILED: %s\n", what);
  return 1;
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  fp8::registerAllFP8Dialects(registry);
  MLIRContext ctx(registry);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(kModule, &ctx);
  if (!module)
    return fail("parse");

  // 1. Folding: amax 448 -> E8M0 exponent 127 (scale 1.0) with rceil.
  PassManager fold(&ctx);
  fold.addPass(createCanonicalizerPass());
  if (failed(fold.run(*module)))
    return fail("canonicalize");
  auto scales = module->lookupSymbol<func::FuncOp>("scales");
  auto ret = cast<func::ReturnOp>(scales.getBody().front().getTerminator());
  auto cst = ret.getOperand(0).getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return fail("compute_scale of a constant did not fold");
  APFloat e = *cast<DenseElementsAttr>(cst.getValue()).getValues<APFloat>().begin();
  if (e.bitcastToAPInt().getZExtValue() != 127)
    return fail("wrong E8M0 scale");

  // 2. The whole CPU lowering through the public pipeline builder.
  PassManager pm(&ctx);
  fp8::buildFP8CPULoweringPipeline(pm, fp8::CPULoweringPipelineOptions());
  if (failed(pm.run(*module)))
    return fail("cpu lowering pipeline");
  Operation *leftover = nullptr;
  module->walk([&](Operation *op) {
    if (!isa<ModuleOp>(op) && !isa<LLVM::LLVMDialect>(op->getDialect()))
      leftover = op;
  });
  if (leftover) {
    std::fprintf(stderr, "fp8-consumer: left after lowering: %s\n",
                 leftover->getName().getStringRef().str().c_str());
    return fail("non-LLVM ops left after lowering");
  }

  // 3. A model library through the compile API (typed options).
  if (argc == 4) {
    fp8::CompileOptions options;
    options.input = argv[1];
    options.output = argv[2];
    options.runtimeDir = argv[3];
    options.recipe = fp8::RecipeKind::Block;
    options.quiet = true;
    if (options.effectiveHighPrecision() != fp8::HighPrecision::BF16)
      return fail("a recipe's kept products default to BF16");
    if (llvm::Error e = fp8::compileModel(options)) {
      std::fprintf(stderr, "fp8-consumer: %s\n",
                   llvm::toString(std::move(e)).c_str());
      return fail("compileModel");
    }
    // A bad option is an error, not a crash.
    fp8::CompileOptions bad = options;
    bad.emit = fp8::EmitKind::PTX; // PTX needs a GPU target
    llvm::Error e = fp8::compileModel(bad);
    if (!e)
      return fail("compileModel accepted --emit=ptx for the CPU");
    llvm::consumeError(std::move(e));
  }
  std::printf("fp8-consumer: OK\n");
  return 0;
}
