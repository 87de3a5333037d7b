// RUN: fp8-opt %s -fp8-untie-shared-fills -split-input-file | FileCheck %s
// RUN: fp8-opt %s -fp8-untie-shared-fills -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s --check-prefix=BUF
// Without the pass, bufferization copies the shared fill (the check that
// this test is not vacuous):
// RUN: fp8-opt %s -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -split-input-file | FileCheck %s --check-prefix=TIED

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// Two row sums start from one CSE'd fill: each gets its own fill of its own
// tensor.empty, right before it.
// CHECK-LABEL: func @two_reductions
// CHECK-NOT: linalg.fill
// CHECK: %[[E0:.+]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[F0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E0]] : tensor<8xf32>)
// CHECK-NEXT: %[[A:.+]] = linalg.generic {{.+}} outs(%[[F0]] : tensor<8xf32>)
// CHECK: %[[E1:.+]] = tensor.empty() : tensor<8xf32>
// CHECK-NEXT: %[[F1:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[E1]] : tensor<8xf32>)
// CHECK-NEXT: %[[B:.+]] = linalg.generic {{.+}} outs(%[[F1]] : tensor<8xf32>)
// CHECK-NOT: linalg.fill
// CHECK: return %[[A]], %[[B]]
// BUF-LABEL: func @two_reductions
// BUF-NOT: memref.copy
// BUF: return
// TIED-LABEL: func @two_reductions
// TIED: memref.copy
func.func @two_reductions(%x: tensor<8x64xf32>, %y: tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<8x64xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.maximumf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %a, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// A use that only reads the fill keeps the original; the destination gets
// its own.
// CHECK-LABEL: func @reader_and_destination
// CHECK: %[[Z:.+]] = linalg.fill
// CHECK: linalg.fill
// CHECK-NEXT: %[[A:.+]] = linalg.generic
// CHECK: linalg.add ins(%[[A]], %[[Z]] :
// BUF-LABEL: func @reader_and_destination
// BUF-NOT: memref.copy
// BUF: return
func.func @reader_and_destination(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%z : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %s = linalg.add ins(%a, %z : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// A fill with one user moves next to it; an op with two filled
// destinations keeps both fills in front of it (no ping-pong between them).
// CHECK-LABEL: func @move_next_to_user
// CHECK: linalg.mul
// CHECK: linalg.fill
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic
func.func @move_next_to_user(%x: tensor<8x64xf32>, %v: tensor<4xf32>) -> (tensor<4xf32>, tensor<8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.mul ins(%v, %v : tensor<4xf32>, tensor<4xf32>) outs(%v : tensor<4xf32>) -> tensor<4xf32>
  %a:2 = linalg.generic {indexing_maps = [#row, #red, #red], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x64xf32>) outs(%z0, %z1 : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32, %acc2: f32):
    %s = arith.addf %in, %acc : f32
    %t = arith.maximumf %in, %acc2 : f32
    linalg.yield %s, %t : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  return %m, %a#0, %a#1 : tensor<4xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// A returned value's destination is a tensor.empty other ops write into
// too (CSE merged them): its producer gets a clone of its own, through the
// reshape, so that bufferization does not make the caller's output the
// buffer of the other values. The other writers keep the original.
// CHECK-LABEL: func.func @returned
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4x8xf32>)
// CHECK:         %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4x8xf32>) outs(%[[E2]] : tensor<4x8xf32>)
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[B]]
// CHECK:         return %[[R]], %[[A]]
func.func @returned(%x: tensor<4x8xf32>) -> (tensor<32xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %r = tensor.collapse_shape %b [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
  return %r, %a : tensor<32xf32>, tensor<4x8xf32>
}

// -----

// A pad whose padding nothing reads (fp8-block-layout's M-major scales at
// M = 1, padded to 4): an allocation with undefined padding, the
// transpose writing into its slice instead of the empty CSE shares with
// another op (which keeps it); bufferized, no fill (the copy of the slice
// onto itself that remains folds away in the pipelines' canonicalization).
// A pad without the mark keeps its fill (linalg.map).
// CHECK-LABEL: func.func @unread_padding
// CHECK:         %[[A:.*]] = bufferization.alloc_tensor() : tensor<1x4xf32>
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[A]][0, 0] [1, 1] [1, 1]
// CHECK:         %[[T:.*]] = linalg.transpose ins(%arg0 : tensor<1x1xf32>) outs(%[[S]] : tensor<1x1xf32>)
// CHECK:         %[[P:.*]] = tensor.insert_slice %[[T]] into %[[A]][0, 0] [1, 1] [1, 1]
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x1xf32>
// CHECK:         linalg.generic {{.*}} outs(%[[E]] : tensor<1x1xf32>)
// CHECK:         tensor.pad
// CHECK-NOT:       fp8.unread_padding
// CHECK:         return %[[P]]
// BUF-LABEL: func.func @unread_padding
// BUF:         %[[A:.*]] = memref.alloc() {{.*}} : memref<1x4xf32>
// BUF:         %[[S:.*]] = memref.subview %[[A]][0, 0] [1, 1] [1, 1]
// BUF-NOT:     linalg.map
// BUF:         linalg.transpose ins(%{{.*}} : memref<1x1xf32>) outs(%[[S]] : memref<1x1xf32, strided<[4, 1]>>)
// BUF:         linalg.map
// BUF:         return %[[A]]
func.func @unread_padding(%s: tensor<1x1xf32>) -> (tensor<1x4xf32>, tensor<1x1xf32>, tensor<1x4xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x1xf32>
  %t = linalg.transpose ins(%s : tensor<1x1xf32>) outs(%e : tensor<1x1xf32>) permutation = [1, 0]
  %p = tensor.pad %t low[0, 0] high[0, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %one : f32
  } {fp8.unread_padding} : tensor<1x1xf32> to tensor<1x4xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<1x1xf32>) outs(%e : tensor<1x1xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  } -> tensor<1x1xf32>
  %q = tensor.pad %u low[0, 0] high[0, 3] {
  ^bb0(%i: index, %j: index):
    tensor.yield %one : f32
  } : tensor<1x1xf32> to tensor<1x4xf32>
  return %p, %u, %q : tensor<1x4xf32>, tensor<1x1xf32>, tensor<1x4xf32>
}
