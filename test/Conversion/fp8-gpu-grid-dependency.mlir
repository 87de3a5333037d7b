// RUN: fp8-opt %s -split-input-file --fp8-gpu-grid-dependency | FileCheck %s

// Every kernel waits for its stream predecessor, then lets its successor
// launch, before anything else; the module gets the runtime's marker.
// Device functions that are not kernels are left alone.
// CHECK-LABEL: gpu.module @kernels
// CHECK:         llvm.mlir.global external constant @__fp8_grid_dependency(1 : i32)
// CHECK-LABEL:   gpu.func @scale
// CHECK-NEXT:      nvvm.griddepcontrol wait
// CHECK-NEXT:      nvvm.griddepcontrol launch_dependents
// CHECK-NEXT:      gpu.thread_id x
// CHECK-LABEL:   func.func @helper
// CHECK-NOT:       nvvm.griddepcontrol
// CHECK:           return
// CHECK-LABEL:   gpu.func @own_wait
// CHECK-NEXT:      gpu.thread_id x
// CHECK-NEXT:      nvvm.griddepcontrol wait
// CHECK-NOT:       nvvm.griddepcontrol
// CHECK:           gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @scale(%p: memref<16xf32>) kernel {
      %t = gpu.thread_id x
      %v = memref.load %p[%t] : memref<16xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %p[%t] : memref<16xf32>
      gpu.return
    }
    func.func @helper(%x: f32) -> f32 {
      return %x : f32
    }
    // A generator that placed its own wait (after loads of constants,
    // say) keeps it where it is.
    gpu.func @own_wait(%p: memref<16xf32>) kernel {
      %t = gpu.thread_id x
      nvvm.griddepcontrol wait
      %v = memref.load %p[%t] : memref<16xf32>
      memref.store %v, %p[%t] : memref<16xf32>
      gpu.return
    }
  }
}

// -----

// A module without kernels gets no marker.
// CHECK-LABEL: gpu.module @no_kernels
// CHECK-NOT:     __fp8_grid_dependency
module attributes {gpu.container_module} {
  gpu.module @no_kernels {
    func.func @helper(%x: f32) -> f32 {
      return %x : f32
    }
  }
}
