//===- GemmKernel.h - The FP8 GEMM kernel generator -------------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMKERNEL_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMKERNEL_H

#include "GemmPlan.h"

namespace mlir {
class SymbolTable;
} // namespace mlir

namespace mlir::fp8::gemm {

/// Replaces the body of `func` (lhs, lhs_scale, rhs, rhs_scale, [bias], out)
/// with a gpu.launch_func of the kernel each plan describes, a gpu.func in a
/// new gpu.module inserted after `func` into `symbols` (the symbol table of
/// the module holding `func`, which becomes a gpu.container_module). With
/// M at run time (planGemms' two plans) the host reads M, launches nothing
/// when it is 0, and picks the first plan whose maxRows admits it.
void buildGemmKernel(func::FuncOp func, ArrayRef<GemmPlan> plans,
                     SymbolTable &symbols);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMKERNEL_H
