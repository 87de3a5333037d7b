// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-gemm-to-gpu="tma-pipeline=true warp-specialized=false remarks=true" | FileCheck %s

// The experimental TMA pipeline: the host encodes one tensor map per operand
// (UINT8 = 0, 128B swizzle = 3, boxes of 64 (BN) rows x 128 bytes) and
// passes its device address to the kernel; the kernel rounds the dynamic
// shared memory up to 1024 bytes, thread 0 initializes one mbarrier per
// stage and issues the TMA copies of stages 0..S-1; every iteration waits
// on its stage's phase, runs the wgmmas (128B-swizzle descriptors: mode 1
// in bits 62-63, SBO 1024, LBO 16) and refills the stage after a CTA barrier.

// The runtime's encoder, declared once in the module.
// CHECK:       llvm.func @fp8rt_cuda_tensor_map_encode_tiled(!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32, i32, i32) -> !llvm.ptr
// CHECK-LABEL: func.func private @__fp8_gemm_block
// CHECK:         llvm.intr.stacksave
// CHECK:         %[[MAPA:.*]] = llvm.call @fp8rt_cuda_tensor_map_encode_tiled({{.*}}) : (!llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32, i32, i32, i32, i32, i32) -> !llvm.ptr
// CHECK:         llvm.intr.stackrestore
// CHECK:         %[[MAPB:.*]] = llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// 4 stages of 8 KB (A) + 16 KB (B), 4 mbarriers, 1008 bytes of alignment slack.
// CHECK:         %[[SMEM:.*]] = arith.constant 99344 : i32
// The kernel takes the maps' device addresses after the operands.
// CHECK:         gpu.launch_func {{.*}} dynamic_shared_memory_size %[[SMEM]] args({{.*}}, %[[MAPA]] : !llvm.ptr, %[[MAPB]] : !llvm.ptr)
// CHECK:       gpu.func @__fp8_gemm_block_kernel({{.*}}, %[[KMAPA:.*]]: !llvm.ptr, %[[KMAPB:.*]]: !llvm.ptr) kernel
// CHECK:           arith.constant -1024 : i64
// CHECK:           scf.if
// CHECK-COUNT-4:     nvvm.mbarrier.init
// CHECK:             nvvm.fence.mbarrier.init
// CHECK:           gpu.barrier
// CHECK:           scf.if
// CHECK:             nvvm.mbarrier.arrive.expect_tx {{.*}} : !llvm.ptr<3>, i32
// CHECK:             nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[KMAPA]], {{.*}}, box[
// CHECK:             nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}}, %[[KMAPB]], {{.*}}, box[
// CHECK:           scf.for
// CHECK:             nvvm.mbarrier.try_wait.parity
// CHECK:             arith.constant 4611686293305294848 : i64
// CHECK:             nvvm.wgmma.mma_async
// CHECK:             gpu.barrier
// CHECK:             scf.if
// CHECK:               nvvm.cp.async.bulk.tensor.shared.cluster.global
func.func private @__fp8_gemm_block(%a: memref<256x2048xf8E4M3FN>, %sa: memref<256x16xf32>, %b: memref<256x2048xf8E4M3FN>, %sb: memref<2x16xf32>, %out: memref<256x256xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, CTA tile 64x128x128, promotion every 128 K, grid 2x4x1, TMA into 4 128B-swizzled stages}}
  return
}

// -----

// K not a multiple of 16 (no 16-byte row strides for TMA): thread copies.
// CHECK-LABEL: func.func private @__fp8_gemm_oddk
// CHECK-NOT:     fp8rt_cuda_tensor_map_encode_tiled
// CHECK:         gpu.launch_func
func.func private @__fp8_gemm_oddk(%a: memref<64x100xf8E4M3FN>, %sa: memref<f32>, %b: memref<64x100xf8E4M3FN>, %sb: memref<f32>, %out: memref<64x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n64k32, CTA tile 64x64x128, promotion every 128 K, grid 1x1x1}}
  return
}
