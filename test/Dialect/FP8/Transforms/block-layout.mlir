// RUN: fp8-opt %s -split-input-file -fp8-block-layout | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-block-layout=multiple=64 | FileCheck %s --check-prefix=MULT
// RUN: fp8-opt %s -split-input-file -fp8-block-layout=scale-storage=tma | FileCheck %s --check-prefix=TMA
// RUN: not fp8-opt %s -split-input-file -fp8-block-layout=scale-storage=swizzled 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: for the --scale-storage option: Cannot find option named 'swizzled'!

// K = 100 with MX blocks of 32: both operands padded to K = 128 with FP8
// zeros, scales unchanged (4 blocks either way), bias and result untouched
// along N (blocks are 1 wide there).
// CHECK-LABEL: func @mx
// CHECK: %[[Z:.+]] = arith.constant 0.000000e+00 : f8E4M3FN
// CHECK: %[[A:.+]] = tensor.pad %{{.+}} low[0, 0] high[0, 28]
// CHECK: tensor.yield %[[Z]]
// CHECK: %[[W:.+]] = tensor.pad %{{.+}} low[0, 0] high[0, 28]
// CHECK: %[[Y:.+]] = fp8.scaled_matmul %[[A]], %{{.+}} layout<block 1x32>, %[[W]], %{{.+}} layout<block 1x32> bias %{{.+}} transpose_rhs : (tensor<7x128xf8E4M3FN>, tensor<7x4xf8E8M0FNU>, tensor<33x128xf8E4M3FN>, tensor<33x4xf8E8M0FNU>, tensor<33xf32>) -> tensor<7x33xf32>
// MULT-LABEL: func @mx
// MULT: tensor.pad %{{.+}} low[0, 0] high[0, 28]
func.func @mx(%a: tensor<7x100xf8E4M3FN>, %sa: tensor<7x4xf8E8M0FNU>, %w: tensor<33x100xf8E4M3FN>, %sw: tensor<33x4xf8E8M0FNU>, %b: tensor<33xf32>) -> tensor<7x33xf32> {
  %y = fp8.scaled_matmul %a, %sa layout<block 1x32>, %w, %sw layout<block 1x32> bias %b transpose_rhs : (tensor<7x100xf8E4M3FN>, tensor<7x4xf8E8M0FNU>, tensor<33x100xf8E4M3FN>, tensor<33x4xf8E8M0FNU>, tensor<33xf32>) -> tensor<7x33xf32>
  return %y : tensor<7x33xf32>
}

// -----

// 128x128 weight blocks pad K and N; the product is sliced back.
// CHECK-LABEL: func @square
// CHECK: tensor.pad %{{.+}} low[0, 0] high[0, 56]
// CHECK: tensor.pad %{{.+}} low[0, 0] high[56, 58]
// CHECK: %[[Y:.+]] = fp8.scaled_matmul {{.*}} -> tensor<130x128xf32>
// CHECK: tensor.extract_slice %[[Y]][0, 0] [130, 70] [1, 1] : tensor<130x128xf32> to tensor<130x70xf32>
// MULT-LABEL: func @square
// MULT: tensor.pad %{{.+}} low[0, 0] high[0, 56]
func.func @square(%a: tensor<130x200xf8E4M3FN>, %sa: tensor<130x2xf32>, %w: tensor<200x70xf8E4M3FN>, %sw: tensor<2x1xf32>) -> tensor<130x70xf32> {
  %y = fp8.scaled_matmul %a, %sa layout<block 1x128>, %w, %sw layout<block 128x128> : (tensor<130x200xf8E4M3FN>, tensor<130x2xf32>, tensor<200x70xf8E4M3FN>, tensor<2x1xf32>) -> tensor<130x70xf32>
  return %y : tensor<130x70xf32>
}

// -----

// Per-tensor scales and divisible shapes: nothing to do.
// CHECK-LABEL: func @nothing
// CHECK-NOT: tensor.pad
func.func @nothing(%a: tensor<7x100xf8E4M3FN>, %s: tensor<f32>, %w: tensor<100x33xf8E4M3FN>) -> tensor<7x33xf32> {
  %y = fp8.scaled_matmul %a, %s layout<tensor>, %w, %s layout<tensor> : (tensor<7x100xf8E4M3FN>, tensor<f32>, tensor<100x33xf8E4M3FN>, tensor<f32>) -> tensor<7x33xf32>
  return %y : tensor<7x33xf32>
}

// -----

// scale-storage=tma: lhs scales M-major, 16-byte aligned along M (f32: 4
// rows, E8M0: 16 rows); padding with scale 1, marked unread
// (fp8-untie-shared-fills leaves it undefined); weights and per-tensor
// scales untouched.
// TMA-LABEL: func @tma_block
// TMA: %[[E:.+]] = tensor.empty() : tensor<2x198xf32>
// TMA: %[[T:.+]] = linalg.transpose ins(%{{.+}} : tensor<198x2xf32>) outs(%[[E]] : tensor<2x198xf32>) permutation = [1, 0]
// TMA: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// TMA: %[[P:.+]] = tensor.pad %[[T]] low[0, 0] high[0, 2]
// TMA: tensor.yield %[[ONE]]
// TMA: } {fp8.unread_padding}
// TMA: fp8.scaled_matmul %{{.+}}, %[[P]] layout<block 1x128> m_major(4), %{{.+}}, %{{.+}} layout<block 128x128> transpose_rhs : (tensor<198x256xf8E4M3FN>, tensor<2x200xf32>, tensor<128x256xf8E4M3FN>, tensor<1x2xf32>)
// CHECK-LABEL: func @tma_block
// CHECK-NOT: m_major
func.func @tma_block(%a: tensor<198x256xf8E4M3FN>, %sa: tensor<198x2xf32>, %w: tensor<128x256xf8E4M3FN>, %sw: tensor<1x2xf32>) -> tensor<198x128xf32> {
  %y = fp8.scaled_matmul %a, %sa layout<block 1x128>, %w, %sw layout<block 128x128> transpose_rhs : (tensor<198x256xf8E4M3FN>, tensor<198x2xf32>, tensor<128x256xf8E4M3FN>, tensor<1x2xf32>) -> tensor<198x128xf32>
  return %y : tensor<198x128xf32>
}

// -----

// TMA-LABEL: func @tma_mx_batched
// TMA: linalg.transpose ins(%{{.+}} : tensor<3x7x4xf8E8M0FNU>) outs(%{{.+}} : tensor<3x4x7xf8E8M0FNU>) permutation = [0, 2, 1]
// TMA: tensor.pad %{{.+}} low[0, 0, 0] high[0, 0, 9]
// TMA: fp8.scaled_matmul %{{.+}}, %{{.+}} layout<block 1x32> m_major(16), {{.+}} : (tensor<3x7x128xf8E4M3FN>, tensor<3x4x16xf8E8M0FNU>,
// TMA-LABEL: func @tma_tensor
// TMA-NOT: m_major
func.func @tma_mx_batched(%a: tensor<3x7x128xf8E4M3FN>, %sa: tensor<3x7x4xf8E8M0FNU>, %w: tensor<33x128xf8E4M3FN>, %sw: tensor<33x4xf8E8M0FNU>) -> tensor<3x7x33xf32> {
  %y = fp8.scaled_matmul %a, %sa layout<block 1x32>, %w, %sw layout<block 1x32> transpose_rhs : (tensor<3x7x128xf8E4M3FN>, tensor<3x7x4xf8E8M0FNU>, tensor<33x128xf8E4M3FN>, tensor<33x4xf8E8M0FNU>) -> tensor<3x7x33xf32>
  return %y : tensor<3x7x33xf32>
}
func.func @tma_tensor(%a: tensor<8x128xf8E4M3FN>, %s: tensor<f32>, %w: tensor<64x128xf8E4M3FN>) -> tensor<8x64xf32> {
  %y = fp8.scaled_matmul %a, %s layout<tensor>, %w, %s layout<tensor> transpose_rhs : (tensor<8x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}
