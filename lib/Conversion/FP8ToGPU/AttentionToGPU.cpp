//===- AttentionToGPU.cpp - Fused attention kernels
//------------------------===//
//
// Part of fp8-opt. Replaces the body of every bufferized
// `@__fp8_attention_<i>` function (q, k, v, [mask], out; made by
// fp8-outline-attention) with a `gpu.launch_func` of a fused
// FlashAttention-style kernel (Attention/: AttentionPlan says what it
// computes and how, AttentionKernel builds it), or for a decode step (one
// query per head, a workspace) of the split-key kernels
// (DecodeAttentionKernel).
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "Attention/AttentionKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8ATTENTIONTOGPU
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

struct ConvertFP8AttentionToGPUPass
    : fp8::impl::ConvertFP8AttentionToGPUBase<ConvertFP8AttentionToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kAttentionAttrName))
        funcs.push_back(func);
    SymbolTable symbols(module);
    for (func::FuncOp func : funcs) {
      std::string why;
      attention::AttentionOptions options;
      options.overlap = intraWarpgroupOverlap;
      options.pingPong = pingPong;
      options.decodeTensorCores = decodeTensorCores;
      FailureOr<attention::AttentionPlan> plan =
          attention::planAttention(func, options, why);
      // Served or not, the function is an ordinary one from here on.
      func->removeAttr(kAttentionAttrName);
      if (failed(plan)) {
        if (remarks)
          func.emitRemark() << "fp8 attention: keeping the reference body: "
                            << why;
        continue;
      }
      attention::buildAttentionKernel(func, *plan, symbols);
      if (remarks)
        func.emitRemark() << "fp8 attention: "
                          << attention::describeAttentionPlan(*plan);
    }
  }
};

} // namespace
