// RUN: fp8-opt %s -split-input-file -fp8-fuse-elementwise="into-reductions duplicate-cheap through-reshapes" | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-fuse-elementwise="into-reductions duplicate-cheap" | FileCheck %s --check-prefix=NONE

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// A norm's scaling writes [1, T, H] f16; the product reads it as [T, H]
// bf16. The collapse between them moves past the cast, and the two fuse:
// one generic writes bf16, no f16 tensor in between.
// CHECK-LABEL: func @norm_then_cast
// CHECK:         %[[G:.*]] = linalg.generic
// CHECK:           arith.mulf
// CHECK:           arith.truncf {{.*}} f32 to f16
// CHECK:           arith.extf
// CHECK:           arith.truncf {{.*}} f32 to bf16
// CHECK:         } -> tensor<1x8x64xbf16>
// CHECK:         tensor.collapse_shape %[[G]] {{.*}} into tensor<8x64xbf16>
// CHECK-NOT:     linalg.generic
// NONE-LABEL: func @norm_then_cast
// NONE-COUNT-2:  linalg.generic
func.func @norm_then_cast(%x: tensor<1x8x64xf32>, %r: tensor<1x8x1xf32>) -> tensor<8x64xbf16> {
  %e = tensor.empty() : tensor<1x8x64xf16>
  %n = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %r : tensor<1x8x64xf32>, tensor<1x8x1xf32>) outs(%e : tensor<1x8x64xf16>) {
  ^bb0(%a: f32, %s: f32, %o: f16):
    %m = arith.mulf %a, %s : f32
    %t = arith.truncf %m : f32 to f16
    linalg.yield %t : f16
  } -> tensor<1x8x64xf16>
  %c = tensor.collapse_shape %n [[0, 1], [2]] : tensor<1x8x64xf16> into tensor<8x64xf16>
  %e2 = tensor.empty() : tensor<8x64xbf16>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<8x64xf16>) outs(%e2 : tensor<8x64xbf16>) {
  ^bb0(%a: f16, %o: bf16):
    %w = arith.extf %a : f16 to f32
    %t = arith.truncf %w : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<8x64xbf16>
  return %b : tensor<8x64xbf16>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// Attention's output [B, H, S, D] transposed to [B, S, H, D] and cast for
// the next product: the transpose is a permutation generic and fuses with
// the cast (one kernel, not two).
// CHECK:         #[[$PERM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func @transpose_then_cast
// CHECK:         linalg.generic {indexing_maps = [#[[$PERM]], #{{.*}}]
// CHECK:           arith.extf
// CHECK:           arith.truncf
// CHECK:         } -> tensor<1x16x4x32xbf16>
// CHECK-NOT:     linalg.transpose
// NONE-LABEL: func @transpose_then_cast
// NONE:          linalg.transpose
func.func @transpose_then_cast(%o: tensor<1x4x16x32xf16>) -> tensor<1x16x4x32xbf16> {
  %e = tensor.empty() : tensor<1x16x4x32xf16>
  %t = linalg.transpose ins(%o : tensor<1x4x16x32xf16>) outs(%e : tensor<1x16x4x32xf16>) permutation = [0, 2, 1, 3]
  %e2 = tensor.empty() : tensor<1x16x4x32xbf16>
  %b = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%t : tensor<1x16x4x32xf16>) outs(%e2 : tensor<1x16x4x32xbf16>) {
  ^bb0(%a: f16, %z: bf16):
    %w = arith.extf %a : f16 to f32
    %r = arith.truncf %w : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<1x16x4x32xbf16>
  return %b : tensor<1x16x4x32xbf16>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
// A reshape read by a reduction stays where it is (only element-wise ops
// move reshapes).
// CHECK-LABEL: func @reduction_keeps_reshape
// CHECK:         tensor.collapse_shape
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
func.func @reduction_keeps_reshape(%x: tensor<1x8x64xf32>, %acc: tensor<8xf32>) -> tensor<8xf32> {
  %c = tensor.collapse_shape %x [[0, 1], [2]] : tensor<1x8x64xf32> into tensor<8x64xf32>
  %s = linalg.generic {indexing_maps = [#id2, #red], iterator_types = ["parallel", "reduction"]}
      ins(%c : tensor<8x64xf32>) outs(%acc : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}
