//===- WarpSpecialized.h - The warp-specialized FP8 GEMM kernel -*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// KernelKind::WarpSpecialized, the structure of DeepGEMM's and CUTLASS's
// Hopper FP8 GEMMs: warpgroups 0..C-1 are consumers, warpgroup C the
// producer.
//
//   producer   setmaxnreg.dec; its first thread, for every K tile kt:
//              wait until stage kt % S is empty (parity of its previous use),
//              arrive.expect_tx on the stage's full mbarrier, TMA A (BM rows)
//              and B (BN rows) into the stage; with staged scales its second
//              warp, for every K tile, waits the same way and copies the
//              tile's scales into the stage (ScaleStaging.h).
//   consumer c setmaxnreg.inc; for every K tile: wait until the stage is
//              full (the scales of its first promotion unit loaded a unit
//              ahead, or read from the stage when staged),
//              per promotion unit and row band w (GemmConfig::mWaves: one,
//              or two in 256-row tiles): wgmma m64nBNk32 on rows
//              [64b, 64b + 64) of A, b = w * C + c, into a fresh
//              accumulator, commit, wait; after the stage's last unit lane
//              0 of every warp arrives on the stage's empty mbarrier;
//              total[w] += partial * sa * sb. Then the epilogue of its
//              bands (registers, or the TMA-store staging tile).
//
// There is no CTA barrier in the K loop: the consumers meet the producer
// only at the mbarriers, so while one consumer promotes, the other's wgmmas
// keep the tensor cores busy, and loads run S - 1 tiles ahead.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_WARPSPECIALIZED_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_WARPSPECIALIZED_H

#include "TileLoaders.h"

namespace mlir::fp8::gemm {

/// The kernel's body after the setup (ids, shared memory, mbarriers
/// initialized and published by `loader.prepare`): the producer and
/// consumer branches, each ending in the kernel's return block.
void buildWarpSpecializedBody(KernelBuilder &kb, const GemmPlan &plan,
                              const SmemLayout &layout, const KernelValues &kv,
                              TmaLoader &loader);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_WARPSPECIALIZED_H
