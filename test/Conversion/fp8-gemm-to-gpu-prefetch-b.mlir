// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-gemm-to-gpu="remarks=true grid-dependency=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="grid-dependency=false" | FileCheck %s --check-prefix=OFF

// A decode step's O projection whose B is a constant global at every call
// (the weights): the warp-specialized kernel's issuing producer thread
// raises each of the first 16 stages' transaction counts by B's 4096 bytes
// (32 x 128, no arrival) and issues B's copy, then every producer thread
// waits for the stream predecessor and lets the successor launch; in the
// walk the first tile's first 16 K steps arm their stage with A's 128 bytes
// (its arrival) and copy A only, the others A + B (4224 bytes). The
// consumers wait before they read scales or store.
// CHECK-LABEL: gpu.func @__fp8_gemm_o_kernel
// CHECK-COUNT-16: nvvm.mbarrier.expect_tx %{{.*}}, %c4096_i32
// CHECK-NOT:     nvvm.mbarrier.arrive.expect_tx
// CHECK:         nvvm.griddepcontrol wait
// CHECK-NEXT:    nvvm.griddepcontrol launch_dependents
// CHECK:         scf.if
// CHECK:           nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c128_i32
// CHECK:         } else {
// CHECK:           nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c4224_i32
// CHECK:         nvvm.setmaxregister increase 232
// CHECK-NEXT:    nvvm.griddepcontrol wait
// CHECK-NEXT:    nvvm.griddepcontrol launch_dependents
// OFF-LABEL:   gpu.func @__fp8_gemm_o_kernel
// OFF-NOT:       nvvm.griddepcontrol
// OFF-NOT:       nvvm.mbarrier.expect_tx
// OFF:           gpu.return
module {
  memref.global "private" constant @w : memref<4096x4096xf8E4M3FN> = dense<0.0>
  memref.global "private" constant @ws : memref<4096x1xf32> = dense<1.0>
  func.func private @__fp8_gemm_o(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x1xf32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<4096x1xf32>, %out: memref<1x4096xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}} {
    // expected-remark @-2 {{TMA into 16 128B-swizzled stages loading 1 row of A, B prefetched before the grid dependency wait}}
    return
  }
  func.func @step(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x1xf32>, %out: memref<1x4096xbf16>) {
    %b = memref.get_global @w : memref<4096x4096xf8E4M3FN>
    %sb = memref.get_global @ws : memref<4096x1xf32>
    call @__fp8_gemm_o(%a, %sa, %b, %sb, %out) : (memref<1x4096xf8E4M3FN>, memref<1x1xf32>, memref<4096x4096xf8E4M3FN>, memref<4096x1xf32>, memref<1x4096xbf16>) -> ()
    return
  }
}

// -----

// B is a kernel's output elsewhere (here: an argument of the caller), so
// nothing may load before the wait: the kernel is left to
// fp8-gpu-grid-dependency (a wait at its entry).
// CHECK-LABEL: gpu.func @__fp8_gemm_act_kernel
// CHECK-NOT:     nvvm.griddepcontrol
// CHECK-NOT:     nvvm.mbarrier.expect_tx
// CHECK:         gpu.return
module {
  func.func private @__fp8_gemm_act(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x1xf32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<4096x1xf32>, %out: memref<1x4096xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}} {
    // expected-remark @-2 {{TMA into 16 128B-swizzled stages loading 1 row of A}}
    return
  }
  func.func @step(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x1xf32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<4096x1xf32>, %out: memref<1x4096xbf16>) {
    call @__fp8_gemm_act(%a, %sa, %b, %sb, %out) : (memref<1x4096xf8E4M3FN>, memref<1x1xf32>, memref<4096x4096xf8E4M3FN>, memref<4096x1xf32>, memref<1x4096xbf16>) -> ()
    return
  }
}
