// RUN: fp8-opt %s -split-input-file --fp8-fuse-elementwise | FileCheck %s

// RoPE's rotate_half(q) * sin as torch exports it: cat(-q[..., 4:], q[..., :4])
// becomes a read of q at (d + 4) mod 8, negated in the first half, and
// fuses with the sine product: one generic, no slices, no inserts.
// CHECK-DAG: #[[$ROT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 4) mod 8)>
// CHECK-LABEL: func.func @rope
// CHECK-NOT:     tensor.extract_slice
// CHECK-NOT:     tensor.insert_slice
// CHECK:         linalg.generic {indexing_maps = [#[[$ROT]], {{.*}} ins(%arg0, %arg1 :
// CHECK:           %[[POS:.+]] = linalg.index 3 : index
// CHECK:           %[[NEG:.+]] = arith.negf %[[IN:[^ ]+]] : f16
// CHECK:           %[[FIRST:.+]] = arith.cmpi ult, %[[POS]], %c4 : index
// CHECK:           %[[ROTATED:.+]] = arith.select %[[FIRST]], %[[NEG]], %[[IN]] : f16
// CHECK:           arith.mulf %[[ROTATED]]
// CHECK-NOT:     linalg.generic
func.func @rope(%q: tensor<1x2x4x8xf16>, %sin: tensor<1x1x4x8xf16>) -> tensor<1x2x4x8xf16> {
  %lo = tensor.extract_slice %q[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf16> to tensor<1x2x4x4xf16>
  %hi = tensor.extract_slice %q[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xf16> to tensor<1x2x4x4xf16>
  %e = tensor.empty() : tensor<1x2x4x4xf16>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hi : tensor<1x2x4x4xf16>) outs(%e : tensor<1x2x4x4xf16>) {
  ^bb0(%in: f16, %out: f16):
    %n = arith.negf %in : f16
    linalg.yield %n : f16
  } -> tensor<1x2x4x4xf16>
  %d = tensor.empty() : tensor<1x2x4x8xf16>
  %c0 = tensor.insert_slice %neg into %d[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf16> into tensor<1x2x4x8xf16>
  %c1 = tensor.insert_slice %lo into %c0[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf16> into tensor<1x2x4x8xf16>
  %o = tensor.empty() : tensor<1x2x4x8xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %sin : tensor<1x2x4x8xf16>, tensor<1x1x4x8xf16>) outs(%o : tensor<1x2x4x8xf16>) {
  ^bb0(%a: f16, %s: f16, %out: f16):
    %m = arith.mulf %a, %s : f16
    linalg.yield %m : f16
  } -> tensor<1x2x4x8xf16>
  return %r : tensor<1x2x4x8xf16>
}

// -----

// The inserts in the other order (the second half first), along dimension
// 0, no op on either half: the same fold (its select of one value by
// position folds away).
// CHECK-DAG: #[[$ROT0:.+]] = affine_map<(d0, d1) -> ((d0 + 3) mod 6, d1)>
// CHECK-LABEL: func.func @swapped_inserts
// CHECK-NOT:     tensor.insert_slice
// CHECK:         linalg.generic {indexing_maps = [#[[$ROT0]], {{.*}} ins(%arg0 :
// CHECK-NEXT:    ^bb0(%[[IN:.+]]: f32, %{{.+}}: f32):
// CHECK-NEXT:      linalg.yield %[[IN]] : f32
func.func @swapped_inserts(%x: tensor<6x5xf32>) -> tensor<6x5xf32> {
  %lo = tensor.extract_slice %x[0, 0] [3, 5] [1, 1] : tensor<6x5xf32> to tensor<3x5xf32>
  %hi = tensor.extract_slice %x[3, 0] [3, 5] [1, 1] : tensor<6x5xf32> to tensor<3x5xf32>
  %d = tensor.empty() : tensor<6x5xf32>
  %c0 = tensor.insert_slice %lo into %d[3, 0] [3, 5] [1, 1] : tensor<3x5xf32> into tensor<6x5xf32>
  %c1 = tensor.insert_slice %hi into %c0[0, 0] [3, 5] [1, 1] : tensor<3x5xf32> into tensor<6x5xf32>
  return %c1 : tensor<6x5xf32>
}

// -----

// Not a rotation: halves in their own order (a copy), halves of two
// tensors, and a slice that is not full in another dimension.
// CHECK-LABEL: func.func @not_rotations
// CHECK-COUNT-6: tensor.insert_slice
// CHECK-NOT:     (d1 + 4) mod 8
func.func @not_rotations(%x: tensor<2x8xf32>, %y: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %d = tensor.empty() : tensor<2x8xf32>
  %xlo = tensor.extract_slice %x[0, 0] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
  %xhi = tensor.extract_slice %x[0, 4] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
  %a0 = tensor.insert_slice %xlo into %d[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %a1 = tensor.insert_slice %xhi into %a0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %yhi = tensor.extract_slice %y[0, 4] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
  %b0 = tensor.insert_slice %yhi into %d[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %b1 = tensor.insert_slice %xlo into %b0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %row = tensor.extract_slice %x[0, 4] [1, 4] [1, 1] : tensor<2x8xf32> to tensor<1x4xf32>
  %c0 = tensor.insert_slice %row into %d[0, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<2x8xf32>
  %c1 = tensor.insert_slice %xlo into %c0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  return %a1, %b1, %c1 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
