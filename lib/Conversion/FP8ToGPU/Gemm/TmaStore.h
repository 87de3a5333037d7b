//===- TmaStore.h - The TMA-store epilogue of the GEMM kernels -*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// EpilogueKind::SharedTMA, for the warp-specialized kernel: each 64-row
// band of the tile owns 64 rows x BN / storeChunks of the staging tile
// (SmemLayout::storeOffset), stored as boxes of 64 rows x 128 bytes, each in
// TMA's 128B-swizzled order (the 16-byte chunk c of row r at chunk c ^ (r %
// 8)); a consumer warpgroup stores its bands (one, or two with
// GemmConfig::mWaves). For each column chunk of its bands' 64 x BN outputs
// (one, unless the whole tile would leave the pipeline too few stages):
//
//   1. its issuing thread (the warpgroup's first) waits until the
//      warpgroup's previous TMA stores (the previous chunk's or tile's)
//      finished reading the staging tile (cp.async.bulk.wait_group.read 0),
//      a warpgroup barrier tells the others;
//   2. every thread writes its bands' finished registers (OutputValues)
//      into the tile -- stmatrix.x4 for 16-bit outputs (the wgmma accumulator layout
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

/// One 64-row band of a consumer's tile to store: the warpgroup's view of
/// it (tid in [0, 128), m0 the band's first row), its fragment, its FP32
/// total, and its index among the tile's bands (its part of the staging
/// tile).
struct StoreBand {
  const KernelValues *wkv;
  const AccumulatorFragment *frag;
  Value acc, index;
};

/// Consumer warpgroup `wg`'s (index) epilogue of one tile (number `t`,
/// index, of the CTA's walk) through the staging tile: each chunk of all
/// its bands (GemmConfig::mWaves) written, then stored in one bulk group.
void buildTmaStoreEpilogue(KernelBuilder &kb, const GemmPlan &plan,
                           const SmemLayout &layout, ArrayRef<StoreBand> bands,
                           Value wg, Value t);

/// GemmConfig::stagedInput: the warpgroup's issuing thread waits until its
/// previous stores read the staging tile out, then loads the fused input's
/// boxes of column chunk `chunk` of its bands into it, completing on the
/// warpgroup's input mbarrier (buildTmaStoreEpilogue waits for them). The
/// consumer calls it for chunk 0 when its tile starts, so the loads run
/// under the tile's products.
void issueStagedInput(KernelBuilder &kb, const GemmPlan &plan,
                      const SmemLayout &layout, ArrayRef<StoreBand> bands,
                      Value wg, int64_t chunk);

/// After a warpgroup's last tile: its stores completed (the CTA must not
/// exit while the TMA engine still reads its shared memory).
void finishTmaStores(KernelBuilder &kb, const KernelValues &wkv);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_TMASTORE_H
