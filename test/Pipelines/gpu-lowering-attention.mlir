// RUN: fp8-opt %s --pass-pipeline='builtin.module(fp8-gpu-lowering-pipeline{format=isa model-abi=true})' | FileCheck %s
// RUN: fp8-opt %s --pass-pipeline='builtin.module(fp8-gpu-lowering-pipeline{format=isa fused-attention=false})' | FileCheck %s --check-prefix=LOOPS

// fp8.attention through the whole GPU pipeline: outlined, bufferized, and
// replaced by the fused kernel (TMA loads, QK^T wgmma from shared memory,
// register-A wgmma for PV); with fused-attention=false its reference
// lowering runs as loop kernels.

// The kernel writes the model's output in place (fp8-return-allocations):
// no buffer and no copy kernel, so the attention kernel is the only one.
// CHECK-NOT:   fp8.
// CHECK-NOT:   _mlir_memref_to_llvm_alloc
// CHECK:       llvm.func @main
// CHECK-NOT:   _mlir_memref_to_llvm_alloc
// CHECK:       gpu.binary @__fp8_attention_0_kernel
// CHECK-DAG:     .entry __fp8_attention_0_kernel
// CHECK-DAG:     cp.async.bulk.tensor.3d.shared::cluster.global
// CHECK-DAG:     wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-DAG:     ex2.approx.ftz.f32
// CHECK-DAG:     wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{[^;]*}}, p, 1, 1, 1;
// LOOPS:       gpu.binary @fp8_kernels
// LOOPS-NOT:     __fp8_attention_0_kernel
// LOOPS-NOT:     wgmma
func.func @main(%q: tensor<1x4x256x64xbf16>, %k: tensor<1x2x256x64xbf16>, %v: tensor<1x2x256x64xbf16>) -> tensor<1x4x256x64xf32> {
  %o = fp8.attention %q, %k, %v scale(0.125) causal : (tensor<1x4x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>) -> tensor<1x4x256x64xf32>
  return %o : tensor<1x4x256x64xf32>
}
