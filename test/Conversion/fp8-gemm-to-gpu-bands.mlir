// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-gemm-to-gpu="remarks=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="remarks=true tile-m=128" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=TILE128
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="remarks=true tile-m=256" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=TILE256
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="remarks=true tile-m=192" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=TILE192
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="remarks=true stage-scales=0" 2>&1 >/dev/null \
// RUN:   | FileCheck %s --check-prefix=UNSTAGED
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="stage-scales=0" | FileCheck %s --check-prefix=UNSTAGEDIR
// RUN: not fp8-opt %s -split-input-file --convert-fp8-gemm-to-gpu="tile-m=100" \
// RUN:   2>&1 | FileCheck %s --check-prefix=BADTILE

// 256-row tiles for block scales (GemmConfig::mWaves = 2): each consumer
// warpgroup computes two 64-row bands, band b = wave * 2 + warpgroup, one
// after the other on every stage, with one FP32 total per band and one
// partial (3 x 64 registers: setmaxnreg 64/216 with staged scales, 56/224
// without: 56/224 spilled 4 bytes with them, 216 ~80 without; both fit the 168 x 384
// registers a 384-thread CTA is launched with). The K-dependent scales are
// staged: the producer's second warp (warp 9) copies each K tile's 256 row
// scales and its column block's scale into the stage (cp.async, 4 bytes a
// slot), arriving on the stage's full barrier (1 TMA arrival + 32
// lanes = 33); the consumers read them with shared-memory loads.
// Shared memory: 3 stages of A 256 x 128 (32 KB) + B 128 x 128 (16 KB), the
// scales (257 x 4 bytes -> 1040 a stage) at 147456, the 256 x 128 bf16
// staging tile (64 KB) from 151552 (1024-aligned), 6 mbarriers at 217088,
// 1008 bytes of alignment slack: 218144 bytes.

// BADTILE: error: convert-fp8-gemm-to-gpu: tile-m must be 0, 128, 192 or 256, not 100

// CHECK-LABEL: func.func private @__fp8_gemm_block_big
// 4096 x 4096 in 128-row tiles is 1024 tiles, 8 rounds of 132 CTAs; in
// 256-row tiles 512, 4 rounds: 4 x 256 / 1.1 < 8 x 128, so 256 rows;
// 192-row tiles (three consumers) would take 6 rounds: 6 x 192 / 1.18 is
// more.
// CHECK:         gpu.launch_func @__fp8_gemm_block_big_kernel::@__fp8_gemm_block_big_kernel blocks in (%c132{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c384{{.*}}, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c218144_i32
// CHECK:           nvvm.mbarrier.init %{{.*}}, %c33_i32 : !llvm.ptr<3>, i32
// CHECK:           nvvm.mbarrier.init %{{.*}}, %c8_i32 : !llvm.ptr<3>, i32
// CHECK:           nvvm.setmaxregister  decrease 64
// The TMA thread: 49152 bytes per stage (A 256 rows, B 128 rows).
// CHECK:             nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c49152_i32
// CHECK-COUNT-2:     nvvm.cp.async.bulk.tensor.shared.cluster.global
// The scale warp: warp tid / 32 == 9, walking the same tiles and K tiles,
// waits until the stage is empty, then its slots from 147456 + 1040 s.
// CHECK:           %[[WARP:.*]] = arith.divui %thread_id_x, %c32 : index
// CHECK:           %[[IS9:.*]] = arith.cmpi eq, %[[WARP]], %c9 : index
// CHECK:           scf.if %[[IS9]] {
// CHECK:             scf.for
// CHECK:               scf.for
// CHECK:                 nvvm.mbarrier.try_wait.parity
// CHECK:                 arith.muli %{{.*}}, %c1040 : index
// CHECK:                 arith.addi %{{.*}}, %c147456 : index
// Eight row scales per lane (rows lane + 32 j) ...
// CHECK-COUNT-8:         nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca : !llvm.ptr<3>, !llvm.ptr<1>
// ... the column block's scale from lane 0, into slot 256 ...
// CHECK:                 %[[LANE0:.*]] = arith.cmpi ult, %[[LANE:.*]], %c1{{(_[0-9]+)?}} : index
// CHECK:                 %[[SLOT:.*]] = arith.addi %[[LANE]], %c256{{(_[0-9]+)?}} : index
// CHECK:                 arith.muli %[[SLOT]], %c4{{(_[0-9]+)?}} : index
// CHECK:                 scf.if %[[LANE0]] {
// CHECK:                   nvvm.cp.async.shared.global
// CHECK-NEXT:            }
// ... and every lane's arrival once its copies landed.
// CHECK-NEXT:            nvvm.cp.async.mbarrier.arrive %{{.*}} {noinc = true} : !llvm.ptr<3>
// CHECK:           nvvm.setmaxregister  increase 216
// Band 1 of warpgroup wg is band wg + 2: its rows of an A stage start at
// (wg + 2) * 64 rows x 128 bytes.
// CHECK:             %[[BAND1:.*]] = arith.addi %{{.*}}, %c2{{(_[0-9]+)?}} : index
// CHECK:             arith.muli %[[BAND1]], %c8192{{(_[0-9]+)?}} : index
// The consumer carries two totals, the stage and the parity (no scales:
// they are read from the stage).
// CHECK:             scf.for {{.*}} iter_args({{.*}}) -> (!llvm.struct<({{.*}})>, !llvm.struct<({{.*}})>, index, i32) {
// CHECK:               nvvm.mbarrier.try_wait.parity
// Band 0: its two rows' slots (row - m0) and the column block's (slot
// 256), read before its wgmmas are issued (their latency hides under the
// descriptors' arithmetic); then rows 64 * warpgroup of the A stage.
// CHECK:               arith.subi %{{.*}}, %{{.*}} : index
// CHECK:               llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK:               arith.subi %{{.*}}, %{{.*}} : index
// CHECK:               llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK:               arith.muli %c256{{(_[0-9]+)?}}, %c4{{(_[0-9]+)?}} : index
// CHECK:               llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK:               nvvm.wgmma.fence.aligned
// Each step's descriptor adds its 16-byte units to the stage base's low
// 32-bit word (LBO or'ed in), the high word a constant (SBO 1024, 128B
// swizzle: 64 | 1 << 30 = 1073741888, shifted 32).
// CHECK:               arith.trunci %{{.*}} : i64 to i32
// CHECK:               arith.andi %{{.*}}, %c262143_i32{{(_[0-9]+)?}} : i32
// CHECK:               arith.extui %{{.*}} : i32 to i64
// CHECK:               arith.ori %{{.*}}, %c4611686293305294848_i64{{(_[0-9]+)?}} : i64
// CHECK:               nvvm.wgmma.mma_async
// CHECK-COUNT-3:       nvvm.wgmma.mma_async
// CHECK:               nvvm.wgmma.commit.group.sync.aligned
// CHECK:               nvvm.wgmma.wait.group.sync.aligned 0
// Band 1.
// CHECK-COUNT-3:       llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK:               nvvm.wgmma.fence.aligned
// CHECK-COUNT-4:       nvvm.wgmma.mma_async
// CHECK:               nvvm.wgmma.commit.group.sync.aligned
// CHECK:               nvvm.wgmma.wait.group.sync.aligned 0
// Only now is the stage released, once.
// CHECK-NOT:           nvvm.wgmma.mma_async
// CHECK:               nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-NOT:           nvvm.wgmma.mma_async
// CHECK:               scf.yield
// The epilogue stores both bands' boxes (2 each) in one bulk group.
// CHECK:             nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-COUNT-4:       nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK-NEXT:          nvvm.cp.async.bulk.commit.group
// TILE128: remark: fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x128x128, promotion every 128 K, grid 132 persistent CTAs over 1024 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue
// TILE256: remark: fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 64/216), 2 row bands per consumer, CTA tile 256x128x128, promotion every 128 K, grid 132 persistent CTAs over 512 tiles, TMA into 3 128B-swizzled stages with 257 staged scales each, TMA-store epilogue
// TILE192: remark: fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 3 consumer warpgroups, setmaxnreg 32/160), CTA tile 192x128x128, promotion every 128 K, grid 132 persistent CTAs over 704 tiles, TMA into 4 128B-swizzled stages with 193 staged scales each, TMA-store epilogue
// Without staged scales the consumers load them a unit ahead, and the 3
// stages leave room for the whole staging tile.
// UNSTAGED: remark: fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 56/224), 2 row bands per consumer, CTA tile 256x128x128, promotion every 128 K, grid 132 persistent CTAs over 512 tiles, TMA into 3 128B-swizzled stages, TMA-store epilogue
// ... a full barrier expects the TMA thread alone, no warp copies scales,
// and the consumers carry both bands' scales (2 rows + the column block's
// each) from one K tile to the next, loading the next ones while a band's
// wgmmas run.
// UNSTAGEDIR-LABEL: func.func private @__fp8_gemm_block_big
// UNSTAGEDIR:         nvvm.mbarrier.init %{{.*}}, %c1_i32 : !llvm.ptr<3>, i32
// UNSTAGEDIR-NOT:     nvvm.cp.async.shared.global
// UNSTAGEDIR:         nvvm.setmaxregister  increase 224
// UNSTAGEDIR:           scf.for {{.*}} iter_args({{.*}}) -> (!llvm.struct<({{.*}})>, !llvm.struct<({{.*}})>, index, i32, f32, f32, f32, f32, f32, f32) {
// Its wgmma descriptors are formed whole from each step's 64-bit address
// (GemmConfig::wordDescriptors off: the 32-bit form spilled here).
// UNSTAGEDIR-NOT:         arith.constant 262143 : i32
// UNSTAGEDIR:             arith.andi %{{.*}}, %c262143_i64{{(_[0-9]+)?}} : i64
// UNSTAGEDIR:             nvvm.wgmma.mma_async
// UNSTAGEDIR:             nvvm.wgmma.commit.group.sync.aligned
// UNSTAGEDIR-COUNT-3:     memref.load
// UNSTAGEDIR:             nvvm.wgmma.wait.group.sync.aligned 0
// UNSTAGEDIR:             nvvm.wgmma.commit.group.sync.aligned
// UNSTAGEDIR-COUNT-3:     memref.load
// UNSTAGEDIR:             nvvm.wgmma.wait.group.sync.aligned 0
func.func private @__fp8_gemm_block_big(%a: memref<4096x512xf8E4M3FN>, %sa: memref<4096x4xf32>, %b: memref<4096x512xf8E4M3FN>, %sb: memref<32x4xf32>, %out: memref<4096x4096xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 64/216), 2 row bands per consumer, CTA tile 256x128x128, promotion every 128 K, grid 132 persistent CTAs over 512 tiles, TMA into 3 128B-swizzled stages with 257 staged scales each, TMA-store epilogue}}
  return
}

// -----

// 8192 x 4096 (K = 512): 16 rounds of 128-row tiles, 8 of 256 rows (8 x
// 256 / 1.1 = 1862), 11 of 192 (11 x 192 / 1.18 = 1790): three consumer
// warpgroups of one 64-row band each (GemmConfig::consumerWarpgroups = 3),
// 512 threads, setmaxnreg 32/160 (32 + 3 x 160 = 4 x 128, the registers
// a 512-thread CTA is launched with), staged scales (192 rows + the
// column block's), 4 stages of A 192 x 128 + B 128 x 128 (40 KB).
// CHECK-LABEL: func.func private @__fp8_gemm_block_tall
// CHECK:         gpu.launch_func @__fp8_gemm_block_tall_kernel::@__fp8_gemm_block_tall_kernel blocks in (%c132{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c512{{.*}}, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %c218160_i32
// Full barriers: the TMA thread and the scale warp's 32 lanes; empty
// barriers: the 12 consumer warps.
// CHECK-COUNT-4:   nvvm.mbarrier.init %{{.*}}, %c{{(33|12)}}_i32{{(_[0-9]+)?}} : !llvm.ptr<3>, i32
// CHECK:           nvvm.setmaxregister  decrease 32
// CHECK:             nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c40960_i32
// CHECK:           nvvm.setmaxregister  increase 160
// One band per consumer: a total, the stage and the parity carried, the
// stage's scales, four k32 steps into a fresh partial (scale-d zero), the
// wait, the stage handed back.
// CHECK:             scf.for {{.*}} iter_args({{.*}}) -> (!llvm.struct<({{.*}})>, index, i32) {
// CHECK:               nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-3:       llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK:               nvvm.wgmma.fence.aligned
// CHECK:               nvvm.wgmma.mma_async {{.*}} D[<f32>, <zero>]
// CHECK-COUNT-3:       nvvm.wgmma.mma_async {{.*}} D[<f32>, <one>]
// CHECK:               nvvm.wgmma.commit.group.sync.aligned
// CHECK:               nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT:           nvvm.wgmma.mma_async
// CHECK:               nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK:               scf.yield
// tile-m=256 takes two bands.
// TILE256: remark: {{.*}}2 row bands per consumer, CTA tile 256x128x128, {{.*}}grid 132 persistent CTAs over 1024 tiles
// TILE192: remark: {{.*}}3 consumer warpgroups, setmaxnreg 32/160), CTA tile 192x128x128, {{.*}}grid 132 persistent CTAs over 1376 tiles
func.func private @__fp8_gemm_block_tall(%a: memref<8192x512xf8E4M3FN>, %sa: memref<8192x4xf32>, %b: memref<4096x512xf8E4M3FN>, %sb: memref<32x4xf32>, %out: memref<8192x4096xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 3 consumer warpgroups, setmaxnreg 32/160), CTA tile 192x128x128, promotion every 128 K, grid 132 persistent CTAs over 1376 tiles, TMA into 4 128B-swizzled stages with 193 staged scales each, TMA-store epilogue}}
  return
}

// -----

// K = 14336 bytes (the Llama-3-8B down projection's): past 8192, 192-row
// tiles measured slower than 256-row ones; 256 rows. Forced (tile-m=192)
// the producer keeps 40 registers (at 32 it spilled) and the consumers 152.
// TILE192: remark: {{.*}}3 consumer warpgroups, setmaxnreg 40/152), CTA tile 192x128x128,
func.func private @__fp8_gemm_block_long_k(%a: memref<8192x14336xf8E4M3FN>, %sa: memref<8192x112xf32>, %b: memref<4096x14336xf8E4M3FN>, %sb: memref<32x112xf32>, %out: memref<8192x4096xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 64/216), 2 row bands per consumer, CTA tile 256x128x128}}
  return
}

// -----

// 512 rows: 128 tiles of 128 rows fill one round; 64 of 256 rows would
// leave half the SMs idle. 128 rows (and its stages, no staged scales).
// TILE128: remark: fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x128x128, promotion every 128 K, grid 128 persistent CTAs over 128 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue
// TILE256: remark: {{.*}}2 row bands per consumer, CTA tile 256x128x128, {{.*}}grid 64 persistent CTAs over 64 tiles{{.*}}with 257 staged scales each
// TILE192: remark: {{.*}}3 consumer warpgroups, setmaxnreg 32/160), CTA tile 192x128x128, {{.*}}grid 96 persistent CTAs over 96 tiles{{.*}}with 193 staged scales each
func.func private @__fp8_gemm_block_small(%a: memref<512x512xf8E4M3FN>, %sa: memref<512x4xf32>, %b: memref<4096x512xf8E4M3FN>, %sb: memref<32x4xf32>, %out: memref<512x4096xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x128x128, promotion every 128 K, grid 128 persistent CTAs over 128 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue}}
  return
}

// -----

// 2048 x 2048: 256 tiles of 128 rows (2 rounds) or 128 of 256 rows (one):
// one round keeps 128 rows (each CTA would compute a single tile).
// TILE192: remark: {{.*}}3 consumer warpgroups, setmaxnreg 32/160), CTA tile 192x128x128, {{.*}}grid 132 persistent CTAs over 176 tiles
func.func private @__fp8_gemm_block_one_round(%a: memref<2048x512xf8E4M3FN>, %sa: memref<2048x4xf32>, %b: memref<2048x512xf8E4M3FN>, %sb: memref<16x4xf32>, %out: memref<2048x2048xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x128x128, promotion every 128 K, grid 132 persistent CTAs over 256 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue}}
  return
}

// -----

// Per-tensor scales keep 128-row tiles (they get 192-wide ones); with
// tile-m=256 and a 128-wide tile (N = 256) two bands, nothing to stage.
// TILE256: remark: fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 56/224), 2 row bands per consumer, CTA tile 256x128x128, promotion every 128 K, grid 2 persistent CTAs over 2 tiles, TMA into 3 128B-swizzled stages, TMA-store epilogue
// TILE192: remark: {{.*}}3 consumer warpgroups, setmaxnreg 32/160), CTA tile 192x128x128, {{.*}}grid 4 persistent CTAs over 4 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue
func.func private @__fp8_gemm_pt(%a: memref<256x512xf8E4M3FN>, %sa: memref<f32>, %b: memref<256x512xf8E4M3FN>, %sb: memref<f32>, %out: memref<256x256xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x128x128, promotion every 128 K, grid 4 persistent CTAs over 4 tiles, TMA into 4 128B-swizzled stages, TMA-store epilogue}}
  return
}

// -----

// BF16 operands accumulate without promotion (one accumulator, 256-wide
// tiles): two bands are not served, tile-m=256 leaves them at 128 rows.
// TILE192: remark: fp8 gemm: wgmma kernel m64n256k16 bf16, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x256x64, fast accumulation
// TILE256: remark: fp8 gemm: wgmma kernel m64n256k16 bf16, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x256x64, fast accumulation
func.func private @__fp8_gemm_bf16(%a: memref<4096x1024xbf16>, %sa: memref<f32>, %b: memref<4096x1024xbf16>, %sb: memref<f32>, %out: memref<4096x4096xbf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n256k16 bf16, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x256x64, fast accumulation}}
  return
}
