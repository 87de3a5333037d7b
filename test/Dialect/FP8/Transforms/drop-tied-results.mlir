// fp8-drop-tied-results: a result tied to an argument leaves the function;
// one bufferization wrote elsewhere is copied into the argument first,
// with a warning naming the output.
// RUN: fp8-opt %s --split-input-file --fp8-drop-tied-results --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @in_place(
// CHECK-SAME: %[[C:.*]]: memref<4xf32>, %{{.*}}: memref<2xf32>) -> memref<2xf32>
// CHECK-NOT: memref.copy
// CHECK: return %{{.*}} : memref<2xf32>
func.func @in_place(%c: memref<4xf32>, %x: memref<2xf32>)
    -> (memref<4xf32> {fp8.tied_input = 0 : i64}, memref<2xf32>) {
  %v = memref.cast %c : memref<4xf32> to memref<4xf32>
  return %v, %x : memref<4xf32>, memref<2xf32>
}

// -----

// CHECK-LABEL: func.func @elsewhere(
// CHECK-SAME: %[[C:.*]]: memref<4xf32>) {
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: memref.copy %[[A]], %[[C]]
// CHECK: return{{$}}
// expected-warning @below {{output 'present.0' is not updated in place: bufferization wrote it elsewhere, so each run copies it into its input's buffer}}
func.func @elsewhere(%c: memref<4xf32>)
    -> (memref<4xf32> {fp8.tied_input = 0 : i64, onnx.name = "present.0"}) {
  %a = memref.alloc() : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

// expected-error @below {{fp8-drop-tied-results: result 0 is tied to argument 3, which does not exist or has another type}}
func.func @bad(%c: memref<4xf32>) -> (memref<4xf32> {fp8.tied_input = 3 : i64}) {
  return %c : memref<4xf32>
}
