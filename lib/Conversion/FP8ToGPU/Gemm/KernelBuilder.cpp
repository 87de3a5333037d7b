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

KernelBuilder::KernelBuilder(OpBuilder &b, Location loc, const GemmProblem &p)
    : b(b), loc(loc), p(p), f32(b.getF32Type()), i32(b.getI32Type()),
      i64(b.getI64Type()), idx(b.getIndexType()) {}

Value KernelBuilder::cIdx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value KernelBuilder::cI32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, i32, v);
}
Value KernelBuilder::cI64(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, i64, v);
}
Value KernelBuilder::cF32(float v) {
  return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                        APFloat(v));
}
Value KernelBuilder::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value KernelBuilder::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value KernelBuilder::divC(Value x, int64_t c) {
  return c == 1 ? x : arith::DivUIOp::create(b, loc, x, cIdx(c));
}
Value KernelBuilder::remC(Value x, int64_t c) {
  return arith::RemUIOp::create(b, loc, x, cIdx(c));
}
Value KernelBuilder::minC(Value x, int64_t c) {
  return arith::MinUIOp::create(b, loc, x, cIdx(c));
}
Value KernelBuilder::ult(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
}
Value KernelBuilder::fmul(Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
Value KernelBuilder::toI64(Value index) {
  return arith::IndexCastOp::create(b, loc, i64, index);
}
Value KernelBuilder::toI32(Value index) {
  return arith::IndexCastOp::create(b, loc, i32, index);
}
Value KernelBuilder::eqC(Value x, int64_t c) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, cIdx(c));
}

Value KernelBuilder::toF32(Value v) {
  Type t = v.getType();
  if (t.isF32())
    return v;
  if (isa<Float8E8M0FNUType>(t)) {
    Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), v);
    Value w = arith::ExtUIOp::create(b, loc, i32, byte);
    Value bits = arith::ShLIOp::create(b, loc, w, cI32(23));
    Value isZero =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w, cI32(0));
    Value isNaN =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w, cI32(255));
    bits = arith::SelectOp::create(b, loc, isZero, cI32(0x00400000), bits);
    bits = arith::SelectOp::create(b, loc, isNaN, cI32(0x7FC00000), bits);
    return arith::BitcastOp::create(b, loc, f32, bits);
  }
  return arith::ExtFOp::create(b, loc, f32, v);
}

Value KernelBuilder::load(Value mem, Value linear) {
  if (cast<MemRefType>(mem.getType()).getRank() == 0)
    return memref::LoadOp::create(b, loc, mem, ValueRange{});
  return memref::LoadOp::create(b, loc, mem, ValueRange{linear});
}

Value KernelBuilder::scaleAt(Value mem, const SideScale &s, Value batch,
                             Value row, Value kIdx) {
  if (s.perTensor)
    return toF32(load(mem, Value()));
  Value rb = divC(row, s.rowBlock);
  if (s.mMajorStride) {
    Value kb = s.numKBlocks > 1 ? divC(kIdx, s.kBlock) : Value();
    Value col = s.batched ? mulC(batch, s.numKBlocks) : Value();
    if (kb)
      col = col ? add(col, kb) : kb;
    Value lin = col ? add(mulC(col, s.mMajorStride), rb) : rb;
    return toF32(load(mem, lin));
  }
  if (s.batched)
    rb = add(mulC(batch, s.numRowBlocks), rb);
  Value lin = mulC(rb, s.numKBlocks);
  if (s.numKBlocks > 1)
    lin = add(lin, divC(kIdx, s.kBlock));
  return toF32(load(mem, lin));
}

Value gemm::llvmPointer(KernelBuilder &kb, Value memref, unsigned addressSpace,
                        bool fromGeneric) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value i =
      kb.toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref));
  auto ctx = b.getContext();
  if (!fromGeneric)
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, addressSpace), i);
  Value generic =
      LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), i);
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, addressSpace), generic);
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
