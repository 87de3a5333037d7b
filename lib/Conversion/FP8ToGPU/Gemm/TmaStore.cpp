//===- TmaStore.cpp - The TMA-store epilogue of the FP8 GEMM kernels ------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "TmaStore.h"
#include "Epilogue.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

namespace {

/// A box of the staging tile: 64 rows x 128 bytes, 128B-swizzled.
constexpr int64_t kBoxBytes = 128;
constexpr int64_t kBoxTileBytes = kWgmmaM * kBoxBytes;

/// One 64-row band's part of the staging tile, which holds one column
/// chunk of its 64 x BN outputs at a time.
struct OutputGeometry {
  int64_t boxes;     ///< boxes per chunk of a row band
  int64_t bandBytes; ///< bytes of one row band's part of the staging tile
  int64_t blocks;    ///< 8-column blocks per chunk
};

OutputGeometry geometry(const GemmConfig &c) {
  const int64_t columns = c.bn / c.storeChunks;
  return {columns * c.storeBytes / kBoxBytes,
          kWgmmaM * columns * c.storeBytes, columns / 8};
}

/// The warpgroup barrier (named barrier 1 + wg of 128 threads; barrier 0 is
/// the CTA's).
void warpgroupBarrier(KernelBuilder &kb, Value wg) {
  namedBarrierSync(kb, kb.toI32(kb.addC(wg, 1)), kWarpgroupThreads);
}

/// Opens `if (tid == 0)` (the warpgroup's issuing thread); callers hold an
/// InsertionGuard.
void openIssuer(KernelBuilder &kb, const KernelValues &wkv) {
  auto only = scf::IfOp::create(kb.b, kb.loc, kb.eqC(wkv.tid, 0),
                                /*withElseRegion=*/false);
  kb.b.setInsertionPointToStart(&only.getThenRegion().front());
}

/// Registers `i`, `i + 1` (two adjacent columns of a row) as one i32 of two
/// 16-bit values; `inputPair` (i32, or null): the staged input's two
/// elements there, as ldmatrix gave them.
Value packPair(KernelBuilder &kb, const AccumulatorFragment &frag,
               const OutputValues &values, Value acc, int64_t i,
               Value inputPair) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value inputs;
  if (inputPair)
    inputs = LLVM::BitcastOp::create(
        b, loc, VectorType::get({2}, stageableInput(kb.p)->elementType),
        inputPair);
  auto vecType = VectorType::get({2}, kb.p.outType);
  Value v = LLVM::UndefOp::create(b, loc, vecType);
  for (int64_t j = 0; j < 2; ++j) {
    Value in = inputs
                   ? LLVM::ExtractElementOp::create(b, loc, inputs, kb.cI32(j))
                         .getResult()
                   : Value();
    v = LLVM::InsertElementOp::create(
        b, loc, v, values.finishClamped(kb, frag, acc, i + j, in), kb.cI32(j));
  }
  return LLVM::BitcastOp::create(b, loc, kb.i32, v);
}

Value smemByte(KernelBuilder &kb, Value tiles, Value offset) {
  return LLVM::GEPOp::create(kb.b, kb.loc, tiles.getType(), kb.b.getI8Type(),
                             tiles, ArrayRef<LLVM::GEPArg>{kb.toI64(offset)});
}

/// 16-bit outputs: per pair of 8-column blocks (cb, cb + 1) one
/// stmatrix.x4 of the matrices (rows 0-7, cb), (rows 8-15, cb), (rows 0-7,
/// cb + 1), (rows 8-15, cb + 1) of the warp's 16 rows; lane l gives the
/// address of row l % 8 of matrix l / 8. A block is one 16-byte chunk.
/// The chunk's blocks are [firstBlock, firstBlock + blocks), a multiple of
/// a box (8 blocks) each. `staged`: the tile holds the staged input there,
/// which one ldmatrix.x4 of the same matrices reads first (its fragment is
/// stmatrix's: each register pair gets its own elements).
void writeHalfTiles(KernelBuilder &kb, const KernelValues &wkv,
                    const AccumulatorFragment &frag, const OutputValues &values,
                    Value acc, Value tiles, Value partBase, int64_t firstBlock,
                    int64_t blocks, bool staged) {
  OpBuilder &b = kb.b;
  MLIRContext *ctx = b.getContext();
  Value warp = kb.divC(wkv.tid, 32), lane = kb.remC(wkv.tid, 32);
  Value matrix = kb.divC(lane, 8), laneRow = kb.remC(lane, 8);
  // The lane's row in the band's 64 and its byte offset; the second
  // column block's matrices (2, 3) start one chunk later.
  Value row = kb.add(kb.add(kb.mulC(warp, 16), kb.mulC(kb.remC(matrix, 2), 8)),
                     laneRow);
  Value rowBytes = kb.add(partBase, kb.mulC(row, kBoxBytes));
  Value chunkStep = kb.divC(matrix, 2);
  for (int64_t cb = firstBlock; cb < firstBlock + blocks; cb += 2) {
    const int64_t box = (cb - firstBlock) / 8, firstChunk = cb % 8;
    Value chunk = arith::XOrIOp::create(
        b, kb.loc, kb.addC(chunkStep, firstChunk), laneRow);
    Value offset = kb.add(kb.addC(rowBytes, box * kBoxTileBytes),
                          kb.mulC(chunk, 16));
    Value inputs;
    if (staged) {
      auto quad = LLVM::LLVMStructType::getLiteral(
          ctx, SmallVector<Type, 4>(4, kb.i32));
      inputs = NVVM::LdMatrixOp::create(
          b, kb.loc, quad, smemByte(kb, tiles, offset), /*num=*/4,
          NVVM::MMALayout::row, NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
          NVVM::LdStMatrixEltType::B16);
    }
    SmallVector<Value, 4> sources;
    for (int64_t m = 0; m < 4; ++m) {
      Value pair =
          inputs
              ? LLVM::ExtractValueOp::create(b, kb.loc, inputs, m).getResult()
              : Value();
      sources.push_back(packPair(kb, frag, values, acc,
                                 4 * (cb + m / 2) + 2 * (m % 2), pair));
    }
    NVVM::StMatrixOp::create(
        b, kb.loc, smemByte(kb, tiles, offset), sources,
        NVVM::MMALayout::row, NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
        NVVM::LdStMatrixEltType::B16);
  }
}

/// f32 outputs: each register pair (8 bytes of one row) with one store;
/// the chunk's 8-column blocks are [firstBlock, firstBlock + blocks), a
/// multiple of a box (4 blocks) each.
void writeF32Tiles(KernelBuilder &kb, const KernelValues &wkv,
                   const AccumulatorFragment &frag,
                   const OutputValues &values, Value acc, Value tiles,
                   Value partBase, int64_t firstBlock, int64_t blocks) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value warp = kb.divC(wkv.tid, 32), lane = kb.remC(wkv.tid, 32);
  Value quad = kb.divC(lane, 4), inQuad = kb.remC(lane, 4);
  auto vecType = VectorType::get({2}, kb.f32);
  for (int64_t i = 4 * firstBlock; i < 4 * (firstBlock + blocks); i += 2) {
    // Row in the band's 64 (row % 8 = lane / 4), 8-column block cb
    // = 32 bytes: chunk 2 (cb % 4) + (lane % 4) / 2 of box cb / 4 (of the
    // column chunk), at byte (lane % 2) * 8 of it.
    const int64_t half = (i / 2) % 2, cb = i / 4 - firstBlock;
    Value row = kb.add(kb.mulC(warp, 16), kb.addC(quad, 8 * half));
    Value chunk = arith::XOrIOp::create(
        b, loc, kb.addC(kb.divC(inQuad, 2), 2 * (cb % 4)), quad);
    Value offset = kb.add(
        kb.add(kb.addC(partBase, (cb / 4) * kBoxTileBytes),
               kb.mulC(row, kBoxBytes)),
        kb.add(kb.mulC(chunk, 16), kb.mulC(kb.remC(lane, 2), 8)));
    Value v = LLVM::UndefOp::create(b, loc, vecType);
    for (int64_t j = 0; j < 2; ++j)
      v = LLVM::InsertElementOp::create(
          b, loc, v, values.finishClamped(kb, frag, acc, i + j), kb.cI32(j));
    LLVM::StoreOp::create(b, loc, v, smemByte(kb, tiles, offset), 8);
  }
}

} // namespace

Value gemm::encodeOutputTensorMap(KernelBuilder &kb, const GemmPlan &plan,
                                  Value out, Value rowsM) {
  const GemmProblem &p = plan.problem;
  const int64_t rowBytes = p.n * plan.config.storeBytes;
  // A batch on grid.z is its own outer dimension, so that a box of a batch
  // whose M is not a multiple of 64 is clipped at its own last row.
  if (p.batch > 1)
    return encodeByteTensorMap(kb, out, {p.batch, p.m, rowBytes},
                               {1, kWgmmaM, kBoxBytes});
  return encodeByteTensorMap(kb, out, {p.m, rowBytes}, {kWgmmaM, kBoxBytes},
                             rowsM);
}

/// Band `band`'s part of the staging tile: its byte offset from the
/// tiles' base.
static Value bandPart(KernelBuilder &kb, const SmemLayout &layout,
                      const OutputGeometry &g, const StoreBand &band) {
  return kb.addC(kb.mulC(band.index, g.bandBytes), layout.storeOffset);
}

/// The global coordinates (innermost first: byte column, row[, batch]) of
/// box `box` of column chunk `chunk` of `band` -- where the output's box is
/// stored and the staged input's is loaded from.
static SmallVector<Value, 3>
boxCoordinates(KernelBuilder &kb, const GemmPlan &plan, const OutputGeometry &g,
               const StoreBand &band, int64_t chunk, int64_t box) {
  const KernelValues &wkv = *band.wkv;
  Value inner = kb.toI32(kb.addC(kb.mulC(wkv.n0, plan.config.storeBytes),
                                 (chunk * g.boxes + box) * kBoxBytes));
  SmallVector<Value, 3> coords = {inner, kb.toI32(wkv.m0)};
  if (plan.problem.batch > 1)
    coords.push_back(kb.toI32(wkv.bz));
  return coords;
}

/// Consumer warpgroup `wg`'s input mbarrier (GemmConfig::stagedInput).
static Value inputBarrier(KernelBuilder &kb, const SmemLayout &layout,
                          Value tiles, Value wg) {
  return smemByte(kb, tiles,
                  kb.addC(kb.mulC(wg, 8), layout.inputBarrierOffset()));
}

/// The phase parity (i32) of the input mbarrier's use for chunk `chunk`
/// of tile `t` of the walk.
static Value inputParity(KernelBuilder &kb, const GemmPlan &plan, Value t,
                         int64_t chunk) {
  return kb.toI32(
      kb.remC(kb.addC(kb.mulC(t, plan.config.storeChunks), chunk), 2));
}

void gemm::issueStagedInput(KernelBuilder &kb, const GemmPlan &plan,
                            const SmemLayout &layout, ArrayRef<StoreBand> bands,
                            Value wg, int64_t chunk) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmConfig &c = plan.config;
  const OutputGeometry g = geometry(c);
  const KernelValues &wkv = *bands.front().wkv;
  Value tiles = tilesPointer(kb, wkv);
  OpBuilder::InsertionGuard guard(b);
  openIssuer(kb, wkv);
  // The staging tile is free once the previous stores read it out.
  NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, b.getUnitAttr());
  Value bar = inputBarrier(kb, layout, tiles, wg);
  mbarrierArriveExpectTx(
      kb, bar, static_cast<int64_t>(bands.size()) * g.boxes * kBoxTileBytes);
  for (const StoreBand &band : bands) {
    Value base = bandPart(kb, layout, g, band);
    for (int64_t box = 0; box < g.boxes; ++box)
      tmaLoad(kb, wkv.tensorMapIn,
              boxCoordinates(kb, plan, g, band, chunk, box),
              smemByte(kb, tiles, kb.addC(base, box * kBoxTileBytes)), bar);
  }
}

void gemm::buildTmaStoreEpilogue(KernelBuilder &kb, const GemmPlan &plan,
                                 const SmemLayout &layout,
                                 ArrayRef<StoreBand> bands, Value wg, Value t) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmConfig &c = plan.config;
  const OutputGeometry g = geometry(c);
  // Every band's view has the warpgroup's thread index.
  const KernelValues &wkv = *bands.front().wkv;
  Value tiles = tilesPointer(kb, wkv);
  SmallVector<Value, 2> bandBase;
  for (const StoreBand &band : bands)
    bandBase.push_back(bandPart(kb, layout, g, band));
  // 1. The staging tile is free: the warpgroup's previous TMA stores (the
  //    previous tile's, later the previous chunk's) have read it out.
  auto waitForStagingTile = [&] {
    {
      OpBuilder::InsertionGuard guard(b);
      openIssuer(kb, wkv);
      NVVM::CpAsyncBulkWaitGroupOp::create(b, loc, 0, b.getUnitAttr());
    }
    warpgroupBarrier(kb, wg);
  };
  // A staged input's first chunk was issued when the tile started (its
  // issue waited for the staging tile); the warpgroup waits for its bytes.
  const bool staged = c.stagedInput;
  if (!staged)
    waitForStagingTile();
  SmallVector<OutputValues, 2> values;
  for (const StoreBand &band : bands)
    values.emplace_back(kb, *band.wkv, *band.frag);
  for (int64_t chunk = 0; chunk < c.storeChunks; ++chunk) {
    // (A staged input's later chunks could skip this barrier -- every
    // thread's accesses of the previous chunk came before the barrier
    // that preceded its stores, and the input's mbarrier tells the
    // warpgroup when the new chunk landed -- untested on a GPU so far.)
    if (chunk > 0)
      waitForStagingTile();
    if (staged) {
      if (chunk > 0)
        issueStagedInput(kb, plan, layout, bands, wg, chunk);
      mbarrierWait(kb, inputBarrier(kb, layout, tiles, wg),
                   inputParity(kb, plan, t, chunk));
    }
    // 2. The chunk's finished registers of every band into the staging
    //    tile.
    const int64_t firstBlock = chunk * g.blocks;
    for (auto [band, base, vals] : llvm::zip(bands, bandBase, values)) {
      if (c.storeBytes == 2)
        writeHalfTiles(kb, *band.wkv, *band.frag, vals, band.acc, tiles, base,
                       firstBlock, g.blocks, staged);
      else
        writeF32Tiles(kb, *band.wkv, *band.frag, vals, band.acc, tiles, base,
                      firstBlock, g.blocks);
    }
    // 3. Visible to the TMA engine, then stored.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    warpgroupBarrier(kb, wg);
    OpBuilder::InsertionGuard guard(b);
    openIssuer(kb, wkv);
    for (auto [band, base] : llvm::zip(bands, bandBase)) {
      for (int64_t box = 0; box < g.boxes; ++box) {
        SmallVector<Value, 3> coords =
            boxCoordinates(kb, plan, g, band, chunk, box);
        Value src = smemByte(kb, tiles, kb.addC(base, box * kBoxTileBytes));
        NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
            b, loc, wkv.tensorMapD, src, coords, /*l2CacheHint=*/Value(),
            NVVM::TMAStoreMode::TILE, /*predicate=*/Value());
      }
    }
    NVVM::CpAsyncBulkCommitGroupOp::create(b, loc);
  }
}

void gemm::finishTmaStores(KernelBuilder &kb, const KernelValues &wkv) {
  OpBuilder::InsertionGuard guard(kb.b);
  openIssuer(kb, wkv);
  NVVM::CpAsyncBulkWaitGroupOp::create(kb.b, kb.loc, 0, /*read=*/nullptr);
}
