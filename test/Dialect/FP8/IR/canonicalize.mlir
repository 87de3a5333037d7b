// RUN: fp8-opt %s -canonicalize -cse -split-input-file | FileCheck %s
// Constant folding with the spec definitions, and the canonical patterns.

// Saturation, ties to even, NaN, signed zero (values worked out from the
// OCP OFP8 definitions: 17 -> 16 and 19 -> 20 are ties; 500 and -inf
// saturate; 2^-10 is half the smallest E4M3 subnormal and rounds to 0).
// CHECK-LABEL: func @fold_quantize
// CHECK-NOT: fp8.quantize
// CHECK: arith.constant dense<[1.000000e+00, 1.600000e+01, 4.480000e+02, -4.480000e+02, 0x7F, 0.000000e+00, -0.000000e+00, 2.000000e+01]> : tensor<8xf8E4M3FN>
// CHECK: arith.constant dense<[1.000000e+00, 1.600000e+01, 5.120000e+02, -5.734400e+04, 0x7F, 9.765620e-04, -0.000000e+00, 2.000000e+01]> : tensor<8xf8E5M2>
func.func @fold_quantize() -> (tensor<8xf8E4M3FN>, tensor<8xf8E5M2>) {
  %x = arith.constant dense<[1.0, 17.0, 500.0, 0xFF800000, 0x7FC00000, 0.0009765625, -0.0, 19.0]> : tensor<8xf32>
  %s = arith.constant dense<1.0> : tensor<f32>
  %q = fp8.quantize %x, %s layout<tensor> : tensor<8xf32>, tensor<f32> -> tensor<8xf8E4M3FN>
  %q2 = fp8.quantize %x, %s layout<tensor> : tensor<8xf32>, tensor<f32> -> tensor<8xf8E5M2>
  return %q, %q2 : tensor<8xf8E4M3FN>, tensor<8xf8E5M2>
}

// -----

// Each element uses its own block's scale; the last block of a row is partial.
// CHECK-LABEL: func @fold_quantize_blocks
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 6.000000e+00], [2.000000e+00, 2.500000e+00, 2.400000e+01]]> : tensor<2x3xf8E4M3FN>
func.func @fold_quantize_blocks() -> tensor<2x3xf8E4M3FN> {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %s = arith.constant dense<[[1.0, 0.5], [2.0, 0.25]]> : tensor<2x2xf32>
  %q = fp8.quantize %x, %s layout<block 1x2> : tensor<2x3xf32>, tensor<2x2xf32> -> tensor<2x3xf8E4M3FN>
  return %q : tensor<2x3xf8E4M3FN>
}

// -----

// E8M0 0x80 = 2, 0x7E = 0.5; NaN stays NaN.
// CHECK-LABEL: func @fold_dequantize_e8m0
// CHECK: arith.constant dense<{{\[}}[2.000000e+00, -4.000000e+00, 2.240000e+02, 0x7FC00000]]> : tensor<1x4xf32>
func.func @fold_dequantize_e8m0() -> tensor<1x4xf32> {
  %q = arith.constant dense<[[1.0, -2.0, 448.0, 0x7F]]> : tensor<1x4xf8E4M3FN>
  %s = arith.constant dense<[[0x80, 0x7E]]> : tensor<1x2xf8E8M0FNU>
  %x = fp8.dequantize %q, %s layout<block 1x2> : tensor<1x4xf8E4M3FN>, tensor<1x2xf8E8M0FNU> -> tensor<1x4xf32>
  return %x : tensor<1x4xf32>
}

// -----

// NaN anywhere in a block makes the block's amax NaN.
// CHECK-LABEL: func @fold_amax
// CHECK: arith.constant dense<{{\[}}[7.000000e+00, 3.000000e+00], [0x7FC00000, 5.000000e-01]]> : tensor<2x2xf32>
// CHECK: arith.constant dense<0x7FC00000> : tensor<f32>
func.func @fold_amax() -> (tensor<2x2xf32>, tensor<f32>) {
  %x = arith.constant dense<[[1.0, -7.0, 3.0], [0x7FC00000, 2.0, -0.5]]> : tensor<2x3xf32>
  %a = fp8.amax %x layout<block 1x2> : tensor<2x3xf32> -> tensor<2x2xf32>
  %t = fp8.amax %x layout<tensor> : tensor<2x3xf32> -> tensor<f32>
  return %a, %t : tensor<2x2xf32>, tensor<f32>
}

// -----

// current: 1/(448/2), unusable amaxes give 1, 1/(448/3); block: pow2 1/128;
// mxfp8 rceil: 2^-7, 0 -> 2^-127, NaN -> 0xFF, inf -> 0xFE (2^127);
// floor for E5M2: 2^(1-15).
// CHECK-LABEL: func @fold_scales
// CHECK: arith.constant dense<[0.00446428591, 1.000000e+00, 1.000000e+00, 1.000000e+00, 0.00669642864]> : tensor<5xf32>
// CHECK: arith.constant dense<[7.812500e-03, 1.000000e+00, 1.000000e+00, 1.000000e+00, 7.812500e-03]> : tensor<5xf32>
// CHECK: arith.constant dense<[7.812500e-03, 5.877470e-39, 0xFF, 1.701410e+38, 7.812500e-03]> : tensor<5xf8E8M0FNU>
// CHECK: arith.constant dense<[6.103520e-05, 5.877470e-39, 0xFF, 1.701410e+38, 6.103520e-05]> : tensor<5xf8E8M0FNU>
func.func @fold_scales() -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf8E8M0FNU>, tensor<5xf8E8M0FNU>) {
  %a = arith.constant dense<[2.0, 0.0, 0x7FC00000, 0x7F800000, 3.0]> : tensor<5xf32>
  %c = fp8.compute_scale %a recipe(#fp8.current) format(e4m3) : tensor<5xf32> -> tensor<5xf32>
  %b = fp8.compute_scale %a recipe(#fp8.block) format(e4m3) : tensor<5xf32> -> tensor<5xf32>
  %m = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e4m3) : tensor<5xf32> -> tensor<5xf8E8M0FNU>
  %f = fp8.compute_scale %a recipe(#fp8.mxfp8<rounding = floor>) format(e5m2) : tensor<5xf32> -> tensor<5xf8E8M0FNU>
  return %c, %b, %m, %f : tensor<5xf32>, tensor<5xf32>, tensor<5xf8E8M0FNU>, tensor<5xf8E8M0FNU>
}

// -----

// max: (448/4)/2 -> 1/56 and (448/1)/2 -> 1/224; most_recent: history[0] = 0
// keeps the previous 0.5, then 1/448.
// CHECK-LABEL: func @fold_delayed
// CHECK: arith.constant dense<[0.0178571437, 0.00446428591]> : tensor<2xf32>
// CHECK: arith.constant dense<[5.000000e-01, 0.00223214296]> : tensor<2xf32>
func.func @fold_delayed() -> (tensor<2xf32>, tensor<2xf32>) {
  %h = arith.constant dense<[[0.0, 1.0], [4.0, 0.0], [2.0, 0.0]]> : tensor<3x2xf32>
  %p = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %s = fp8.compute_scale %h previous %p recipe(#fp8.delayed<history = 3, margin = 1>) format(e4m3) : tensor<3x2xf32>, tensor<2xf32> -> tensor<2xf32>
  %r = fp8.compute_scale %h previous %p recipe(#fp8.delayed<history = 3, algo = most_recent>) format(e4m3) : tensor<3x2xf32>, tensor<2xf32> -> tensor<2xf32>
  return %s, %r : tensor<2xf32>, tensor<2xf32>
}

// -----

// CHECK-LABEL: func @fold_history
// CHECK: arith.constant dense<{{\[}}[7.000000e+00, 8.000000e+00], [1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<3x2xf32>
func.func @fold_history() -> tensor<3x2xf32> {
  %h = arith.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %a = arith.constant dense<[7.0, 8.0]> : tensor<2xf32>
  %n = fp8.history_update %h, %a : tensor<3x2xf32>, tensor<2xf32>
  return %n : tensor<3x2xf32>
}

// -----

// A round trip through FP8 with the same constant scale cancels.
// CHECK-LABEL: func @cancel_round_trip
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32>)
// CHECK: %[[Q:.+]] = fp8.quantize %[[X]]
// CHECK-NOT: fp8.dequantize
// CHECK: return %[[Q]]
func.func @cancel_round_trip(%x: tensor<4x8xf32>) -> tensor<4x8xf8E4M3FN> {
  %s = arith.constant dense<[[0.5], [2.0], [0.1], [3.0e-3]]> : tensor<4x1xf32>
  %q = fp8.quantize %x, %s layout<row> : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf8E4M3FN>
  %d = fp8.dequantize %q, %s layout<row> : tensor<4x8xf8E4M3FN>, tensor<4x1xf32> -> tensor<4x8xf32>
  %r = fp8.quantize %d, %s layout<row> : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf8E4M3FN>
  return %r : tensor<4x8xf8E4M3FN>
}

// -----

// Not with a scale of unknown value (q * s could overflow), nor with a scale
// so large that 448 * s leaves FP32's range.
// CHECK-LABEL: func @keep_round_trip
// CHECK-COUNT-2: fp8.quantize
// CHECK: fp8.dequantize
// CHECK: fp8.quantize
func.func @keep_round_trip(%x: tensor<8xf32>, %s: tensor<f32>) -> (tensor<8xf8E4M3FN>, tensor<8xf8E4M3FN>) {
  %q = fp8.quantize %x, %s layout<tensor> : tensor<8xf32>, tensor<f32> -> tensor<8xf8E4M3FN>
  %d = fp8.dequantize %q, %s layout<tensor> : tensor<8xf8E4M3FN>, tensor<f32> -> tensor<8xf32>
  %r = fp8.quantize %d, %s layout<tensor> : tensor<8xf32>, tensor<f32> -> tensor<8xf8E4M3FN>
  %big = arith.constant dense<1.0e36> : tensor<f32>
  %q2 = fp8.quantize %x, %big layout<tensor> : tensor<8xf32>, tensor<f32> -> tensor<8xf8E4M3FN>
  %d2 = fp8.dequantize %q2, %big layout<tensor> : tensor<8xf8E4M3FN>, tensor<f32> -> tensor<8xf32>
  %r2 = fp8.quantize %d2, %big layout<tensor> : tensor<8xf32>, tensor<f32> -> tensor<8xf8E4M3FN>
  return %r, %r2 : tensor<8xf8E4M3FN>, tensor<8xf8E4M3FN>
}

// -----

// Nor when the FP8 value comes from outside (it may hold -NaN or, in E5M2,
// infinities, which the round trip would change).
// CHECK-LABEL: func @keep_foreign_fp8
// CHECK: fp8.dequantize
// CHECK: fp8.quantize
func.func @keep_foreign_fp8(%q: tensor<8xf8E5M2>) -> tensor<8xf8E5M2> {
  %s = arith.constant dense<1.0> : tensor<f32>
  %d = fp8.dequantize %q, %s layout<tensor> : tensor<8xf8E5M2>, tensor<f32> -> tensor<8xf32>
  %r = fp8.quantize %d, %s layout<tensor> : tensor<8xf32>, tensor<f32> -> tensor<8xf8E5M2>
  return %r : tensor<8xf8E5M2>
}

// -----

// One quantization of a tensor feeds every consumer (CSE of pure ops).
// CHECK-LABEL: func @shared_quantization
// CHECK-COUNT-1: fp8.quantize
// CHECK-NOT: fp8.quantize
func.func @shared_quantization(%x: tensor<8x16xf32>, %s: tensor<f32>) -> (tensor<8x16xf8E4M3FN>, tensor<8x16xf8E4M3FN>) {
  %a = fp8.quantize %x, %s layout<tensor> : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf8E4M3FN>
  %b = fp8.quantize %x, %s layout<tensor> : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf8E4M3FN>
  return %a, %b : tensor<8x16xf8E4M3FN>, tensor<8x16xf8E4M3FN>
}

// -----

// CHECK-LABEL: func @identity_transpose
// CHECK-SAME: (%[[Q:.+]]: tensor<4x8xf8E4M3FN>, %[[S:.+]]: tensor<4x1xf32>)
// CHECK-NEXT: return %[[Q]], %[[S]]
func.func @identity_transpose(%q: tensor<4x8xf8E4M3FN>, %s: tensor<4x1xf32>) -> (tensor<4x8xf8E4M3FN>, tensor<4x1xf32>) {
  %r:2 = fp8.transpose %q, %s layout<row> permutation = [0, 1] to layout<row> : tensor<4x8xf8E4M3FN>, tensor<4x1xf32> -> tensor<4x8xf8E4M3FN>, tensor<4x1xf32>
  return %r#0, %r#1 : tensor<4x8xf8E4M3FN>, tensor<4x1xf32>
}
