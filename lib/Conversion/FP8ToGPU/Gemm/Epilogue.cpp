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
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::gemm;

OutputValues::OutputValues(KernelBuilder &kb, const KernelValues &kv,
                           const AccumulatorFragment &frag)
    : kv(kv) {
  const GemmProblem &p = kb.p;
  zeroIdx = kb.cIdx(0);
  if (!p.lhsScale.dependsOnK())
    for (int h = 0; h < 2; ++h)
      sa[h] = kb.scaleAt(kv.lhsScale, p.lhsScale, kv.bz,
                         clampRow(kb, kv, frag.rows[h]), zeroIdx);
  if (!p.rhsScale.dependsOnK() && p.rhsScale.perTensor)
    sbTensor = kb.scaleAt(kv.rhsScale, p.rhsScale, kv.bz, zeroIdx, zeroIdx);
}

Value OutputValues::finish(KernelBuilder &kb, Value acc, int64_t i, Value col,
                           Value outLin, Value stagedInput) const {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmProblem &p = kb.p;
  Value x = LLVM::ExtractValueOp::create(b, loc, acc, i);
  if (!p.lhsScale.dependsOnK())
    x = kb.fmul(x, sa[(i / 2) % 2]);
  if (!p.rhsScale.dependsOnK())
    x = kb.fmul(x, sbTensor ? sbTensor
                            : kb.scaleAt(kv.rhsScale, p.rhsScale, kv.bz, col,
                                         zeroIdx));
  if (p.bias == GemmProblem::Bias::Row)
    x = arith::AddFOp::create(b, loc, x, kb.toF32(kb.load(kv.bias, col)));
  else if (p.bias == GemmProblem::Bias::Full)
    x = arith::AddFOp::create(b, loc, x, kb.toF32(kb.load(kv.bias, outLin)));
  x = buildEpilogue(b, loc, x, p.epilogue);
  if (kv.fused) {
    // The product as the graph stored it, then its consumer.
    if (!p.productType.isF32())
      x = arith::TruncFOp::create(b, loc, p.productType, x);
    SmallVector<Value> inputs;
    unsigned next = 0;
    for (const GemmProblem::EpilogueInput &in : p.epilogueInputs) {
      using Kind = GemmProblem::EpilogueInput::Kind;
      if (in.kind == Kind::Product) {
        inputs.push_back(x);
        continue;
      }
      Value mem = kv.epilogueArgs[next++];
      if (in.kind == Kind::Full && stagedInput)
        inputs.push_back(stagedInput);
      else if (in.kind == Kind::Scalar)
        inputs.push_back(memref::LoadOp::create(b, loc, mem, ValueRange{}));
      else
        inputs.push_back(kb.load(mem, in.kind == Kind::Row ? col : outLin));
    }
    return kv.fused->apply(b, inputs);
  }
  if (!p.outType.isF32())
    x = arith::TruncFOp::create(b, loc, p.outType, x);
  return x;
}

Value OutputValues::finishClamped(KernelBuilder &kb,
                                  const AccumulatorFragment &frag, Value acc,
                                  int64_t i, Value stagedInput) const {
  const GemmProblem &p = kb.p;
  Value col = kb.minC(frag.colOf(kb, i), p.n - 1);
  Value row = clampRow(kb, kv, frag.rowOf(i));
  Value outLin = kb.add(kv.outBase, kb.add(kb.mulC(row, p.n), col));
  return finish(kb, acc, i, col, outLin, stagedInput);
}

namespace {

/// Registers whose outputs the register epilogue finishes before it stores
/// any of them: their loads (per-column scales, bias, a fused consumer's
/// inputs) are issued together instead of one round trip per guarded store
/// (stores to `out` may alias the inputs for ptxas, which keeps each
/// guarded load behind the previous store). 16 registers: 8 pairs in
/// flight, a few registers beside the total.
constexpr int64_t kEpilogueChunk = 16;

/// Opens `if (row < M && col < N)` for register `i` and leaves the builder
/// inside it (callers hold an InsertionGuard); returns the output's linear
/// index of that register.
Value openInBounds(KernelBuilder &kb, const KernelValues &kv,
                   const AccumulatorFragment &frag, int64_t i) {
  OpBuilder &b = kb.b;
  const GemmProblem &p = kb.p;
  Value row = frag.rowOf(i), col = frag.colOf(kb, i);
  Value ok =
      arith::AndIOp::create(b, kb.loc, rowInRange(kb, kv, row), kb.ultC(col, p.n));
  auto ifOp = scf::IfOp::create(b, kb.loc, ok, /*withElseRegion=*/false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  return kb.add(kv.outBase, kb.add(kb.mulC(row, p.n), col));
}

/// Register `i`'s finished value `x`, stored if inside the output.
void storeRegister(KernelBuilder &kb, const KernelValues &kv,
                   const AccumulatorFragment &frag, Value x, int64_t i) {
  OpBuilder::InsertionGuard g(kb.b);
  Value outLin = openInBounds(kb, kv, frag, i);
  memref::StoreOp::create(kb.b, kb.loc, x, kv.out, ValueRange{outLin});
}

/// Registers `i` and `i + 1` (columns c, c + 1 of one row, c even) with one
/// 2-element store when N is even: then c + 1 < N whenever c < N and the
/// pair's first element index is even, so the store is aligned. Halves the
/// epilogue's store instructions. `outPtr`: the output as !llvm.ptr<1>.
void storePair(KernelBuilder &kb, const KernelValues &kv,
               const AccumulatorFragment &frag, ArrayRef<Value> x, int64_t i,
               Value outPtr) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  const GemmProblem &p = kb.p;
  OpBuilder::InsertionGuard g(b);
  Value outLin = openInBounds(kb, kv, frag, i);
  auto vecType = VectorType::get({2}, p.outType);
  Value v = LLVM::UndefOp::create(b, loc, vecType);
  for (int64_t j = 0; j < 2; ++j)
    v = LLVM::InsertElementOp::create(b, loc, v, x[j], kb.cI32(j));
  Value ptr = LLVM::GEPOp::create(b, loc, outPtr.getType(), p.outType, outPtr,
                                  ArrayRef<LLVM::GEPArg>{kb.toI64(outLin)});
  const unsigned bytes = 2 * p.outType.getIntOrFloatBitWidth() / 8;
  LLVM::StoreOp::create(b, loc, v, ptr, bytes);
}

} // namespace

FusedEpilogue::FusedEpilogue(Operation *op) : holder(new Block) {
  // (A detached block has no region to take the context from.)
  OpBuilder b(op->getContext());
  b.setInsertionPointToStart(holder.get());
  IRMapping map;
  for (Value v : op->getOperands())
    map.map(v, holder->addArgument(v.getType(), op->getLoc()));
  // Constants the body captures (GemmPlan checked that they are).
  cloneCapturedValues(op->getRegion(0), b, map);
  generic = b.clone(*op, map);
}

Value FusedEpilogue::apply(OpBuilder &b, ValueRange inputs) const {
  Block &body = generic->getRegion(0).front();
  IRMapping map;
  for (auto [arg, v] : llvm::zip(body.getArguments(), inputs))
    map.map(arg, v);
  for (Operation &op : body) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      return map.lookup(op.getOperand(0));
    for (Value v : op.getOperands())
      if (!map.contains(v) && v.getParentBlock() == holder.get())
        map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
    b.clone(op, map);
  }
  llvm_unreachable("a linalg.generic body ends with its yield");
}

void gemm::buildRegisterEpilogue(KernelBuilder &kb, const GemmPlan &plan,
                                 const KernelValues &kv,
                                 const AccumulatorFragment &frag, Value acc) {
  OutputValues values(kb, kv, frag);
  const bool pairs = kb.p.n % 2 == 0;
  Value outPtr =
      pairs ? llvmPointer(kb, kv.out, 1, /*fromGeneric=*/true) : Value();
  for (int64_t first = 0; first < frag.numRegs; first += kEpilogueChunk) {
    const int64_t end = std::min(frag.numRegs, first + kEpilogueChunk);
    SmallVector<Value> x;
    for (int64_t i = first; i < end; ++i)
      x.push_back(values.finishClamped(kb, frag, acc, i));
    for (int64_t i = first; i < end; i += pairs ? 2 : 1) {
      if (pairs)
        storePair(kb, kv, frag, ArrayRef<Value>(x).slice(i - first, 2), i,
                  outPtr);
      else
        storeRegister(kb, kv, frag, x[i - first], i);
    }
  }
}
