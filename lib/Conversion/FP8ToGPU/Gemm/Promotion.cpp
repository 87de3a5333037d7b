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

SmallVector<Value> Promotion::factors(KernelBuilder &kb, Value k0,
                                      int64_t unit) {
  const GemmProblem &p = plan.problem;
  Value kStart = kb.addC(k0, unit * p.promo);
  const bool lhsK = p.lhsScale.dependsOnK(), rhsK = p.rhsScale.dependsOnK();
  const int64_t bk = plan.config.bk, bn = plan.config.bn;
  // Units starting beyond K (the last tile's zero padding) must not read
  // scales past the end; their partial is zero, scale it by 0.
  const bool needGuard =
      (lhsK || rhsK) && p.k % bk != 0 && unit * p.promo >= p.k % bk;
  Value kClamped = kb.minC(kStart, p.k - 1);
  Value inK = needGuard ? kb.ultC(kStart, p.k) : Value();
  Value sa[2];
  if (lhsK)
    for (int h = 0; h < 2; ++h)
      sa[h] = kb.scaleAt(kv.lhsScale, p.lhsScale, kv.bz,
                         kb.minC(frag.rows[h], p.m - 1), kClamped);
  // rhs scales per distinct column group: one per CTA when its row blocks
  // are whole CTA tiles, one per 8 columns when blocks are multiples of 8,
  // else per column.
  DenseMap<int64_t, Value> sbCache;
  auto sbFor = [&](int64_t i) -> Value {
    int64_t key = i / 4 * 2 + i % 2;
    if (p.rhsScale.rowBlock % bn == 0)
      key = 0;
    else if (p.rhsScale.rowBlock % 8 == 0)
      key = i / 4 * 2;
    Value &v = sbCache[key];
    if (!v)
      v = kb.scaleAt(kv.rhsScale, p.rhsScale, kv.bz,
                     kb.minC(frag.colOf(kb, i), p.n - 1), kClamped);
    return v;
  };
  SmallVector<Value> result(frag.numRegs);
  DenseMap<std::pair<Value, Value>, Value> factorCache;
  for (int64_t i = 0; i < frag.numRegs; ++i) {
    Value fa = lhsK ? sa[(i / 2) % 2] : Value();
    Value fb = rhsK ? sbFor(i) : Value();
    Value &f = factorCache[{fa, fb}];
    if (!f) {
      f = fa && fb ? kb.fmul(fa, fb) : (fa ? fa : fb);
      if (f && inK)
        f = arith::SelectOp::create(kb.b, kb.loc, inK, f, kb.cF32(0.0f));
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
