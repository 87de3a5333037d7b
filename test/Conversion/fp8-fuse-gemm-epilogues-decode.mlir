// RUN: fp8-opt %s --fp8-outline-scaled-matmuls --fp8-fuse-gemm-epilogues="max-rows=64" --split-input-file | FileCheck %s
// RUN: fp8-opt %s --fp8-outline-scaled-matmuls --fp8-fuse-gemm-epilogues="max-rows=64" --convert-fp8-to-linalg --fp8-fuse-elementwise="through-reshapes=1" --split-input-file | FileCheck %s --check-prefix=FUSED

// A decode step's residual add (the GPU pipeline's decode-epilogues): the
// [1, 4096]-row product is read as [1, 1, 4096] through an expand_shape.
// The add is rebuilt at the product's shape (the residual collapsed back
// through the inverse reshape, the result expanded for its users) and moves
// into the GEMM function, marked: the kernel's epilogue computes it.
// Element-wise fusion afterwards leaves the marked op as it is (fusing the
// product's rounding into it would drop the mark).

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @residual
// CHECK:         %[[R:.*]] = tensor.collapse_shape %arg4 {{\[\[}}0], [1, 2]] : tensor<1x1x64xf16> into tensor<1x64xf16>
// CHECK:         %[[S:.*]] = call @__fp8_gemm_1(%arg0, %arg1, %arg2, %arg3, %[[R]]) : {{.*}} -> tensor<1x64xf16>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[S]] {{\[\[}}0], [1, 2]] output_shape [1, 1, 64] : tensor<1x64xf16> into tensor<1x1x64xf16>
// CHECK:         return %[[E]]
// CHECK:       func.func private @__fp8_gemm_1({{.*}}, %arg4: tensor<1x64xf16>) -> tensor<1x64xf16>
// CHECK-SAME:      epilogue_inputs = 1 : i64
// CHECK:         linalg.generic {{.*}} ins(%arg4, %{{.*}} : tensor<1x64xf16>, tensor<1x64xf16>) {{.*}} attrs =  {fp8.gemm_epilogue}
// FUSED-LABEL: func.func private @__fp8_gemm_1
// FUSED:         arith.truncf
// FUSED-NEXT:      linalg.yield
// FUSED:         linalg.generic {{.*}} ins(%arg4, %{{.*}} : tensor<1x64xf16>, tensor<1x64xf16>) {{.*}} attrs =  {fp8.gemm_epilogue}
// FUSED-NEXT:    ^bb0(%{{.*}}: f16, %{{.*}}: f16, %{{.*}}: f16):
// FUSED-NEXT:      arith.addf
func.func @residual(%a: tensor<1x128xf8E4M3FN>, %sa: tensor<f32>,
                    %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>,
                    %h: tensor<1x1x64xf16>) -> tensor<1x1x64xf16> {
  %t = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<1x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<1x64xf16>
  %x = tensor.expand_shape %t [[0], [1, 2]] output_shape [1, 1, 64] : tensor<1x64xf16> into tensor<1x1x64xf16>
  %e = tensor.empty() : tensor<1x1x64xf16>
  %s = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%h, %x : tensor<1x1x64xf16>, tensor<1x1x64xf16>) outs(%e : tensor<1x1x64xf16>) {
  ^bb0(%u: f16, %v: f16, %o: f16):
    %r = arith.addf %u, %v : f16
    linalg.yield %r : f16
  } -> tensor<1x1x64xf16>
  return %s : tensor<1x1x64xf16>
}

// -----

// With max-rows=64 a product of 128 rows (a prefill) keeps its consumer.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @prefill
// CHECK-NOT:     fp8.gemm_epilogue
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK-NOT:     epilogue_inputs
func.func @prefill(%a: tensor<128x128xf8E4M3FN>, %sa: tensor<f32>,
                   %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>,
                   %h: tensor<128x64xf32>) -> tensor<128x64xf32> {
  %p = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<128x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<128x64xf32>
  %e = tensor.empty() : tensor<128x64xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %p : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.addf %u, %v : f32
    linalg.yield %r : f32
  } -> tensor<128x64xf32>
  return %s : tensor<128x64xf32>
}
