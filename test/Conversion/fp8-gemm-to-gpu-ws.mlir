// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-gemm-to-gpu="remarks=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="ws-stages=3" | FileCheck %s --check-prefix=STAGES
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="cluster-m=2" | FileCheck %s --check-prefix=CLUSTER
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="tma-store=0" | FileCheck %s --check-prefix=REGS
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="decode-ws=0 remarks=true" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=SINGLEWG
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="ws-stages=5 remarks=true" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=CHUNKS
// RUN: fp8-opt %s -split-input-file --convert-fp8-gemm-to-gpu="ws-stages=5" \
// RUN:   | FileCheck %s --check-prefix=CHUNKIR
// RUN: fp8-opt %s -split-input-file --convert-fp8-gemm-to-gpu="clip-lhs-rows=0" \
// RUN:   | FileCheck %s --check-prefix=NOCLIP
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="pipelined-promotion=0 remarks=true" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ROUNDTRIP
// RUN: fp8-opt %s -split-input-file --convert-fp8-gemm-to-gpu="decode-k-groups=2 remarks=true" 2>&1 \
// RUN:   | FileCheck %s --check-prefix=KSPLIT
// RUN: fp8-opt %s -split-input-file --convert-fp8-gemm-to-gpu="decode-stages=32 remarks=true" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=DSTAGES
// RUN: fp8-opt %s -split-input-file --convert-fp8-gemm-to-gpu="decode-stages=99 remarks=true" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=DSTAGES

// The warp-specialized kernel (TMA loads, M >= 128): 384 threads, warpgroups
// 0 and 1 consume (64 rows each of a 128-row CTA tile), warpgroup 2
// produces. Per stage a full mbarrier (1 arrival: the producer's
// arrive.expect_tx; TMA completes the bytes) and an empty mbarrier (8
// arrivals: lane 0 of each consumer warp). A tile of 128 rows x 128 bytes
// (16 KB) + B 128 x 128 (16 KB) per stage; the TMA-store epilogue's staging
// tile of 128 x 128 f32 (64 KB) leaves 5 stages: 229376 bytes, 10
// mbarriers (80 bytes) and 1008 bytes of alignment slack = 230464 bytes.

// CHECK-LABEL: func.func private @__fp8_gemm_block
// Persistent CTAs: min(132, tiles) = 4 CTAs walk the 2 x 2 tiles.
// CHECK:         gpu.launch_func @__fp8_gemm_block_kernel::@__fp8_gemm_block_kernel blocks in (%c4{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c384{{.*}}, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c230464_i32
// ptxas honours setmaxnreg only with the block size and .minnctapersm.
// CHECK:       gpu.func @__fp8_gemm_block_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 384, 1, 1>, known_grid_size = array<i32: 4, 1, 1>, nvvm.minctasm = 1 : i32}
// Thread 0 initializes full (1 arrival) and empty (8 arrivals) barriers.
// CHECK:           scf.if
// CHECK:             nvvm.mbarrier.init %{{.*}}, %c1_i32 : !llvm.ptr<3>, i32
// CHECK:             nvvm.mbarrier.init %{{.*}}, %c8_i32 : !llvm.ptr<3>, i32
// CHECK-COUNT-8:     nvvm.mbarrier.init
// CHECK-NOT:         nvvm.mbarrier.init
// CHECK:             nvvm.fence.mbarrier.init
// CHECK:           gpu.barrier
// The role: warpgroup tid / 128 == 2 is the producer.
// CHECK:           %[[WG:.*]] = arith.divui %{{.*}}, %c128{{.*}} : index
// CHECK:           %[[ISPROD:.*]] = arith.cmpi eq, %[[WG]], %c2{{.*}} : index
// CHECK:           scf.if %[[ISPROD]] {
// CHECK-NEXT:        nvvm.setmaxregister  decrease 40
// Its first thread walks K: waits for the stage's previous use to be
// released (parity ^ 1 passes at once on a fresh barrier), arms the full
// barrier with 32768 bytes and issues both boxes.
// CHECK:             %[[FIRST:.*]] = arith.cmpi eq, %{{.*}}, %c256{{.*}} : index
// CHECK:             scf.if %[[FIRST]] {
// The CTA's tiles: blockIdx.x, + 4, ... < 4 (a dynamic count), then K.
// CHECK:               scf.for %{{.*}} = %c0{{.*}} to %{{[0-9]+}} step
// CHECK:                 scf.for %{{.*}} = %c0{{.*}} to %c16{{.*}} step
// CHECK:                 %[[PREV:.*]] = arith.xori %{{.*}}, %c1_i32{{.*}} : i32
// CHECK:                 nvvm.mbarrier.try_wait.parity %{{.*}}, %[[PREV]], %{{.*}} : !llvm.ptr<3>, i32, i32
// CHECK:                 nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK:                 nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:                 nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK:           } else {
// CHECK-NEXT:        nvvm.setmaxregister  increase 232
// CHECK:             scf.for %{{.*}} = %c0{{.*}} to %{{[0-9]+}} step
// The first K tile's scales (2 row scales and the column block's) load
// before the K loop, which carries them with the total, the stage and the
// parity.
// CHECK-COUNT-3:       memref.load
// CHECK:               scf.for {{.*}} iter_args({{.*}}) -> (!llvm.struct<({{.*}})>, index, i32, f32, f32, f32)
// CHECK-NOT:             memref.load
// CHECK:                 nvvm.mbarrier.try_wait.parity
// The warpgroup's rows: A at + wg * 8192 bytes.
// CHECK:                 nvvm.wgmma.fence.aligned
// CHECK-COUNT-4:         nvvm.wgmma.mma_async
// CHECK:                 nvvm.wgmma.commit.group.sync.aligned
// The next K tile's scales load while the tensor cores run.
// CHECK-COUNT-3:         memref.load
// CHECK:                 nvvm.wgmma.wait.group.sync.aligned 0
// Lane 0 of every warp releases the stage, without a CTA barrier.
// CHECK:               %[[LEAD:.*]] = arith.cmpi eq, %{{.*}}, %c0{{.*}} : index
// CHECK:               scf.if %[[LEAD]] {
// CHECK:                 nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-NOT:             gpu.barrier
// CHECK:                 scf.yield
// The TMA-store epilogue: the warpgroup's previous boxes left the staging
// tile, its own named barrier (1 + wg, 128 threads), f32 pairs into the
// swizzled tile, the async-proxy fence, the barrier again, four boxes of 64
// rows x 128 bytes (128 f32 columns) in one bulk group.
// CHECK:               nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-32:    llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-4:       nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT:          nvvm.cp.async.bulk.commit.group
// After its last tile the warpgroup waits for its stores.
// CHECK:             nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT:         gpu.barrier
// CHECK:           gpu.return
// With tma-store=0 the warpgroup stores from its registers (7 stages).
// REGS-LABEL:    func.func private @__fp8_gemm_block
// REGS:            dynamic_shared_memory_size %c230496_i32
// REGS:          gpu.func @__fp8_gemm_block_kernel
// REGS:              llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<1>
// REGS-NOT:          nvvm.cp.async.bulk.tensor.global.shared.cta
// REGS:            gpu.return
// ws-stages=3: 3 x 32 KB + the 64 KB staging tile + 6 mbarriers + 1008
// bytes.
// STAGES:        dynamic_shared_memory_size %c164896_i32

// cluster-m=2 (experimental): clusters of 2 CTAs along M; B's map has
// boxes of 64 rows, each CTA multicasts its half of the B tile (mask 0b11)
// at rank * 8192 bytes into both CTAs' stage; empty barriers count the 16
// consumer warps of the cluster, which arrive on both CTAs' barriers
// (lane q of each warp on CTA q's, through mapa, with a remote arrive's
// default release.cta semantics); cluster barriers after the
// initialization and before the exit.
// CLUSTER-LABEL: func.func private @__fp8_gemm_block
// CLUSTER:         llvm.store %c64_i64
// CLUSTER:         llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// CLUSTER:         gpu.launch_func {{.*}} blocks in (%c4
// CLUSTER:       gpu.func @__fp8_gemm_block_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 384, 1, 1>, known_grid_size = array<i32: 4, 1, 1>, nvvm.cluster_dim = array<i32: 2, 1, 1>, nvvm.minctasm = 1 : i32}
// CLUSTER:           nvvm.mbarrier.init %{{.*}}, %c16_i32
// CLUSTER:           nvvm.cluster.arrive {aligned}
// CLUSTER-NEXT:      nvvm.cluster.wait {aligned}
// CLUSTER:             nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CLUSTER:             nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg5, %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CLUSTER:             %[[MASK:.*]] = arith.constant 3 : i16
// CLUSTER:             nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %arg6, %{{.*}}, box[%{{.*}}, %{{.*}}] multicast_mask = %[[MASK]]
// CLUSTER:               %[[PEER:.*]] = arith.cmpi ult, %[[LANE:.*]], %c2{{.*}} : index
// CLUSTER:               scf.if %[[PEER]] {
// CLUSTER:                 %[[Q:.*]] = arith.index_cast %[[LANE]] : index to i32
// CLUSTER-NEXT:            %[[REMOTE:.*]] = nvvm.mapa %{{.*}}, %[[Q]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CLUSTER-NEXT:            nvvm.mbarrier.arrive %[[REMOTE]] : !llvm.ptr<7>
// CLUSTER:           nvvm.cluster.arrive {aligned}
// CLUSTER-NEXT:      nvvm.cluster.wait {aligned}
// CLUSTER-NEXT:      gpu.return
func.func private @__fp8_gemm_block(%a: memref<256x2048xf8E4M3FN>, %sa: memref<256x16xf32>, %b: memref<256x2048xf8E4M3FN>, %sb: memref<2x16xf32>, %out: memref<256x256xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x128x128, promotion every 128 K, grid 4 persistent CTAs over 4 tiles, TMA into 5 128B-swizzled stages, TMA-store epilogue}}
  return
}

// -----

// MXFP8: BN = 64 (per-column rhs scales along K), four k32 promotion units
// per stage, the stage released after the last one; more stages fit.
// CHECK-LABEL: func.func private @__fp8_gemm_mx
// CHECK:       gpu.func @__fp8_gemm_mx_kernel
// CHECK:           nvvm.setmaxregister  increase 232
// CHECK:             nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4:     nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:             nvvm.mbarrier.arrive
func.func private @__fp8_gemm_mx(%a: memref<256x1024xf8E4M3FN>, %sa: memref<256x32xf8E8M0FNU>, %b: memref<256x1024xf8E4M3FN>, %sb: memref<256x32xf8E8M0FNU>, %out: memref<256x256xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x32>, rhs_layout = #fp8.layout<block 1x32>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n64k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x64x128, promotion every 32 K, grid 8 persistent CTAs over 8 tiles, TMA into 8 128B-swizzled stages, TMA-store epilogue}}
  return
}

// -----

// Fewer than 128 rows: the single-warpgroup TMA pipeline (64-row tiles).
// CHECK-LABEL: func.func private @__fp8_gemm_small_m
// CHECK:         threads in (%c128
// CHECK:       gpu.func @__fp8_gemm_small_m_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 2, 2, 1>} {
// CHECK-NOT:       nvvm.setmaxregister
// CHECK:           gpu.return
func.func private @__fp8_gemm_small_m(%a: memref<120x512xf8E4M3FN>, %sa: memref<f32>, %b: memref<256x512xf8E4M3FN>, %sb: memref<f32>, %out: memref<120x256xf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, CTA tile 64x128x128, promotion every 128 K, grid 2x2x1, TMA into 4 128B-swizzled stages}}
  return
}

// -----

// Per-tensor scales, promoting: 128 x 192 tiles (40 KB stages) and the
// whole 48 KB staging tile leave 4 stages. ws-stages=5 asks for 5, which
// the staging tile leaves in 3 chunks of one 64-column box (16 KB each):
// 204800 + 16384 + 80 + 1008 = 222272 bytes.
// CHUNKS-LABEL: fp8 gemm: wgmma kernel m64n192k32
// CHUNKS-SAME:  TMA into 5 128B-swizzled stages, TMA-store epilogue in 3 column chunks
// Each chunk: 4 stmatrix.x4 (64 bf16 columns of the warp's 16 rows), one
// box stored at byte column n0 * 2 + 128 c.
// CHUNKIR-LABEL: func.func private @__fp8_gemm_pt192
// CHUNKIR:         dynamic_shared_memory_size %c222272_i32
// CHUNKIR:       gpu.func @__fp8_gemm_pt192_kernel
// CHUNKIR-COUNT-4:   nvvm.stmatrix
// CHUNKIR-NEXT:      nvvm.fence.proxy
// CHUNKIR:             nvvm.cp.async.bulk.tensor.global.shared.cta
// CHUNKIR-NEXT:        nvvm.cp.async.bulk.commit.group
// CHUNKIR:             nvvm.cp.async.bulk.wait_group 0 {read}
// CHUNKIR-COUNT-4:   nvvm.stmatrix
// CHUNKIR-NEXT:      nvvm.fence.proxy
// CHUNKIR:             arith.constant 128 : index
// CHUNKIR:             nvvm.cp.async.bulk.tensor.global.shared.cta
// CHUNKIR-NEXT:        nvvm.cp.async.bulk.commit.group
// CHUNKIR:             nvvm.cp.async.bulk.wait_group 0 {read}
// CHUNKIR-COUNT-4:   nvvm.stmatrix
// CHUNKIR-NEXT:      nvvm.fence.proxy
// CHUNKIR:             arith.constant 256 : index
// CHUNKIR:             nvvm.cp.async.bulk.tensor.global.shared.cta
// CHUNKIR-NEXT:        nvvm.cp.async.bulk.commit.group
// CHUNKIR-NOT:         nvvm.stmatrix
// CHUNKIR:           gpu.return
func.func private @__fp8_gemm_pt192(%a: memref<256x1024xf8E4M3FN>, %sa: memref<f32>, %b: memref<384x1024xf8E4M3FN>, %sb: memref<f32>, %out: memref<256x384xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n192k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x192x128, promotion every 128 K, grid 4 persistent CTAs over 4 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue}}
  return
}

// -----

// BF16 operands (fp8-high-precision-products' products): the same
// generator, k16 BF16 wgmma on the same 128-byte K tiles (64 elements);
// BF16 wgmma accumulates in FP32, so the whole K stays in the tensor cores
// (no promotion) with 128 x 256 tiles: 4 stages of 48 KB. The whole f32
// staging tile (128 KB) would leave 2 stages, so the epilogue stages the
// tile in 4 column chunks of 32 KB (192 KB + 32 KB + 8 mbarriers + 1008
// bytes = 230448), each warpgroup in turn: the previous chunk read out, 16
// f32 pairs per thread (64 columns) into its 16 KB part, fenced, 2 boxes of
// 32 columns stored at columns n0 + 64 c + {0, 32}. With ws-stages=3 two
// chunks of 64 KB fit (147456 + 65536 + 6 mbarriers + 1008 bytes).
// CHECK-LABEL: func.func private @__fp8_gemm_bf16
// CHECK:         dynamic_shared_memory_size %c230448_i32
// CHECK:       gpu.func @__fp8_gemm_bf16_kernel
// CHECK:           nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <zero>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <col>]
// CHECK:               nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-16:    llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK:               nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK:               arith.constant 128 : index
// CHECK:               arith.constant 8192 : index
// CHECK:               nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT:          nvvm.cp.async.bulk.commit.group
// CHECK:               nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-16:    llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK:               arith.constant 256 : index
// CHECK:               nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK:               arith.constant 384 : index
// CHECK:               arith.constant 8192 : index
// CHECK:               nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT:          nvvm.cp.async.bulk.commit.group
// CHECK:               nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-16:    llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK:               arith.constant 512 : index
// CHECK:               nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK:               arith.constant 640 : index
// CHECK:               arith.constant 8192 : index
// CHECK:               nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT:          nvvm.cp.async.bulk.commit.group
// CHECK:               nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK-COUNT-16:    llvm.store {{.*}} : vector<2xf32>, !llvm.ptr<3>
// CHECK-NEXT:        nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK:             nvvm.barrier id = %{{.*}} number_of_threads = %c128_i32
// CHECK:               arith.constant 768 : index
// CHECK:               nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK:               arith.constant 896 : index
// CHECK:               arith.constant 8192 : index
// CHECK:               nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT:          nvvm.cp.async.bulk.commit.group
// CHECK-NOT:           nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK:               nvvm.cp.async.bulk.wait_group 0
// CHECK-NOT:           {read}
// CHECK:           gpu.return
// STAGES-LABEL:  func.func private @__fp8_gemm_bf16
// STAGES:          dynamic_shared_memory_size %c214048_i32
func.func private @__fp8_gemm_bf16(%a: memref<256x1024xbf16>, %sa: memref<f32>, %b: memref<512x1024xbf16>, %sb: memref<f32>, %out: memref<256x512xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n256k16 bf16, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x256x64, fast accumulation (no promotion), grid 4 persistent CTAs over 4 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue in 4 column chunks}}
  return
}

// -----

// BF16, M <= 64 with too few 128-wide N tiles for the SMs: the decode
// configuration (one consumer warpgroup, tiles narrowed to 16, 6 CTAs);
// K = 200 (400 bytes, a partial last K tile that TMA zero-fills). With
// decode-ws=0 the single-warpgroup pipeline with the same narrow tiles.
// CHECK-LABEL: func.func private @__fp8_gemm_bf16_small
func.func private @__fp8_gemm_bf16_small(%a: memref<64x200xbf16>, %sa: memref<f32>, %b: memref<96x200xbf16>, %sb: memref<f32>, %out: memref<64x96xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n16k16 bf16, warp-specialized (1 producer + 1 consumer warpgroups, setmaxnreg 40/232), CTA tile 64x16x64, fast accumulation (no promotion), grid 6 persistent CTAs over 6 tiles, TMA into 4 128B-swizzled stages}}
  // SINGLEWG: fp8 gemm: wgmma kernel m64n16k16 bf16, CTA tile 64x16x64, promotion every 64 K, grid 6x1x1, TMA into 4 128B-swizzled stages
  return
}

// -----

// BF16 with K % 8 != 0: rows are not 16-byte multiples (no TMA, no 16-byte
// copies): the reference body stays.
func.func private @__fp8_gemm_bf16_odd_k(%a: memref<64x100xbf16>, %sa: memref<f32>, %b: memref<96x100xbf16>, %sb: memref<f32>, %out: memref<64x96xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: keeping the reference body: bf16 rows must be 16-byte multiples (K % 8 == 0)}}
  return
}

// -----

// A decode step's projection (M = 16 tokens, Llama-3-8B's fused QKV: N =
// 6144, K = 4096, block scales): 48 tiles of 128 columns would leave 84 of
// 132 SMs idle. The decode configuration: the warp-specialized kernel with
// one consumer warpgroup, tiles of N / 132 rounded up to 8 (48 wide: 128
// CTAs, one tile each), 16 stages. decode-ws=0: the single-warpgroup
// kernel with 40-wide tiles (154 CTAs) and the stages that fit in half the
// shared memory (two CTAs per SM).
// CHECK-LABEL: func.func private @__fp8_gemm_decode
func.func private @__fp8_gemm_decode(%a: memref<16x4096xf8E4M3FN>, %sa: memref<16x32xf32>, %b: memref<6144x4096xf8E4M3FN>, %sb: memref<48x32xf32>, %out: memref<16x6144xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n48k32, warp-specialized (1 producer + 1 consumer warpgroups, setmaxnreg 40/232), CTA tile 64x48x128, promotion every 128 K (4 K tiles in flight), grid 128 persistent CTAs over 128 tiles, TMA into 16 128B-swizzled stages}}
  // SINGLEWG: fp8 gemm: wgmma kernel m64n40k32, CTA tile 64x40x128, promotion every 128 K, grid 154x1x1, TMA into 8 128B-swizzled stages
  return
}

// -----

// A batch-1 decode step through Llama-3-8B's O projection (M = 1, K = N =
// 4096, rowwise scales): 32-wide tiles, 128 persistent CTAs, 16 stages. The
// tile loads A's one row (a TMA box of 1 x 128 bytes, no zero-filled rows):
// 128 + 32 x 128 = 4224 bytes a stage, and the A tile is one 1024-byte
// swizzle atom that every 8-row group of the wgmma reads: its descriptor
// has SBO 0 (LBO 1, 128B swizzle: 1 << 16 | 1 << 62), B's SBO 1024 (64 <<
// 32). With decode-ws=0 the single-warpgroup kernel (24-wide tiles,
// two CTAs an SM) keeps 64-row boxes.
// The consumer's K loop (pipelined promotion) takes the 32 K tiles 4 at a
// time: each tile's wgmmas (4 x k32) issued into a fresh partial (scale-d
// zero) once its stage is full, then the four waited for in order --
// wait_group 3, 2, 1, 0, each followed by the stage's release and the
// partial's promotion -- so a group costs one wgmma round trip; nothing in
// flight at the back edge. pipelined-promotion=0: one tile an iteration,
// wait_group 0 after each.
// CHECK-LABEL: func.func private @__fp8_gemm_decode_o
// CHECK:         %[[ROWS:.*]] = llvm.getelementptr %{{.*}}[4]
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : i64
// CHECK-NEXT:    llvm.store %[[C1]], %[[ROWS]]
// CHECK:         llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// CHECK:         %[[BROWS:.*]] = llvm.getelementptr %{{.*}}[4]
// CHECK-NEXT:    %[[C32:.*]] = arith.constant 32 : i64
// CHECK-NEXT:    llvm.store %[[C32]], %[[BROWS]]
// CHECK:         gpu.launch_func @__fp8_gemm_decode_o_kernel::@__fp8_gemm_decode_o_kernel blocks in (%c128{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c256{{.*}}, %c1{{.*}}, %c1{{.*}})
// CHECK:         nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c4224_i32
// CHECK:         arith.constant 4611686018427387904 : i64
// CHECK:         arith.constant 4611686293305294848 : i64
// CHECK:         scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args(
// CHECK-COUNT-4:   nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT:       nvvm.wgmma.mma_async
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 3
// CHECK:           nvvm.mbarrier.arrive
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 2
// CHECK:           nvvm.mbarrier.arrive
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 1
// CHECK:           nvvm.mbarrier.arrive
// CHECK:           nvvm.wgmma.wait.group.sync.aligned 0
// CHECK:           nvvm.mbarrier.arrive
// CHECK:           scf.yield
// ROUNDTRIP: remark: fp8 gemm: wgmma kernel m64n32k32, warp-specialized (1 producer + 1 consumer warpgroups, setmaxnreg 40/232), CTA tile 64x32x128, promotion every 128 K, grid 128 persistent CTAs
// ROUNDTRIP-LABEL: func.func private @__fp8_gemm_decode_o
// ROUNDTRIP:         scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c1{{.*}} iter_args(
// ROUNDTRIP:           nvvm.wgmma.commit.group.sync.aligned
// ROUNDTRIP:           nvvm.wgmma.wait.group.sync.aligned 0
// ROUNDTRIP-NOT:       nvvm.wgmma.wait.group.sync.aligned 1
// ROUNDTRIP:           scf.yield
// decode-k-groups=2 splits the 32 K tiles over two consumer warpgroups
// (384 threads): warpgroup g takes tiles g, g + 2, ... -- 16, 4 groups of
// 4 -- in the stages of its parity (a stage two on, less 16 past the
// last); then group 1 writes its 16 registers to the reduction buffer
// after the 16 stages (16 x 5120 bytes), named barrier 3 (256 threads),
// group 0 adds them, barrier 3 again (the buffer free for the next tile),
// and group 0 alone stores.
// KSPLIT: remark: fp8 gemm: wgmma kernel m64n32k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 64x32x128, promotion every 128 K (4 K tiles in flight per consumer, K tiles split over 2 consumers), grid 128 persistent CTAs over 128 tiles, TMA into 16 128B-swizzled stages loading 1 row of A
// KSPLIT-LABEL: func.func private @__fp8_gemm_decode_o
// KSPLIT:         gpu.launch_func {{.*}} threads in (%c384
// KSPLIT:         scf.for %{{.*}} = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args(
// KSPLIT:           %[[NEXT:.*]] = arith.addi %{{.*}}, %c2{{.*}} : index
// KSPLIT-NEXT:      %c16{{.*}} = arith.constant 16 : index
// KSPLIT-NEXT:      %[[WRAP:.*]] = arith.cmpi uge, %[[NEXT]], %c16
// KSPLIT-NEXT:      %c-16 = arith.constant -16 : index
// KSPLIT-NEXT:      %[[BACK:.*]] = arith.addi %[[NEXT]], %c-16 : index
// KSPLIT-NEXT:      arith.select %[[WRAP]], %[[BACK]], %[[NEXT]] : index
// KSPLIT:           nvvm.wgmma.wait.group.sync.aligned 3
// KSPLIT:           nvvm.wgmma.wait.group.sync.aligned 0
// KSPLIT:           scf.yield
// KSPLIT:         arith.constant 81920 : index
// KSPLIT-COUNT-16: llvm.store %{{.*}} : f32, !llvm.ptr<3>
// KSPLIT:         nvvm.barrier id = %c3_i32 number_of_threads = %c256_i32
// KSPLIT-COUNT-16: llvm.fadd
// KSPLIT:         nvvm.barrier id = %c3_i32 number_of_threads = %c256_i32
// KSPLIT:         scf.if
// KSPLIT:           llvm.store %{{.*}} : vector<2xbf16>, !llvm.ptr<1>
// SINGLEWG: fp8 gemm: wgmma kernel m64n24k32, CTA tile 64x24x128, promotion every 128 K, grid 171x1x1, TMA into 8 128B-swizzled stages
// decode-stages=32 (and 99, clamped to 32): all 32 K tiles in flight
// (32 x 4224 bytes).
// DSTAGES: fp8 gemm: wgmma kernel m64n32k32, {{.*}} grid 128 persistent CTAs over 128 tiles, TMA into 32 128B-swizzled stages loading 1 row of A
func.func private @__fp8_gemm_decode_o(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x1xf32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<4096x1xf32>, %out: memref<1x4096xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n32k32, warp-specialized (1 producer + 1 consumer warpgroups, setmaxnreg 40/232), CTA tile 64x32x128, promotion every 128 K (4 K tiles in flight), grid 128 persistent CTAs over 128 tiles, TMA into 16 128B-swizzled stages loading 1 row of A}}
  return
}

// -----

// clip-lhs-rows=0: the same product with 64-row A boxes (rows past M
// zero-filled by TMA), 8 KB of A a stage, SBO 1024 for both tiles.
// NOCLIP-LABEL: func.func private @__fp8_gemm_decode_noclip
// NOCLIP:         nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c12288_i32
// NOCLIP-NOT:     arith.constant 4611686018427387904 : i64
// NOCLIP:         return
func.func private @__fp8_gemm_decode_noclip(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x1xf32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<4096x1xf32>, %out: memref<1x4096xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n32k32, warp-specialized (1 producer + 1 consumer warpgroups, setmaxnreg 40/232), CTA tile 64x32x128, promotion every 128 K (4 K tiles in flight), grid 128 persistent CTAs over 128 tiles, TMA into 16 128B-swizzled stages loading 1 row of A}}
  return
}

// -----

// The merged gate+up projection (M = 1, N = 28672): 224 tiles of 128
// columns fill the SMs, so the single-warpgroup kernel keeps it (measured
// no slower than the warp-specialized decode plan's 112-wide tiles, the
// rowwise 128256-word head 11 % faster: docs/GPU.md). It too loads one row
// of A per stage (expect_tx 128 + 16384 bytes; clip-lhs-rows=0: the 64-row
// box, 8192 + 16384).
// CHECK-LABEL: func.func private @__fp8_gemm_decode_gate_up
// CHECK:         nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c16512_i32
// NOCLIP-LABEL: func.func private @__fp8_gemm_decode_gate_up
// NOCLIP:         nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c24576_i32
func.func private @__fp8_gemm_decode_gate_up(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x1xf32>, %b: memref<28672x4096xf8E4M3FN>, %sb: memref<28672x1xf32>, %out: memref<1x28672xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, CTA tile 64x128x128, promotion every 128 K, grid 224x1x1, TMA into 4 128B-swizzled stages loading 1 row of A}}
  return
}
