// RUN: fp8-opt %s --fp8-gpu-merge-kernel-modules | FileCheck %s

// Outlined kernels (one per module, all named like their function) and a
// module with two kernels and a global end up in one module; launches
// follow the renaming.

// CHECK:       gpu.module @fp8_kernels {
// CHECK-DAG:     gpu.func @main_kernel(
// CHECK-DAG:     gpu.func @main_kernel_0(
// CHECK-DAG:     memref.global "private" @table
// CHECK-DAG:     gpu.func @first(
// CHECK-DAG:     gpu.func @second(
// CHECK:       }
// CHECK-NOT:   gpu.module
// CHECK-LABEL: func.func @main
// CHECK:         gpu.launch_func @fp8_kernels::@main_kernel blocks
// CHECK:         gpu.launch_func @fp8_kernels::@main_kernel_0 blocks
// CHECK:         gpu.launch_func @fp8_kernels::@second blocks
module attributes {gpu.container_module} {
  gpu.module @main_kernel {
    gpu.func @main_kernel(%a: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @main_kernel_0 {
    gpu.func @main_kernel(%a: memref<4xf32>) kernel { gpu.return }
  }
  gpu.module @gemm {
    memref.global "private" @table : memref<4xf32> = dense<1.0>
    gpu.func @first(%a: memref<4xf32>) kernel { gpu.return }
    gpu.func @second(%a: memref<4xf32>) kernel {
      %t = memref.get_global @table : memref<4xf32>
      gpu.return
    }
  }
  func.func @main(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @main_kernel::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @main_kernel_0::@main_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    gpu.launch_func @gemm::@second blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
}
