//===- KernelBuilder.cpp - IR helpers of the FP8 GEMM generator -----------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "KernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

Value KernelBuilder::scaleIndex(const SideScale &s, Value batch, Value row,
                               Value kIdx) {
  if (s.perTensor)
    return Value();
  Value rb = divC(row, s.rowBlock);
  if (s.mMajorStride) {
    Value kb = s.numKBlocks > 1 ? divC(kIdx, s.kBlock) : Value();
    Value col = s.batched ? mulC(batch, s.numKBlocks) : Value();
    if (kb)
      col = col ? add(col, kb) : kb;
    if (!col)
      return rb;
    return add(s.dynamicRows ? mul(col, lhsMMajorStride)
                             : mulC(col, s.mMajorStride),
               rb);
  }
  if (s.batched)
    rb = add(mulC(batch, s.numRowBlocks), rb);
  Value lin = mulC(rb, s.numKBlocks);
  if (s.numKBlocks > 1)
    lin = add(lin, divC(kIdx, s.kBlock));
  return lin;
}

Value KernelBuilder::scaleAt(Value mem, const SideScale &s, Value batch,
                             Value row, Value kIdx) {
  return toF32(load(mem, scaleIndex(s, batch, row, kIdx)));
}

Value gemm::tilesPointer(KernelBuilder &kb, const KernelValues &kv) {
  Value raw = llvmPointer(kb, kv.smem, 3, /*fromGeneric=*/false);
  if (!kv.smemAlignOffset)
    return raw;
  return LLVM::GEPOp::create(kb.b, kb.loc, raw.getType(), kb.b.getI8Type(),
                             raw, ArrayRef<LLVM::GEPArg>{kv.smemAlignOffset});
}

Value gemm::rowInRange(KernelBuilder &kb, const KernelValues &kv, Value row) {
  if (!kv.rowsM)
    return kb.ultC(row, kb.p.m);
  return arith::CmpIOp::create(kb.b, kb.loc, arith::CmpIPredicate::ult, row,
                               kv.rowsM);
}

Value gemm::clampRow(KernelBuilder &kb, const KernelValues &kv, Value row) {
  if (!kv.rowsM)
    return kb.minC(row, kb.p.m - 1);
  return arith::MinUIOp::create(kb.b, kb.loc, row, kb.addC(kv.rowsM, -1));
}

void gemm::setTile(KernelBuilder &kb, const GemmConfig &config,
                   KernelValues &kv, Value nb, Value mb, Value bz) {
  const GemmProblem &p = kb.p;
  kv.bz = bz;
  kv.n0 = kb.mulC(nb, config.bn);
  kv.m0 = kb.mulC(mb, config.bm);
  kv.lhsBase = kb.mulC(bz, p.m * p.k);
  kv.rhsBase = p.rhsBatched ? kb.mulC(bz, p.n * p.k) : kb.cIdx(0);
  kv.outBase = kb.mulC(bz, p.m * p.n);
}

AccumulatorFragment AccumulatorFragment::build(KernelBuilder &kb,
                                               const KernelValues &kv,
                                               int64_t bn) {
  AccumulatorFragment f;
  f.numRegs = bn / 2;
  Value warp = kb.divC(kv.tid, 32), lane = kb.remC(kv.tid, 32);
  Value row0 = kb.add(kv.m0, kb.add(kb.mulC(warp, 16), kb.divC(lane, 4)));
  f.rows[0] = row0;
  f.rows[1] = kb.addC(row0, 8);
  f.col0 = kb.add(kv.n0, kb.mulC(kb.remC(lane, 4), 2));
  f.type = LLVM::LLVMStructType::getLiteral(
      kb.b.getContext(), SmallVector<Type>(f.numRegs, kb.f32));
  return f;
}
