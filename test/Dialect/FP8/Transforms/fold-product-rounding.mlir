// RUN: fp8-opt %s -split-input-file -fp8-fold-product-rounding | FileCheck %s

// An FP16 graph's MatMul: the product's FP32 result, reshaped, then rounded
// to f16 by an element-wise generic -> the product writes f16 and the
// reshapes carry f16; the cast is gone.
// CHECK-LABEL: func @through_reshapes
// CHECK:         %[[P:.*]] = fp8.scaled_matmul {{.*}} -> tensor<64x32xf16>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[P]] {{.*}} : tensor<64x32xf16> into tensor<2048xf16>
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[C]] {{.*}} : tensor<2048xf16> into tensor<1x64x32xf16>
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[E]]
func.func @through_reshapes(%a: tensor<64x128xbf16>, %w: tensor<32x128xbf16>) -> tensor<1x64x32xf16> {
  %one = arith.constant dense<1.0> : tensor<f32>
  %p = fp8.scaled_matmul %a, %one layout<tensor>, %w, %one layout<tensor> transpose_rhs
      : (tensor<64x128xbf16>, tensor<f32>, tensor<32x128xbf16>, tensor<f32>) -> tensor<64x32xf32>
  %c = tensor.collapse_shape %p [[0, 1]] : tensor<64x32xf32> into tensor<2048xf32>
  %e = tensor.expand_shape %c [[0, 1, 2]] output_shape [1, 64, 32] : tensor<2048xf32> into tensor<1x64x32xf32>
  %init = tensor.empty() : tensor<1x64x32xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                        affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e : tensor<1x64x32xf32>) outs(%init : tensor<1x64x32xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x64x32xf16>
  return %r : tensor<1x64x32xf16>
}

// -----

// An arith.truncf on the tensor, with the product's bias and activation:
// the epilogue is applied in FP32 and rounded once either way.
// CHECK-LABEL: func @truncf_bf16
// CHECK:         %[[P:.*]] = fp8.scaled_matmul {{.*}} bias {{.*}} epilogue(gelu_tanh) {{.*}} -> tensor<16x32xbf16>
// CHECK-NOT:     arith.truncf
// CHECK:         return %[[P]]
func.func @truncf_bf16(%a: tensor<16x64xf8E4M3FN>, %sa: tensor<f32>, %w: tensor<32x64xf8E4M3FN>, %sw: tensor<f32>, %b: tensor<32xf32>) -> tensor<16x32xbf16> {
  %p = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> bias %b transpose_rhs epilogue(gelu_tanh)
      : (tensor<16x64xf8E4M3FN>, tensor<f32>, tensor<32x64xf8E4M3FN>, tensor<f32>, tensor<32xf32>) -> tensor<16x32xf32>
  %t = arith.truncf %p : tensor<16x32xf32> to tensor<16x32xbf16>
  return %t : tensor<16x32xbf16>
}

// -----

// Left alone: a product read by something else too (its FP32 value is
// needed), a reshape read twice, a rounding to FP8 (the product's result
// type is never FP8), and a body that does more than round.
// CHECK-LABEL: func @not_folded
// CHECK:         fp8.scaled_matmul {{.*}} -> tensor<16x32xf32>
// CHECK:         arith.truncf %{{.*}} : tensor<16x32xf32> to tensor<16x32xf16>
// CHECK:         fp8.scaled_matmul {{.*}} -> tensor<32x16xf32>
// CHECK:         arith.truncf %{{.*}} : tensor<512xf32> to tensor<512xf16>
// CHECK:         fp8.scaled_matmul {{.*}} -> tensor<16x32xf32>
// CHECK:         arith.truncf %{{.*}} : tensor<16x32xf32> to tensor<16x32xf8E4M3FN>
// CHECK:         fp8.scaled_matmul {{.*}} -> tensor<16x32xf32>
// CHECK:         linalg.generic
// CHECK:           arith.mulf
// CHECK:           arith.truncf
func.func @not_folded(%a: tensor<16x64xbf16>, %w: tensor<32x64xbf16>)
    -> (tensor<16x32xf16>, tensor<16x32xf32>, tensor<512xf16>, tensor<512xf32>,
        tensor<16x32xf8E4M3FN>, tensor<16x32xf16>) {
  %one = arith.constant dense<1.0> : tensor<f32>
  %p0 = fp8.scaled_matmul %a, %one layout<tensor>, %w, %one layout<tensor> transpose_rhs
      : (tensor<16x64xbf16>, tensor<f32>, tensor<32x64xbf16>, tensor<f32>) -> tensor<16x32xf32>
  %t0 = arith.truncf %p0 : tensor<16x32xf32> to tensor<16x32xf16>
  %p1 = fp8.scaled_matmul %w, %one layout<tensor>, %a, %one layout<tensor> transpose_rhs
      : (tensor<32x64xbf16>, tensor<f32>, tensor<16x64xbf16>, tensor<f32>) -> tensor<32x16xf32>
  %p1r = tensor.collapse_shape %p1 [[0, 1]] : tensor<32x16xf32> into tensor<512xf32>
  %t1 = arith.truncf %p1r : tensor<512xf32> to tensor<512xf16>
  %p2 = fp8.scaled_matmul %a, %one layout<tensor>, %w, %one layout<tensor> transpose_rhs
      : (tensor<16x64xbf16>, tensor<f32>, tensor<32x64xbf16>, tensor<f32>) -> tensor<16x32xf32>
  %t2 = arith.truncf %p2 : tensor<16x32xf32> to tensor<16x32xf8E4M3FN>
  %p3 = fp8.scaled_matmul %a, %one layout<tensor>, %w, %one layout<tensor> transpose_rhs
      : (tensor<16x64xbf16>, tensor<f32>, tensor<32x64xbf16>, tensor<f32>) -> tensor<16x32xf32>
  %init = tensor.empty() : tensor<16x32xf16>
  %t3 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                         affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%p3 : tensor<16x32xf32>) outs(%init : tensor<16x32xf16>) {
  ^bb0(%x: f32, %o: f16):
    %m = arith.mulf %x, %x : f32
    %t = arith.truncf %m : f32 to f16
    linalg.yield %t : f16
  } -> tensor<16x32xf16>
  return %t0, %p0, %t1, %p1r, %t2, %t3
      : tensor<16x32xf16>, tensor<16x32xf32>, tensor<512xf16>, tensor<512xf32>,
        tensor<16x32xf8E4M3FN>, tensor<16x32xf16>
}
