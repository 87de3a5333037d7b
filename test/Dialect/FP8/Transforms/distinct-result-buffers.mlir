// fp8-distinct-result-buffers: a buffer returned as several results gets a
// copy per repeat (the same value, or a view of the same allocation);
// then buffer-results-to-out-params{hoist-static-allocs} gives each output
// its own out-parameter (it crashed on repeats before).
// RUN: fp8-opt %s --split-input-file --fp8-distinct-result-buffers | FileCheck %s
// RUN: fp8-opt %s --split-input-file --fp8-distinct-result-buffers \
// RUN:   --buffer-results-to-out-params="hoist-static-allocs modify-public-functions" \
// RUN:   | FileCheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @twice
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         linalg.fill
// CHECK:         %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[A]], %[[C]]
// CHECK:         %[[D:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[A]], %[[D]]
// CHECK:         return %[[A]], %[[C]], %[[D]]
// OUT-LABEL: func.func @twice(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
// OUT-NOT:     memref.alloc() : memref<4xf32>
// OUT:         linalg.fill ins(%{{.*}} : f32) outs(%[[O0:.*]] : memref<4xf32>)
// OUT:         memref.copy %[[O0]], %[[O1:.*]] :
// OUT:         memref.copy %[[O0]], %[[O2:.*]] :
// OUT:         return
func.func @twice() -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %cst = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%cst : f32) outs(%a : memref<4xf32>)
  return %a, %a, %a : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// A view of a returned allocation is a repeat too; distinct buffers and
// scalars are left alone.
// CHECK-LABEL: func.func @views
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK:         %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK:         %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[V]], %[[C]]
// CHECK:         return %[[A]], %[[C]], %[[B]], %{{.*}} : memref<2x2xf32>, memref<4xf32>, memref<4xf32>, f32
func.func @views(%s: f32) -> (memref<2x2xf32>, memref<4xf32>, memref<4xf32>, f32) {
  %a = memref.alloc() : memref<2x2xf32>
  %b = memref.alloc() : memref<4xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  return %a, %v, %b, %s : memref<2x2xf32>, memref<4xf32>, memref<4xf32>, f32
}

// -----

// Dynamic sizes come from the repeated value.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    (%[[X:.*]]: memref<?xf32>)
// CHECK:         %[[N:.*]] = memref.dim %[[X]], %c0
// CHECK:         %[[C:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK:         memref.copy %[[X]], %[[C]]
// CHECK:         return %[[X]], %[[C]]
func.func @dynamic(%x: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  return %x, %x : memref<?xf32>, memref<?xf32>
}

// -----

// A view returned before its allocation: the allocation keeps its buffer
// (buffer-results-to-out-params can then hoist it), the view is copied.
// CHECK-LABEL: func.func @view_first
// CHECK:         %[[A:.*]] = memref.alloc() : memref<2x2xf32>
// CHECK:         %[[V:.*]] = memref.collapse_shape %[[A]]
// CHECK:         %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[V]], %[[C]]
// CHECK:         return %[[C]], %[[A]]
// OUT-LABEL: func.func @view_first
// OUT-SAME:    (%{{.*}}: memref<4xf32>, %[[O1:.*]]: memref<2x2xf32>)
// OUT-NOT:     memref.alloc() : memref<2x2xf32>
// OUT:         memref.collapse_shape %[[O1]]
func.func @view_first() -> (memref<4xf32>, memref<2x2xf32>) {
  %a = memref.alloc() : memref<2x2xf32>
  %v = memref.collapse_shape %a [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  return %v, %a : memref<4xf32>, memref<2x2xf32>
}
