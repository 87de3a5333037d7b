//===- SmemLayout.h - Shared memory of the FP8 GEMM kernels -----*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// Where the K-major A and B tiles of each pipeline stage (and, for TMA
// loads, a full mbarrier per stage, plus an empty one per stage in the
// warp-specialized kernel and an input one per consumer warpgroup for a
// staged epilogue input; the stages' staged scales and the epilogue's
// staging tile when the configuration has them) live in the dynamic
// shared-memory buffer
// (offsets from its base rounded up to `alignment`), how a
// (row, k) element of a tile maps to a byte, and the wgmma matrix
// descriptors that read them.
//
// Swizzle::None -- core matrices of 8 rows x 16 bytes stored as 128
// contiguous bytes, running along M (N) first, then along K:
//     off(r, k) = ((k / 16) * (R / 8) + r / 8) * 128 + (r % 8) * 16 + k % 16
// so the k32 step s starts at s * 2 * (R / 8) * 128, with LBO (next core
// matrix along K) = (R / 8) * 128 and SBO (next 8-row group) = 128.
//
// Swizzle::B128 -- rows of 128 bytes (BK = 128), the 16-byte chunk c of row
// r stored at chunk c ^ (r % 8):
//     off(r, k) = r * 128 + (((k / 16) ^ (r % 8)) * 16) + k % 16
// 8-row atoms of 1024 bytes; the tile base must be 1024-aligned (the swizzle
// is a function of address bits 4-9). The k32 step s starts at s * 32 bytes
// (the hardware applies the XOR to the computed address), LBO is unused
// (1 by convention) and SBO = 1024; descriptor mode 1 (bits 62-63). A
// tile of which TMA loads at most one atom (up to 8 rows of A:
// GemmConfig::aRows) takes 1024 bytes and SBO = 0: every 8-row group of the
// wgmma reads that atom, the rows past the first 8 compute copies of its
// products (never stored).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_GEMM_SMEMLAYOUT_H
#define FP8_LIB_CONVERSION_FP8TOGPU_GEMM_SMEMLAYOUT_H

#include "KernelBuilder.h"

namespace mlir::fp8::gemm {

/// One K-major operand tile of one stage.
struct TileLayout {
  /// Rows (BM or BN) and K bytes (BK).
  int64_t rows = 0, kBytes = 0;
  Swizzle swizzle = Swizzle::None;
  /// Rows a TMA load writes (GemmConfig::aRows; `rows` when 0).
  int64_t loadedRows = 0;

  int64_t loadRows() const { return loadedRows ? loadedRows : rows; }
  /// Bytes a load writes (a TMA transaction count).
  int64_t loadBytes() const { return loadRows() * kBytes; }
  /// A 128B-swizzled tile of which at most one 8-row atom is loaded: every
  /// 8-row group of the wgmma reads that atom (SBO 0), the tile takes 1024
  /// bytes.
  bool repeatsAtom() const {
    return swizzle == Swizzle::B128 && loadRows() <= 8 && rows > 8;
  }
  /// Bytes the tile takes in shared memory.
  int64_t bytes() const { return (repeatsAtom() ? 8 : rows) * kBytes; }
  /// Byte offset of (row r, byte k) inside the tile.
  Value offset(KernelBuilder &kb, Value r, Value k) const;
  /// Byte offset, inside the tile, of the start of k32 step `step`.
  int64_t stepOffset(int64_t step) const;
  /// Descriptor fields (bytes).
  int64_t leadingByteOffset() const;
  int64_t strideByteOffset() const;
};

/// The whole dynamic shared-memory buffer.
struct SmemLayout {
  TileLayout a, b;
  int64_t stages = 1;
  /// Bytes between the A (B) tiles of consecutive stages.
  int64_t stageStride = 0;
  /// Offset of the B tile of stage 0 (A starts at 0).
  int64_t bOffset = 0;
  /// The staged scales (GemmConfig::stagedScales) after the stages: stage
  /// s's slots at scaleOffset + s * scaleStageBytes (0 bytes without them;
  /// stagedScaleSlots).
  int64_t scaleOffset = 0, scaleStageBytes = 0;
  /// The epilogue's staging tile (EpilogueKind::SharedTMA): BM x (BN /
  /// storeChunks) output elements after the stages, 1024-aligned, as one
  /// 64-row part per row band (`storeTileBytes` = 0 without it).
  int64_t storeOffset = 0, storeTileBytes = 0;
  /// K groups' totals handed to group 0 (GemmConfig::kGroups > 1): for
  /// each group past the first, every register of its fragment as 128
  /// consecutive f32 (one per thread of the warpgroup), after the staging
  /// tile (`reduceBytes` = 0 with one group).
  int64_t reduceOffset = 0, reduceBytes = 0;
  /// Offset of the mbarriers (`numBarriers` x 8 bytes), 0 when none.
  int64_t barrierOffset = 0;
  int64_t numBarriers = 0;
  /// The stages' full and empty mbarriers among them.
  int64_t stageBarriers = 0;
  /// Required alignment of the tiles' base (the kernel rounds the dynamic
  /// buffer's address up to it) and the bytes that may cost.
  int64_t alignment = 16, alignmentSlack = 0;
  /// Dynamic shared memory to launch with.
  int64_t totalBytes = 0;

  static SmemLayout get(const GemmConfig &config);

  int64_t aTileOffset(int64_t stage) const { return stage * stageStride; }
  int64_t bTileOffset(int64_t stage) const {
    return bOffset + stage * stageStride;
  }
  /// Offsets of the first full and the first empty mbarrier (stage s's at
  /// + 8 * s); empty barriers exist in the warp-specialized kernel only.
  int64_t fullBarrierOffset() const { return barrierOffset; }
  int64_t emptyBarrierOffset() const { return barrierOffset + 8 * stages; }
  /// Offset of consumer warpgroup 0's input mbarrier (warpgroup w's at + 8
  /// * w; GemmConfig::stagedInput), after the stages' barriers.
  int64_t inputBarrierOffset() const {
    return barrierOffset + 8 * stageBarriers;
  }
};

/// The 64-bit wgmma matrix descriptor of the tile bytes at `smemAddr` (i64
/// shared-window address) + `byteOffset`: start address >> 4 in bits
/// [0,14), LBO >> 4 in [16,30), SBO >> 4 in [32,46), swizzle mode in
/// [62,64) (base offset 0: tiles are aligned to their swizzle atom). With
/// `wordAdd` (GemmConfig::wordDescriptors) the offset is one 32-bit add to
/// the base's low word (the rest of which CSE shares between the steps),
/// otherwise the whole descriptor is formed from the offset address.
Value buildDescriptor(KernelBuilder &kb, Value smemAddr, int64_t byteOffset,
                      const TileLayout &tile, bool wordAdd);

} // namespace mlir::fp8::gemm

#endif // FP8_LIB_CONVERSION_FP8TOGPU_GEMM_SMEMLAYOUT_H
