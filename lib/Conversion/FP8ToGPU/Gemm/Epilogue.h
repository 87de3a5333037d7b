//===- Epilogue.h - Output of the FP8 GEMM kernels --------------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// The epilogue applies what does not vary along K to the FP32 total --
// per-tensor / per-row scales and block scales covering all of K, the bias,
// the activation (fp8::buildEpilogue, shared with the CPU reference) -- and
// rounds once to the output type.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_EPILOGUE_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_EPILOGUE_H

#include "KernelBuilder.h"

namespace mlir::fp8::gemm {

/// EpilogueKind::Registers: bounds-checked stores straight from the
/// accumulator fragment `acc`.
void buildRegisterEpilogue(KernelBuilder &kb, const GemmPlan &plan,
                           const KernelValues &kv,
                           const AccumulatorFragment &frag, Value acc);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_EPILOGUE_H
