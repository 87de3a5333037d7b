// RUN: fp8-opt %s --pass-pipeline='builtin.module(fp8-gpu-lowering-pipeline{format=isa model-abi=true})' | FileCheck %s
// RUN: fp8-opt %s --pass-pipeline='builtin.module(fp8-gpu-lowering-pipeline{format=isa tensor-cores=false})' | FileCheck %s --check-prefix=LOOPS

// The whole GPU pipeline on a current-scaling product: host LLVM code that
// allocates through the runtime's pool and launches kernels of one module
// whose PTX has the saturating FP8 conversion and the FP8 wgmma.

// CHECK-NOT:   fp8.
// CHECK:       gpu.binary @fp8_kernels
// CHECK-SAME:    cvt.rn.satfinite.e4m3x2.f32
// CHECK-SAME:    wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3
// CHECK-NOT:   gpu.binary
// CHECK:       llvm.func @main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {bufferize.result})
// CHECK:         llvm.call @_mlir_memref_to_llvm_alloc
// CHECK:         gpu.launch_func @fp8_kernels::
// CHECK:         llvm.call @_mlir_memref_to_llvm_free

// Without tensor cores the product is a plain loop kernel.
// LOOPS:       gpu.binary @fp8_kernels
// LOOPS-NOT:     wgmma
// LOOPS:       llvm.func @main
func.func @main(%x: tensor<4x64xf32>, %w: tensor<32x64xf32>) -> tensor<4x32xf32> {
  %ax = fp8.amax %x layout<tensor> : tensor<4x64xf32> -> tensor<f32>
  %sx = fp8.compute_scale %ax recipe(#fp8.current<>) format(e4m3) : tensor<f32> -> tensor<f32>
  %qx = fp8.quantize %x, %sx layout<tensor> : tensor<4x64xf32>, tensor<f32> -> tensor<4x64xf8E4M3FN>
  %aw = fp8.amax %w layout<tensor> : tensor<32x64xf32> -> tensor<f32>
  %sw = fp8.compute_scale %aw recipe(#fp8.current<>) format(e4m3) : tensor<f32> -> tensor<f32>
  %qw = fp8.quantize %w, %sw layout<tensor> : tensor<32x64xf32>, tensor<f32> -> tensor<32x64xf8E4M3FN>
  %y = fp8.scaled_matmul %qx, %sx layout<tensor>, %qw, %sw layout<tensor> transpose_rhs : (tensor<4x64xf8E4M3FN>, tensor<f32>, tensor<32x64xf8E4M3FN>, tensor<f32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
