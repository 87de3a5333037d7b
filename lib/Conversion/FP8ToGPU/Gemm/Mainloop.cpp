//===- Mainloop.cpp - The K loop of the FP8 GEMM kernels ------------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "Mainloop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

namespace {

/// `count` k32 wgmma steps from step `firstStep` of the tiles at `aBase` +
/// `aOffset` and `bBase` + `bOffset` into `acc` (the first step overwrites
/// it when `overwrite`), between a fence and a commit + wait_group
/// `pending` (none when negative).
Value buildSteps(KernelBuilder &kb, const GemmPlan &plan,
                 const SmemLayout &layout, Value aBase, int64_t aOffset,
                 Value bBase, int64_t bOffset, Value acc, int64_t firstStep,
                 int64_t count, bool overwrite, int64_t pending) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmProblem &p = plan.problem;
  auto shape = NVVM::MMAShapeAttr::get(b.getContext(), kWgmmaM,
                                       plan.config.bn, kMmaK / p.elementBytes);
  NVVM::WGMMATypes typeA = *wgmmaType(p.lhsType), typeB = *wgmmaType(p.rhsType);
  const bool wordAdd = plan.config.wordDescriptors;
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t s = 0; s < count; ++s) {
    const int64_t step = firstStep + s;
    Value descA = buildDescriptor(
        kb, aBase, aOffset + layout.a.stepOffset(step), layout.a, wordAdd);
    Value descB = buildDescriptor(
        kb, bBase, bOffset + layout.b.stepOffset(step), layout.b, wordAdd);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, acc.getType(), acc, descA, descB, shape, typeA, typeB,
        NVVM::WGMMATypes::f32,
        overwrite && s == 0 ? NVVM::WGMMAScaleOut::zero
                            : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col,
        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  if (pending >= 0)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
  return acc;
}

} // namespace

Value gemm::buildUnitWgmma(KernelBuilder &kb, const GemmPlan &plan,
                           const SmemLayout &layout, Value aBase,
                           int64_t aOffset, Value bBase, int64_t bOffset,
                           Value zeroAcc, int64_t unit) {
  const int64_t stepsPerUnit = plan.problem.promo / kMmaK;
  return buildSteps(kb, plan, layout, aBase, aOffset, bBase, bOffset, zeroAcc,
                    unit * stepsPerUnit, stepsPerUnit, /*overwrite=*/true,
                    /*pending=*/0);
}

Value gemm::issueUnitWgmma(KernelBuilder &kb, const GemmPlan &plan,
                           const SmemLayout &layout, Value aBase, Value bBase,
                           int64_t bOffset, Value zeroAcc, int64_t unit) {
  const int64_t stepsPerUnit = plan.problem.promo / kMmaK;
  return buildSteps(kb, plan, layout, aBase, 0, bBase, bOffset, zeroAcc,
                    unit * stepsPerUnit, stepsPerUnit, /*overwrite=*/true,
                    /*pending=*/-1);
}

Value gemm::buildTileWgmmaInto(KernelBuilder &kb, const GemmPlan &plan,
                               const SmemLayout &layout, Value aBase,
                               Value bBase, int64_t bOffset, Value acc,
                               bool first, int64_t pending) {
  return buildSteps(kb, plan, layout, aBase, 0, bBase, bOffset, acc, 0,
                    plan.config.bk / kMmaK, first, pending);
}

namespace {

/// One stage, loaded and consumed in the same iteration (thread copies).
Value buildSingleStageMainloop(KernelBuilder &kb, const GemmPlan &plan,
                               const SmemLayout &layout, const KernelValues &kv,
                               const AccumulatorFragment &frag,
                               TileLoader &loader, Promotion &promotion) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmProblem &p = plan.problem;
  const int64_t bk = plan.config.bk;
  Value zeroAcc = LLVM::ZeroOp::create(b, loc, frag.type);
  const int64_t numKTiles = llvm::divideCeil(p.k, bk);
  const int64_t unitsPerTile = bk / p.promo;
  auto kLoop = scf::ForOp::create(b, loc, kb.cIdx(0), kb.cIdx(numKTiles),
                                  kb.cIdx(1), ValueRange{zeroAcc});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(kLoop.getBody());
  Value kt = kLoop.getInductionVar();
  Value total = kLoop.getRegionIterArgs()[0];
  Value k0 = kb.mulC(kt, bk);
  loader.load(kb, kv, Value(), k0);
  loader.acquire(kb, kv, Value(), Value());
  for (int64_t u = 0; u < unitsPerTile; ++u) {
    Value partial =
        buildUnitWgmma(kb, plan, layout, kv.smemBase, layout.aTileOffset(0),
                       kv.smemBase, layout.bTileOffset(0), zeroAcc, u);
    total = promotion.promote(kb, total, partial, k0, u);
  }
  // All wgmmas of this stage completed (wait_group 0).
  loader.release(kb, kv, Value());
  scf::YieldOp::create(b, loc, total);
  return kLoop.getResult(0);
}

/// S stages: the prologue loads K tiles 0..S-1; iteration kt waits for
/// stage kt % S (phase parity (kt / S) % 2), runs its wgmmas and
/// promotions, releases it, and loads K tile kt + S into it, so that S - 1
/// loads are in flight while the tensor cores work.
Value buildPipelinedMainloop(KernelBuilder &kb, const GemmPlan &plan,
                             const SmemLayout &layout, const KernelValues &kv,
                             const AccumulatorFragment &frag,
                             TileLoader &loader, Promotion &promotion) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmProblem &p = plan.problem;
  const int64_t bk = plan.config.bk, stages = layout.stages;
  const int64_t numKTiles = llvm::divideCeil(p.k, bk);
  const int64_t unitsPerTile = bk / p.promo;
  for (int64_t s = 0; s < std::min(stages, numKTiles); ++s)
    loader.load(kb, kv, kb.cIdx(s), kb.cIdx(s * bk));
  Value zeroAcc = LLVM::ZeroOp::create(b, loc, frag.type);
  auto kLoop = scf::ForOp::create(b, loc, kb.cIdx(0), kb.cIdx(numKTiles),
                                  kb.cIdx(1), ValueRange{zeroAcc});
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(kLoop.getBody());
  Value kt = kLoop.getInductionVar();
  Value total = kLoop.getRegionIterArgs()[0];
  Value stage = kb.remC(kt, stages);
  Value phase = kb.toI32(kb.remC(kb.divC(kt, stages), 2));
  loader.acquire(kb, kv, stage, phase);
  Value k0 = kb.mulC(kt, bk);
  Value stageBase = arith::AddIOp::create(
      b, loc, kv.smemBase, kb.toI64(kb.mulC(stage, layout.stageStride)));
  for (int64_t u = 0; u < unitsPerTile; ++u) {
    Value partial = buildUnitWgmma(kb, plan, layout, stageBase, 0, stageBase,
                                   layout.bOffset, zeroAcc, u);
    total = promotion.promote(kb, total, partial, k0, u);
  }
  loader.release(kb, kv, stage);
  Value next = kb.addC(kt, stages);
  auto refill = scf::IfOp::create(b, loc, kb.ultC(next, numKTiles),
                                  /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&refill.getThenRegion().front());
    loader.load(kb, kv, stage, kb.mulC(next, bk));
  }
  scf::YieldOp::create(b, loc, total);
  return kLoop.getResult(0);
}

} // namespace

Value gemm::buildMainloop(KernelBuilder &kb, const GemmPlan &plan,
                          const SmemLayout &layout, const KernelValues &kv,
                          const AccumulatorFragment &frag, TileLoader &loader,
                          Promotion &promotion) {
  if (plan.config.loader == LoaderKind::TMA)
    return buildPipelinedMainloop(kb, plan, layout, kv, frag, loader,
                                  promotion);
  return buildSingleStageMainloop(kb, plan, layout, kv, frag, loader,
                                  promotion);
}
