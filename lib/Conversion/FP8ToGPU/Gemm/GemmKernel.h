//===- GemmKernel.h - The FP8 GEMM kernel generator -------------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMKERNEL_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMKERNEL_H

#include "GemmPlan.h"

namespace mlir::fp8::gemm {

/// Replaces the body of `func` (lhs, lhs_scale, rhs, rhs_scale, [bias], out)
/// with a gpu.launch of the kernel `plan` describes.
void buildGemmKernel(func::FuncOp func, const GemmPlan &plan);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_GEMMKERNEL_H
