// RUN: fp8-opt %s -verify-diagnostics \
// RUN:   --convert-fp8-gemm-to-gpu="tma-pipeline=true remarks=true" | FileCheck %s
// RUN: fp8-opt %s \
// RUN:   --convert-fp8-gemm-to-gpu="tma-pipeline=true fast-accumulation=true" | FileCheck %s --check-prefix=CHUNKS
// RUN: fp8-opt %s \
// RUN:   --convert-fp8-gemm-to-gpu="tma-pipeline=true stage-epilogue-input=false" | FileCheck %s --check-prefix=GLOBAL

// A fused consumer's [M, N] input of 16-bit elements (SiLU(gate) * up) with
// the TMA-store epilogue (GemmConfig::stagedInput): the host encodes a
// tensor map of the input as of the output (boxes of 64 rows x 128 bytes)
// and passes it after the output's; each consumer warpgroup's issuing thread
// waits until its previous TMA stores have read the staging tile out, arms
// the warpgroup's input mbarrier and loads the input's boxes into the
// staging tile before its K loop; the epilogue waits for them, reads each
// 16 x 16 block of the input with ldmatrix.x4 where stmatrix.x4 then writes
// the finished outputs, and stores them with TMA.

// CHECK-LABEL: func.func private @__fp8_gemm_silu
// The operands' tensor maps, the output's, the input's.
// CHECK-COUNT-2: llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// CHECK:         %[[OUTMAP:[0-9]+]] = llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// CHECK:         %[[INMAP:[0-9]+]] = llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// CHECK:         gpu.launch_func {{.*}} args({{.*}} : memref<399360xf16>, {{.*}} : memref<399360xf16>, {{.*}} : !llvm.ptr, {{.*}} : !llvm.ptr, %[[OUTMAP]] : !llvm.ptr, %[[INMAP]] : !llvm.ptr)
// CHECK:       gpu.func @__fp8_gemm_silu_kernel(
// CHECK-SAME:    %[[IN:[^:]*]]: !llvm.ptr)
// The producer's stage barriers, then the two consumers' input barriers.
// CHECK-COUNT-8: nvvm.mbarrier.init %{{.*}}, %{{.*}}
// CHECK-COUNT-2: nvvm.mbarrier.init %{{.*}}, %{{.*}}
// CHECK-NOT:     nvvm.mbarrier.init
// Consumer: the input's loads before the K loop.
// CHECK:         nvvm.setmaxregister increase 232
// CHECK:         nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK:         nvvm.mbarrier.arrive.expect_tx %{{.*}}, %{{.*}}
// CHECK:         nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[IN]], %{{.*}}, box[%{{.*}}, %{{.*}}]
// CHECK:         nvvm.wgmma.mma_async
// The epilogue: the input's phase, then ldmatrix / stmatrix pairs.
// CHECK:         nvvm.mbarrier.try_wait.parity
// CHECK:         nvvm.ldmatrix {{.*}} -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK:         math.exp
// CHECK:         nvvm.stmatrix
// CHECK:         nvvm.cp.async.bulk.tensor.global.shared.cta
// expected-remark @+1 {{fp8 gemm: wgmma kernel m64n192k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x192x128, promotion every 128 K, grid 20 persistent CTAs over 20 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue, fused element-wise epilogue (1 more inputs), its input staged by TMA}}
func.func private @__fp8_gemm_silu(%a: memref<520x512xf8E4M3FN>, %sa: memref<f32>,
    %w: memref<768x512xf8E4M3FN>, %sw: memref<f32>, %up: memref<520x768xf16>,
    %out: memref<520x768xf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, epilogue_inputs = 1 : i64, has_bias = false,
                            lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>,
                            transpose_rhs = true}} {
  %one = arith.constant 1.0 : f16
  %p = memref.alloc() : memref<520x768xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%p, %up : memref<520x768xf16>, memref<520x768xf16>) outs(%out : memref<520x768xf16>)
      attrs = {fp8.gemm_epilogue} {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %n = arith.negf %x : f16
    %e = math.exp %n : f16
    %d = arith.addf %e, %one : f16
    %s = arith.divf %one, %d : f16
    %xs = arith.mulf %x, %s : f16
    %r = arith.mulf %xs, %y : f16
    linalg.yield %r : f16
  }
  memref.dealloc %p : memref<520x768xf16>
  return
}

// With fast accumulation the 128 x 256 f16 tile is staged in two column
// chunks: the first chunk's input loads before the K loop, the second's
// once the first chunk's stores have read the staging tile out (the
// epilogue's wait and warpgroup barrier, then the issue's own wait).
// CHUNKS-LABEL: gpu.func @__fp8_gemm_silu_kernel
// CHUNKS:         nvvm.cp.async.bulk.wait_group 0 {read}
// CHUNKS:         nvvm.mbarrier.arrive.expect_tx
// CHUNKS:         nvvm.wgmma.mma_async
// CHUNKS:         nvvm.mbarrier.try_wait.parity
// CHUNKS-COUNT-8: nvvm.ldmatrix
// CHUNKS:         nvvm.cp.async.bulk.commit.group
// CHUNKS:         nvvm.cp.async.bulk.wait_group 0 {read}
// CHUNKS:         nvvm.barrier
// CHUNKS:         nvvm.cp.async.bulk.wait_group 0 {read}
// CHUNKS:         nvvm.mbarrier.arrive.expect_tx
// CHUNKS:         nvvm.mbarrier.try_wait.parity
// CHUNKS-COUNT-8: nvvm.ldmatrix
// CHUNKS:         nvvm.cp.async.bulk.commit.group

// stage-epilogue-input=false: each thread loads its elements of the input
// from global memory in the epilogue.
// GLOBAL-LABEL: gpu.func @__fp8_gemm_silu_kernel
// GLOBAL-NOT:     nvvm.ldmatrix
// GLOBAL:         memref.load %{{.*}}[%{{.*}}] : memref<399360xf16>
// GLOBAL-NOT:     nvvm.ldmatrix
