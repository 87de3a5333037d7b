//===- Epilogue.cpp - Output of the FP8 GEMM kernels ----------------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "Epilogue.h"

#include "fp8/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

namespace {

/// The scales applied once: those that do not vary along K.
struct OuterScales {
  /// lhs scale of each of the thread's two rows (null if it depends on K).
  Value sa[2];
  /// A per-tensor rhs scale (null otherwise: read per column).
  Value sbTensor;
  /// Index 0, the K of the scales read here.
  Value zeroIdx;
};

OuterScales loadOuterScales(KernelBuilder &kb, const KernelValues &kv,
                            const AccumulatorFragment &frag) {
  const GemmProblem &p = kb.p;
  OuterScales s;
  Value zeroIdx = s.zeroIdx = kb.cIdx(0);
  if (!p.lhsScale.dependsOnK())
    for (int h = 0; h < 2; ++h)
      s.sa[h] = kb.scaleAt(kv.lhsScale, p.lhsScale, kv.bz,
                           kb.minC(frag.rows[h], p.m - 1), zeroIdx);
  if (!p.rhsScale.dependsOnK() && p.rhsScale.perTensor)
    s.sbTensor = kb.scaleAt(kv.rhsScale, p.rhsScale, kv.bz, zeroIdx, zeroIdx);
  return s;
}

/// Register `i` of the total, finished and stored if inside the output.
void storeRegister(KernelBuilder &kb, const KernelValues &kv,
                   const AccumulatorFragment &frag, const OuterScales &scales,
                   Value acc, int64_t i) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmProblem &p = kb.p;
  Value row = frag.rowOf(i), col = frag.colOf(kb, i);
  Value ok =
      arith::AndIOp::create(b, loc, kb.ultC(row, p.m), kb.ultC(col, p.n));
  auto ifOp = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value x = LLVM::ExtractValueOp::create(b, loc, acc, i);
  if (!p.lhsScale.dependsOnK())
    x = kb.fmul(x, scales.sa[(i / 2) % 2]);
  if (!p.rhsScale.dependsOnK())
    x = kb.fmul(x, scales.sbTensor ? scales.sbTensor
                                   : kb.scaleAt(kv.rhsScale, p.rhsScale, kv.bz,
                                                col, scales.zeroIdx));
  Value outLin = kb.add(kv.outBase, kb.add(kb.mulC(row, p.n), col));
  if (p.bias == GemmProblem::Bias::Row)
    x = arith::AddFOp::create(b, loc, x, kb.toF32(kb.load(kv.bias, col)));
  else if (p.bias == GemmProblem::Bias::Full)
    x = arith::AddFOp::create(b, loc, x, kb.toF32(kb.load(kv.bias, outLin)));
  x = buildEpilogue(b, loc, x, p.epilogue);
  if (!p.outType.isF32())
    x = arith::TruncFOp::create(b, loc, p.outType, x);
  memref::StoreOp::create(b, loc, x, kv.out, ValueRange{outLin});
}

} // namespace

void gemm::buildRegisterEpilogue(KernelBuilder &kb, const GemmPlan &plan,
                                 const KernelValues &kv,
                                 const AccumulatorFragment &frag, Value acc) {
  OuterScales scales = loadOuterScales(kb, kv, frag);
  for (int64_t i = 0; i < frag.numRegs; ++i)
    storeRegister(kb, kv, frag, scales, acc, i);
}
