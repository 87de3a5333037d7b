//===- ScaleStaging.h - Scales staged with each K tile ---------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// GemmConfig::stagedScales, for the warp-specialized kernel with 256-row
// tiles: the scales that vary along K (block scales: a 1x128 block's per
// row, a 128x128 block's per column block) travel with the K tile they
// scale. The producer warpgroup's second warp, walking the same tiles and
// K tiles as the TMA thread, waits until a stage is empty, copies the
// tile's scale values into the stage's slots (cp.async of 4 bytes per
// slot, rows and columns clamped into the operands) and arrives on the
// stage's full mbarrier once they landed (cp.async.mbarrier.arrive.noinc:
// the barrier expects the TMA thread's arrival and the 32 lanes'). A
// consumer that waited for the stage reads its scales with shared-memory
// loads (Promotion::loadStaged), so no global load's latency stands
// between two wgmma groups.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_SCALESTAGING_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_SCALESTAGING_H

#include "SmemLayout.h"

namespace mlir::fp8::gemm {

/// The byte (index) of the tiles' region where `stage`'s (index) slots
/// start.
Value stagedScaleSlots(KernelBuilder &kb, const SmemLayout &layout,
                       Value stage);

/// The calling warp (`lane`: its lane, index) copies the staged scales of
/// the K tile at `k0` of `tile` into the slots of `stage` (index) and
/// arrives on `fullBarrier` (!llvm.ptr<3>) once they landed. `tiles` is the
/// tiles' base (tilesPointer).
void copyStagedScales(KernelBuilder &kb, const GemmPlan &plan,
                      const SmemLayout &layout, const KernelValues &tile,
                      Value tiles, Value stage, Value k0, Value lane,
                      Value fullBarrier);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_SCALESTAGING_H
