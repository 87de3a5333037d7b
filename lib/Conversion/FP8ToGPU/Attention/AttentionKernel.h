//===- AttentionKernel.h - The fused attention kernel generator -*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_ATTENTION_ATTENTIONKERNEL_H
#define FP8_LIB_CONVERSION_FP8TOGPU_ATTENTION_ATTENTIONKERNEL_H

#include "AttentionPlan.h"

namespace mlir {
class SymbolTable;
namespace fp8 {
struct KernelIR;
} // namespace fp8
} // namespace mlir

namespace mlir::fp8::attention {

/// Replaces the body of `func` (q, k, v, [mask], out) with a
/// gpu.launch_func of the fused kernel `plan` describes, a gpu.func in a new
/// gpu.module inserted after `func` into `symbols` (a decode step's: the
/// split-key kernels).
void buildAttentionKernel(func::FuncOp func, const AttentionPlan &plan,
                          SymbolTable &symbols);

/// For a decode step (problem.decodeSplits > 0; buildAttentionKernel
/// dispatches): the split-key kernel and, with more than one split, the
/// kernel that combines the splits (DecodeAttentionKernel.cpp), launched
/// from the emptied body of `func` at `k`'s builder.
void buildDecodeAttentionKernels(KernelIR &k, func::FuncOp func,
                                 const AttentionPlan &plan,
                                 SymbolTable &symbols);

} // namespace mlir::fp8::attention

#endif // FP8_LIB_CONVERSION_FP8TOGPU_ATTENTION_ATTENTIONKERNEL_H
