// RUN: fp8-opt %s -split-input-file -fp8-block-layout | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-block-layout=multiple=64 | FileCheck %s --check-prefix=MULT

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
