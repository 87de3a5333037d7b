//===- KernelIR.cpp - IR helpers of the generated GPU kernels -------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "KernelIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::fp8;

KernelIR::KernelIR(OpBuilder &b, Location loc)
    : b(b), loc(loc), f32(b.getF32Type()), i32(b.getI32Type()),
      i64(b.getI64Type()), idx(b.getIndexType()) {}

Value KernelIR::cIdx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}
Value KernelIR::cI32(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, i32, v);
}
Value KernelIR::cI64(int64_t v) {
  return arith::ConstantIntOp::create(b, loc, i64, v);
}
Value KernelIR::cF32(float v) {
  return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                        APFloat(v));
}
Value KernelIR::add(Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value KernelIR::mul(Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value KernelIR::divC(Value x, int64_t c) {
  return c == 1 ? x : arith::DivUIOp::create(b, loc, x, cIdx(c));
}
Value KernelIR::remC(Value x, int64_t c) {
  return arith::RemUIOp::create(b, loc, x, cIdx(c));
}
Value KernelIR::minC(Value x, int64_t c) {
  return arith::MinUIOp::create(b, loc, x, cIdx(c));
}
Value KernelIR::ult(Value x, Value y) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
}
Value KernelIR::fmul(Value x, Value y) {
  return arith::MulFOp::create(b, loc, x, y);
}
Value KernelIR::exp2Approx(Value x) {
  return LLVM::CallIntrinsicOp::create(
             b, loc, f32, b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f"),
             ValueRange{x})
      .getResult(0);
}
Value KernelIR::inlinePtx(Type type, ValueRange operands, StringRef text,
                          StringRef constraints) {
  return LLVM::InlineAsmOp::create(
             b, loc, type, operands, text, constraints,
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}
Value KernelIR::packPair(Type elem, Value lo, Value hi) {
  Value v = LLVM::UndefOp::create(b, loc, VectorType::get({2}, elem));
  const Value halves[2] = {lo, hi};
  for (int64_t e = 0; e < 2; ++e)
    v = LLVM::InsertElementOp::create(
        b, loc, v, arith::TruncFOp::create(b, loc, elem, halves[e]), cI32(e));
  return LLVM::BitcastOp::create(b, loc, i32, v);
}
Value KernelIR::toI64(Value index) {
  return arith::IndexCastOp::create(b, loc, i64, index);
}
Value KernelIR::toI32(Value index) {
  return arith::IndexCastOp::create(b, loc, i32, index);
}
Value KernelIR::eqC(Value x, int64_t c) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, cIdx(c));
}

Value KernelIR::toF32(Value v) {
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

Value KernelIR::load(Value mem, Value linear) {
  if (cast<MemRefType>(mem.getType()).getRank() == 0)
    return memref::LoadOp::create(b, loc, mem, ValueRange{});
  return memref::LoadOp::create(b, loc, mem, ValueRange{linear});
}

gpu::GPUModuleOp fp8::createKernelModule(func::FuncOp func, StringRef name,
                                         SymbolTable &symbols) {
  MLIRContext *ctx = func.getContext();
  func->getParentOfType<ModuleOp>()->setAttr(
      gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(ctx));
  OpBuilder mb(ctx);
  auto module = gpu::GPUModuleOp::create(mb, func.getLoc(), name);
  symbols.insert(module, std::next(Block::iterator(func)));
  return module;
}

gpu::GPUFuncOp fp8::createKernelFunc(gpu::GPUModuleOp module, StringRef name,
                                     TypeRange params, int64_t threads) {
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto kernel = gpu::GPUFuncOp::create(mb, module.getLoc(), name,
                                       mb.getFunctionType(params, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), mb.getUnitAttr());
  kernel.setKnownBlockSizeAttr(
      mb.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  return kernel;
}

Value fp8::flattenMemRef(KernelIR &k, Value memref) {
  auto t = cast<MemRefType>(memref.getType());
  if (t.getRank() == 0)
    return memref;
  ReassociationIndices all =
      llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
  auto flatType = MemRefType::get({t.getNumElements()}, t.getElementType());
  return memref::CollapseShapeOp::create(k.b, k.loc, flatType, memref,
                                         ArrayRef<ReassociationIndices>{all});
}

Value fp8::llvmPointer(KernelIR &k, Value memref, unsigned addressSpace,
                       bool fromGeneric) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  Value i =
      k.toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref));
  auto ctx = b.getContext();
  if (!fromGeneric)
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, addressSpace), i);
  Value generic =
      LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), i);
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, addressSpace), generic);
}

Value fp8::buildMatrixDescriptor(KernelIR &k, Value smemAddr,
                                 int64_t byteOffset, int64_t lbo, int64_t sbo,
                                 int64_t swizzleMode) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  Value addr = arith::AddIOp::create(b, loc, smemAddr, k.cI64(byteOffset));
  addr = arith::AndIOp::create(b, loc, addr, k.cI64(0x3FFFF));
  addr = arith::ShRUIOp::create(b, loc, addr, k.cI64(4));
  return arith::OrIOp::create(
      b, loc, addr, k.cI64(matrixDescriptorFixedBits(lbo, sbo, swizzleMode)));
}

int64_t fp8::matrixDescriptorFixedBits(int64_t lbo, int64_t sbo,
                                       int64_t swizzleMode) {
  return ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (swizzleMode << 62);
}

Value fp8::encodeByteTensorMap(KernelIR &k, Value data, ArrayRef<int64_t> dims,
                               ArrayRef<int64_t> box, Value outerDim) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  MLIRContext *ctx = b.getContext();
  auto ptrType = LLVM::LLVMPointerType::get(ctx);
  const int64_t rank = dims.size();
  assert(rank == static_cast<int64_t>(box.size()) && rank >= 1 && rank <= 5);
  // int32_t args: rank, element bytes, data type, interleave, swizzle, L2
  // promotion, OOB fill (CUDA's enum values).
  constexpr StringLiteral kEncoder = "fp8rt_cuda_tensor_map_encode_tiled";
  auto module =
      b.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto fnType = LLVM::LLVMFunctionType::get(
      ptrType, {ptrType, k.i32, ptrType, ptrType, ptrType, k.i32, k.i32, k.i32,
                k.i32, k.i32, k.i32});
  if (!module.lookupSymbol(kEncoder)) {
    OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
    LLVM::LLVMFuncOp::create(mb, loc, kEncoder, fnType);
  }
  Value global = LLVM::IntToPtrOp::create(
      b, loc, ptrType,
      k.toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, data)));
  // dims, row-major strides (elements) and box, interleaved in one stack
  // array (not a global: the model library moves every global of the host
  // module to device memory), freed after the call so that a call site
  // inside a loop does not grow the stack.
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t i = rank - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  SmallVector<int64_t> values;
  for (int64_t i = 0; i < rank; ++i)
    values.push_back(dims[i]);
  for (int64_t i = 0; i < rank; ++i)
    values.push_back(strides[i]);
  for (int64_t i = 0; i < rank; ++i)
    values.push_back(box[i]);
  Value stack = LLVM::StackSaveOp::create(b, loc, ptrType);
  Value array = LLVM::AllocaOp::create(b, loc, ptrType, k.i64,
                                       k.cI32(values.size()));
  SmallVector<Value, 3> parts;
  for (int32_t i = 0; i < static_cast<int32_t>(values.size()); ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptrType, k.i64, array,
                                     ArrayRef<LLVM::GEPArg>{i});
    // The outermost size may be a run-time value (no stride depends on it).
    Value v = i == 0 && outerDim ? k.toI64(outerDim) : k.cI64(values[i]);
    LLVM::StoreOp::create(b, loc, v, slot);
    if (i % rank == 0)
      parts.push_back(slot);
  }
  enum {
    kUInt8 = 0,
    kNoInterleave = 0,
    kSwizzle128B = 3,
    kL2Promote256B = 3,
    kZeroFill = 0
  };
  SmallVector<Value> args = {global,
                             k.cI32(rank),
                             parts[0],
                             parts[1],
                             parts[2],
                             k.cI32(1),
                             k.cI32(kUInt8),
                             k.cI32(kNoInterleave),
                             k.cI32(kSwizzle128B),
                             k.cI32(kL2Promote256B),
                             k.cI32(kZeroFill)};
  Value map = LLVM::CallOp::create(b, loc, fnType, kEncoder, args).getResult();
  LLVM::StackRestoreOp::create(b, loc, stack);
  return map;
}

void fp8::tmaLoad(KernelIR &k, Value map, ValueRange coords, Value dst,
                  Value bar, Value multicastMask) {
  OpBuilder &b = k.b;
  Location loc = k.loc;
  MLIRContext *ctx = b.getContext();
  // The instruction's destination is shared::cluster (this CTA's window).
  Value clusterDst = LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, 7), dst);
  SmallVector<Value> c;
  for (Value v : coords)
    c.push_back(v.getType().isIndex() ? k.toI32(v) : v);
  NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
      b, loc, clusterDst, map, c, bar,
      /*im2colOffsets=*/ValueRange{}, multicastMask,
      /*l2CacheHint=*/Value(),
      NVVM::TMALoadModeAttr::get(ctx, NVVM::TMALoadMode::TILE),
      /*isCTAOnly=*/b.getBoolAttr(false), /*group=*/nullptr,
      /*predicate=*/Value());
}

void fp8::waitForGridDependency(OpBuilder &b, Location loc) {
  NVVM::GriddepcontrolOp::create(b, loc, NVVM::GridDepActionKind::wait);
  NVVM::GriddepcontrolOp::create(b, loc,
                                 NVVM::GridDepActionKind::launch_dependents);
}

void fp8::mbarrierInit(KernelIR &k, Value bar, int64_t count) {
  NVVM::MBarrierInitOp::create(k.b, k.loc, bar, k.cI32(count),
                               /*predicate=*/Value());
}

void fp8::mbarrierArriveExpectTx(KernelIR &k, Value bar, int64_t bytes) {
  NVVM::MBarrierArriveExpectTxOp::create(
      k.b, k.loc, /*res=*/Type(), bar, k.cI32(bytes),
      NVVM::MemScopeKindAttr::get(k.b.getContext(), NVVM::MemScopeKind::CTA),
      k.b.getBoolAttr(false), /*predicate=*/Value());
}

void fp8::mbarrierArrive(KernelIR &k, Value bar) {
  NVVM::MBarrierArriveOp::create(k.b, k.loc, /*res=*/Type(), bar,
                                 /*count=*/Value());
}

// try_wait.parity with a suspend-time hint, in a loop until the phase
// completed.
void fp8::mbarrierWait(KernelIR &k, Value bar, Value parity) {
  NVVM::MBarrierTryWaitParityOp::create(k.b, k.loc, bar, parity,
                                        k.cI32(10000000));
}

void fp8::namedBarrierSync(KernelIR &k, Value id, int64_t threads) {
  NVVM::BarrierOp::create(k.b, k.loc, /*res=*/Type(), id, k.cI32(threads),
                          /*reductionOp=*/nullptr,
                          /*reductionPredicate=*/Value());
}

void fp8::namedBarrierArrive(KernelIR &k, Value id, int64_t threads) {
  NVVM::BarrierArriveOp::create(k.b, k.loc, id, k.cI32(threads));
}
