// RUN: fp8-opt %s -split-input-file -fp8-transpose-rescale -verify-diagnostics | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-transpose-rescale -canonicalize 2>/dev/null | FileCheck %s --check-prefix=FOLD

// Square weight blocks pass through.
// CHECK-LABEL: func @square_blocks
// CHECK: %[[T:.+]], %[[TS:.+]] = fp8.transpose %{{.+}}, %{{.+}} layout<block 128x128> permutation = [1, 0] to layout<block 128x128> : tensor<256x64xf8E4M3FN>, tensor<2x1xf32> -> tensor<64x256xf8E4M3FN>, tensor<1x2xf32>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}} layout<block 1x128>, %[[T]], %[[TS]] layout<block 128x128> transpose_rhs
func.func @square_blocks(%a: tensor<32x256xf8E4M3FN>, %sa: tensor<32x2xf32>, %w: tensor<256x64xf8E4M3FN>, %sw: tensor<2x1xf32>) -> tensor<32x64xf32> {
  // expected-remark @+1 {{rhs made K-major: the scales pass through}}
  %y = fp8.scaled_matmul %a, %sa layout<block 1x128>, %w, %sw layout<block 128x128>
      : (tensor<32x256xf8E4M3FN>, tensor<32x2xf32>, tensor<256x64xf8E4M3FN>, tensor<2x1xf32>) -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}

// -----

// MX blocks along K (32x1 on K x N) become 1x32 on N x K; per-tensor scales
// and batched operands too.
// CHECK-LABEL: func @mx_and_tensor
// CHECK: fp8.transpose %{{.+}} layout<block 32x1> permutation = [1, 0] to layout<block 1x32> : tensor<64x16xf8E4M3FN>, tensor<2x16xf8E8M0FNU> -> tensor<16x64xf8E4M3FN>, tensor<16x2xf8E8M0FNU>
// CHECK: fp8.transpose %{{.+}} layout<tensor> permutation = [0, 2, 1] to layout<tensor>
// CHECK: transpose_rhs : (tensor<2x8x32xf8E4M3FN>, tensor<f32>, tensor<2x16x32xf8E4M3FN>, tensor<f32>)
func.func @mx_and_tensor(%a: tensor<8x64xf8E4M3FN>, %sa: tensor<8x2xf8E8M0FNU>, %w: tensor<64x16xf8E4M3FN>, %sw: tensor<2x16xf8E8M0FNU>,
                         %q: tensor<2x8x32xf8E4M3FN>, %k: tensor<2x32x16xf8E4M3FN>, %s: tensor<f32>) -> (tensor<8x16xf32>, tensor<2x8x16xf32>) {
  // expected-remark @+1 {{the scales pass through}}
  %y = fp8.scaled_matmul %a, %sa layout<block 1x32>, %w, %sw layout<block 32x1>
      : (tensor<8x64xf8E4M3FN>, tensor<8x2xf8E8M0FNU>, tensor<64x16xf8E4M3FN>, tensor<2x16xf8E8M0FNU>) -> tensor<8x16xf32>
  // expected-remark @+1 {{the scales pass through}}
  %z = fp8.scaled_matmul %q, %s layout<tensor>, %k, %s layout<tensor>
      : (tensor<2x8x32xf8E4M3FN>, tensor<f32>, tensor<2x32x16xf8E4M3FN>, tensor<f32>) -> tensor<2x8x16xf32>
  return %y, %z : tensor<8x16xf32>, tensor<2x8x16xf32>
}

// -----

// Blocks along N must be re-quantized along K: from the source when the
// quantize is in reach...
// CHECK-LABEL: func @requantize_from_source
// CHECK-SAME: (%{{.+}}: tensor<8x128xf8E4M3FN>, %{{.+}}: tensor<8x1xf32>, %[[X:.+]]: tensor<128x256xf32>
// CHECK: %[[XT:.+]] = linalg.transpose ins(%[[X]] : tensor<128x256xf32>)
// CHECK: %[[A:.+]] = fp8.amax %[[XT]] layout<block 1x128> : tensor<256x128xf32> -> tensor<256x1xf32>
// CHECK: %[[S:.+]] = fp8.compute_scale %[[A]] recipe(#fp8.block)
// CHECK: %[[Q:.+]] = fp8.quantize %[[XT]], %[[S]] layout<block 1x128>
// CHECK: fp8.scaled_matmul %{{.+}}, %{{.+}}, %[[Q]], %[[S]] layout<block 1x128> transpose_rhs
func.func @requantize_from_source(%a: tensor<8x128xf8E4M3FN>, %sa: tensor<8x1xf32>, %x: tensor<128x256xf32>) -> tensor<8x256xf32> {
  %am = fp8.amax %x layout<block 1x128> : tensor<128x256xf32> -> tensor<128x2xf32>
  %s = fp8.compute_scale %am recipe(#fp8.block) format(e4m3) : tensor<128x2xf32> -> tensor<128x2xf32>
  %q = fp8.quantize %x, %s layout<block 1x128> : tensor<128x256xf32>, tensor<128x2xf32> -> tensor<128x256xf8E4M3FN>
  // expected-remark @+1 {{rhs re-quantized K-major from the high-precision source}}
  %y = fp8.scaled_matmul %a, %sa layout<row>, %q, %s layout<block 1x128>
      : (tensor<8x128xf8E4M3FN>, tensor<8x1xf32>, tensor<128x256xf8E4M3FN>, tensor<128x2xf32>) -> tensor<8x256xf32>
  return %y : tensor<8x256xf32>
}

// -----

// ...otherwise by dequantize-requantize in fp8.transpose.
// CHECK-LABEL: func @requantize_from_fp8
// CHECK: fp8.transpose %{{.+}} layout<block 1x64> permutation = [1, 0] to layout<block 1x64> recipe(#fp8.current)
func.func @requantize_from_fp8(%a: tensor<8x128xf8E4M3FN>, %sa: tensor<8x1xf32>, %q: tensor<128x128xf8E4M3FN>, %s: tensor<128x2xf32>) -> tensor<8x128xf32> {
  // expected-remark @+1 {{rhs re-quantized K-major by dequantize-requantize}}
  %y = fp8.scaled_matmul %a, %sa layout<row>, %q, %s layout<block 1x64>
      : (tensor<8x128xf8E4M3FN>, tensor<8x1xf32>, tensor<128x128xf8E4M3FN>, tensor<128x2xf32>) -> tensor<8x128xf32>
  return %y : tensor<8x128xf32>
}

// -----

// Constant weights are transposed at compile time.
// FOLD-LABEL: func @constant_weight
// FOLD: %[[W:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf8E4M3FN>
// FOLD-NOT: fp8.transpose
// FOLD: fp8.scaled_matmul %{{.+}}, %{{.+}} layout<tensor>, %[[W]], %{{.+}} layout<tensor> transpose_rhs
func.func @constant_weight(%a: tensor<4x2xf8E4M3FN>, %s: tensor<f32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf8E4M3FN>
  // expected-remark @+1 {{the scales pass through}}
  %y = fp8.scaled_matmul %a, %s layout<tensor>, %w, %s layout<tensor>
      : (tensor<4x2xf8E4M3FN>, tensor<f32>, tensor<2x2xf8E4M3FN>, tensor<f32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
