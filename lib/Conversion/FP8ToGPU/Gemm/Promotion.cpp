//===- Promotion.cpp - FP32 promotion of wgmma partial sums ---------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "Promotion.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

int64_t Promotion::rhsGroup(int64_t i) const {
  const GemmProblem &p = plan.problem;
  if (p.rhsScale.rowBlock % plan.config.bn == 0)
    return 0;
  if (p.rhsScale.rowBlock % 8 == 0)
    return i / 4;
  return i / 4 * 2 + i % 2;
}

Promotion::UnitScales Promotion::load(KernelBuilder &kb, Value k0,
                                      int64_t unit) {
  const GemmProblem &p = plan.problem;
  UnitScales s;
  if (!lhsVaries() && !rhsVaries())
    return s;
  Value kStart = kb.addC(k0, unit * p.promo);
  const int64_t bk = plan.config.bk;
  if (p.k % bk != 0 && unit * p.promo >= p.k % bk)
    s.inK = kb.ultC(kStart, p.k);
  Value kClamped = kb.minC(kStart, p.k - 1);
  if (lhsVaries())
    for (int h = 0; h < 2; ++h)
      s.values.push_back(kb.scaleAt(kv.lhsScale, p.lhsScale, kv.bz,
                                    clampRow(kb, kv, frag.rows[h]), kClamped));
  if (rhsVaries()) {
    int64_t next = 0;
    for (int64_t i = 0; i < frag.numRegs; ++i) {
      if (rhsGroup(i) != next)
        continue;
      s.values.push_back(kb.scaleAt(kv.rhsScale, p.rhsScale, kv.bz,
                                    kb.minC(frag.colOf(kb, i), p.n - 1),
                                    kClamped));
      ++next;
    }
  }
  return s;
}

Promotion::UnitScales Promotion::loadStaged(KernelBuilder &kb, Value tiles,
                                            Value slots,
                                            const KernelValues &tile) {
  const StagedScales &staged = plan.config.stagedScales;
  UnitScales s;
  auto slot = [&](Value index) {
    Value byte = kb.add(slots, kb.mulC(index, 4));
    Value ptr = LLVM::GEPOp::create(kb.b, kb.loc, tiles.getType(),
                                    kb.b.getI8Type(), tiles,
                                    ArrayRef<LLVM::GEPArg>{kb.toI64(byte)});
    return LLVM::LoadOp::create(kb.b, kb.loc, kb.f32, ptr, 4).getResult();
  };
  // The thread's two rows' slots, then the tile's column block's.
  if (lhsVaries())
    for (int h = 0; h < 2; ++h)
      s.values.push_back(
          slot(arith::SubIOp::create(kb.b, kb.loc, frag.rows[h], tile.m0)));
  if (rhsVaries())
    s.values.push_back(slot(kb.cIdx(staged.lhsRows)));
  return s;
}

SmallVector<Value> Promotion::factors(KernelBuilder &kb,
                                      const UnitScales &scales) {
  const int64_t rhsFirst = lhsVaries() ? 2 : 0;
  SmallVector<Value> result(frag.numRegs);
  DenseMap<std::pair<Value, Value>, Value> factorCache;
  for (int64_t i = 0; i < frag.numRegs; ++i) {
    Value fa = lhsVaries() ? scales.values[(i / 2) % 2] : Value();
    Value fb = rhsVaries() ? scales.values[rhsFirst + rhsGroup(i)] : Value();
    Value &f = factorCache[{fa, fb}];
    if (!f) {
      f = fa && fb ? kb.fmul(fa, fb) : (fa ? fa : fb);
      if (f && scales.inK)
        f = arith::SelectOp::create(kb.b, kb.loc, scales.inK, f,
                                    kb.cF32(0.0f));
    }
    result[i] = f;
  }
  return result;
}

Value Promotion::apply(KernelBuilder &kb, Value total, Value partial,
                       ArrayRef<Value> f) {
  Value next = total;
  for (int64_t i = 0; i < frag.numRegs; ++i) {
    Value pv = LLVM::ExtractValueOp::create(kb.b, kb.loc, partial, i);
    Value tv = LLVM::ExtractValueOp::create(kb.b, kb.loc, next, i);
    // One fma per register (the LLVM NVPTX backend does not contract a
    // separate fmul + fadd).
    tv = f[i] ? LLVM::FMAOp::create(kb.b, kb.loc, pv, f[i], tv).getResult()
              : arith::AddFOp::create(kb.b, kb.loc, tv, pv).getResult();
    next = LLVM::InsertValueOp::create(kb.b, kb.loc, next, tv, i);
  }
  return next;
}
