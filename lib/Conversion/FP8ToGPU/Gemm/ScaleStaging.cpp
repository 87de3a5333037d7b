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

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

namespace {

/// One slot's copy: the f32 at `index` of `src` (!llvm.ptr<1>) into byte
/// `dst` (index) of the tiles, only where `valid` (i1, null: always).
void copySlot(KernelBuilder &kb, Value tiles, Value dst, Value src,
              Value index, Value valid) {
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
  NVVM::CpAsyncOp::create(b, loc, to, from, /*size=*/4u,
                          NVVM::LoadCacheModifierKind::CA, /*cpSize=*/Value());
}

} // namespace

Value gemm::stagedScaleSlots(KernelBuilder &kb, const SmemLayout &layout,
                             Value stage) {
  return kb.addC(kb.mulC(stage, layout.scaleStageBytes), layout.scaleOffset);
}

void gemm::copyStagedScales(KernelBuilder &kb, const GemmPlan &plan,
                            const SmemLayout &layout, const KernelValues &tile,
                            Value tiles, Value stage, Value k0, Value lane,
                            Value fullBarrier) {
  const GemmProblem &p = plan.problem;
  const StagedScales &s = plan.config.stagedScales;
  Value slots = stagedScaleSlots(kb, layout, stage);
  // The K tile's one promotion unit (StagedScales), clamped into K (the
  // last tile's padding is zero-filled by TMA: its products are zero).
  Value k = kb.minC(k0, p.k - 1);
  // Slots [first, first + count): item i (lane, lane + 32, ...) from
  // `src` at `index(i)`.
  auto copySlots = [&](int64_t first, int64_t count, Value src,
                       function_ref<Value(Value)> index) {
    for (int64_t j = 0; j < count; j += kScaleCopyLanes) {
      Value item = kb.addC(lane, j);
      Value valid =
          j + kScaleCopyLanes > count ? kb.ultC(item, count) : Value();
      copySlot(kb, tiles, kb.add(slots, kb.mulC(kb.addC(item, first), 4)),
               src, index(item), valid);
    }
  };
  // Slot r: row r's scale (clamped into M).
  if (s.lhsRows)
    copySlots(0, s.lhsRows,
              llvmPointer(kb, tile.lhsScale, 1, /*fromGeneric=*/true),
              [&](Value r) {
                Value row = clampRow(kb, tile, kb.add(tile.m0, r));
                return kb.scaleIndex(p.lhsScale, tile.bz, row, k);
              });
  // Then the tile's column block's scale (from lane 0).
  if (s.rhs)
    copySlots(s.lhsRows, 1,
              llvmPointer(kb, tile.rhsScale, 1, /*fromGeneric=*/true),
              [&](Value) {
                return kb.scaleIndex(p.rhsScale, tile.bz,
                                     kb.minC(tile.n0, p.n - 1), k);
              });
  // Every lane's copies complete on the barrier (counted at its init).
  NVVM::CpAsyncMBarrierArriveOp::create(kb.b, kb.loc, fullBarrier,
                                        /*noinc=*/true);
}
