// RUN: fp8-opt %s -convert-fp8-to-linalg -split-input-file | FileCheck %s
// The structure of each lowering; test/Integration/CPU checks the numbers.

// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$BLK:.+]] = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
// CHECK-LABEL: func @quantize_block
// CHECK: linalg.generic {indexing_maps = [#[[$ID]], #[[$BLK]], #[[$ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK: %[[D:.+]] = arith.divf
// CHECK: %[[MAX:.+]] = arith.constant 4.480000e+02 : f32
// CHECK: %[[LO:.+]] = arith.minimumf %[[D]], %[[MAX]]
// CHECK: %[[NMAX:.+]] = arith.constant -4.480000e+02 : f32
// CHECK: %[[C:.+]] = arith.maximumf %[[LO]], %[[NMAX]]
// CHECK: arith.truncf %[[C]] : f32 to f8E4M3FN
// CHECK-NOT: fp8.
func.func @quantize_block(%x: tensor<4x200xf32>, %s: tensor<4x2xf32>) -> tensor<4x200xf8E4M3FN> {
  %q = fp8.quantize %x, %s layout<block 1x128> : tensor<4x200xf32>, tensor<4x2xf32> -> tensor<4x200xf8E4M3FN>
  return %q : tensor<4x200xf8E4M3FN>
}

// -----

// E5M2 saturates at 57344; per-tensor scales are read through a rank-0 map.
// CHECK-DAG: #[[$SCALAR:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func @quantize_tensor_e5m2
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$SCALAR]], #{{.+}}]
// CHECK: arith.constant 5.734400e+04 : f32
// CHECK: arith.truncf %{{.+}} : f32 to f8E5M2
func.func @quantize_tensor_e5m2(%x: tensor<64xf32>, %s: tensor<f32>) -> tensor<64xf8E5M2> {
  %q = fp8.quantize %x, %s layout<tensor> : tensor<64xf32>, tensor<f32> -> tensor<64xf8E5M2>
  return %q : tensor<64xf8E5M2>
}

// -----

// E8M0 scales decode by moving the byte into the FP32 exponent field.
// CHECK-LABEL: func @dequantize_e8m0
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.+}} : f8E8M0FNU to i8
// CHECK: arith.shli
// CHECK: arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK: arith.mulf
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @dequantize_e8m0(%q: tensor<2x64xf8E4M3FN>, %s: tensor<2x2xf8E8M0FNU>) -> tensor<2x64xbf16> {
  %x = fp8.dequantize %q, %s layout<block 1x32> : tensor<2x64xf8E4M3FN>, tensor<2x2xf8E8M0FNU> -> tensor<2x64xbf16>
  return %x : tensor<2x64xbf16>
}

// -----

// Partial blocks are padded with zeros, which cannot raise an amax.
// CHECK-LABEL: func @amax_block
// CHECK: %[[P:.+]] = tensor.pad %{{.+}} low[0, 0] high[0, 56]
// CHECK: %[[E:.+]] = tensor.expand_shape %[[P]] {{\[}}[0], [1, 2]] output_shape [4, 2, 128]
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[E]] : tensor<4x2x128xf32>)
// CHECK: math.absf
// CHECK: arith.maximumf
func.func @amax_block(%x: tensor<4x200xf32>) -> tensor<4x2xf32> {
  %a = fp8.amax %x layout<block 1x128> : tensor<4x200xf32> -> tensor<4x2xf32>
  return %a : tensor<4x2xf32>
}

// -----

// CHECK-LABEL: func @amax_row_and_tensor
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1]] output_shape [4, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK-SAME: outs(%{{.+}} : tensor<f32>)
func.func @amax_row_and_tensor(%x: tensor<4x200xbf16>) -> (tensor<4x1xf32>, tensor<f32>) {
  %a = fp8.amax %x layout<row> : tensor<4x200xbf16> -> tensor<4x1xf32>
  %t = fp8.amax %x layout<tensor> : tensor<4x200xbf16> -> tensor<f32>
  return %a, %t : tensor<4x1xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func @scales
// current: 448 / max(amax, eps), unusable amax -> 1, s = 1 / e
// CHECK: linalg.generic
// CHECK: arith.cmpf olt
// CHECK: arith.divf
// CHECK: arith.cmpf uno
// CHECK: arith.select
// CHECK: arith.divf
// pow2 (block recipe): clear the mantissa
// CHECK: linalg.generic
// CHECK: arith.andi %{{.+}}, %{{.+}} : i32
// mxfp8: E8M0 byte
// CHECK: linalg.generic
// CHECK: arith.trunci %{{.+}} : i32 to i8
// CHECK: arith.bitcast %{{.+}} : i8 to f8E8M0FNU
func.func @scales(%a: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf8E8M0FNU>) {
  %c = fp8.compute_scale %a recipe(#fp8.current<eps = 1.0e-4>) format(e4m3) : tensor<4x2xf32> -> tensor<4x2xf32>
  %b = fp8.compute_scale %a recipe(#fp8.block) format(e4m3) : tensor<4x2xf32> -> tensor<4x2xf32>
  %m = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e4m3) : tensor<4x2xf32> -> tensor<4x2xf8E8M0FNU>
  return %c, %b, %m : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf8E8M0FNU>
}

// -----

// Delayed: reduce the history over dimension 0, keep the previous scale
// where the history's amax is unusable.
// CHECK-LABEL: func @delayed
// CHECK-SAME: (%[[H:.+]]: tensor<16x3xf32>, %[[P:.+]]: tensor<3xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]} ins(%[[H]] : tensor<16x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %[[P]] : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.ori
// CHECK: %[[UNUSABLE:.+]] = arith.ori
// CHECK: arith.select %[[UNUSABLE]]
// CHECK-LABEL: func @delayed_most_recent
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [1, 3] [1, 1] : tensor<16x3xf32> to tensor<3xf32>
func.func @delayed(%h: tensor<16x3xf32>, %p: tensor<3xf32>) -> tensor<3xf32> {
  %s = fp8.compute_scale %h previous %p recipe(#fp8.delayed<history = 16, margin = 2>) format(e4m3) : tensor<16x3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %s : tensor<3xf32>
}
func.func @delayed_most_recent(%h: tensor<16x3xf32>, %p: tensor<3xf32>) -> tensor<3xf32> {
  %s = fp8.compute_scale %h previous %p recipe(#fp8.delayed<history = 16, algo = most_recent>) format(e4m3) : tensor<16x3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %s : tensor<3xf32>
}

// -----

// CHECK-LABEL: func @history
// CHECK-SAME: (%[[H:.+]]: tensor<4x2xf32>, %[[A:.+]]: tensor<2xf32>)
// CHECK: %[[OLD:.+]] = tensor.extract_slice %[[H]][0, 0] [3, 2] [1, 1]
// CHECK: %[[R:.+]] = tensor.insert_slice %[[OLD]] into %{{.+}}[1, 0] [3, 2] [1, 1]
// CHECK: tensor.insert_slice %[[A]] into %[[R]][0, 0] [1, 2] [1, 1] : tensor<2xf32> into tensor<4x2xf32>
func.func @history(%h: tensor<4x2xf32>, %a: tensor<2xf32>) -> tensor<4x2xf32> {
  %n = fp8.history_update %h, %a : tensor<4x2xf32>, tensor<2xf32>
  return %n : tensor<4x2xf32>
}

// -----

// Both operands are dequantized, contracted in FP32 (rhs read as N x K),
// then bias, epilogue and one rounding to the result type.
// CHECK-DAG: #[[$LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[$RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[$OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[$BIAS:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func @matmul
// CHECK: arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK: arith.extf %{{.+}} : f8E5M2 to f32
// CHECK: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[$LHS]], #[[$RHS]], #[[$OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$BIAS]], #{{.+}}]
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: math.tanh
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @matmul(%a: tensor<2x8x64xf8E4M3FN>, %sa: tensor<2x8x1xf32>, %w: tensor<32x64xf8E5M2>, %sw: tensor<32x1xf32>, %b: tensor<32xbf16>) -> tensor<2x8x32xbf16> {
  %y = fp8.scaled_matmul %a, %sa layout<row>, %w, %sw layout<row> bias %b transpose_rhs epilogue(gelu_tanh)
      : (tensor<2x8x64xf8E4M3FN>, tensor<2x8x1xf32>, tensor<32x64xf8E5M2>, tensor<32x1xf32>, tensor<32xbf16>) -> tensor<2x8x32xbf16>
  return %y : tensor<2x8x32xbf16>
}

// -----

// M-major lhs scales (m_major(4): [batch, Kb, align(Mb, 4)]) are read back
// in the layout's own order: the padding sliced off, the trailing dims
// transposed; then the product as above.
// CHECK-LABEL: func @matmul_m_major
// CHECK: %[[S:.+]] = tensor.extract_slice %{{.+}}[0, 0, 0] [2, 2, 6] [1, 1, 1] : tensor<2x2x8xf32> to tensor<2x2x6xf32>
// CHECK: %[[T:.+]] = linalg.transpose ins(%[[S]] : tensor<2x2x6xf32>) outs(%{{.+}} : tensor<2x6x2xf32>) permutation = [0, 2, 1]
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[T]] : tensor<2x6x256xf8E4M3FN>, tensor<2x6x2xf32>)
func.func @matmul_m_major(%a: tensor<2x6x256xf8E4M3FN>, %sa: tensor<2x2x8xf32>, %w: tensor<32x256xf8E4M3FN>, %sw: tensor<f32>) -> tensor<2x6x32xf32> {
  %y = fp8.scaled_matmul %a, %sa layout<block 1x128> m_major(4), %w, %sw layout<tensor> transpose_rhs
      : (tensor<2x6x256xf8E4M3FN>, tensor<2x2x8xf32>, tensor<32x256xf8E4M3FN>, tensor<f32>) -> tensor<2x6x32xf32>
  return %y : tensor<2x6x32xf32>
}

// -----

// A pass-through transpose moves data and scales.
// CHECK-LABEL: func @transpose_pass_through
// CHECK: linalg.transpose ins(%{{.+}} : tensor<4x8xf8E4M3FN>) outs(%{{.+}} : tensor<8x4xf8E4M3FN>) permutation = [1, 0]
// CHECK: linalg.transpose ins(%{{.+}} : tensor<4x1xf32>) outs(%{{.+}} : tensor<1x4xf32>) permutation = [1, 0]
func.func @transpose_pass_through(%q: tensor<4x8xf8E4M3FN>, %s: tensor<4x1xf32>) -> (tensor<8x4xf8E4M3FN>, tensor<1x4xf32>) {
  %r:2 = fp8.transpose %q, %s layout<row> permutation = [1, 0] to layout<col> : tensor<4x8xf8E4M3FN>, tensor<4x1xf32> -> tensor<8x4xf8E4M3FN>, tensor<1x4xf32>
  return %r#0, %r#1 : tensor<8x4xf8E4M3FN>, tensor<1x4xf32>
}

// -----

// Otherwise: dequantize, transpose, amax and scales for the new blocks,
// quantize.
// CHECK-LABEL: func @transpose_requantize
// CHECK: arith.extf %{{.+}} : f8E4M3FN to f32
// CHECK: linalg.transpose ins(%{{.+}} : tensor<256x128xf32>)
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [128, 2, 128]
// CHECK: math.absf
// CHECK: arith.andi
// CHECK: arith.truncf %{{.+}} : f32 to f8E4M3FN
func.func @transpose_requantize(%q: tensor<256x128xf8E4M3FN>, %s: tensor<256x1xf32>) -> (tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) {
  %r:2 = fp8.transpose %q, %s layout<block 1x128> permutation = [1, 0] to layout<block 1x128> recipe(#fp8.block)
      : tensor<256x128xf8E4M3FN>, tensor<256x1xf32> -> tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
  return %r#0, %r#1 : tensor<128x256xf8E4M3FN>, tensor<128x2xf32>
}

// -----

// A block covering whole trailing dimensions (`block 128x128` over
// [B, H, S, D]: 128 positions x the head dim, contiguous) reduces as one
// row of 128 x 128 elements after the kept dimensions (unit dimensions
// count as kept), the form the GPU runs as a warp per row.
// CHECK-LABEL: func @amax_trailing_block
// CHECK:         %[[E:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3], [4]] output_shape [1, 2, 2, 128, 128] : tensor<1x2x256x128xbf16> into tensor<1x2x2x128x128xbf16>
// CHECK:         %[[C:.*]] = tensor.collapse_shape %[[E]] {{\[}}[0], [1], [2], [3, 4]] : tensor<1x2x2x128x128xbf16> into tensor<1x2x2x16384xbf16>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[C]] : tensor<1x2x2x16384xbf16>)
// CHECK:         tensor.expand_shape {{.*}} : tensor<1x2x2xf32> into tensor<1x2x2x1xf32>
func.func @amax_trailing_block(%x: tensor<1x2x256x128xbf16>) -> tensor<1x2x2x1xf32> {
  %a = fp8.amax %x layout<block 128x128> : tensor<1x2x256x128xbf16> -> tensor<1x2x2x1xf32>
  return %a : tensor<1x2x2x1xf32>
}

// -----

// Per tensor, unit dimensions stay reduced: a rank-0 amax (a decode step's
// 1 x 1 x K activation).
// CHECK-LABEL: func @amax_tensor_unit_dims
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction"]} ins(%arg0 : tensor<1x1x64xf32>) outs(%{{.*}} : tensor<f32>)
func.func @amax_tensor_unit_dims(%x: tensor<1x1x64xf32>) -> tensor<f32> {
  %a = fp8.amax %x layout<tensor> : tensor<1x1x64xf32> -> tensor<f32>
  return %a : tensor<f32>
}
