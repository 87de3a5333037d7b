// RUN: fp8-opt %s --fp8-gpu-dynamic-kernel-operands | FileCheck %s

// A kernel reading memrefs of dynamic shape (a model with dynamic
// dimensions): each becomes its base buffer (rank 0: one bare pointer) and
// index arguments for its dynamic offset, sizes and strides, and the kernel
// rebuilds the memref; every launch passes them. A static memref is left
// alone, so is a kernel whose memrefs are all static.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    // CHECK-LABEL: gpu.func @dyn
    // CHECK-SAME:    (%[[B0:[a-z0-9_]+]]: memref<f32>, %[[R:[a-z0-9_]+]]: index, %[[C:[a-z0-9_]+]]: index, %[[S:[a-z0-9_]+]]: index,
    // CHECK-SAME:     %[[ST:[a-z0-9_]+]]: memref<4xf32>, %[[B1:[a-z0-9_]+]]: memref<bf16>, %[[OFF:[a-z0-9_]+]]: index, %[[N:[a-z0-9_]+]]: index, %[[STRIDE:[a-z0-9_]+]]: index, %[[I:[a-z0-9_]+]]: index) kernel
    // CHECK-DAG:     %[[X:[a-z0-9_]+]] = memref.reinterpret_cast %[[B0]] to offset: [0], sizes: [%[[R]], %[[C]]], strides: [%[[S]], 1] : memref<f32> to memref<?x?xf32>
    // CHECK-DAG:     %[[Y:[a-z0-9_]+]] = memref.reinterpret_cast %[[B1]] to offset: [%[[OFF]]], sizes: [%[[N]]], strides: [%[[STRIDE]]] : memref<bf16> to memref<?xbf16, strided<[?], offset: ?>>
    // CHECK:         memref.load %[[X]][%[[I]], %[[I]]]
    // CHECK:         memref.load %[[ST]][%[[I]]]
    // CHECK:         memref.load %[[Y]][%[[I]]]
    gpu.func @dyn(%x: memref<?x?xf32>, %st: memref<4xf32>,
                  %y: memref<?xbf16, strided<[?], offset: ?>>, %i: index) kernel {
      %a = memref.load %x[%i, %i] : memref<?x?xf32>
      %b = memref.load %st[%i] : memref<4xf32>
      %c = memref.load %y[%i] : memref<?xbf16, strided<[?], offset: ?>>
      gpu.return
    }
    // CHECK-LABEL: gpu.func @static
    // CHECK-SAME:    (%{{.*}}: memref<4x8xf32>) kernel
    gpu.func @static(%x: memref<4x8xf32>) kernel {
      gpu.return
    }
  }

  // CHECK-LABEL: func.func @host
  // CHECK:         %[[XB:[a-z0-9_]+]], %[[XO:[a-z0-9_]+]], %[[XS:[a-z0-9_]+]]:2, %[[XT:[a-z0-9_]+]]:2 = memref.extract_strided_metadata %arg0
  // CHECK:         %[[YB:[a-z0-9_]+]], %[[YO:[a-z0-9_]+]], %[[YS:[a-z0-9_]+]], %[[YT:[a-z0-9_]+]] = memref.extract_strided_metadata %arg2
  // CHECK:         gpu.launch_func  @kernels::@dyn {{.*}} args(%[[XB]] : memref<f32>, %[[XS]]#0 : index, %[[XS]]#1 : index, %[[XT]]#0 : index, %arg1 : memref<4xf32>, %[[YB]] : memref<bf16>, %[[YO]] : index, %[[YS]] : index, %[[YT]] : index, %arg3 : index)
  // CHECK:         gpu.launch_func  @kernels::@static {{.*}} args(%{{.*}} : memref<4x8xf32>)
  func.func @host(%x: memref<?x?xf32>, %st: memref<4xf32>,
                  %y: memref<?xbf16, strided<[?], offset: ?>>, %i: index,
                  %s: memref<4x8xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@dyn blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<?x?xf32>, %st : memref<4xf32>,
             %y : memref<?xbf16, strided<[?], offset: ?>>, %i : index)
    gpu.launch_func @kernels::@static blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%s : memref<4x8xf32>)
    return
  }
}
