// RUN: fp8-opt %s --split-input-file --allow-unregistered-dialect --fp8-merge-sibling-products | FileCheck %s

// Products of one activation with constant per-row-scaled weights: one
// product over the weights and scales concatenated along N (a splat
// expanded), its result sliced back in order.

// CHECK-LABEL: func.func @row_constants
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [5.000000e-01, 1.500000e+00, 2.500000e+00, 3.500000e+00], [-1.000000e+00, -1.000000e+00, -1.000000e+00, -1.000000e+00], [6.000000e+00, 7.000000e+00, 8.000000e+00, 9.000000e+00], [1.000000e+01, 1.200000e+01, 1.400000e+01, 1.600000e+01]]> : tensor<5x4xf8E4M3FN>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<{{\[}}[2.000000e+00], [4.000000e+00], [8.000000e+00], [2.500000e-01], [1.250000e-01]]> : tensor<5x1xf32>
// CHECK: %[[Y:.*]] = fp8.scaled_matmul %arg0, %arg1 layout<row>, %[[W]], %[[S]] layout<row> transpose_rhs : {{.*}} -> tensor<8x5xf16>
// CHECK-NEXT: %[[Y1:.*]] = tensor.extract_slice %[[Y]][0, 0] [8, 2] [1, 1] : tensor<8x5xf16> to tensor<8x2xf16>
// CHECK-NEXT: %[[Y2:.*]] = tensor.extract_slice %[[Y]][0, 2] [8, 1] [1, 1] : tensor<8x5xf16> to tensor<8x1xf16>
// CHECK-NEXT: %[[Y3:.*]] = tensor.extract_slice %[[Y]][0, 3] [8, 2] [1, 1] : tensor<8x5xf16> to tensor<8x2xf16>
// CHECK-NOT: fp8.scaled_matmul
// CHECK: return %[[Y1]], %[[Y2]], %[[Y3]]
func.func @row_constants(%a: tensor<8x4xf8E4M3FN>, %sa: tensor<8x1xf32>) -> (tensor<8x2xf16>, tensor<8x1xf16>, tensor<8x2xf16>) {
  %w1 = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.5, 1.5, 2.5, 3.5]]> : tensor<2x4xf8E4M3FN>
  %s1 = arith.constant dense<[[2.0], [4.0]]> : tensor<2x1xf32>
  %w2 = arith.constant dense<-1.0> : tensor<1x4xf8E4M3FN>
  %s2 = arith.constant dense<8.0> : tensor<1x1xf32>
  %w3 = arith.constant dense<[[6.0, 7.0, 8.0, 9.0], [10.0, 12.0, 14.0, 16.0]]> : tensor<2x4xf8E4M3FN>
  %s3 = arith.constant dense<[[0.25], [0.125]]> : tensor<2x1xf32>
  %y1 = fp8.scaled_matmul %a, %sa layout<row>, %w1, %s1 layout<row> transpose_rhs : (tensor<8x4xf8E4M3FN>, tensor<8x1xf32>, tensor<2x4xf8E4M3FN>, tensor<2x1xf32>) -> tensor<8x2xf16>
  %y2 = fp8.scaled_matmul %a, %sa layout<row>, %w2, %s2 layout<row> transpose_rhs : (tensor<8x4xf8E4M3FN>, tensor<8x1xf32>, tensor<1x4xf8E4M3FN>, tensor<1x1xf32>) -> tensor<8x1xf16>
  %y3 = fp8.scaled_matmul %a, %sa layout<row>, %w3, %s3 layout<row> transpose_rhs : (tensor<8x4xf8E4M3FN>, tensor<8x1xf32>, tensor<2x4xf8E4M3FN>, tensor<2x1xf32>) -> tensor<8x2xf16>
  return %y1, %y2, %y3 : tensor<8x2xf16>, tensor<8x1xf16>, tensor<8x2xf16>
}

// -----

// Weights in files (fp8.packed_weight, 128x128 blocks, N a multiple of
// 128): data and scales concatenated by tensor.concat, which
// fp8-materialize-external-weights makes one tensor of the weights file;
// the packed weights move above the first product (the merged one's
// place), after which the activation's other readers stay as they were.

// CHECK-LABEL: func.func @packed_blocks
// CHECK: %[[Q:.*]], %[[QS:.*]] = fp8.packed_weight "wq"
// CHECK: %[[K:.*]], %[[KS:.*]] = fp8.packed_weight "wk"
// CHECK: %[[D:.*]] = tensor.concat dim(0) %[[Q]], %[[K]] : (tensor<256x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>) -> tensor<384x256xf8E4M3FN>
// CHECK: %[[S:.*]] = tensor.concat dim(0) %[[QS]], %[[KS]] : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK: %[[Y:.*]] = fp8.scaled_matmul %arg0, %arg1 layout<block 1x128> m_major(4), %[[D]], %[[S]] layout<block 128x128> transpose_rhs : {{.*}} -> tensor<64x384xbf16>
// CHECK: tensor.extract_slice %[[Y]][0, 0] [64, 256] [1, 1]
// CHECK: tensor.extract_slice %[[Y]][0, 256] [64, 128] [1, 1]
// CHECK: "test.use"
// CHECK-NOT: fp8.scaled_matmul
func.func @packed_blocks(%a: tensor<64x256xf8E4M3FN>, %sa: tensor<2x64xf32>) -> (tensor<64x256xbf16>, tensor<64x128xbf16>) {
  %wq, %sq = fp8.packed_weight "wq" from "m.data" [0, 131072] : tensor<256x256xf16> layout<block 128x128> recipe(#fp8.block) format(e4m3) permutation = [1, 0] -> tensor<256x256xf8E4M3FN>, tensor<2x2xf32>
  %q = fp8.scaled_matmul %a, %sa layout<block 1x128> m_major(4), %wq, %sq layout<block 128x128> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<2x64xf32>, tensor<256x256xf8E4M3FN>, tensor<2x2xf32>) -> tensor<64x256xbf16>
  "test.use"(%q) : (tensor<64x256xbf16>) -> ()
  %wk, %sk = fp8.packed_weight "wk" from "m.data" [131072, 65536] : tensor<256x128xf16> layout<block 128x128> recipe(#fp8.block) format(e4m3) permutation = [1, 0] -> tensor<128x256xf8E4M3FN>, tensor<1x2xf32>
  %k = fp8.scaled_matmul %a, %sa layout<block 1x128> m_major(4), %wk, %sk layout<block 128x128> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<2x64xf32>, tensor<128x256xf8E4M3FN>, tensor<1x2xf32>) -> tensor<64x128xbf16>
  return %q, %k : tensor<64x256xbf16>, tensor<64x128xbf16>
}

// -----

// Not merged: per-tensor weight scales (one scale per weight cannot be
// concatenated into one); a 128x128 block straddling two weights (N = 64);
// another activation scale; a weight computed at run time; a bias; another
// result type. Each group of one stays as it is.

// CHECK-LABEL: func.func @not_merged
// CHECK-NOT: tensor.concat
// CHECK-NOT: tensor.extract_slice
// CHECK-COUNT-2: fp8.scaled_matmul {{.*}} layout<tensor> transpose_rhs
// CHECK-COUNT-2: fp8.scaled_matmul {{.*}} layout<block 128x128> transpose_rhs
// CHECK-COUNT-2: fp8.scaled_matmul {{.*}} layout<row> transpose_rhs
// CHECK-COUNT-2: fp8.scaled_matmul {{.*}} layout<row> transpose_rhs
// CHECK-COUNT-2: fp8.scaled_matmul {{.*}} layout<row> {{.*}}transpose_rhs
// CHECK-NOT: tensor.extract_slice
func.func @not_merged(%a: tensor<64x256xf8E4M3FN>, %st: tensor<f32>, %sb: tensor<64x2xf32>, %sr: tensor<64x1xf32>, %sr2: tensor<64x1xf32>, %wrt: tensor<128x256xf8E4M3FN>, %bias: tensor<128xf32>) -> (tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xbf16>) {
  %w = arith.constant dense<1.0> : tensor<128x256xf8E4M3FN>
  %w64 = arith.constant dense<1.0> : tensor<64x256xf8E4M3FN>
  %ts1 = arith.constant dense<2.0> : tensor<f32>
  %ts2 = arith.constant dense<4.0> : tensor<f32>
  %bs = arith.constant dense<2.0> : tensor<1x2xf32>
  %rs = arith.constant dense<2.0> : tensor<128x1xf32>
  %t1 = fp8.scaled_matmul %a, %st layout<tensor>, %w, %ts1 layout<tensor> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<128x256xf8E4M3FN>, tensor<f32>) -> tensor<64x128xf32>
  %t2 = fp8.scaled_matmul %a, %st layout<tensor>, %w, %ts2 layout<tensor> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<f32>, tensor<128x256xf8E4M3FN>, tensor<f32>) -> tensor<64x128xf32>
  %b1 = fp8.scaled_matmul %a, %sb layout<block 1x128>, %w64, %bs layout<block 128x128> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<64x2xf32>, tensor<64x256xf8E4M3FN>, tensor<1x2xf32>) -> tensor<64x64xf32>
  %b2 = fp8.scaled_matmul %a, %sb layout<block 1x128>, %w64, %bs layout<block 128x128> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<64x2xf32>, tensor<64x256xf8E4M3FN>, tensor<1x2xf32>) -> tensor<64x64xf32>
  %r1 = fp8.scaled_matmul %a, %sr layout<row>, %w, %rs layout<row> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<64x1xf32>, tensor<128x256xf8E4M3FN>, tensor<128x1xf32>) -> tensor<64x128xf32>
  %r2 = fp8.scaled_matmul %a, %sr2 layout<row>, %w, %rs layout<row> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<64x1xf32>, tensor<128x256xf8E4M3FN>, tensor<128x1xf32>) -> tensor<64x128xf32>
  %x1 = fp8.scaled_matmul %a, %sr layout<row>, %wrt, %rs layout<row> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<64x1xf32>, tensor<128x256xf8E4M3FN>, tensor<128x1xf32>) -> tensor<64x128xf32>
  %x2 = fp8.scaled_matmul %a, %sr layout<row>, %wrt, %rs layout<row> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<64x1xf32>, tensor<128x256xf8E4M3FN>, tensor<128x1xf32>) -> tensor<64x128xf32>
  %y1 = fp8.scaled_matmul %a, %sr2 layout<row>, %w, %rs layout<row> bias %bias transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<64x1xf32>, tensor<128x256xf8E4M3FN>, tensor<128x1xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %y2 = fp8.scaled_matmul %a, %sr2 layout<row>, %w, %rs layout<row> transpose_rhs : (tensor<64x256xf8E4M3FN>, tensor<64x1xf32>, tensor<128x256xf8E4M3FN>, tensor<128x1xf32>) -> tensor<64x128xbf16>
  return %t1, %t2, %b1, %b2, %r1, %r2, %x1, %x2, %y1, %y2 : tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xf32>, tensor<64x128xbf16>
}

// -----

// A dynamic M (the CPU path's dynamic tokens): the slices take the merged
// result's runtime rows, read once.

// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[Y:.*]] = fp8.scaled_matmul {{.*}} -> tensor<?x3xf32>
// CHECK: %[[M:.*]] = tensor.dim %[[Y]], %{{.*}}
// CHECK: tensor.extract_slice %[[Y]][0, 0] [%[[M]], 2] [1, 1] : tensor<?x3xf32> to tensor<?x2xf32>
// CHECK-NEXT: tensor.extract_slice %[[Y]][0, 2] [%[[M]], 1] [1, 1] : tensor<?x3xf32> to tensor<?x1xf32>
func.func @dynamic_rows(%a: tensor<?x4xf8E4M3FN>, %sa: tensor<?x1xf32>) -> (tensor<?x2xf32>, tensor<?x1xf32>) {
  %w1 = arith.constant dense<1.0> : tensor<2x4xf8E4M3FN>
  %s1 = arith.constant dense<2.0> : tensor<2x1xf32>
  %w2 = arith.constant dense<-1.0> : tensor<1x4xf8E4M3FN>
  %s2 = arith.constant dense<8.0> : tensor<1x1xf32>
  %y1 = fp8.scaled_matmul %a, %sa layout<row>, %w1, %s1 layout<row> transpose_rhs : (tensor<?x4xf8E4M3FN>, tensor<?x1xf32>, tensor<2x4xf8E4M3FN>, tensor<2x1xf32>) -> tensor<?x2xf32>
  %y2 = fp8.scaled_matmul %a, %sa layout<row>, %w2, %s2 layout<row> transpose_rhs : (tensor<?x4xf8E4M3FN>, tensor<?x1xf32>, tensor<1x4xf8E4M3FN>, tensor<1x1xf32>) -> tensor<?x1xf32>
  return %y1, %y2 : tensor<?x2xf32>, tensor<?x1xf32>
}
