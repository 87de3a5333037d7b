// RUN: fp8-opt %s --fp8-outline-scaled-matmuls --fp8-fuse-gemm-epilogues="residual-only=1" --split-input-file | FileCheck %s

// residual-only (the GPU pipeline's residual-epilogues): a prefill
// product's residual add -- an arith body reading one other tensor of the
// output's shape -- moves into the GEMM function at any number of rows.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @residual
// CHECK:         %[[S:.*]] = call @__fp8_gemm_1(%arg0, %arg1, %arg2, %arg3, %arg4) : {{.*}} -> tensor<4096x64xf16>
// CHECK:         return %[[S]]
// CHECK:       func.func private @__fp8_gemm_1({{.*}}, %arg4: tensor<4096x64xf16>) -> tensor<4096x64xf16>
// CHECK-SAME:      epilogue_inputs = 1 : i64
// CHECK:         linalg.generic {{.*}} ins(%arg4, %{{.*}} : tensor<4096x64xf16>, tensor<4096x64xf16>) {{.*}} attrs =  {fp8.gemm_epilogue}
func.func @residual(%a: tensor<4096x128xf8E4M3FN>, %sa: tensor<f32>,
                    %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>,
                    %h: tensor<4096x64xf16>) -> tensor<4096x64xf16> {
  %t = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<4096x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<4096x64xf16>
  %e = tensor.empty() : tensor<4096x64xf16>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%h, %t : tensor<4096x64xf16>, tensor<4096x64xf16>) outs(%e : tensor<4096x64xf16>) {
  ^bb0(%u: f16, %v: f16, %o: f16):
    %r = arith.addf %u, %v : f16
    linalg.yield %r : f16
  } -> tensor<4096x64xf16>
  return %s : tensor<4096x64xf16>
}

// -----

// A product times another tensor (SiLU(gate) * up's multiplication) is not
// a residual add: it stays a consumer of its own.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @gated
// CHECK-NOT:     fp8.gemm_epilogue
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK:           arith.mulf
// CHECK-NOT:     epilogue_inputs
func.func @gated(%a: tensor<4096x128xf8E4M3FN>, %sa: tensor<f32>,
                 %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>,
                 %g: tensor<4096x64xf16>) -> tensor<4096x64xf16> {
  %t = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<4096x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<4096x64xf16>
  %e = tensor.empty() : tensor<4096x64xf16>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%g, %t : tensor<4096x64xf16>, tensor<4096x64xf16>) outs(%e : tensor<4096x64xf16>) {
  ^bb0(%u: f16, %v: f16, %o: f16):
    %r = arith.mulf %u, %v : f16
    linalg.yield %r : f16
  } -> tensor<4096x64xf16>
  return %s : tensor<4096x64xf16>
}

// -----

// Two residual tensors besides the product (x + o + down, the add chain
// element-wise fusion would build): not staged, so not fused.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @two_residuals
// CHECK-NOT:     fp8.gemm_epilogue
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK-NOT:     epilogue_inputs
func.func @two_residuals(%a: tensor<4096x128xf8E4M3FN>, %sa: tensor<f32>,
                         %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>,
                         %x: tensor<4096x64xf16>, %y: tensor<4096x64xf16>) -> tensor<4096x64xf16> {
  %t = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<4096x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<4096x64xf16>
  %e = tensor.empty() : tensor<4096x64xf16>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y, %t : tensor<4096x64xf16>, tensor<4096x64xf16>, tensor<4096x64xf16>) outs(%e : tensor<4096x64xf16>) {
  ^bb0(%u: f16, %v: f16, %p: f16, %o: f16):
    %r = arith.addf %u, %v : f16
    %q = arith.addf %r, %p : f16
    linalg.yield %q : f16
  } -> tensor<4096x64xf16>
  return %s : tensor<4096x64xf16>
}
