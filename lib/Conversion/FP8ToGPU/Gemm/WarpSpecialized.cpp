//===- WarpSpecialized.cpp - The warp-specialized FP8 GEMM kernel ---------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "WarpSpecialized.h"
#include "Epilogue.h"
#include "Mainloop.h"
#include "Promotion.h"
#include "ScaleStaging.h"
#include "TmaStore.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

namespace {

/// Where K step `it` of the CTA's walk lives (it = tile * K tiles + kt: the
/// stages keep cycling across tiles): stage it % S, in the stage's use
/// number it / S, whose parity (i32) names the mbarrier phase to wait for.
struct StageUse {
  Value stage, parity;
};

StageUse stageUse(KernelBuilder &kb, Value it, int64_t stages) {
  return {kb.remC(it, stages), kb.toI32(kb.remC(kb.divC(it, stages), 2))};
}

int64_t numKTiles(const GemmPlan &plan) {
  return llvm::divideCeil(plan.problem.k, plan.config.bk);
}

/// The output tiles a CTA computes: its own (grid N x M x batch), or with
/// persistent CTAs the cluster tiles (C = clusterM adjacent M tiles; CTA
/// rank r of a cluster takes the r-th) c, c + clusters, ... of the raster
/// order, c = blockIdx.x / C: ids run down a band of rasterGroup / C
/// cluster rows, then on to the band's next N tile, then to the next band;
/// batch outermost. A cluster tile's M tiles past M are computed (their
/// loads are zero-filled or unused rows) and not stored.
class TileWalk {
public:
  TileWalk(KernelBuilder &kb, const GemmPlan &plan, Value rowsM)
      : plan(plan) {
    const GemmProblem &p = plan.problem;
    const GemmConfig &c = plan.config;
    numM = llvm::divideCeil(llvm::divideCeil(p.m, c.bm), c.clusterM);
    numN = llvm::divideCeil(p.n, c.bn);
    numTiles = p.batch * numM * numN;
    if (rowsM) {
      // M at run time (batch 1, no cluster: GemmProblem::dynamicM).
      assert(p.batch == 1 && c.clusterM == 1);
      dynNumM = kb.divC(kb.addC(rowsM, c.bm - 1), c.bm);
      dynNumTiles = kb.mulC(dynNumM, numN);
    }
    if (c.persistentCtas) {
      Value bx = gpu::BlockIdOp::create(kb.b, kb.loc, gpu::Dimension::x);
      cta = kb.divC(bx, c.clusterM);
      rank = c.clusterM > 1 ? kb.remC(bx, c.clusterM) : Value();
    }
  }

  /// Builds `body(tile values, t)` for each tile t = 0, 1, ... of the CTA
  /// (an scf.for when persistent, else once with `kv` and t = 0).
  void forEachTile(KernelBuilder &kb, const KernelValues &kv,
                   function_ref<void(const KernelValues &, Value)> body) {
    if (!cta) {
      body(kv, kb.cIdx(0));
      return;
    }
    const int64_t grid =
        plan.config.persistentCtas / plan.config.clusterM;
    // Tiles cta, cta + grid, ... < numTiles (cta < grid <= numTiles; with
    // M at run time there may be fewer tiles than CTAs: count 0 for those).
    Value count;
    if (dynNumTiles) {
      Value left = arith::SubIOp::create(kb.b, kb.loc, dynNumTiles, cta);
      Value any = arith::CmpIOp::create(kb.b, kb.loc,
                                        arith::CmpIPredicate::ugt,
                                        dynNumTiles, cta);
      count = arith::SelectOp::create(
          kb.b, kb.loc, any, kb.divC(kb.addC(left, grid - 1), grid),
          kb.cIdx(0));
    } else {
      count = kb.addC(
          kb.divC(arith::SubIOp::create(kb.b, kb.loc, kb.cIdx(numTiles - 1),
                                        cta),
                  grid),
          1);
    }
    auto loop = scf::ForOp::create(kb.b, kb.loc, kb.cIdx(0), count, kb.cIdx(1));
    OpBuilder::InsertionGuard g(kb.b);
    kb.b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    KernelValues tile = kv;
    Value nb, mb, bz;
    decode(kb, kb.add(cta, kb.mulC(t, grid)), nb, mb, bz);
    setTile(kb, plan.config, tile, nb, mb, bz);
    body(tile, t);
  }

  /// The values of the CTA's first tile (tile `cta` of the walk; `kv`
  /// without persistent CTAs). Every CTA has one when M is static.
  KernelValues firstTile(KernelBuilder &kb, const KernelValues &kv) {
    if (!cta)
      return kv;
    KernelValues tile = kv;
    Value nb, mb, bz;
    decode(kb, cta, nb, mb, bz);
    setTile(kb, plan.config, tile, nb, mb, bz);
    return tile;
  }

private:
  void decode(KernelBuilder &kb, Value id, Value &nb, Value &mb, Value &bz) {
    OpBuilder &b = kb.b;
    Location loc = kb.loc;
    if (dynNumM) {
      decodeDynamic(kb, id, nb, mb, bz);
      return;
    }
    const int64_t perBatch = numM * numN;
    bz = plan.problem.batch > 1 ? kb.divC(id, perBatch) : kb.cIdx(0);
    Value r = plan.problem.batch > 1 ? kb.remC(id, perBatch) : id;
    const int64_t group = std::min(
        std::max<int64_t>(plan.config.rasterGroup / plan.config.clusterM, 1),
        numM);
    const int64_t bandTiles = group * numN;
    Value firstM = kb.mulC(kb.divC(r, bandTiles), group);
    // The last band may be narrower.
    Value rows = arith::MinUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, kb.cIdx(numM), firstM),
        kb.cIdx(group));
    Value inBand = kb.remC(r, bandTiles);
    mb = kb.add(firstM, arith::RemUIOp::create(b, loc, inBand, rows));
    nb = arith::DivUIOp::create(b, loc, inBand, rows);
    if (rank)
      mb = kb.add(kb.mulC(mb, plan.config.clusterM), rank);
  }

  /// decode with the M tiles at run time (batch 1, no cluster).
  void decodeDynamic(KernelBuilder &kb, Value id, Value &nb, Value &mb,
                     Value &bz) {
    OpBuilder &b = kb.b;
    Location loc = kb.loc;
    bz = kb.cIdx(0);
    Value group = arith::MinUIOp::create(
        b, loc, dynNumM,
        kb.cIdx(std::max<int64_t>(plan.config.rasterGroup, 1)));
    Value bandTiles = kb.mulC(group, numN);
    Value firstM = arith::MulIOp::create(
        b, loc, arith::DivUIOp::create(b, loc, id, bandTiles), group);
    Value rows = arith::MinUIOp::create(
        b, loc, arith::SubIOp::create(b, loc, dynNumM, firstM), group);
    Value inBand = arith::RemUIOp::create(b, loc, id, bandTiles);
    mb = kb.add(firstM, arith::RemUIOp::create(b, loc, inBand, rows));
    nb = arith::DivUIOp::create(b, loc, inBand, rows);
  }

  const GemmPlan &plan;
  /// Cluster rows (M tiles / C), N tiles, cluster tiles.
  int64_t numM = 0, numN = 0, numTiles = 0;
  /// With M at run time: M tiles and tiles (index), else null.
  Value dynNumM, dynNumTiles;
  /// The CTA's cluster (its index among the persistent clusters) and rank.
  Value cta, rank;
};

/// The stage and phase parity `step` K steps after `stage` (index) and
/// `parity` (i32): the parity flipped when the stages wrap (`step` divides
/// the stages: a K group's stages, GemmConfig::kGroups).
std::pair<Value, Value> nextStage(KernelBuilder &kb, Value stage, Value parity,
                                  int64_t stages, int64_t step = 1) {
  Value next = kb.addC(stage, step);
  Value wrap = arith::CmpIOp::create(kb.b, kb.loc,
                                     step == 1 ? arith::CmpIPredicate::eq
                                               : arith::CmpIPredicate::uge,
                                     next, kb.cIdx(stages));
  Value wrapped = step == 1 ? kb.cIdx(0) : kb.addC(next, -stages);
  return {arith::SelectOp::create(kb.b, kb.loc, wrap, wrapped, next),
          arith::SelectOp::create(
              kb.b, kb.loc, wrap,
              arith::XOrIOp::create(kb.b, kb.loc, parity, kb.cI32(1)), parity)};
}

/// The producer warpgroup: gives registers back; its first thread refills
/// the stages in the walk's K order, each once the consumers released it,
/// and with staged scales its second warp copies each stage's scales
/// (ScaleStaging.h) in the same order.
void buildProducer(KernelBuilder &kb, const GemmPlan &plan,
                   const SmemLayout &layout, const KernelValues &kv,
                   TmaLoader &loader, TileWalk &walk) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmConfig &c = plan.config;
  NVVM::SetMaxRegisterOp::create(b, loc, c.producerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  Value isIssuer = kb.eqC(kv.tid, c.computeWarpgroups() * kWarpgroupThreads);
  // The weights' first stages load while the stream predecessor finishes;
  // then every producer thread waits for it before anything else.
  const int64_t prefetched =
      c.prefetchB ? std::min<int64_t>(layout.stages, numKTiles(plan)) : 0;
  if (prefetched) {
    auto issuer = scf::IfOp::create(b, loc, isIssuer,
                                    /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&issuer.getThenRegion().front());
    KernelValues first = walk.firstTile(kb, kv);
    for (int64_t s = 0; s < prefetched; ++s)
      loader.prefetchB(kb, first, kb.cIdx(s), kb.cIdx(s * c.bk));
  }
  // (fp8-gpu-grid-dependency then leaves the kernel alone.)
  if (c.prefetchB)
    waitForGridDependency(b, loc);
  auto elected = scf::IfOp::create(b, loc, isIssuer,
                                   /*withElseRegion=*/false);
  // Walks the CTA's K steps: `fill(tile, stage, k0)` once the stage is
  // empty.
  // (`prefetchedB`, i1 or null: the stage's B tile was prefetched.)
  auto walkStages =
      [&](function_ref<void(const KernelValues &, Value, Value, Value)> fill) {
        walk.forEachTile(kb, kv, [&](const KernelValues &tile, Value t) {
          auto kLoop = scf::ForOp::create(b, loc, kb.cIdx(0),
                                          kb.cIdx(numKTiles(plan)), kb.cIdx(1));
          OpBuilder::InsertionGuard g2(b);
          b.setInsertionPointToStart(kLoop.getBody());
          Value kt = kLoop.getInductionVar();
          StageUse use = stageUse(kb, kb.add(kb.mulC(t, numKTiles(plan)), kt),
                                  layout.stages);
          // The stage's previous use (parity ^ 1). A fresh mbarrier counts as
          // having completed the phase before its first, so the first S K steps
          // do not wait.
          Value previous =
              arith::XOrIOp::create(b, loc, use.parity, kb.cI32(1));
          loader.waitEmpty(kb, use.stage, previous);
          Value prefetchedB;
          if (prefetched)
            prefetchedB = arith::AndIOp::create(
                b, loc, kb.eqC(t, 0),
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kt,
                                      kb.cIdx(prefetched)));
          fill(tile, use.stage, kb.mulC(kt, c.bk), prefetchedB);
        });
      };
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&elected.getThenRegion().front());
    walkStages([&](const KernelValues &tile, Value stage, Value k0,
                   Value prefetchedB) {
      if (!prefetchedB) {
        loader.issue(kb, tile, stage, k0);
        return;
      }
      auto which = scf::IfOp::create(b, loc, prefetchedB,
                                     /*withElseRegion=*/true);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&which.getThenRegion().front());
      loader.issueA(kb, tile, stage, k0);
      b.setInsertionPointToStart(&which.getElseRegion().front());
      loader.issue(kb, tile, stage, k0);
    });
  }
  if (!c.stagedScales.enabled())
    return;
  // The producer's second warp copies the staged scales of each K tile.
  auto copier = scf::IfOp::create(
      b, loc,
      kb.eqC(kb.divC(kv.tid, 32),
             c.computeWarpgroups() * (kWarpgroupThreads / 32) + 1),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&copier.getThenRegion().front());
  Value tiles = tilesPointer(kb, kv), lane = kb.remC(kv.tid, 32);
  walkStages([&](const KernelValues &tile, Value stage, Value k0, Value) {
    copyStagedScales(kb, plan, layout, tile, tiles, stage, k0, lane,
                     loader.fullBarrier(kb, stage));
  });
}

/// The K loop of a fast-accumulation consumer: every K tile's wgmmas add
/// into the total (the first tile's, peeled, start it); a stage is handed
/// back once the next tile's wgmmas are issued and its own completed
/// (wait_group 1), the last one after the loop (wait_group 0). Returns the
/// total.
Value buildFastAccumulationLoop(KernelBuilder &kb, const GemmPlan &plan,
                                const SmemLayout &layout,
                                const KernelValues &tile, TmaLoader &loader,
                                const AccumulatorFragment &frag, Value aRows,
                                Value lane, Value firstStep) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t kTiles = numKTiles(plan), stages = layout.stages;
  // The K tile on `stage` (waited for with `parity`) added into `acc`.
  auto issue = [&](Value stage, Value parity, Value acc, bool first) {
    loader.waitFull(kb, stage, parity);
    Value stageBase = arith::AddIOp::create(
        b, loc, tile.smemBase, kb.toI64(kb.mulC(stage, layout.stageStride)));
    Value aBase = arith::AddIOp::create(b, loc, stageBase, aRows);
    return buildTileWgmmaInto(kb, plan, layout, aBase, stageBase,
                              layout.bOffset, acc, first, /*pending=*/1);
  };
  StageUse use = stageUse(kb, firstStep, stages);
  Value first = issue(use.stage, use.parity,
                      LLVM::UndefOp::create(b, loc, frag.type),
                      /*first=*/true);
  auto [stage1, parity1] = nextStage(kb, use.stage, use.parity, stages);
  // Carried: the total, the next K tile's stage and parity, the stage of
  // the tile whose wgmmas may still be in flight.
  auto kLoop = scf::ForOp::create(
      b, loc, kb.cIdx(1), kb.cIdx(kTiles), kb.cIdx(1),
      ValueRange{first, stage1, parity1, use.stage});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(kLoop.getBody());
    auto iter = kLoop.getRegionIterArgs();
    Value stage = iter[1], parity = iter[2];
    Value total = issue(stage, parity, iter[0], /*first=*/false);
    // The previous K tile's wgmmas completed: its stage is free.
    loader.arriveEmpty(kb, iter[3], lane);
    auto [nextS, nextP] = nextStage(kb, stage, parity, stages);
    scf::YieldOp::create(b, loc, ValueRange{total, nextS, nextP, stage});
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  loader.arriveEmpty(kb, kLoop.getResult(3), lane);
  return kLoop.getResult(0);
}

/// Most K-dependent scale values per unit and row band that the promoting
/// loop carries from one unit to the next (block scales: 2 row scales + 1
/// column-block scale); more (MXFP8's per-column scales) would cost the
/// registers of the accumulators, so those are loaded in the unit that
/// uses them.
constexpr size_t kMaxPrefetchedScales = 4;

/// One 64-row band of a consumer's tile: its view of the tile (tid in the
/// warpgroup, m0 its first row), the accumulator fragment, the byte offset
/// of its rows in an A stage (whole 1024-byte swizzle atoms: 64 rows of
/// 128 bytes), its index among the tile's bands (wave * consumers + wg).
struct RowBand {
  KernelValues wkv;
  AccumulatorFragment frag;
  Value aRows, index;
};

/// The K loop of a promoting consumer: per promotion unit and row band a
/// fresh partial (fence, k32 steps, commit), promoted into the band's FP32
/// total once its wgmmas completed (wait_group 0); the stage goes back to
/// the producer before the last band's last promotion, which needs
/// registers only. While the tensor cores compute a unit, the band's next
/// unit's scales load (carried into the next iteration for the last unit
/// of a tile) and this unit's factors are combined, so no scale load's
/// latency stands between two wgmma groups. With two bands the partial's
/// registers serve them in turn: the other consumer's wgmmas keep the
/// tensor cores busy while this one promotes. Stage and parity are carried
/// too (no division by the stage count per K tile). Returns the totals.
SmallVector<Value, 2>
buildPromotingLoop(KernelBuilder &kb, const GemmPlan &plan,
                   const SmemLayout &layout, const KernelValues &tile,
                   TmaLoader &loader, MutableArrayRef<Promotion> promotions,
                   ArrayRef<RowBand> bands, Value lane, Value firstStep) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t bk = plan.config.bk, stages = layout.stages;
  const int64_t unitsPerTile = bk / plan.problem.promo;
  const size_t numBands = bands.size();
  Value zeroAcc = LLVM::ZeroOp::create(b, loc, bands.front().frag.type);
  // A unit's first wgmma overwrites the partial (scale-d 0).
  Value fresh = LLVM::UndefOp::create(b, loc, bands.front().frag.type);
  StageUse first = stageUse(kb, firstStep, stages);
  // Staged scales are read from the stage; otherwise each unit's scales
  // load from global memory, where there are few enough a unit ahead.
  const bool staged = plan.config.stagedScales.enabled();
  Value tiles = staged ? tilesPointer(kb, tile) : Value();
  SmallVector<Promotion::UnitScales, 2> scales0;
  if (!staged)
    for (Promotion &promotion : promotions)
      scales0.push_back(promotion.load(kb, kb.cIdx(0), 0));
  const size_t perBand = staged ? 0 : scales0.front().values.size();
  const bool prefetch = !staged && perBand <= kMaxPrefetchedScales;
  // Carried: the totals, stage and parity, then the bands' scales (and
  // their guard, when the first unit has one: the units that do are never
  // first in a tile, so it is never carried).
  SmallVector<Value> init(numBands, zeroAcc);
  init.append({first.stage, first.parity});
  if (prefetch)
    for (const Promotion::UnitScales &s : scales0)
      init.append(s.values.begin(), s.values.end());
  auto kLoop = scf::ForOp::create(b, loc, kb.cIdx(0), kb.cIdx(numKTiles(plan)),
                                  kb.cIdx(1), init);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(kLoop.getBody());
  Value kt = kLoop.getInductionVar();
  auto iter = kLoop.getRegionIterArgs();
  SmallVector<Value, 2> totals(iter.begin(), iter.begin() + numBands);
  Value stage = iter[numBands], parity = iter[numBands + 1];
  SmallVector<Promotion::UnitScales, 2> current(numBands);
  if (prefetch)
    for (size_t w = 0; w < numBands; ++w)
      current[w].values.assign(iter.begin() + numBands + 2 + w * perBand,
                               iter.begin() + numBands + 2 + (w + 1) * perBand);
  Value k0 = kb.mulC(kt, bk);
  loader.waitFull(kb, stage, parity);
  Value stageBase = arith::AddIOp::create(
      b, loc, tile.smemBase, kb.toI64(kb.mulC(stage, layout.stageStride)));
  // (Staged scales: one promotion unit per K tile, StagedScales.)
  assert(!staged || unitsPerTile == 1);
  Value slots = staged ? stagedScaleSlots(kb, layout, stage) : Value();
  for (int64_t u = 0; u < unitsPerTile; ++u) {
    for (size_t w = 0; w < numBands; ++w) {
      Promotion &promotion = promotions[w];
      // Staged scales are read, and their factors formed, before the
      // band's wgmmas are issued: the shared-memory loads' latency hides
      // under the descriptors' arithmetic, where ptxas otherwise held the
      // unit's last wgmmas behind the factors' multiplies.
      SmallVector<Value> factors;
      if (staged) {
        current[w] = promotion.loadStaged(kb, tiles, slots, tile);
        factors = promotion.factors(kb, current[w]);
      }
      Value aBase = arith::AddIOp::create(b, loc, stageBase, bands[w].aRows);
      Value partial = issueUnitWgmma(kb, plan, layout, aBase, stageBase,
                                     layout.bOffset, fresh, u);
      Promotion::UnitScales next;
      if (prefetch)
        next = u + 1 < unitsPerTile ? promotion.load(kb, k0, u + 1)
                                    : promotion.load(kb, kb.addC(k0, bk), 0);
      else if (!staged)
        current[w] = promotion.load(kb, k0, u);
      if (!staged)
        factors = promotion.factors(kb, current[w]);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      // Every wgmma on the stage completed: hand it back before promoting.
      if (u == unitsPerTile - 1 && w == numBands - 1)
        loader.arriveEmpty(kb, stage, lane);
      totals[w] = promotion.apply(kb, totals[w], partial, factors);
      if (prefetch)
        current[w] = next;
    }
  }
  auto [stage1, parity1] = nextStage(kb, stage, parity, stages);
  SmallVector<Value> yield(totals.begin(), totals.end());
  yield.append({stage1, parity1});
  if (prefetch)
    for (const Promotion::UnitScales &s : current)
      yield.append(s.values.begin(), s.values.end());
  scf::YieldOp::create(b, loc, yield);
  return SmallVector<Value, 2>(kLoop.getResults().take_front(numBands));
}

/// The promoting K loop of the decode plan's consumer (one row band, one
/// promotion unit per K tile: GemmConfig::pipelinedPromotion), in groups
/// of `group` K tiles: each tile's wgmmas are issued into a fresh partial
/// as soon as its stage is full, without waiting for the group's earlier
/// tiles; then, in order, each partial is waited for (wait_group: the
/// group's later tiles may still run), its stage handed back, and it is
/// promoted into the total while the later tiles' wgmmas run. A group
/// costs one wgmma round trip instead of one per tile (at decode tiles'
/// few columns a K tile's wgmmas are short and the wait is most of it).
/// Nothing is in flight across the loop's back edge: a partial carried
/// there would be copied between registers while its wgmmas run, which
/// ptxas serializes (C7514/C7515). The same promotions in the same order as
/// buildPromotingLoop: bit-identical totals. With K groups
/// (GemmConfig::kGroups) the consumer of group `kGroup` (index) walks the
/// K tiles kGroup, kGroup + kGroups, ... (from `firstStep`, its first
/// one's step) and returns its part of the total.
Value buildPipelinedPromotingLoop(KernelBuilder &kb, const GemmPlan &plan,
                                  const SmemLayout &layout,
                                  const KernelValues &tile, TmaLoader &loader,
                                  Promotion &promotion, const RowBand &band,
                                  Value lane, Value firstStep, Value kGroup) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const int64_t bk = plan.config.bk, stages = layout.stages;
  const int64_t kGroups = plan.config.kGroups;
  const int64_t kTiles = numKTiles(plan) / kGroups;
  const int64_t group = pipelinedPromotionGroup(plan.config);
  // The K tile (index) of the group's `j`-th.
  auto kTileOf = [&](Value j) {
    return kGroups == 1 ? j : kb.add(kb.mulC(j, kGroups), kGroup);
  };
  // A fresh partial's wgmmas overwrite their accumulator (scale-d 0): its
  // input is undefined rather than zeros, whose moves into the registers
  // while another partial's wgmmas run would make ptxas serialize them.
  Value fresh = LLVM::UndefOp::create(b, loc, band.frag.type);
  // `count` K tiles from the group's `kt`-th (index) on the stages from
  // `stage` / `parity`: issued, then retired in order into `total`.
  // Returns the total and the next stage and parity.
  auto runGroup = [&](Value kt, int64_t count, Value total, Value stage,
                      Value parity) {
    SmallVector<Value> partials, stagesUsed;
    SmallVector<Promotion::UnitScales> scales;
    for (int64_t i = 0; i < count; ++i) {
      loader.waitFull(kb, stage, parity);
      Value stageBase = arith::AddIOp::create(
          b, loc, tile.smemBase, kb.toI64(kb.mulC(stage, layout.stageStride)));
      Value aBase = arith::AddIOp::create(b, loc, stageBase, band.aRows);
      partials.push_back(issueUnitWgmma(kb, plan, layout, aBase, stageBase,
                                        layout.bOffset, fresh, 0));
      scales.push_back(
          promotion.load(kb, kb.mulC(kTileOf(kb.addC(kt, i)), bk), 0));
      stagesUsed.push_back(stage);
      std::tie(stage, parity) = nextStage(kb, stage, parity, stages, kGroups);
    }
    for (int64_t i = 0; i < count; ++i) {
      SmallVector<Value> factors = promotion.factors(kb, scales[i]);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, count - 1 - i);
      loader.arriveEmpty(kb, stagesUsed[i], lane);
      total = promotion.apply(kb, total, partials[i], factors);
    }
    return std::make_tuple(total, stage, parity);
  };
  StageUse use = stageUse(kb, firstStep, stages);
  Value total = LLVM::ZeroOp::create(b, loc, band.frag.type);
  const int64_t groups = kTiles / group;
  auto loop =
      scf::ForOp::create(b, loc, kb.cIdx(0), kb.cIdx(groups), kb.cIdx(1),
                         ValueRange{total, use.stage, use.parity});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    auto it = loop.getRegionIterArgs();
    auto [t, s, p] = runGroup(kb.mulC(loop.getInductionVar(), group), group,
                              it[0], it[1], it[2]);
    scf::YieldOp::create(b, loc, ValueRange{t, s, p});
  }
  total = loop.getResult(0);
  // The last K tiles, fewer than a group.
  if (int64_t rest = kTiles % group)
    total = std::get<0>(runGroup(kb.cIdx(groups * group), rest, total,
                                 loop.getResult(1), loop.getResult(2)));
  return total;
}

/// K group `kGroup`'s (index) total of `band` summed over the groups
/// (GemmConfig::kGroups): groups 1.. write theirs into the reduction buffer
/// (register i of thread t at f32 (group - 1) x regs x 128 + 128 i + t:
/// consecutive threads, consecutive banks), the consumers meet at a named
/// barrier, group 0 adds them in group order; a second barrier keeps the
/// buffer until group 0 has read it (the next tile's totals reuse it). The
/// result is group 0's (the others' is their own).
Value sumKGroups(KernelBuilder &kb, const GemmPlan &plan,
                 const SmemLayout &layout, const KernelValues &tile,
                 const RowBand &band, Value kGroup, Value total) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmConfig &c = plan.config;
  const int64_t regs = band.frag.numRegs;
  Value tiles = tilesPointer(kb, tile);
  auto slot = [&](Value group, int64_t i) {
    Value index = kb.add(kb.mulC(kb.addC(kb.mulC(kb.addC(group, -1), regs), i),
                                 kWarpgroupThreads),
                         band.wkv.tid);
    return LLVM::GEPOp::create(b, loc, tiles.getType(), b.getI8Type(), tiles,
                               ArrayRef<LLVM::GEPArg>{kb.toI64(kb.addC(
                                   kb.mulC(index, 4), layout.reduceOffset))});
  };
  // Named barrier 0 is the CTA's; 1.. the TMA-store epilogue's per
  // warpgroup (not used with K groups: their epilogue is the register one).
  Value barrier = kb.cI32(1 + c.computeWarpgroups());
  const int64_t threads = c.computeWarpgroups() * kWarpgroupThreads;
  Value first = kb.eqC(kGroup, 0);
  {
    auto writer = scf::IfOp::create(b, loc, first, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&writer.getElseRegion().front());
    for (int64_t i = 0; i < regs; ++i)
      LLVM::StoreOp::create(b, loc,
                            LLVM::ExtractValueOp::create(b, loc, total, i),
                            slot(kGroup, i), 4);
  }
  namedBarrierSync(kb, barrier, threads);
  auto reader = scf::IfOp::create(b, loc, band.frag.type, first,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&reader.getThenRegion().front());
    Value sum = total;
    for (int64_t group = 1; group < c.kGroups; ++group)
      for (int64_t i = 0; i < regs; ++i) {
        Value other = LLVM::LoadOp::create(b, loc, b.getF32Type(),
                                           slot(kb.cIdx(group), i), 4);
        Value mine = LLVM::ExtractValueOp::create(b, loc, sum, i);
        sum = LLVM::InsertValueOp::create(
            b, loc, sum, LLVM::FAddOp::create(b, loc, mine, other), i);
      }
    scf::YieldOp::create(b, loc, sum);
    b.setInsertionPointToStart(&reader.getElseRegion().front());
    scf::YieldOp::create(b, loc, total);
  }
  namedBarrierSync(kb, barrier, threads);
  return reader.getResult(0);
}

/// Consumer warpgroup `wg` (index) on one tile: its row bands, from the
/// stages to the output. `t` is the tile's number in the CTA's walk. With K
/// groups (GemmConfig::kGroups) `kGroup` (index) is the warpgroup's: it
/// computes its part of the K tiles, and group 0 the epilogue.
void buildConsumerTile(KernelBuilder &kb, const GemmPlan &plan,
                       const SmemLayout &layout, const KernelValues &tile,
                       TmaLoader &loader, Value wg, Value kGroup, Value t) {
  const GemmConfig &c = plan.config;
  Value lane;
  SmallVector<RowBand, 2> bands;
  for (int64_t w = 0; w < c.mWaves; ++w) {
    RowBand band;
    band.index = kb.addC(wg, w * c.consumerWarpgroups);
    band.wkv = tile;
    band.wkv.tid = kb.remC(tile.tid, kWarpgroupThreads);
    band.wkv.m0 = kb.add(tile.m0, kb.mulC(band.index, kWgmmaM));
    // (After the first band's m0: the one-band kernel's instruction order.)
    if (!lane)
      lane = kb.remC(tile.tid, 32);
    band.frag = AccumulatorFragment::build(kb, band.wkv, c.bn);
    band.aRows = kb.toI64(kb.mulC(band.index, kWgmmaM * c.bk));
    bands.push_back(band);
  }
  // (Promotion refers to its band's values: `bands` is complete.)
  SmallVector<Promotion, 2> promotions;
  for (const RowBand &band : bands)
    promotions.emplace_back(plan, band.wkv, band.frag);
  // A staged epilogue input loads under the tile's products.
  if (c.stagedInput) {
    SmallVector<StoreBand, 2> inputs;
    for (const RowBand &band : bands)
      inputs.push_back({&band.wkv, &band.frag, Value(), band.index});
    issueStagedInput(kb, plan, layout, inputs, wg, /*chunk=*/0);
  }
  Value firstStep = kb.mulC(t, numKTiles(plan));
  if (c.kGroups > 1)
    firstStep = kb.add(firstStep, kGroup);
  SmallVector<Value, 2> totals;
  if (c.fastAccumulation)
    totals.push_back(buildFastAccumulationLoop(
        kb, plan, layout, tile, loader, bands.front().frag,
        bands.front().aRows, lane, firstStep));
  else if (c.pipelinedPromotion)
    totals.push_back(buildPipelinedPromotingLoop(
        kb, plan, layout, tile, loader, promotions.front(), bands.front(), lane,
        firstStep, kGroup));
  else
    totals = buildPromotingLoop(kb, plan, layout, tile, loader, promotions,
                                bands, lane, firstStep);
  if (c.epilogue == EpilogueKind::SharedTMA) {
    SmallVector<StoreBand, 2> stores;
    for (auto [band, total] : llvm::zip(bands, totals))
      stores.push_back({&band.wkv, &band.frag, total, band.index});
    buildTmaStoreEpilogue(kb, plan, layout, stores, wg, t);
    return;
  }
  if (c.kGroups > 1) {
    totals.front() = sumKGroups(kb, plan, layout, tile, bands.front(), kGroup,
                                totals.front());
    auto writer = scf::IfOp::create(kb.b, kb.loc, kb.eqC(kGroup, 0),
                                    /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(kb.b);
    kb.b.setInsertionPointToStart(&writer.getThenRegion().front());
    buildRegisterEpilogue(kb, plan, bands.front().wkv, bands.front().frag,
                          totals.front());
    return;
  }
  for (auto [band, total] : llvm::zip(bands, totals))
    buildRegisterEpilogue(kb, plan, band.wkv, band.frag, total);
}

} // namespace

void gemm::buildWarpSpecializedBody(KernelBuilder &kb, const GemmPlan &plan,
                                    const SmemLayout &layout,
                                    const KernelValues &kv,
                                    TmaLoader &loader) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmConfig &c = plan.config;
  // M at run time changes the walk unless every admitted M is one row
  // band (the decode plan: M <= 64 = BM), whose tiles are the planned ones
  // (a constant trip count keeps the K loop's registers as in a static
  // build: a run-time count spilled 332 bytes in the BF16 decode kernel).
  const bool oneBand = plan.maxRows && plan.maxRows <= c.bm;
  TileWalk walk(kb, plan, oneBand ? Value() : kv.rowsM);
  Value wg = kb.divC(kv.tid, kWarpgroupThreads);
  auto role = scf::IfOp::create(b, loc, kb.eqC(wg, c.computeWarpgroups()),
                                /*withElseRegion=*/true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&role.getThenRegion().front());
  buildProducer(kb, plan, layout, kv, loader, walk);
  b.setInsertionPointToStart(&role.getElseRegion().front());
  NVVM::SetMaxRegisterOp::create(b, loc, c.consumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  // They read activation scales and epilogue inputs and write the output.
  if (c.prefetchB)
    waitForGridDependency(b, loc);
  // With K groups, warpgroup w computes band w % consumers, K group w /
  // consumers.
  Value bandWg = wg, kGroup;
  if (c.kGroups > 1) {
    bandWg = kb.remC(wg, c.consumerWarpgroups);
    kGroup = kb.divC(wg, c.consumerWarpgroups);
  }
  walk.forEachTile(kb, kv, [&](const KernelValues &tile, Value t) {
    buildConsumerTile(kb, plan, layout, tile, loader, bandWg, kGroup, t);
  });
  if (c.epilogue == EpilogueKind::SharedTMA) {
    KernelValues wkv = kv;
    wkv.tid = kb.remC(kv.tid, kWarpgroupThreads);
    finishTmaStores(kb, wkv);
  }
  b.setInsertionPointAfter(role);
  loader.finish(kb);
}
