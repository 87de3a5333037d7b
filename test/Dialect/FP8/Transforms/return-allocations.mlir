// fp8-return-allocations: a returned reshaping view of an allocation
// becomes an allocation of the returned shape, which
// buffer-results-to-out-params{hoist-static-allocs} then replaces by the
// out-parameter: the output is written in place, not copied.
// RUN: fp8-opt %s --split-input-file --fp8-return-allocations | FileCheck %s
// RUN: fp8-opt %s --split-input-file --fp8-return-allocations \
// RUN:   --buffer-results-to-out-params="hoist-static-allocs modify-public-functions" \
// RUN:   | FileCheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @expanded
// CHECK:         %[[R:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x4xf16>
// CHECK:         %[[V:.*]] = memref.collapse_shape %[[R]] {{\[\[}}0, 1], [2]] : memref<1x8x4xf16> into memref<8x4xf16>
// CHECK:         linalg.fill ins(%{{.*}} : f16) outs(%[[V]] : memref<8x4xf16>)
// CHECK:         return %[[R]] : memref<1x8x4xf16>
// OUT-LABEL: func.func @expanded
// OUT-SAME:      (%[[O:.*]]: memref<1x8x4xf16>)
// OUT-NOT:     memref.alloc
// OUT:         %[[V:.*]] = memref.collapse_shape %[[O]]
// OUT:         linalg.fill ins(%{{.*}} : f16) outs(%[[V]] : memref<8x4xf16>)
// OUT-NOT:     memref.copy
// OUT:         return
func.func @expanded() -> memref<1x8x4xf16> {
  %cst = arith.constant 1.0 : f16
  %a = memref.alloc() {alignment = 64 : i64} : memref<8x4xf16>
  linalg.fill ins(%cst : f16) outs(%a : memref<8x4xf16>)
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 8, 4] : memref<8x4xf16> into memref<1x8x4xf16>
  return %e : memref<1x8x4xf16>
}

// -----

// Through two views (collapse, then expand): the inverse views in reverse.
// CHECK-LABEL: func.func @chain
// CHECK:         %[[R:.*]] = memref.alloc() : memref<2x16xf32>
// CHECK:         %[[C:.*]] = memref.collapse_shape %[[R]] {{\[\[}}0, 1]] : memref<2x16xf32> into memref<32xf32>
// CHECK:         %[[E:.*]] = memref.expand_shape %[[C]] {{\[\[}}0, 1, 2]] output_shape [4, 2, 4] : memref<32xf32> into memref<4x2x4xf32>
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : memref<4x2x4xf32>)
// CHECK:         return %[[R]] : memref<2x16xf32>
func.func @chain() -> memref<2x16xf32> {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4x2x4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4x2x4xf32>)
  %c = memref.collapse_shape %a [[0, 1, 2]] : memref<4x2x4xf32> into memref<32xf32>
  %e = memref.expand_shape %c [[0, 1]] output_shape [2, 16] : memref<32xf32> into memref<2x16xf32>
  return %e : memref<2x16xf32>
}

// -----

// One buffer returned twice (as itself and as a view) stays as it is.
// CHECK-LABEL: func.func @shared
// CHECK:         %[[A:.*]] = memref.alloc() : memref<8x4xf16>
// CHECK:         %[[E:.*]] = memref.expand_shape %[[A]]
// CHECK:         return %[[A]], %[[E]]
func.func @shared() -> (memref<8x4xf16>, memref<1x8x4xf16>) {
  %cst = arith.constant 1.0 : f16
  %a = memref.alloc() : memref<8x4xf16>
  linalg.fill ins(%cst : f16) outs(%a : memref<8x4xf16>)
  %e = memref.expand_shape %a [[0, 1], [2]] output_shape [1, 8, 4] : memref<8x4xf16> into memref<1x8x4xf16>
  return %a, %e : memref<8x4xf16>, memref<1x8x4xf16>
}

// -----

// A view of an argument is no allocation: unchanged.
// CHECK-LABEL: func.func @argument
// CHECK-NOT:     memref.alloc
// CHECK:         %[[E:.*]] = memref.expand_shape %arg0
// CHECK:         return %[[E]]
func.func @argument(%x: memref<8x4xf16>) -> memref<1x8x4xf16> {
  %e = memref.expand_shape %x [[0, 1], [2]] output_shape [1, 8, 4] : memref<8x4xf16> into memref<1x8x4xf16>
  return %e : memref<1x8x4xf16>
}
