// An f16 cache: the FP8 values times the scale must stay normal f16 numbers
// (448 * 256 overflows f16, 2^-9 * 2^-8 is below its normal range), while
// f32 would take either scale.
// RUN: fp8-opt %s --fp8-kv-cache | FileCheck %s
// RUN: not fp8-opt %s --fp8-kv-cache="scale=256" 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not fp8-opt %s --fp8-kv-cache="scale=0.00390625" 2>&1 | FileCheck %s --check-prefix=SMALL
// BIG: error: fp8-kv-cache: scale 256 of 'past.0' is not usable: {{.*}} in the normal range of the cache's type ('f16')
// SMALL: error: fp8-kv-cache: scale 0.00390625 of 'past.0' is not usable

// Concats that share one tensor.empty (as after CSE): each FP8 concat gets
// its own empty FP8 tensor, nothing quantizes the uninitialised one.
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    tensor<3x4xf8E4M3FN> {onnx.name = "past.0"}, %{{.*}}: tensor<3x4xf8E4M3FN> {onnx.name = "past.1"}
// CHECK-NOT:     fp8.quantize %{{.*}} : tensor<4x4xf16>
// CHECK:         fp8.dequantize %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<f32> -> tensor<4x4xf16>
// CHECK:         return
func.func @main(%x: tensor<1x4xf16> {onnx.name = "x"},
                %p0: tensor<3x4xf16> {onnx.name = "past.0"},
                %p1: tensor<3x4xf16> {onnx.name = "past.1"})
    -> (tensor<4x4xf16> {onnx.name = "present.0"}, tensor<4x4xf16> {onnx.name = "present.1"}, tensor<4x4xf16> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<4x4xf16>
  %a0 = tensor.insert_slice %p0 into %e[0, 0] [3, 4] [1, 1] : tensor<3x4xf16> into tensor<4x4xf16>
  %a1 = tensor.insert_slice %x into %a0[3, 0] [1, 4] [1, 1] : tensor<1x4xf16> into tensor<4x4xf16>
  %b0 = tensor.insert_slice %p1 into %e[0, 0] [3, 4] [1, 1] : tensor<3x4xf16> into tensor<4x4xf16>
  %b1 = tensor.insert_slice %x into %b0[3, 0] [1, 4] [1, 1] : tensor<1x4xf16> into tensor<4x4xf16>
  %y = arith.addf %a1, %b1 : tensor<4x4xf16>
  return %a1, %b1, %y : tensor<4x4xf16>, tensor<4x4xf16>, tensor<4x4xf16>
}
