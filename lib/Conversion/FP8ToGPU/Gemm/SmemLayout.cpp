//===- SmemLayout.cpp - Shared memory of the FP8 GEMM kernels -------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "SmemLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

Value TileLayout::offset(KernelBuilder &kb, Value r, Value k) const {
  if (swizzle == Swizzle::None) {
    Value core = kb.add(kb.mulC(kb.divC(k, 16), rows / 8), kb.divC(r, 8));
    Value in = kb.add(kb.mulC(kb.remC(r, 8), 16), kb.remC(k, 16));
    return kb.add(kb.mulC(core, 128), in);
  }
  Value chunk =
      arith::XOrIOp::create(kb.b, kb.loc, kb.divC(k, 16), kb.remC(r, 8));
  Value in = kb.add(kb.mulC(chunk, 16), kb.remC(k, 16));
  return kb.add(kb.mulC(r, kBytes), in);
}

int64_t TileLayout::stepOffset(int64_t step) const {
  const int64_t stepBytes = step * kMmaK;
  if (swizzle == Swizzle::None)
    return stepBytes / 16 * leadingByteOffset();
  return stepBytes;
}

int64_t TileLayout::leadingByteOffset() const {
  return swizzle == Swizzle::None ? (rows / 8) * 128 : 16;
}

int64_t TileLayout::strideByteOffset() const {
  if (swizzle == Swizzle::None)
    return 128;
  return repeatsAtom() ? 0 : 8 * kBytes;
}

SmemLayout SmemLayout::get(const GemmConfig &config) {
  SmemLayout l;
  l.a = {config.bm, config.bk, config.swizzle, config.loadedARows()};
  l.b = {config.bn, config.bk, config.swizzle};
  l.stages = config.stages;
  // A 128B-swizzled tile must start on a 1024-byte atom.
  l.alignment = config.swizzle == Swizzle::B128 ? 1024 : 16;
  const int64_t aBytes = llvm::alignTo(l.a.bytes(), l.alignment);
  const int64_t bBytes = llvm::alignTo(l.b.bytes(), l.alignment);
  l.bOffset = aBytes;
  l.stageStride = aBytes + bBytes;
  // TMA: one "full" mbarrier per stage (the copies complete on it); the
  // warp-specialized kernel adds one "empty" mbarrier per stage (the
  // consumers release the stage on it).
  l.numBarriers = 0;
  if (config.loader == LoaderKind::TMA)
    l.numBarriers =
        config.stages *
        (config.kind == KernelKind::WarpSpecialized ? 2 : 1);
  // A staged epilogue input: one mbarrier per consumer warpgroup, after
  // the stages'.
  l.stageBarriers = l.numBarriers;
  if (config.stagedInput)
    l.numBarriers += config.consumerWarpgroups;
  l.scaleOffset = l.stages * l.stageStride;
  l.scaleStageBytes = config.stagedScales.stageBytes();
  const int64_t scalesEnd = l.scaleOffset + l.stages * l.scaleStageBytes;
  l.storeTileBytes = config.epilogue == EpilogueKind::SharedTMA
                         ? llvm::alignTo(config.bm *
                                             (config.bn / config.storeChunks) *
                                             config.storeBytes,
                                         1024)
                         : 0;
  // The staging tile is 128B-swizzled: it starts on a 1024-byte atom.
  l.storeOffset =
      l.storeTileBytes ? llvm::alignTo(scalesEnd, l.alignment) : scalesEnd;
  l.reduceOffset = l.storeOffset + l.storeTileBytes;
  l.reduceBytes =
      (config.kGroups - 1) * config.rowBands() * kWgmmaM * config.bn * 4;
  const int64_t tilesEnd = l.reduceOffset + l.reduceBytes;
  l.barrierOffset = l.numBarriers ? tilesEnd : 0;
  // The dynamic buffer is only 16-byte aligned: the kernel rounds its base
  // up to `alignment`, which may cost alignment - 16 bytes.
  l.alignmentSlack = l.alignment > 16 ? l.alignment - 16 : 0;
  l.totalBytes = tilesEnd + 8 * l.numBarriers + l.alignmentSlack;
  return l;
}

Value gemm::buildDescriptor(KernelBuilder &kb, Value smemAddr,
                            int64_t byteOffset, const TileLayout &tile,
                            bool wordAdd) {
  const int64_t lbo = tile.leadingByteOffset(), sbo = tile.strideByteOffset(),
                mode = tile.swizzle == Swizzle::B128 ? 1 : 0;
  if (!wordAdd)
    return buildMatrixDescriptor(kb, smemAddr, byteOffset, lbo, sbo, mode);
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  // The low word: the tile base's address field with LBO (the same for
  // every step of a stage, so CSE leaves one add per descriptor), plus the
  // step's 16-byte units. No carry leaves the 14-bit field: shared-memory
  // addresses stay below 2^18 bytes. The high word (SBO, mode) is a
  // constant.
  assert(byteOffset % 16 == 0 && byteOffset >= 0 && byteOffset < (1 << 18));
  const int64_t fixed = matrixDescriptorFixedBits(lbo, sbo, mode);
  Value addr = arith::TruncIOp::create(b, loc, kb.i32, smemAddr);
  Value field = arith::ShRUIOp::create(
      b, loc, arith::AndIOp::create(b, loc, addr, kb.cI32(0x3FFFF)),
      kb.cI32(4));
  Value base = arith::OrIOp::create(b, loc, field, kb.cI32(fixed & 0xFFFFFFFF));
  Value low = arith::AddIOp::create(b, loc, base, kb.cI32(byteOffset >> 4));
  return arith::OrIOp::create(b, loc,
                              arith::ExtUIOp::create(b, loc, kb.i64, low),
                              kb.cI64(fixed & ~int64_t(0xFFFFFFFF)));
}
