//===- Mainloop.h - The K loop of the FP8 GEMM kernels ----------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// The mainloop walks the K tiles: the loader fills a stage, the warpgroup
// runs the k32 wgmma steps of each promotion unit on it into a fresh
// accumulator (first step scale-d = 0), commits and waits, and Promotion
// adds the unit into the FP32 total.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_MAINLOOP_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_MAINLOOP_H

#include "Promotion.h"
#include "TileLoaders.h"

namespace mlir::fp8::gemm {

/// Builds the K loop; returns the FP32 total (the accumulator struct).
Value buildMainloop(KernelBuilder &kb, const GemmPlan &plan,
                    const SmemLayout &layout, const KernelValues &kv,
                    const AccumulatorFragment &frag, TileLoader &loader,
                    Promotion &promotion);

/// The wgmma steps of promotion unit `unit` on the tiles of one stage (the
/// warpgroup's 64 rows of A at `aBase` + `aOffset`, B at `bBase` +
/// `bOffset`; bases are i64 shared-window addresses): fence, the steps into
/// a fresh accumulator (`zeroAcc` first), commit, wait for all. Returns the
/// unit's partial sum.
Value buildUnitWgmma(KernelBuilder &kb, const GemmPlan &plan,
                     const SmemLayout &layout, Value aBase, int64_t aOffset,
                     Value bBase, int64_t bOffset, Value zeroAcc,
                     int64_t unit);

/// The same steps committed but not waited for: the caller issues a
/// wait_group before it reads the returned partial sum (and may compute
/// meanwhile: load the next unit's scales, combine this unit's).
Value issueUnitWgmma(KernelBuilder &kb, const GemmPlan &plan,
                     const SmemLayout &layout, Value aBase, Value bBase,
                     int64_t bOffset, Value zeroAcc, int64_t unit);

/// Fast accumulation: every k32 step of a whole K tile (BK bytes) added into
/// `acc` (fence, steps, commit), leaving this tile's group and at most
/// `pending` - 1 earlier ones in flight (wait_group `pending`). `first`:
/// the first step overwrites the accumulator (scale-d 0; `acc` may be
/// undefined: no instruction writes the registers before the wgmmas, which
/// ptxas would otherwise fence itself, advisory C7519). Returns the
/// accumulator, to be read only after a wait_group 0.
Value buildTileWgmmaInto(KernelBuilder &kb, const GemmPlan &plan,
                         const SmemLayout &layout, Value aBase, Value bBase,
                         int64_t bOffset, Value acc, bool first,
                         int64_t pending);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_MAINLOOP_H
