//===- AttentionKernel.cpp - The fused attention kernel generator ---------===//
//
// Part of fp8-opt.
//
// FlashAttention-3's design (docs/GPU.md, "Fused attention"), built from
// gpu/nvvm/llvm ops: a CTA computes BM = 128 query rows of one (batch,
// head). A producer warpgroup gives registers back and one of its threads
// issues TMA loads -- the Q tile once, then the K and V tiles of each key
// block into a ring of stages, each with a "K full", a "V full" and an
// "empty" mbarrier. Two consumer warpgroups (64 query rows each) take the
// registers; per key block they
//   S = Q K^T        wgmma m64nBNk16 from shared memory (both K-major),
//   online softmax   in registers: masks, the row maximum across the
//                    quad of threads that holds a row, exp2, the row sums,
//                    the rescale of the output accumulator,
//   O += P V         wgmma with P from registers (the S accumulator's
//                    layout is the A-operand register layout: no shuffles)
//                    and V MN-major from shared memory (inline PTX: MLIR 22
//                    has no register-A wgmma),
// then release the stage; at the end O / l is rounded and stored. The
// scores never leave the SM. FP8 q, k, v (docs/GPU.md): k32 steps, P packed
// to E4M3 in registers, V read K-major from a workspace that a small kernel
// fills first (keys permuted as P's registers hold them), each tile's P V
// promoted to FP32, dequantization scales per tensor or per 128 positions.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernel.h"

#include "../KernelIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::attention;

namespace {

/// Shared memory, from a 1024-byte aligned base: the Q tile, then per stage
/// a K and a V tile, then the mbarriers. A tile of R rows and C bytes per
/// row is C / 128 column blocks of R x 128 bytes, 128B-swizzled (what a TMA
/// box of 128 bytes x R rows writes), each block 1024-byte aligned.
struct Smem {
  int64_t stages = 0;
  int64_t qBlock = 0, kBlock = 0, vBlock = 0; // bytes of one column block
  int64_t kTile = 0, vTile = 0;                // bytes of one tile
  int64_t kOffset = 0, vOffset = 0, stageStride = 0;
  int64_t barriers = 0;
  int64_t total = 0;

  static Smem get(const AttentionPlan &plan) {
    const AttentionProblem &p = plan.problem;
    const AttentionConfig &c = plan.config;
    Smem s;
    s.stages = c.stages;
    const int64_t eb = p.elementBytes();
    s.qBlock = c.bm * kSwizzleBytes;
    s.kBlock = s.vBlock = c.bn * kSwizzleBytes;
    s.kTile = p.d * eb / kSwizzleBytes * s.kBlock;
    s.vTile = p.dv * eb / kSwizzleBytes * s.vBlock;
    if (p.fp8) {
      // V^T: Dv rows of BN key bytes (one 128-byte column block).
      s.vBlock = p.dv * kSwizzleBytes;
      s.vTile = c.bn / kSwizzleBytes * s.vBlock;
    }
    const int64_t qTile = p.d * eb / kSwizzleBytes * s.qBlock;
    s.kOffset = qTile;
    s.vOffset = qTile + s.kTile;
    s.stageStride = s.kTile + s.vTile;
    s.barriers = qTile + s.stages * s.stageStride;
    // The dynamic buffer is 16-byte aligned: up to 1008 bytes go to the
    // rounding of its base.
    s.total = s.barriers + 8 * numBarriers(s.stages) + 1024 - 16;
    return s;
  }
  static int64_t numBarriers(int64_t stages) { return 1 + 3 * stages; }
  int64_t qFull() const { return barriers; }
  int64_t kFull() const { return barriers + 8; }
  int64_t vFull() const { return barriers + 8 + 8 * stages; }
  int64_t empty() const { return barriers + 8 + 16 * stages; }
};

/// The builder of one kernel: the plan, the IR helpers, and the values the
/// kernel computes once.
class KernelGen {
public:
  KernelGen(KernelIR &k, const AttentionPlan &plan)
      : k(k), b(k.b), loc(k.loc), p(plan.problem), c(plan.config),
        sm(Smem::get(plan)) {}

  void buildHostAndKernel(func::FuncOp func, SymbolTable &symbols);

private:
  // Host side.
  gpu::GPUFuncOp createKernelFunc(func::FuncOp func, TypeRange params,
                                  SymbolTable &symbols);
  /// The FP8 workspace: v transposed to [B, Hkv, Dv, SkvPad], each 32 keys
  /// in fp8ValueKey's order, zeros past Skv; a kernel of its own, launched
  /// before the attention kernel (same stream).
  void buildValueTranspose(gpu::GPUModuleOp module, Value v, Value ws);
  int64_t gridX() const { return llvm::divideCeil(p.sq, c.bm); }

  // Kernel side.
  void setup(Block &entry);
  void buildProducer();
  void buildConsumer(Value wg);
  /// Key blocks the CTA walks (index).
  Value numKeyTiles();

  Value ptrAt(Value offset) {
    return LLVM::GEPOp::create(b, loc, smemPtr.getType(), b.getI8Type(),
                               smemPtr, ArrayRef<LLVM::GEPArg>{k.toI64(offset)});
  }
  Value ptrAtC(int64_t offset) { return ptrAt(k.cIdx(offset)); }
  Value barrier(int64_t base, Value stage) {
    return ptrAt(k.addC(k.mulC(stage, 8), base));
  }
  struct StageUse {
    Value stage, parity;
  };
  StageUse stageUse(Value j) {
    return {k.remC(j, c.stages), k.toI32(k.remC(k.divC(j, c.stages), 2))};
  }

  // Consumer pieces.
  /// Issues S = Q K^T (fence, k16 steps, commit); waits for it when
  /// `wait`.
  Value buildScores(Value wg, Value stageAddr, bool wait);
  /// The online-softmax step: updates the running max and sum, returns the
  /// output's rescale factors and P's registers.
  void buildSoftmax(SmallVectorImpl<Value> &s, Value j, Value rowMin,
                    Value rows[2], Value colLane, Value m[2], Value l[2],
                    Value alpha[2], SmallVectorImpl<Value> &pRegs);
  /// O * alpha (per row of the fragment). FP8 with per-tile value scales: O is kept in units of the last PV's
  /// value scale, so that before tile j's PV it is also multiplied by
  /// v_scale(j - 1) / v_scale(j) (1 for j = 0) and the output by the last
  /// tile's scale.
  Value rescale(Value o, Value alpha[2], Value j);
  /// O += P V (commit, then wait_group `pending`); `fence`: a wgmma
  /// fence first.
  /// `fresh`: the first chunk overwrites the accumulator (scale-d 0).
  Value buildPV(Value o, ArrayRef<Value> pRegs, Value stageAddr,
                int64_t pending, bool fence = false, bool fresh = false);
  /// FP8: O * factor + (tile j's P V, its own accumulator): the FP32
  /// promotion of every key tile (FP8 wgmma accumulates with fewer bits
  /// than FP32, as the GEMM kernel's promotion per 128 K avoids).
  Value rescaleAdd(Value o, Value alpha[2], Value j, Value tile);
  void buildStores(Value o, Value l[2], Value rows[2], Value colLane);

  Value exp2(Value x) { return k.exp2Approx(x); }
  Value quadReduce(Value x, bool max) {
    for (int64_t offset : {1, 2}) {
      Value other = gpu::ShuffleOp::create(b, loc, x, k.cI32(offset),
                                           k.cI32(32), gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      x = max ? Value(arith::MaximumFOp::create(b, loc, x, other))
              : Value(arith::AddFOp::create(b, loc, x, other));
    }
    return x;
  }
  Value negInf() { return k.cF32(-std::numeric_limits<float>::infinity()); }
  Type accType(int64_t n) {
    return LLVM::LLVMStructType::getLiteral(b.getContext(),
                                            SmallVector<Type>(n / 2, k.f32));
  }

  KernelIR &k;
  OpBuilder &b;
  Location loc;
  const AttentionProblem &p;
  const AttentionConfig &c;
  Smem sm;

  // Kernel values.
  Value q, key, val, mask, out, mapQ, mapK, mapV;
  /// FP8: the dequantization scales (rank 0, or [B, H, blocks] flattened).
  Value qScale, kScale, vScale;
  /// FP8: the CTA's query-block scale, loaded by each consumer thread, and
  /// the number of key tiles the consumers walk.
  Value qScaleCta, consumerTiles;
  /// FP8: the dequantization scale of key/value tile `j` (index) of the
  /// CTA's kv head (the one scale of a per-tensor layout).
  Value tileScale(Value scales, Value j) {
    if (!p.blockScales)
      return positive(k.load(scales, Value()));
    Value plane = k.add(k.mulC(batch, p.kvHeads), kvHead);
    return positive(
        k.load(scales, k.add(k.mulC(plane, p.kvScaleBlocks()), j)));
  }
  /// A dequantization scale as the kernel takes it: positive (the row
  /// maxima are taken on the raw scores, -inf masks must stay -inf, the
  /// value scales divide): a zero, negative or NaN scale -- which
  /// fp8-quantize-attention never makes (an unusable amax gives 1) -- reads
  /// as the smallest normal float.
  Value positive(Value s) {
    return arith::MaxNumFOp::create(
        b, loc, s, k.cF32(std::numeric_limits<float>::min()));
  }
  Value tid, smemAddr, smemPtr, batch, head, kvHead, m0;
};

//===----------------------------------------------------------------------===//
// Host side: tensor maps and the launch
//===----------------------------------------------------------------------===//

gpu::GPUFuncOp KernelGen::createKernelFunc(func::FuncOp func, TypeRange params,
                                           SymbolTable &symbols) {
  const std::string name = (func.getSymName() + "_kernel").str();
  gpu::GPUFuncOp kernel = fp8::createKernelFunc(
      createKernelModule(func, name, symbols), name, params, c.threads());
  OpBuilder mb(func.getContext());
  kernel.setKnownGridSizeAttr(mb.getDenseI32ArrayAttr(
      {static_cast<int32_t>(gridX()), static_cast<int32_t>(p.heads),
       static_cast<int32_t>(p.batch)}));
  // ptxas honours setmaxnreg only when it knows the CTAs per SM.
  kernel->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                  mb.getI32IntegerAttr(1));
  return kernel;
}

void KernelGen::buildValueTranspose(gpu::GPUModuleOp module, Value v,
                                    Value ws) {
  constexpr int64_t kThreads = 256;
  const int64_t keys = p.skvPadded();
  const int64_t total = p.batch * p.kvHeads * p.dv * keys;
  const int64_t blocks = llvm::divideCeil(total, kThreads);
  auto kernel =
      fp8::createKernelFunc(module, (module.getName() + "_vt").str(),
                            TypeRange{v.getType(), ws.getType()}, kThreads);
  gpu::LaunchFuncOp::create(b, loc, kernel,
                            gpu::KernelDim3{k.cIdx(blocks), k.cIdx(1), k.cIdx(1)},
                            gpu::KernelDim3{k.cIdx(kThreads), k.cIdx(1),
                                            k.cIdx(1)},
                            /*dynamicSharedMemorySize=*/Value(),
                            ValueRange{v, ws});

  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&kernel.front());
  Value src = kernel.getArgument(0), dst = kernel.getArgument(1);
  // Thread idx writes workspace byte idx = ((plane * Dv) + d) * SkvPad + c
  // (consecutive threads, consecutive bytes): v's byte (plane * Skv + key)
  // * Dv + d, key = 32 (c / 32) + fp8ValueKey(c % 32), or 0 past Skv.
  Value idx = k.add(k.mulC(gpu::BlockIdOp::create(b, loc, gpu::Dimension::x),
                           kThreads),
                    gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  auto inRange = scf::IfOp::create(b, loc, k.ultC(idx, total),
                                   /*withElseRegion=*/false);
  b.setInsertionPointToStart(&inRange.getThenRegion().front());
  Value col = k.remC(idx, keys), rest = k.divC(idx, keys);
  Value d = k.remC(rest, p.dv), plane = k.divC(rest, p.dv);
  Value cc = k.remC(col, kFp8KeyChunk);
  Value e = k.remC(cc, 4);
  // fp8ValueKey: 16 (cc / 16) + 8 (e / 2) + 2 ((cc % 16) / 4) + e % 2.
  Value key = k.add(
      k.add(k.mulC(k.divC(col, kFp8KeyChunk), kFp8KeyChunk),
            k.mulC(k.divC(cc, 16), 16)),
      k.add(k.add(k.mulC(k.divC(e, 2), 8), k.mulC(k.divC(k.remC(cc, 16), 4), 2)),
            k.remC(e, 2)));
  Type i8 = b.getI8Type();
  Value srcPtr = llvmPointer(k, src, 1, /*fromGeneric=*/true);
  Value dstPtr = llvmPointer(k, dst, 1, /*fromGeneric=*/true);
  auto valid = scf::IfOp::create(b, loc, i8, k.ultC(key, p.skv),
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(&valid.getThenRegion().front());
    Value lin = k.add(k.mulC(k.add(k.mulC(plane, p.skv), key), p.dv), d);
    Value ptr = LLVM::GEPOp::create(b, loc, srcPtr.getType(), i8, srcPtr,
                                    ArrayRef<LLVM::GEPArg>{k.toI64(lin)});
    scf::YieldOp::create(b, loc,
                         ValueRange{LLVM::LoadOp::create(b, loc, i8, ptr)});
    b.setInsertionPointToStart(&valid.getElseRegion().front());
    scf::YieldOp::create(
        b, loc, ValueRange{arith::ConstantIntOp::create(b, loc, i8, 0)});
  }
  Value ptr = LLVM::GEPOp::create(b, loc, dstPtr.getType(), i8, dstPtr,
                                  ArrayRef<LLVM::GEPArg>{k.toI64(idx)});
  LLVM::StoreOp::create(b, loc, valid.getResult(0), ptr);
  b.setInsertionPointAfter(inRange);
  gpu::ReturnOp::create(b, loc);
}

void KernelGen::buildHostAndKernel(func::FuncOp func, SymbolTable &symbols) {
  Block &entry = func.getBody().front();
  SmallVector<Value> flat;
  for (BlockArgument arg : entry.getArguments())
    flat.push_back(flattenMemRef(k, arg));
  const int64_t eb = p.elementBytes();
  const unsigned wsArg = 3 + p.hasMask + 3;
  // Tensor maps over the bytes: [planes, rows, row bytes], boxes of
  // [1, tile rows, 128 bytes]; rows past a plane's end read zeros.
  Value hostMapQ = encodeByteTensorMap(k, flat[0], {p.batch * p.heads, p.sq,
                                                     p.d * eb},
                                       {1, c.bm, kSwizzleBytes});
  Value hostMapK = encodeByteTensorMap(
      k, flat[1], {p.batch * p.kvHeads, p.skv, p.d * eb}, {1, c.bn, kSwizzleBytes});
  // FP8: V^T from the workspace, [planes, Dv rows, SkvPad key bytes].
  Value hostMapV =
      p.fp8 ? encodeByteTensorMap(
                  k, flat[wsArg], {p.batch * p.kvHeads, p.dv, p.skvPadded()},
                  {1, p.dv, kSwizzleBytes})
            : encodeByteTensorMap(k, flat[2],
                                  {p.batch * p.kvHeads, p.skv, p.dv * eb},
                                  {1, c.bn, kSwizzleBytes});
  SmallVector<Value> params = flat;
  params.append({hostMapQ, hostMapK, hostMapV});
  gpu::GPUFuncOp kernel =
      createKernelFunc(func, ValueRange(params).getTypes(), symbols);
  if (p.fp8)
    buildValueTranspose(kernel->getParentOfType<gpu::GPUModuleOp>(), flat[2],
                        flat[wsArg]);
  gpu::KernelDim3 grid{k.cIdx(gridX()), k.cIdx(p.heads), k.cIdx(p.batch)};
  gpu::KernelDim3 block{k.cIdx(c.threads()), k.cIdx(1), k.cIdx(1)};
  gpu::LaunchFuncOp::create(b, loc, kernel, grid, block, k.cI32(sm.total),
                            params);
  func::ReturnOp::create(b, loc);

  b.setInsertionPointToStart(&kernel.front());
  setup(kernel.front());
  Value wg = k.divC(tid, kWarpgroupThreads);
  auto role = scf::IfOp::create(b, loc, k.eqC(wg, c.consumerWarpgroups),
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&role.getThenRegion().front());
    buildProducer();
    b.setInsertionPointToStart(&role.getElseRegion().front());
    buildConsumer(wg);
  }
  gpu::ReturnOp::create(b, loc);
}

//===----------------------------------------------------------------------===//
// Kernel side
//===----------------------------------------------------------------------===//

void KernelGen::setup(Block &entry) {
  auto args = entry.getArguments();
  unsigned i = 0;
  q = args[i++];
  key = args[i++];
  val = args[i++];
  if (p.hasMask)
    mask = args[i++];
  if (p.fp8) {
    qScale = args[i++];
    kScale = args[i++];
    vScale = args[i++];
    ++i; // the workspace: read through its tensor map
  }
  out = args[i++];
  mapQ = args[i++];
  mapK = args[i++];
  mapV = args[i++];
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  // Heavy query blocks (causal: the last rows see the most keys) first.
  Value bx = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value mBlock = p.causal
                     ? Value(arith::SubIOp::create(b, loc, k.cIdx(gridX() - 1), bx))
                     : bx;
  m0 = k.mulC(mBlock, c.bm);
  head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  kvHead = k.divC(head, p.groups());

  auto wgSpace =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto rawType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), wgSpace);
  Value smem = gpu::DynamicSharedMemoryOp::create(b, loc, rawType);
  Value raw =
      k.toI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem));
  Value bumped = arith::AddIOp::create(b, loc, raw, k.cI64(1023));
  smemAddr = arith::AndIOp::create(b, loc, bumped, k.cI64(~int64_t(1023)));
  Value rawPtr = llvmPointer(k, smem, 3, /*fromGeneric=*/false);
  smemPtr = LLVM::GEPOp::create(
      b, loc, rawPtr.getType(), b.getI8Type(), rawPtr,
      ArrayRef<LLVM::GEPArg>{Value(arith::SubIOp::create(b, loc, smemAddr, raw))});

  // Thread 0 initializes the mbarriers: the full ones complete on the
  // producer's arrive.expect_tx and the copies' bytes, the empty ones on one
  // arrival per consumer warp.
  auto init = scf::IfOp::create(b, loc, k.eqC(tid, 0), /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&init.getThenRegion().front());
    mbarrierInit(k, ptrAtC(sm.qFull()), 1);
    for (int64_t s = 0; s < c.stages; ++s) {
      mbarrierInit(k, ptrAtC(sm.kFull() + 8 * s), 1);
      mbarrierInit(k, ptrAtC(sm.vFull() + 8 * s), 1);
      mbarrierInit(k, ptrAtC(sm.empty() + 8 * s),
                   c.consumerWarpgroups * kWarpgroupThreads / 32);
    }
    NVVM::FenceMbarrierInitOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);
}

Value KernelGen::numKeyTiles() {
  const int64_t all = llvm::divideCeil(p.skv, c.bn);
  if (!p.causal)
    return k.cIdx(all);
  // Row r sees keys j <= r + (Skv - Sq): the CTA's last row needs keys
  // below m0 + BM + Skv - Sq (clamped to [0, Skv]).
  Value last = arith::AddIOp::create(b, loc, m0, k.cIdx(c.bm + p.skv - p.sq));
  last = arith::MaxSIOp::create(b, loc, last, k.cIdx(0));
  last = arith::MinSIOp::create(b, loc, last, k.cIdx(p.skv));
  return k.divC(k.addC(last, c.bn - 1), c.bn);
}

void KernelGen::buildProducer() {
  NVVM::SetMaxRegisterOp::create(b, loc, c.producerRegisters,
                                 NVVM::SetMaxRegisterAction::decrease);
  auto elected = scf::IfOp::create(
      b, loc, k.eqC(tid, c.consumerWarpgroups * kWarpgroupThreads),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&elected.getThenRegion().front());
  const int64_t eb = p.elementBytes();
  Value qPlane = k.add(k.mulC(batch, p.heads), head);
  Value kvPlane = k.add(k.mulC(batch, p.kvHeads), kvHead);
  Value qBar = ptrAtC(sm.qFull());
  mbarrierArriveExpectTx(k, qBar, c.bm * p.d * eb);
  for (int64_t cb = 0; cb < p.d * eb / kSwizzleBytes; ++cb)
    tmaLoad(k, mapQ, ValueRange{k.cIdx(cb * kSwizzleBytes), m0, qPlane},
            ptrAtC(cb * sm.qBlock), qBar);
  auto loop =
      scf::ForOp::create(b, loc, k.cIdx(0), numKeyTiles(), k.cIdx(1));
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  StageUse use = stageUse(j);
  // A fresh mbarrier counts as having completed the phase before its
  // first: the first `stages` blocks do not wait.
  mbarrierWait(k, barrier(sm.empty(), use.stage),
               arith::XOrIOp::create(b, loc, use.parity, k.cI32(1)));
  Value stageOff = k.mulC(use.stage, sm.stageStride);
  Value row = k.mulC(j, c.bn);
  Value kBar = barrier(sm.kFull(), use.stage);
  mbarrierArriveExpectTx(k, kBar, c.bn * p.d * eb);
  for (int64_t cb = 0; cb < p.d * eb / kSwizzleBytes; ++cb)
    tmaLoad(k, mapK, ValueRange{k.cIdx(cb * kSwizzleBytes), row, kvPlane},
            ptrAt(k.addC(stageOff, sm.kOffset + cb * sm.kBlock)), kBar);
  Value vBar = barrier(sm.vFull(), use.stage);
  mbarrierArriveExpectTx(k, vBar, c.bn * p.dv * eb);
  if (p.fp8) // V^T: Dv rows of the block's BN key bytes.
    tmaLoad(k, mapV, ValueRange{row, k.cIdx(0), kvPlane},
            ptrAt(k.addC(stageOff, sm.vOffset)), vBar);
  else
    for (int64_t cb = 0; cb < p.dv * eb / kSwizzleBytes; ++cb)
      tmaLoad(k, mapV, ValueRange{k.cIdx(cb * kSwizzleBytes), row, kvPlane},
              ptrAt(k.addC(stageOff, sm.vOffset + cb * sm.vBlock)), vBar);
}

NVVM::WGMMATypes wgmmaType(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  if (isa<Float8E5M2Type>(t))
    return NVVM::WGMMATypes::e5m2;
  return t.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
}

/// The PTX name of a wgmma operand type.
const char *ptxType(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return "e4m3";
  if (isa<Float8E5M2Type>(t))
    return "e5m2";
  return t.isBF16() ? "bf16" : "f16";
}

/// S = Q K^T of the warpgroup's 64 rows and the stage's BN keys: k16 (FP8:
/// k32) steps over D, both operands K-major in 128B-swizzled column blocks
/// (a step is 32 bytes of a 128-byte row; descriptors: SBO 1024, LBO
/// unused).
Value KernelGen::buildScores(Value wg, Value stageAddr, bool wait) {
  auto shape = NVVM::MMAShapeAttr::get(b.getContext(), kWgmmaM, c.bn,
                                       32 / p.elementBytes());
  NVVM::WGMMATypes t = wgmmaType(p.elementType);
  const int64_t steps = p.d * p.elementBytes() / 32;
  Value qAddr = arith::AddIOp::create(
      b, loc, smemAddr, k.toI64(k.mulC(wg, kWgmmaM * kSwizzleBytes)));
  Value acc = LLVM::UndefOp::create(b, loc, accType(c.bn));
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  for (int64_t st = 0; st < steps; ++st) {
    const int64_t block = st / (kSwizzleBytes / 32), inRow = st % 4 * 32;
    Value descA = buildMatrixDescriptor(k, qAddr, block * sm.qBlock + inRow,
                                        16, 1024, 1);
    Value descB = buildMatrixDescriptor(
        k, stageAddr, sm.kOffset + block * sm.kBlock + inRow, 16, 1024, 1);
    acc = NVVM::WgmmaMmaAsyncOp::create(
        b, loc, acc.getType(), acc, descA, descB, shape, t, t,
        NVVM::WGMMATypes::f32,
        st == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one, NVVM::MMALayout::row,
        NVVM::MMALayout::col, /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  if (wait)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  return acc;
}

void KernelGen::buildSoftmax(SmallVectorImpl<Value> &s, Value j, Value rowMin,
                             Value rows[2], Value colLane, Value m[2],
                             Value l[2], Value alpha[2],
                             SmallVectorImpl<Value> &pRegs) {
  const int64_t n = c.bn / 2;
  constexpr double log2e = 1.4426950408889634;
  // Without a mask the maxima are taken on the raw scores (scale > 0) and
  // p = exp2(s * scale * log2(e) - max * scale * log2(e)), one FFMA per
  // score; with one, on the natural scale * s + mask (so that a row of the
  // dtype's lowest values stays finite, as the reference computes it), and
  // p = exp2((x - max) * log2(e)).
  // FP8: the scores are q k^T of the quantized operands; q_scale * k_scale
  // joins the scale (positive: the maxima stay those of the raw scores),
  // and p is computed 256 times too large (exp2(e + 8): P in E4M3 keeps
  // 2^-14 .. 1 in its normal range), which the sum l cancels.
  const bool natural = p.hasMask;
  Value qkScale = p.fp8 ? k.fmul(qScaleCta, tileScale(kScale, j)) : Value();
  Value toLog2 = natural  ? k.cF32(log2e)
                 : p.fp8 ? k.fmul(qkScale, k.cF32(p.scale * log2e))
                         : k.cF32(p.scale * log2e);
  if (natural) {
    Value scoreScale =
        p.fp8 ? k.fmul(qkScale, k.cF32(p.scale)) : k.cF32(p.scale);
    for (int64_t i = 0; i < n; ++i)
      s[i] = k.fmul(s[i], scoreScale);
  }

  // Masks: keys past Skv, causal, the additive mask. Only key blocks that
  // can hold a masked key take the masked path.
  const bool partialLast = p.skv % c.bn != 0;
  if (p.causal || partialLast || p.hasMask) {
    Value tileEnd = k.addC(k.mulC(j, c.bn), c.bn); // one past the last key
    Value need;
    if (p.hasMask)
      need = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1);
    else {
      SmallVector<Value, 2> terms;
      if (partialLast)
        terms.push_back(k.ult(k.cIdx(p.skv), tileEnd));
      if (p.causal) {
        // Some key j' < tileEnd with j' > row + Skv - Sq for the lowest row
        // of the warpgroup's 64 (a warp-uniform condition): tileEnd + Sq >
        // rowMin + Skv + 1.
        terms.push_back(k.ult(k.addC(rowMin, p.skv + 1), k.addC(tileEnd, p.sq)));
      }
      need = terms[0];
      if (terms.size() > 1)
        need = arith::OrIOp::create(b, loc, terms[0], terms[1]);
    }
    auto ifOp = scf::IfOp::create(b, loc, SmallVector<Type>(n, k.f32), need,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      SmallVector<Value> masked(s.begin(), s.end());
      Value colBase = k.add(k.mulC(j, c.bn), colLane);
      Value maskPtr = p.hasMask ? llvmPointer(k, mask, 1, /*fromGeneric=*/true)
                                : Value();
      Value maskBase;
      if (p.hasMask)
        maskBase = k.add(k.mulC(batch, p.maskStrides[0]),
                         k.mulC(head, p.maskStrides[1]));
      for (int64_t i = 0; i < n; ++i) {
        Value row = rows[(i / 2) % 2];
        Value col = k.addC(colBase, 8 * (i / 4) + i % 2);
        Value x = masked[i];
        if (p.hasMask) {
          Value r = k.minC(row, p.sq - 1), cc = k.minC(col, p.skv - 1);
          Value lin = k.add(maskBase, k.add(k.mulC(r, p.maskStrides[2]),
                                            k.mulC(cc, p.maskStrides[3])));
          Value ptr = LLVM::GEPOp::create(b, loc, maskPtr.getType(),
                                          p.maskType, maskPtr,
                                          ArrayRef<LLVM::GEPArg>{k.toI64(lin)});
          Value mv = LLVM::LoadOp::create(b, loc, p.maskType, ptr);
          x = arith::AddFOp::create(b, loc, x, k.toF32(mv));
        }
        Value valid;
        auto both = [&](Value cond) {
          valid = valid ? Value(arith::AndIOp::create(b, loc, valid, cond))
                        : cond;
        };
        if (partialLast)
          both(k.ultC(col, p.skv));
        if (p.causal) // col <= row + Skv - Sq  <=>  col + Sq < row + Skv + 1
          both(k.ult(k.addC(col, p.sq), k.addC(row, p.skv + 1)));
        if (valid)
          x = arith::SelectOp::create(b, loc, valid, x, negInf());
        masked[i] = x;
      }
      scf::YieldOp::create(b, loc, masked);
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, ValueRange(s));
    }
    for (int64_t i = 0; i < n; ++i)
      s[i] = ifOp.getResult(i);
  }

  // Row maxima (rows[h] holds registers i with (i / 2) % 2 == h) over the
  // thread's columns, then over the quad of threads sharing the row. The
  // running max m[h] is in exp2 units (max * scale * log2(e)) without a
  // mask, in natural units with one.
  Value base[2], negBase[2];
  for (int h = 0; h < 2; ++h) {
    Value mx;
    for (int64_t i = 0; i < n; ++i)
      if ((i / 2) % 2 == h)
        mx = mx ? Value(arith::MaximumFOp::create(b, loc, mx, s[i])) : s[i];
    mx = quadReduce(mx, /*max=*/true);
    if (!natural)
      mx = k.fmul(mx, toLog2);
    Value mNew = arith::MaximumFOp::create(b, loc, m[h], mx);
    // A row masked so far has max -inf: subtract 0 (exp2(-inf) = 0).
    Value isInf = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        mNew, negInf());
    base[h] = arith::SelectOp::create(b, loc, isInf, k.cF32(0), mNew);
    negBase[h] = p.fp8 && !natural
                     ? Value(arith::SubFOp::create(b, loc, k.cF32(8), base[h]))
                     : Value(arith::NegFOp::create(b, loc, base[h]));
    Value d = arith::SubFOp::create(b, loc, m[h], base[h]);
    alpha[h] = exp2(natural ? k.fmul(d, toLog2) : d);
    m[h] = mNew;
  }
  Value sum[2] = {k.cF32(0), k.cF32(0)};
  SmallVector<Value> pv(n);
  for (int64_t i = 0; i < n; ++i) {
    const int h = (i / 2) % 2;
    Value e;
    if (!natural)
      e = math::FmaOp::create(b, loc, s[i], toLog2, negBase[h]);
    else if (p.fp8)
      e = math::FmaOp::create(b, loc,
                              arith::AddFOp::create(b, loc, s[i], negBase[h]),
                              toLog2, k.cF32(8));
    else
      e = k.fmul(arith::AddFOp::create(b, loc, s[i], negBase[h]), toLog2);
    pv[i] = exp2(e);
    sum[h] = arith::AddFOp::create(b, loc, sum[h], pv[i]);
  }
  for (int h = 0; h < 2; ++h)
    l[h] = arith::AddFOp::create(b, loc, k.fmul(l[h], alpha[h]), sum[h]);
  if (p.fp8) {
    // P in E4M3 as the A operand of k32 chunks. Chunk ch holds values 16 ch
    // .. 16 ch + 15; register r takes the four values of row half r % 2
    // (i / 2 % 2) and column half r / 2 (i / 8 % 2), bytes in the order of
    // their columns: the key order fp8ValueKey describes.
    for (int64_t ch = 0; ch < n / 16; ++ch)
      for (int64_t r = 0; r < 4; ++r) {
        const int64_t first = 16 * ch + 8 * (r / 2) + 2 * (r % 2);
        Value half[2];
        for (int64_t hh = 0; hh < 2; ++hh) {
          // Values `first + 4 hh` and `+ 1`; the second operand of the
          // conversion lands in the low byte.
          const int64_t i = first + 4 * hh;
          Value pair = NVVM::ConvertF32x2ToF8x2Op::create(
              b, loc, b.getI16Type(), pv[i + 1], pv[i],
              NVVM::FPRoundingMode::RN, NVVM::SaturationMode::SATFINITE,
              /*relu=*/false, Float8E4M3FNType::get(b.getContext()));
          half[hh] = arith::ExtUIOp::create(b, loc, k.i32, pair);
        }
        Value hi = arith::ShLIOp::create(b, loc, half[1], k.cI32(16));
        pRegs.push_back(arith::OrIOp::create(b, loc, half[0], hi));
      }
    return;
  }
  // P as the A operand of k16 chunks: chunk ch holds registers 8 ch ..
  // 8 ch + 7, paired into four 32-bit registers.
  for (int64_t i = 0; i < n; i += 2)
    pRegs.push_back(k.packPair(p.elementType, pv[i], pv[i + 1]));
}

Value KernelGen::rescale(Value o, Value alpha[2], Value j) {
  Value factor[2] = {alpha[0], alpha[1]};
  if (p.fp8 && p.blockScales) {
    Value prev = arith::MaxSIOp::create(b, loc, k.addC(j, -1), k.cIdx(0));
    Value ratio = arith::DivFOp::create(b, loc, tileScale(vScale, prev),
                                        tileScale(vScale, j));
    for (int h = 0; h < 2; ++h)
      factor[h] = k.fmul(alpha[h], ratio);
  }
  alpha = factor;
  for (int64_t i = 0; i < p.dv / 2; ++i) {
    Value x = LLVM::ExtractValueOp::create(b, loc, o, i);
    o = LLVM::InsertValueOp::create(b, loc, o, k.fmul(x, alpha[(i / 2) % 2]),
                                    i);
  }
  return o;
}

Value KernelGen::rescaleAdd(Value o, Value alpha[2], Value j, Value tile) {
  Value scaled = rescale(o, alpha, j);
  for (int64_t i = 0; i < p.dv / 2; ++i) {
    Value x = LLVM::ExtractValueOp::create(b, loc, scaled, i);
    Value y = LLVM::ExtractValueOp::create(b, loc, tile, i);
    scaled = LLVM::InsertValueOp::create(
        b, loc, scaled, arith::AddFOp::create(b, loc, x, y), i);
  }
  return scaled;
}

/// O += P V: per k16 chunk of the BN keys, a register-A wgmma (inline PTX)
/// with V's 16 rows MN-major from shared memory (128B swizzle: LBO = the
/// next 64 columns' block, SBO = the next 8 rows); FP8: per k32 chunk, V^T's
/// Dv rows K-major (as S's B operand).
Value KernelGen::buildPV(Value o, ArrayRef<Value> pRegs, Value stageAddr,
                         int64_t pending, bool fence, bool fresh) {
  const int64_t nAcc = p.dv / 2;
  // FP8: P in E4M3 times V^T (K-major: FP8 wgmma has no transpose), k32.
  const std::string aType = p.fp8 ? "e4m3" : ptxType(p.elementType);
  const std::string kStep = p.fp8 ? "k32" : "k16";
  // Operands: $0..$(n-1) the accumulators (tied to the inputs after the
  // descriptor), $n..$n+3 P's registers, $n+4 V's descriptor, $n+5 the
  // scale-d predicate's source (1: accumulate).
  auto reg = [](int64_t i) { return "$" + std::to_string(i); };
  std::string asmText = "{\n.reg .pred p;\nsetp.ne.b32 p, " + reg(nAcc + 5) +
                        ", 0;\nwgmma.mma_async.sync.aligned.m64n" +
                        std::to_string(p.dv) + kStep + ".f32." + aType + "." +
                        ptxType(p.elementType) + " {";
  for (int64_t i = 0; i < nAcc; ++i)
    asmText += (i ? "," : "") + reg(i);
  asmText += "}, {" + reg(nAcc) + "," + reg(nAcc + 1) + "," + reg(nAcc + 2) +
             "," + reg(nAcc + 3) + "}, " + reg(nAcc + 4) +
             (p.fp8 ? ", p, 1, 1;\n}" : ", p, 1, 1, 1;\n}");
  std::string constraints;
  for (int64_t i = 0; i < nAcc; ++i)
    constraints += "=f,";
  constraints += "r,r,r,r,l,r";
  for (int64_t i = 0; i < nAcc; ++i)
    constraints += "," + std::to_string(i);
  if (fence)
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
  const int64_t chunk = p.fp8 ? kFp8KeyChunk : 16;
  for (int64_t ch = 0; ch < c.bn / chunk; ++ch) {
    // FP8: the chunk's 32 key bytes of each of V^T's Dv rows (as S's B
    // operand); 16-bit: V's 16 key rows, MN-major.
    Value desc =
        p.fp8 ? buildMatrixDescriptor(k, stageAddr, sm.vOffset + ch * 32, 16,
                                      1024, 1)
              : buildMatrixDescriptor(k, stageAddr,
                                      sm.vOffset + ch * 16 * kSwizzleBytes,
                                      sm.vBlock, 1024, 1);
    SmallVector<Value> operands(pRegs.begin() + 4 * ch,
                                pRegs.begin() + 4 * ch + 4);
    operands.push_back(desc);
    operands.push_back(k.cI32(fresh && ch == 0 ? 0 : 1));
    for (int64_t i = 0; i < nAcc; ++i)
      operands.push_back(LLVM::ExtractValueOp::create(b, loc, o, i));
    o = k.inlinePtx(o.getType(), operands, asmText, constraints);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, pending);
  return o;
}

void KernelGen::buildStores(Value o, Value l[2], Value rows[2], Value colLane) {
  Value vScaleLast;
  if (p.fp8) // the last tile's (O's units; a CTA without tiles stores 0)
    vScaleLast = tileScale(
        vScale, arith::MaxSIOp::create(b, loc, k.addC(consumerTiles, -1),
                                       k.cIdx(0)));
  Value inv[2];
  for (int h = 0; h < 2; ++h) {
    Value total = quadReduce(l[h], /*max=*/false);
    // A row with every key masked has l = 0 and output 0.
    Value pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, total,
                                      k.cF32(0));
    inv[h] = arith::SelectOp::create(
        b, loc, pos, arith::DivFOp::create(b, loc, k.cF32(1), total),
        k.cF32(0));
    if (p.fp8) // o = (P V) v_scale / l
      inv[h] = k.fmul(inv[h], vScaleLast);
  }
  Value outPtr = llvmPointer(k, out, 1, /*fromGeneric=*/true);
  // Row r of this (batch, head) starts at element (plane + r) * Dv, plane
  // = (batch * Hq + head) * Sq; sequence-major: at ((batch * Sq + r) * Hq
  // + head) * Dv.
  Value planeRow = k.mulC(k.add(k.mulC(batch, p.heads), head), p.sq);
  auto rowStart = [&](Value row) -> Value {
    if (!p.sequenceMajor)
      return k.mulC(k.add(planeRow, row), p.dv);
    Value pos = k.add(k.mulC(batch, p.sq), row);
    return k.mulC(k.add(k.mulC(pos, p.heads), head), p.dv);
  };
  auto vec2 = VectorType::get({2}, p.outType);
  const unsigned bytes = 2 * p.outType.getIntOrFloatBitWidth() / 8;
  for (int64_t i = 0; i < p.dv / 2; i += 2) {
    const int h = (i / 2) % 2;
    OpBuilder::InsertionGuard g(b);
    auto inRows = scf::IfOp::create(b, loc, k.ultC(rows[h], p.sq),
                                    /*withElseRegion=*/false);
    b.setInsertionPointToStart(&inRows.getThenRegion().front());
    Value v = LLVM::UndefOp::create(b, loc, vec2);
    for (int64_t e = 0; e < 2; ++e) {
      Value x = k.fmul(LLVM::ExtractValueOp::create(b, loc, o, i + e), inv[h]);
      if (!p.outType.isF32())
        x = arith::TruncFOp::create(b, loc, p.outType, x);
      v = LLVM::InsertElementOp::create(b, loc, v, x, k.cI32(e));
    }
    Value col = k.addC(colLane, 8 * (i / 4));
    Value lin = k.add(rowStart(rows[h]), col);
    Value ptr = LLVM::GEPOp::create(b, loc, outPtr.getType(), p.outType,
                                    outPtr, ArrayRef<LLVM::GEPArg>{k.toI64(lin)});
    LLVM::StoreOp::create(b, loc, v, ptr, bytes);
  }
}

void KernelGen::buildConsumer(Value wg) {
  NVVM::SetMaxRegisterOp::create(b, loc, c.consumerRegisters,
                                 NVVM::SetMaxRegisterAction::increase);
  if (p.fp8) {
    Value qIndex;
    if (p.blockScales) {
      Value plane = k.add(k.mulC(batch, p.heads), head);
      qIndex = k.add(k.mulC(plane, p.qScaleBlocks()), k.divC(m0, c.bm));
    }
    qScaleCta = positive(k.load(qScale, qIndex));
  }
  Value t = k.remC(tid, kWarpgroupThreads);
  Value warp = k.divC(t, 32), lane = k.remC(t, 32);
  Value rows[2];
  rows[0] = k.add(k.add(m0, k.mulC(wg, kWgmmaM)),
                  k.add(k.mulC(warp, 16), k.divC(lane, 4)));
  rows[1] = k.addC(rows[0], 8);
  Value colLane = k.mulC(k.remC(lane, 4), 2);
  Value rowMin = k.add(m0, k.mulC(wg, kWgmmaM));
  mbarrierWait(k, ptrAtC(sm.qFull()), k.cI32(0));

  auto stageAddrOf = [&](Value stage) {
    return arith::AddIOp::create(
        b, loc, smemAddr, k.toI64(k.mulC(stage, sm.stageStride)));
  };
  // Lane 0 of each warp hands a stage back once every wgmma reading it
  // completed.
  auto release = [&](Value stage) {
    auto leader = scf::IfOp::create(b, loc, k.eqC(lane, 0),
                                    /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&leader.getThenRegion().front());
    mbarrierArrive(k, barrier(sm.empty(), stage));
  };
  auto scores = [&](Value acc) {
    SmallVector<Value> s;
    for (int64_t i = 0; i < c.bn / 2; ++i)
      s.push_back(LLVM::ExtractValueOp::create(b, loc, acc, i));
    return s;
  };
  const int64_t nP = c.bn / 4; // P's 32-bit registers
  Value zeroO = LLVM::ZeroOp::create(b, loc, accType(p.dv));
  Value numTiles = numKeyTiles();
  consumerTiles = numTiles;
  Value o, l[2];

  if (!c.overlap) {
    // Ping-pong (FlashAttention-3 §3.1): named barrier 1 + w is consumer
    // w's turn to issue Q K^T (bar.sync by w's 128 threads, bar.arrive by
    // the other's: 256). Consumer 1 hands consumer 0 its first turn; each
    // hands the other the next once its Q K^T is issued, so one
    // warpgroup's softmax runs while the other's products are on the tensor
    // cores. Every arrival meets a sync: consumer 0 takes one more turn
    // after its last block (consumer 1's last hand-over). No condition
    // inside the loop: the FP8 kernel has no register to spare.
    Value myTurn, otherTurn;
    const int64_t both = 2 * kWarpgroupThreads;
    auto onlyConsumer = [&](int64_t w, llvm::function_ref<void()> body) {
      auto when =
          scf::IfOp::create(b, loc, k.eqC(wg, w), /*withElseRegion=*/false);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&when.getThenRegion().front());
      body();
    };
    // The barrier ids: 1 + w and 2 - w, from the thread id where used.
    auto turns = [&] {
      Value w = k.divC(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x),
                       kWarpgroupThreads);
      myTurn = k.toI32(k.addC(w, 1));
      otherTurn = k.toI32(arith::SubIOp::create(b, loc, k.cIdx(2), w));
    };
    if (c.pingPong) {
      turns();
      onlyConsumer(1, [&] { namedBarrierArrive(k, otherTurn, both); });
    }
    // Per key block: S, softmax, rescale, P V, release.
    SmallVector<Value> init = {zeroO, negInf(), negInf(), k.cF32(0),
                               k.cF32(0)};
    auto loop =
        scf::ForOp::create(b, loc, k.cIdx(0), numTiles, k.cIdx(1), init);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      auto iter = loop.getRegionIterArgs();
      Value m[2] = {iter[1], iter[2]}, li[2] = {iter[3], iter[4]}, alpha[2];
      StageUse use = stageUse(j);
      Value stageAddr = stageAddrOf(use.stage);
      mbarrierWait(k, barrier(sm.kFull(), use.stage), use.parity);
      if (c.pingPong) {
        turns();
        namedBarrierSync(k, myTurn, both);
      }
      Value acc = buildScores(wg, stageAddr, /*wait=*/!c.pingPong);
      if (c.pingPong) {
        namedBarrierArrive(k, otherTurn, both);
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      }
      SmallVector<Value> s = scores(acc);
      SmallVector<Value> pRegs;
      buildSoftmax(s, j, rowMin, rows, colLane, m, li, alpha, pRegs);
      Value oj;
      if (p.fp8) {
        // The tile's P V in its own accumulator, added in FP32.
        mbarrierWait(k, barrier(sm.vFull(), use.stage), use.parity);
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        Value tile = buildPV(LLVM::UndefOp::create(b, loc, accType(p.dv)),
                             pRegs, stageAddr, /*pending=*/0,
                             /*fence=*/false, /*fresh=*/true);
        oj = rescaleAdd(iter[0], alpha, j, tile);
      } else {
        oj = rescale(iter[0], alpha, j);
        mbarrierWait(k, barrier(sm.vFull(), use.stage), use.parity);
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        oj = buildPV(oj, pRegs, stageAddr, /*pending=*/0);
      }
      release(use.stage);
      scf::YieldOp::create(b, loc, ValueRange{oj, m[0], m[1], li[0], li[1]});
    }
    o = loop.getResult(0);
    l[0] = loop.getResult(3);
    l[1] = loop.getResult(4);
    if (c.pingPong) {
      turns();
      onlyConsumer(0, [&] { namedBarrierSync(k, myTurn, both); });
    }
    buildStores(o, l, rows, colLane);
    return;
  }

  // FlashAttention-3's intra-warpgroup pipelining: block j's S = Q K_j^T
  // and block j - 1's O += P V_{j-1} are in flight together; the softmax of
  // S_j runs while the tensor cores finish P V_{j-1}. Block 0's softmax is
  // the prologue, block n - 1's P V the epilogue; no block, no output
  // (a causal row before every key).
  auto any = scf::IfOp::create(
      b, loc, TypeRange{zeroO.getType(), k.f32, k.f32},
      k.ult(k.cIdx(0), numTiles), /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&any.getElseRegion().front());
    scf::YieldOp::create(b, loc, ValueRange{zeroO, k.cF32(0), k.cF32(0)});
    b.setInsertionPointToStart(&any.getThenRegion().front());
    Value m[2] = {negInf(), negInf()}, li[2] = {k.cF32(0), k.cF32(0)},
          alpha[2];
    StageUse first = stageUse(k.cIdx(0));
    mbarrierWait(k, barrier(sm.kFull(), first.stage), first.parity);
    SmallVector<Value> s0 =
        scores(buildScores(wg, stageAddrOf(first.stage), /*wait=*/true));
    SmallVector<Value> p0;
    buildSoftmax(s0, k.cIdx(0), rowMin, rows, colLane, m, li, alpha, p0);
    SmallVector<Value> init = {zeroO, m[0], m[1], li[0], li[1]};
    init.append(p0.begin(), p0.end());
    auto loop = scf::ForOp::create(b, loc, k.cIdx(1), numTiles, k.cIdx(1),
                                   init);
    {
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(loop.getBody());
      Value j = loop.getInductionVar();
      auto iter = loop.getRegionIterArgs();
      Value mj[2] = {iter[1], iter[2]}, lj[2] = {iter[3], iter[4]}, aj[2];
      SmallVector<Value> pPrev(iter.begin() + 5, iter.begin() + 5 + nP);
      StageUse use = stageUse(j);
      StageUse prev = stageUse(k.addC(j, -1));
      mbarrierWait(k, barrier(sm.kFull(), use.stage), use.parity);
      Value acc = buildScores(wg, stageAddrOf(use.stage), /*wait=*/false);
      mbarrierWait(k, barrier(sm.vFull(), prev.stage), prev.parity);
      // A fence of its own: the O and P registers the loop carries may be
      // copied into place after the first one.
      Value oj = buildPV(iter[0], pPrev, stageAddrOf(prev.stage),
                         /*pending=*/1, /*fence=*/true);
      // S_j completed (wait_group 1 above); P V_{j-1} may still run.
      SmallVector<Value> s = scores(acc);
      SmallVector<Value> pj;
      buildSoftmax(s, j, rowMin, rows, colLane, mj, lj, aj, pj);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      release(prev.stage);
      oj = rescale(oj, aj, j);
      SmallVector<Value> yields = {oj, mj[0], mj[1], lj[0], lj[1]};
      yields.append(pj.begin(), pj.end());
      scf::YieldOp::create(b, loc, yields);
    }
    auto results = loop.getResults();
    SmallVector<Value> pLast(results.begin() + 5, results.begin() + 5 + nP);
    StageUse last = stageUse(k.addC(numTiles, -1));
    mbarrierWait(k, barrier(sm.vFull(), last.stage), last.parity);
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    Value oLast = buildPV(results[0], pLast, stageAddrOf(last.stage),
                          /*pending=*/0);
    release(last.stage);
    scf::YieldOp::create(b, loc, ValueRange{oLast, results[3], results[4]});
  }
  o = any.getResult(0);
  l[0] = any.getResult(1);
  l[1] = any.getResult(2);
  buildStores(o, l, rows, colLane);
}

} // namespace

void attention::buildAttentionKernel(func::FuncOp func,
                                     const AttentionPlan &plan,
                                     SymbolTable &symbols) {
  Block &entry = func.getBody().front();
  func.getBody().getBlocks().erase(std::next(func.getBody().begin()),
                                   func.getBody().end());
  while (!entry.empty())
    entry.back().erase();
  OpBuilder b = OpBuilder::atBlockEnd(&entry);
  KernelIR k(b, func.getLoc());
  if (plan.problem.decodeSplits)
    buildDecodeAttentionKernels(k, func, plan, symbols);
  else
    KernelGen(k, plan).buildHostAndKernel(func, symbols);
}
