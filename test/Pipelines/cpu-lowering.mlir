// RUN: fp8-opt %s --fp8-cpu-lowering-pipeline | FileCheck %s --implicit-check-not=fp8. --implicit-check-not=linalg. --implicit-check-not=tensor. --implicit-check-not=unrealized_conversion_cast --implicit-check-not=bufferization.
// Everything, including returned constants (which the deallocation pipeline
// clones), ends in the LLVM dialect.

// CHECK: llvm.func @quantize_step
func.func @quantize_step(%x: tensor<4x100xbf16>, %w: tensor<64x100xf8E4M3FN>, %sw: tensor<64x4xf8E8M0FNU>)
    -> (tensor<4x64xbf16>, tensor<4x4xf8E8M0FNU>) {
  %a = fp8.amax %x layout<block 1x32> : tensor<4x100xbf16> -> tensor<4x4xf32>
  %s = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e4m3) : tensor<4x4xf32> -> tensor<4x4xf8E8M0FNU>
  %q = fp8.quantize %x, %s layout<block 1x32> : tensor<4x100xbf16>, tensor<4x4xf8E8M0FNU> -> tensor<4x100xf8E4M3FN>
  %y = fp8.scaled_matmul %q, %s layout<block 1x32>, %w, %sw layout<block 1x32> transpose_rhs epilogue(silu)
      : (tensor<4x100xf8E4M3FN>, tensor<4x4xf8E8M0FNU>, tensor<64x100xf8E4M3FN>, tensor<64x4xf8E8M0FNU>) -> tensor<4x64xbf16>
  return %y, %s : tensor<4x64xbf16>, tensor<4x4xf8E8M0FNU>
}

// CHECK: llvm.func @constant_scale
func.func @constant_scale() -> tensor<2xf8E8M0FNU> {
  %a = arith.constant dense<[448.0, 1.0]> : tensor<2xf32>
  %s = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e4m3) : tensor<2xf32> -> tensor<2xf8E8M0FNU>
  return %s : tensor<2xf8E8M0FNU>
}

// Delayed-scaling state in an ml_program global, updated in place.
// CHECK: llvm.mlir.global private @hist
ml_program.global private mutable @hist(dense<0.0> : tensor<16xf32>) : tensor<16xf32>
// CHECK: llvm.func @delayed_step
func.func @delayed_step(%x: tensor<8x32xf32>, %prev: tensor<f32>) -> (tensor<8x32xf8E4M3FN>, tensor<f32>) {
  %h = ml_program.global_load @hist : tensor<16xf32>
  %s = fp8.compute_scale %h previous %prev recipe(#fp8.delayed<history = 16>) format(e4m3)
      : tensor<16xf32>, tensor<f32> -> tensor<f32>
  %q = fp8.quantize %x, %s layout<tensor> : tensor<8x32xf32>, tensor<f32> -> tensor<8x32xf8E4M3FN>
  %a = fp8.amax %x layout<tensor> : tensor<8x32xf32> -> tensor<f32>
  %h2 = fp8.history_update %h, %a : tensor<16xf32>, tensor<f32>
  ml_program.global_store @hist = %h2 : tensor<16xf32>
  return %q, %s : tensor<8x32xf8E4M3FN>, tensor<f32>
}
