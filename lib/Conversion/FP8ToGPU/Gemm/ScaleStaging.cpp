//===- ScaleStaging.cpp - K-dependent scales staged with each K tile ------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "ScaleStaging.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

namespace {

/// One slot's copy: the f32 at `index` of `src` (!llvm.ptr<1>) into byte
/// `dst` (index) of the tiles; 4 bytes when `inK` (i1, null: always), else
/// zeros; only where `valid` (i1, null: always).
void copySlot(KernelBuilder &kb, Value tiles, Value dst, Value src,
              Value index, Value inK, Value valid) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  OpBuilder::InsertionGuard g(b);
  if (valid) {
    auto only = scf::IfOp::create(b, loc, valid, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&only.getThenRegion().front());
  }
  Value to = LLVM::GEPOp::create(b, loc, tiles.getType(), b.getI8Type(), tiles,
                                 ArrayRef<LLVM::GEPArg>{kb.toI64(dst)});
  Value from = LLVM::GEPOp::create(b, loc, src.getType(), kb.f32, src,
                                   ArrayRef<LLVM::GEPArg>{kb.toI64(index)});
  // cp.async's source size: 4 bytes, or 0 (the slot is zero-filled) for a
  // unit past K.
  Value size = inK ? arith::SelectOp::create(b, loc, inK, kb.cI32(4),
                                             kb.cI32(0))
                         .getResult()
                   : Value();
  NVVM::CpAsyncOp::create(b, loc, to, from, /*size=*/4u,
                          NVVM::LoadCacheModifierKind::CA, size);
}

} // namespace

void gemm::copyStagedScales(KernelBuilder &kb, const GemmPlan &plan,
                            const SmemLayout &layout, const KernelValues &tile,
                            Value tiles, Value stage, Value k0, Value lane,
                            Value fullBarrier) {
  const GemmProblem &p = plan.problem;
  const StagedScales &s = plan.config.stagedScales;
  const int64_t bk = plan.config.bk;
  Value base = kb.addC(kb.mulC(stage, layout.scaleStageBytes),
                       layout.scaleOffset);
  Value lhsSrc = s.lhsRows ? llvmPointer(kb, tile.lhsScale, 1, true) : Value();
  Value rhsSrc = s.rhsSlots ? llvmPointer(kb, tile.rhsScale, 1, true) : Value();
  // Copies `count` slots starting at slot `first` (lane + 32 j each), the
  // slot's item i (< count) read from `index(i)`.
  auto copyRange = [&](int64_t first, int64_t count, Value src, Value inK,
                       function_ref<Value(Value)> index) {
    for (int64_t j = 0; j < count; j += kScaleCopyLanes) {
      Value item = kb.addC(lane, j);
      Value valid =
          j + kScaleCopyLanes > count ? kb.ultC(item, count) : Value();
      Value dst = kb.add(base, kb.mulC(kb.addC(item, first), 4));
      copySlot(kb, tiles, dst, src, index(item), inK, valid);
    }
  };
  for (int64_t u = 0; u < s.units; ++u) {
    // As Promotion::load: the unit's first K, clamped into K; a unit past
    // the end of K (the last tile's padding) gets zeros.
    Value kStart = kb.addC(k0, u * p.promo);
    Value inK = p.k % bk != 0 && u * p.promo >= p.k % bk
                    ? kb.ultC(kStart, p.k)
                    : Value();
    Value kClamped = kb.minC(kStart, p.k - 1);
    if (s.lhsRows)
      copyRange(u * s.lhsRows, s.lhsRows, lhsSrc, inK, [&](Value r) {
        return kb.scaleIndex(p.lhsScale, tile.bz,
                             clampRow(kb, tile, kb.add(tile.m0, r)), kClamped);
      });
    if (s.rhsSlots)
      copyRange(s.lhsCount() + u * s.rhsSlots, s.rhsSlots, rhsSrc, inK,
                [&](Value slot) {
                  Value col = kb.minC(
                      s.rhsStep ? kb.add(tile.n0, kb.mulC(slot, s.rhsStep))
                                : tile.n0,
                      p.n - 1);
                  return kb.scaleIndex(p.rhsScale, tile.bz, col, kClamped);
                });
  }
  // Every lane's copies complete on the barrier (counted at its init).
  NVVM::CpAsyncMBarrierArriveOp::create(kb.b, kb.loc, fullBarrier,
                                        /*noinc=*/true);
}
