// RUN: fp8-opt %s -fp8-copy-stored-state | FileCheck %s
// RUN: fp8-opt %s -fp8-copy-stored-state -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF

ml_program.global private mutable @hist(dense<0.0> : tensor<4xf32>) : tensor<4xf32>
ml_program.global private mutable @other(dense<1.0> : tensor<4xf32>) : tensor<4xf32>

// CHECK-LABEL: func @store_and_return
// CHECK-SAME: (%[[V:.+]]: tensor<4xf32>)
// CHECK: %[[C:.+]] = bufferization.alloc_tensor() copy(%[[V]])
// CHECK: ml_program.global_store @hist = %[[C]]
// CHECK: return %[[V]]
// After bufferization the stored buffer holds the value: it is copied from
// the argument, then into the global.
// BUF-LABEL: func @store_and_return
// BUF-SAME: (%[[ARG:.+]]: memref<4xf32>)
// BUF: %[[A:.+]] = memref.alloc
// BUF: memref.copy %[[ARG]], %[[A]]
// BUF: %[[G:.+]] = memref.get_global @hist
// BUF: memref.copy %[[A]], %[[G]]
func.func @store_and_return(%v: tensor<4xf32>) -> tensor<4xf32> {
  ml_program.global_store @hist = %v : tensor<4xf32>
  return %v : tensor<4xf32>
}

// A value read from another global is copied too.
// CHECK-LABEL: func @global_to_global
// CHECK: %[[L:.+]] = ml_program.global_load @other
// CHECK: %[[C:.+]] = bufferization.alloc_tensor() copy(%[[L]])
// CHECK: ml_program.global_store @hist = %[[C]]
func.func @global_to_global() {
  %v = ml_program.global_load @other : tensor<4xf32>
  ml_program.global_store @hist = %v : tensor<4xf32>
  return
}
