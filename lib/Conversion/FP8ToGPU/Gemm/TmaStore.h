//===- TmaStore.h - The TMA-store epilogue of the FP8 GEMM kernels -*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// EpilogueKind::SharedTMA, for the warp-specialized kernel: each consumer
// warpgroup owns 64 rows x BN / storeChunks of the staging tile
// (SmemLayout::storeOffset), stored as boxes of 64 rows x 128 bytes, each in
// TMA's 128B-swizzled order (the 16-byte chunk c of row r at chunk c ^ (r %
// 8)). For each column chunk of its 64 x BN outputs (one, unless the whole
// tile would leave the pipeline too few stages):
//
//   1. its issuing thread (the warpgroup's first) waits until the
//      warpgroup's previous TMA stores (the previous chunk's or tile's)
//      finished reading the staging tile (cp.async.bulk.wait_group.read 0),
//      a warpgroup barrier tells the others;
//   2. every thread writes its finished registers (OutputValues) into the
//      tile -- stmatrix.x4 for 16-bit outputs (the wgmma accumulator layout
//      is stmatrix's: four 8 x 8 matrices of two 8-column blocks per
//      instruction), 8-byte stores for f32 -- conflict-free thanks to the
//      swizzle;
//   3. fence.proxy.async (the TMA engine reads what the threads wrote), a
//      warpgroup barrier, and the issuing thread stores the boxes
//      (cp.async.bulk.tensor global <- shared, one bulk group) and goes on:
//      the rows drain while the warpgroup computes its next tile.
//
// Rows past M and columns past N are computed (with clamped scale, bias and
// input indices) and clipped by the tensor map: the output tensor is
// [batch,] M x (N * bytes) bytes, so no box writes outside it.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_TMASTORE_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_TMASTORE_H

#include "SmemLayout.h"

namespace mlir::fp8::gemm {

/// Host code: the tensor map of the output `out` (flat memref) for the
/// staging tile's boxes; `rowsM`: M at run time (null: the plan's M).
Value encodeOutputTensorMap(KernelBuilder &kb, const GemmPlan &plan,
                            Value out, Value rowsM = {});

/// Consumer warpgroup `wg`'s (index) epilogue of one tile through the
/// staging tile. `wkv` is the warpgroup's view (tid in [0, 128), m0 its
/// first row), `acc` its FP32 total.
void buildTmaStoreEpilogue(KernelBuilder &kb, const GemmPlan &plan,
                           const SmemLayout &layout, const KernelValues &wkv,
                           const AccumulatorFragment &frag, Value acc,
                           Value wg);

/// After a warpgroup's last tile: its stores completed (the CTA must not
/// exit while the TMA engine still reads its shared memory).
void finishTmaStores(KernelBuilder &kb, const KernelValues &wkv);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_TMASTORE_H
