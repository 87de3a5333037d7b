//===- GemmToGPU.cpp - FP8 GEMM kernels (wgmma / mma.sync) ----------------===//
//
// Part of fp8-opt. Replaces the body of every bufferized `@__fp8_gemm_<i>`
// function (made by fp8-outline-scaled-matmuls) with a `gpu.launch` of a
// tensor-core kernel built here from gpu/nvvm/arith/scf/memref/llvm ops.
//
// Kernel (sm_90a, one warpgroup = 128 threads per CTA):
//   * CTA tile 64 x BN (BN = 128, or N rounded up to 8 when N < 128),
//     K tile BK = 128 bytes of FP8 per stage.
//   * Shared memory (dynamic, one stage): A tile [64 x 128] then B tile
//     [BN x 128], both K-major in the no-swizzle "interleaved" layout: a core
//     matrix is 8 rows x 16 bytes, stored as 128 contiguous bytes; core
//     matrices run along M (N) first, then along K:
//         off(r, k) = ((k / 16) * (R / 8) + r / 8) * 128 + (r % 8) * 16 + k % 16
//     so a wgmma descriptor for the k32 step s starts at s * 2 * (R/8) * 128,
//     with LBO (next core matrix along K) = (R/8) * 128 and SBO (next 8-row
//     group along M/N) = 128.
//   * Global -> shared by the threads themselves, zero-filling rows >= M (N)
//     and columns >= K: 16-byte ld.global.v4 / st.shared.v4 chunks when K is
//     a multiple of 16, else one byte per thread and row; then
//     fence.proxy.async (generic-proxy writes become visible to wgmma's async
//     proxy) and a CTA barrier. One stage: loads do not overlap the MMAs.
//   * MMA: `nvvm.wgmma.mma_async` m64nBNk32, e4m3/e5m2 operands, f32
//     accumulators. FP32 promotion per K-block like DeepGEMM: the wgmma steps
//     of one promotion unit U (U = gcd of the K-block sizes of both scale
//     layouts and 128; 128 when no scale depends on K) accumulate into a
//     fresh accumulator (first step with scale-d = 0), then
//     `total += partial * sa[m, kb] * sb[n, kb]` in FP32. Hopper's FP8 wgmma
//     keeps only ~14 mantissa bits in its internal accumulation, so even
//     per-tensor products are promoted every 128 K.
//   * Epilogue: K-independent scales (tensor / row / block covering all of
//     K), + bias, fp8::buildEpilogue, one arith.truncf to the output type,
//     bounds-checked stores straight from the accumulator fragments.
//   * Batch: lhs batch dims with a rank-2 rhs fold into M; a batched rhs
//     [batch, N, K] maps its (collapsed) batch to grid.z.
//
// What a fast version changes (the structure already admits it):
//   * TMA (cp.async.bulk.tensor with an fp8 tensor map written by the host
//     runtime -- nvgpu.tma.create.descriptor encodes fp8 as bf16 in MLIR 22)
//     into 128B-swizzled tiles (descriptor swizzle mode 1, SBO = 1024, base
//     aligned to 1024), a 4-6 stage mbarrier pipeline, so loads overlap MMA.
//   * Warp specialization: one producer warp issuing TMA, two consumer
//     warpgroups (128 x BN CTA tile, setmaxnreg), the promotion FMAs of one
//     K-block overlapped with the next block's wgmmas (wait_group 1).
//   * Scales staged in shared memory with the tiles instead of per-thread
//     global loads; BN up to 256; persistent CTAs with a tile scheduler;
//     vectorized (16-byte) epilogue stores through shared memory.
//
//===----------------------------------------------------------------------===//

#include "fp8/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace mlir::fp8 {
#define GEN_PASS_DEF_CONVERTFP8GEMMTOGPU
#include "fp8/Conversion/Passes.h.inc"
} // namespace mlir::fp8

using namespace mlir;
using namespace mlir::fp8;

namespace {

constexpr int64_t kBM = 64;       // rows of A per CTA (one wgmma M)
constexpr int64_t kBK = 128;      // K bytes per shared-memory stage
constexpr int64_t kMmaK = 32;     // K of one FP8 wgmma
constexpr int64_t kThreads = 128; // one warpgroup

/// How one operand's scale tensor is indexed. For data [batch..., R, K] with
/// blocks of `rowBlock` x `kBlock` over the trailing dims the scale of
/// element (b, r, k) is at ((b' * numRowBlocks + r / rowBlock) * numKBlocks
/// + k / kBlock), with b' = b when the scale has the batch dims and 0
/// otherwise. Per-tensor scales are rank 0.
struct SideScale {
  bool perTensor = false;
  int64_t rowBlock = 1, kBlock = 1;
  int64_t numRowBlocks = 1, numKBlocks = 1;
  bool batched = false;
  /// M-major storage (scaled_matmul m_major): [batch..., Kb, mMajorStride],
  /// the scale of (b, r, k) at ((b' * numKBlocks + k / kBlock) *
  /// mMajorStride + r / rowBlock); 0 for the layout's own order.
  int64_t mMajorStride = 0;
  Type elementType;
  /// The scale varies along K: applied at every promotion, not once.
  bool dependsOnK() const { return !perTensor && numKBlocks > 1; }
};

/// Everything the kernel generator needs, derived and checked from the
/// function signature and its `fp8.gemm` dictionary.
struct GemmPlan {
  Type lhsType, rhsType, outType, biasType;
  int64_t batch = 1; // grid.z (1 when the batch folds into M)
  int64_t m = 0, n = 0, k = 0;
  bool rhsBatched = false;
  SideScale lhsScale, rhsScale;
  enum class Bias { None, Row, Full } bias = Bias::None;
  Epilogue epilogue = Epilogue::None;
  int64_t bn = 128;   // CTA tile N (= wgmma N)
  int64_t promo = kBK; // K elements per promotion unit
};

std::optional<NVVM::WGMMATypes> wgmmaType(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return NVVM::WGMMATypes::e4m3;
  if (isa<Float8E5M2Type>(t))
    return NVVM::WGMMATypes::e5m2;
  return std::nullopt;
}

bool isStaticIdentity(MemRefType t) {
  return t && t.hasStaticShape() && t.getLayout().isIdentity();
}

/// Checks the function against what the kernel serves; on failure `why`
/// says what did not fit (for the remark) and the body stays as it is.
FailureOr<GemmPlan> planGemm(func::FuncOp func, std::string &why) {
  auto fail = [&](const Twine &reason) -> FailureOr<GemmPlan> {
    why = reason.str();
    return failure();
  };
  auto info = func->getAttrOfType<DictionaryAttr>(kGemmAttrName);
  auto lhsLayout = info.getAs<ScaleLayoutAttr>("lhs_layout");
  auto rhsLayout = info.getAs<ScaleLayoutAttr>("rhs_layout");
  auto epilogueAttr = info.getAs<EpilogueAttr>("epilogue");
  auto transposeRhs = info.getAs<BoolAttr>("transpose_rhs");
  auto lhsMMajor = info.getAs<IntegerAttr>("lhs_scale_m_major");
  auto hasBias = info.getAs<BoolAttr>("has_bias");
  if (!lhsLayout || !rhsLayout || !epilogueAttr || !transposeRhs || !hasBias ||
      (lhsMMajor && lhsMMajor.getInt() < 1))
    return fail("malformed fp8.gemm attribute");
  if (func.isExternal())
    return fail("function has no body");
  if (!transposeRhs.getValue())
    return fail("rhs is not K-major (transpose_rhs = false); FP8 wgmma "
                "needs a K-major B operand");

  FunctionType type = func.getFunctionType();
  const unsigned expected = hasBias.getValue() ? 6 : 5;
  if (type.getNumInputs() != expected || type.getNumResults() != 0)
    return fail("signature is not (lhs, lhs_scale, rhs, rhs_scale, [bias], "
                "out) memrefs; run bufferization with "
                "buffer-results-to-out-params first");
  SmallVector<MemRefType> args;
  for (Type t : type.getInputs()) {
    auto mt = dyn_cast<MemRefType>(t);
    if (!isStaticIdentity(mt))
      return fail("operands must be statically shaped memrefs with identity "
                  "layout (dynamic shapes are not served yet)");
    args.push_back(mt);
  }
  MemRefType lhs = args[0], lhsS = args[1], rhs = args[2], rhsS = args[3];
  MemRefType out = args.back();
  MemRefType bias = hasBias.getValue() ? args[4] : MemRefType();

  GemmPlan p;
  p.epilogue = epilogueAttr.getValue();
  p.lhsType = lhs.getElementType();
  p.rhsType = rhs.getElementType();
  p.outType = out.getElementType();
  if (!wgmmaType(p.lhsType) || !wgmmaType(p.rhsType))
    return fail("operands must be f8E4M3FN or f8E5M2");
  if (!p.outType.isF32() && !p.outType.isF16() && !p.outType.isBF16())
    return fail("result element type must be f32, f16 or bf16");
  if (lhs.getRank() < 2 || out.getRank() != lhs.getRank())
    return fail("lhs must be [batch..., M, K] with a result of the same rank");
  if (rhs.getRank() != 2 && rhs.getRank() != lhs.getRank())
    return fail("rhs must be [N, K] or [batch..., N, K] like lhs");

  ArrayRef<int64_t> ls = lhs.getShape(), rs = rhs.getShape(),
                    os = out.getShape();
  const int64_t rank = ls.size();
  int64_t batch = 1;
  for (int64_t d : ls.drop_back(2))
    batch *= d;
  const int64_t m = ls[rank - 2], k = ls[rank - 1];
  const int64_t n = rs[rs.size() - 2];
  if (rs.back() != k)
    return fail("lhs and rhs K differ");
  p.rhsBatched = rhs.getRank() > 2;
  if (p.rhsBatched && rs.drop_back(2) != ls.drop_back(2))
    return fail("batched rhs must have the batch dims of lhs");
  SmallVector<int64_t> outShape(ls.drop_back(1));
  outShape.push_back(n);
  if (os != ArrayRef<int64_t>(outShape))
    return fail("result shape is not [batch..., M, N]");
  if (m == 0 || n == 0 || k == 0)
    return fail("empty product");

  // Scales.
  auto side = [&](ScaleLayoutAttr layout, MemRefType data, MemRefType scale,
                  int64_t rows, SideScale &s,
                  StringRef name) -> LogicalResult {
    s.elementType = scale.getElementType();
    if (!s.elementType.isF32() && !s.elementType.isF16() &&
        !s.elementType.isBF16() && !isa<Float8E8M0FNUType>(s.elementType)) {
      why = (name + " scale must be f32, f16, bf16 or f8E8M0FNU").str();
      return failure();
    }
    if (layout.isPerTensor()) {
      s.perTensor = true;
      if (scale.getNumElements() != 1) {
        why = (name + " per-tensor scale must have one element").str();
        return failure();
      }
      return success();
    }
    FailureOr<SmallVector<int64_t>> block =
        layout.getExpandedBlock(data.getShape());
    if (failed(block)) {
      why = (name + " layout does not fit its rank").str();
      return failure();
    }
    s.rowBlock = (*block)[block->size() - 2];
    s.kBlock = (*block)[block->size() - 1];
    for (int64_t d : ArrayRef<int64_t>(*block).drop_back(2))
      if (d != 1) {
        why = (name + " layout blocks over batch dims").str();
        return failure();
      }
    s.numRowBlocks = llvm::divideCeil(rows, s.rowBlock);
    s.numKBlocks = llvm::divideCeil(k, s.kBlock);
    s.batched = data.getRank() > 2;
    int64_t dataBatch = 1;
    for (int64_t d : data.getShape().drop_back(2))
      dataBatch *= d;
    int64_t rowEntries = s.numRowBlocks;
    if (&s == &p.lhsScale && lhsMMajor) {
      s.mMajorStride = llvm::alignTo(s.numRowBlocks, lhsMMajor.getInt());
      rowEntries = s.mMajorStride;
    }
    if (scale.getNumElements() != dataBatch * rowEntries * s.numKBlocks) {
      why = (name + " scale shape does not match its layout").str();
      return failure();
    }
    return success();
  };
  if (failed(side(lhsLayout, lhs, lhsS, m, p.lhsScale, "lhs")) ||
      failed(side(rhsLayout, rhs, rhsS, n, p.rhsScale, "rhs")))
    return failure();

  // Promotion unit: every unit must lie inside one K-block of each scale.
  int64_t unit = kBK;
  for (const SideScale *s : {&p.lhsScale, &p.rhsScale})
    if (s->dependsOnK())
      unit = std::gcd(unit, s->kBlock);
  if (unit % kMmaK != 0)
    return fail("K-blocks of the scale layouts (lhs " +
                Twine(p.lhsScale.kBlock) + ", rhs " +
                Twine(p.rhsScale.kBlock) +
                ") do not nest into whole k32 wgmma steps");
  p.promo = unit;

  if (bias) {
    Type bt = bias.getElementType();
    if (!bt.isF32() && !bt.isF16() && !bt.isBF16())
      return fail("bias must be f32, f16 or bf16");
    p.biasType = bt;
    if (bias.getRank() == 1 && bias.getShape()[0] == n)
      p.bias = GemmPlan::Bias::Row;
    else if (bias.getShape() == os)
      p.bias = GemmPlan::Bias::Full;
    else
      return fail("bias must be [N] or the result shape");
  }

  // Fold lhs batch dims into M when the rows stay contiguous for every
  // operand: rank-2 rhs, and lhs scale blocks that never straddle batches.
  const bool foldable =
      !p.rhsBatched && !(p.lhsScale.mMajorStride && batch > 1) &&
      (p.lhsScale.perTensor || p.lhsScale.rowBlock == 1 ||
       m % p.lhsScale.rowBlock == 0);
  if (foldable) {
    p.batch = 1;
    p.m = batch * m;
    if (!p.lhsScale.perTensor) {
      p.lhsScale.numRowBlocks = llvm::divideCeil(p.m, p.lhsScale.rowBlock);
      p.lhsScale.batched = false;
    }
  } else {
    p.batch = batch;
    p.m = m;
  }
  p.n = n;
  p.k = k;
  p.bn = n >= 128 ? 128 : llvm::alignTo(n, 8);
  if (p.m > 65535 * kBM)
    return fail("M too large for grid.y");
  return p;
}

//===----------------------------------------------------------------------===//
// IR building helpers
//===----------------------------------------------------------------------===//

struct KernelBuilder {
  OpBuilder &b;
  Location loc;
  const GemmPlan &p;
  Type f32, i32, i64, idx;

  KernelBuilder(OpBuilder &b, Location loc, const GemmPlan &p)
      : b(b), loc(loc), p(p), f32(b.getF32Type()), i32(b.getI32Type()),
        i64(b.getI64Type()), idx(b.getIndexType()) {}

  Value cIdx(int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value cI64(int64_t v) {
    return arith::ConstantIntOp::create(b, loc, i64, v);
  }
  Value cF32(float v) {
    return arith::ConstantFloatOp::create(b, loc, cast<FloatType>(f32),
                                          APFloat(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value addC(Value x, int64_t c) { return c ? add(x, cIdx(c)) : x; }
  Value mulC(Value x, int64_t c) { return c == 1 ? x : mul(x, cIdx(c)); }
  Value divC(Value x, int64_t c) {
    return c == 1 ? x : arith::DivUIOp::create(b, loc, x, cIdx(c));
  }
  Value remC(Value x, int64_t c) {
    return arith::RemUIOp::create(b, loc, x, cIdx(c));
  }
  Value minC(Value x, int64_t c) {
    return arith::MinUIOp::create(b, loc, x, cIdx(c));
  }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, y);
  }
  Value ultC(Value x, int64_t c) { return ult(x, cIdx(c)); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }

  /// A scale element as f32. E8M0 is 2^(byte - 127) with 0xFF = NaN; byte 0
  /// is the subnormal 2^-127 (0x00400000), which a plain `byte << 23` would
  /// turn into zero.
  Value toF32(Value v) {
    Type t = v.getType();
    if (t.isF32())
      return v;
    if (isa<Float8E8M0FNUType>(t)) {
      Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), v);
      Value w = arith::ExtUIOp::create(b, loc, i32, byte);
      auto ci = [&](int64_t c) {
        return arith::ConstantIntOp::create(b, loc, i32, c);
      };
      Value bits = arith::ShLIOp::create(b, loc, w, ci(23));
      Value isZero =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w, ci(0));
      Value isNaN =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, w, ci(255));
      bits = arith::SelectOp::create(b, loc, isZero, ci(0x00400000), bits);
      bits = arith::SelectOp::create(b, loc, isNaN, ci(0x7FC00000), bits);
      return arith::BitcastOp::create(b, loc, f32, bits);
    }
    return arith::ExtFOp::create(b, loc, f32, v);
  }

  /// Loads element `linear` of a rank-0 or rank-1 memref.
  Value load(Value mem, Value linear) {
    if (cast<MemRefType>(mem.getType()).getRank() == 0)
      return memref::LoadOp::create(b, loc, mem, ValueRange{});
    return memref::LoadOp::create(b, loc, mem, ValueRange{linear});
  }

  /// The f32 scale of (batch, row, k) for one operand; `row` and `k` must be
  /// in range (callers clamp).
  Value scaleAt(Value mem, const SideScale &s, Value batch, Value row,
                Value kIdx) {
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
};

/// Shared-memory byte offset of (row r, column k) of a K-major tile with
/// `rows` rows (see the file comment).
Value smemOffset(KernelBuilder &kb, Value r, Value k, int64_t rows) {
  Value core = kb.add(kb.mulC(kb.divC(k, 16), rows / 8), kb.divC(r, 8));
  Value in = kb.add(kb.mulC(kb.remC(r, 8), 16), kb.remC(k, 16));
  return kb.add(kb.mulC(core, 128), in);
}

/// Copies rows [rowBase, rowBase + rows) x K [k0, k0 + kBK) of `src` (rank 1,
/// row stride K, starting at element `srcBase`) into the tile `tile`,
/// zero-filling what lies beyond `validRows` rows or K.
void copyTile(KernelBuilder &kb, Value src, Value srcBase, Value tile,
              Value tid, Value rowBase, int64_t rows, int64_t validRows,
              Value k0) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type elt = cast<MemRefType>(tile.getType()).getElementType();
  Value gk = kb.add(k0, tid);
  Value kOk = kb.ultC(gk, kb.p.k);
  Value zero = arith::ConstantFloatOp::create(b, loc, cast<FloatType>(elt),
                                              APFloat::getZero(
                                                  cast<FloatType>(elt)
                                                      .getFloatSemantics()));
  auto loop = scf::ForOp::create(b, loc, kb.cIdx(0), kb.cIdx(rows),
                                 kb.cIdx(1));
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value r = loop.getInductionVar();
    Value gr = kb.add(rowBase, r);
    Value ok = arith::AndIOp::create(b, loc, kOk, kb.ultC(gr, validRows));
    auto ifOp = scf::IfOp::create(
        b, loc, ok,
        [&](OpBuilder &tb, Location l) {
          Value lin = kb.add(srcBase, kb.add(kb.mulC(gr, kb.p.k), gk));
          Value v = memref::LoadOp::create(tb, l, src, ValueRange{lin});
          scf::YieldOp::create(tb, l, v);
        },
        [&](OpBuilder &eb, Location l) { scf::YieldOp::create(eb, l, zero); });
    memref::StoreOp::create(b, loc, ifOp.getResult(0), tile,
                            ValueRange{smemOffset(kb, r, tid, rows)});
  }
}

/// The 16-byte copy used when K is a multiple of 16 (every 16-byte chunk of
/// a row is then entirely in or out of range, and 16-byte aligned): thread t
/// moves chunk t / 16 of row t % 16 of each group of 16 rows, so the eight
/// threads of one shared-memory phase write the eight rows of one core
/// matrix (128 contiguous bytes, no bank conflicts). `src` is the operand's
/// global base as a !llvm.ptr<1>, `smem` the shared buffer as !llvm.ptr<3>,
/// `tileOffset` the tile's byte offset in it. Plain llvm.load/store with
/// align 16 (ld.global.v4 / st.shared.v4): the pass does not depend on the
/// vector dialect.
void copyTileVectorized(KernelBuilder &kb, Value src, Value srcBase,
                        Value smem, int64_t tileOffset, Value tid,
                        Value rowBase, int64_t rows, int64_t validRows,
                        Value k0) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto vecType = VectorType::get({4}, kb.i32);
  Value r16 = kb.remC(tid, 16), chunk = kb.divC(tid, 16);
  Value kInTile = kb.mulC(chunk, 16);
  Value gk = kb.add(k0, kInTile);
  Value kOk = kb.ultC(gk, kb.p.k);
  auto loop = scf::ForOp::create(b, loc, kb.cIdx(0),
                                 kb.cIdx(llvm::divideCeil(rows, 16)),
                                 kb.cIdx(1));
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(loop.getBody());
  Value r = kb.add(kb.mulC(loop.getInductionVar(), 16), r16);
  auto body = [&]() {
    Value gr = kb.add(rowBase, r);
    Value ok = arith::AndIOp::create(b, loc, kOk, kb.ultC(gr, validRows));
    auto ifOp = scf::IfOp::create(
        b, loc, ok,
        [&](OpBuilder &tb, Location l) {
          Value lin = kb.add(srcBase, kb.add(kb.mulC(gr, kb.p.k), gk));
          lin = arith::IndexCastOp::create(tb, l, kb.i64, lin);
          Value ptr = LLVM::GEPOp::create(tb, l, src.getType(),
                                          tb.getI8Type(), src,
                                          ArrayRef<LLVM::GEPArg>{lin});
          Value v = LLVM::LoadOp::create(tb, l, vecType, ptr, 16);
          scf::YieldOp::create(tb, l, v);
        },
        [&](OpBuilder &eb, Location l) {
          scf::YieldOp::create(eb, l,
                               ValueRange{LLVM::ZeroOp::create(eb, l, vecType)});
        });
    Value off = kb.addC(smemOffset(kb, r, kInTile, rows), tileOffset);
    off = arith::IndexCastOp::create(b, loc, kb.i64, off);
    Value dst = LLVM::GEPOp::create(b, loc, smem.getType(), b.getI8Type(),
                                    smem, ArrayRef<LLVM::GEPArg>{off});
    LLVM::StoreOp::create(b, loc, ifOp.getResult(0), dst, 16);
  };
  if (rows % 16 == 0) {
    body();
  } else {
    // A tile of N rows that is not a multiple of 16 (BN = 72, ...).
    auto inTile = scf::IfOp::create(b, loc, kb.ultC(r, rows),
                                    /*withElseRegion=*/false);
    b.setInsertionPointToStart(&inTile.getThenRegion().front());
    body();
  }
}

/// An LLVM pointer in `addressSpace` to the aligned data of `memref`.
Value llvmPointer(KernelBuilder &kb, Value memref, unsigned addressSpace,
                  bool fromGeneric) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value i = arith::IndexCastOp::create(
      b, loc, kb.i64,
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref));
  auto ctx = b.getContext();
  if (!fromGeneric)
    return LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx, addressSpace), i);
  Value generic =
      LLVM::IntToPtrOp::create(b, loc, LLVM::LLVMPointerType::get(ctx), i);
  return LLVM::AddrSpaceCastOp::create(
      b, loc, LLVM::LLVMPointerType::get(ctx, addressSpace), generic);
}

/// wgmma matrix descriptor (no swizzle): start address >> 4 in bits [0,14),
/// LBO >> 4 in [16,30), SBO >> 4 in [32,46), swizzle mode 0 in [62,64).
Value descriptor(KernelBuilder &kb, Value smemAddr, int64_t byteOffset,
                 int64_t lbo, int64_t sbo) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value addr = arith::AddIOp::create(b, loc, smemAddr, kb.cI64(byteOffset));
  addr = arith::AndIOp::create(b, loc, addr, kb.cI64(0x3FFFF));
  addr = arith::ShRUIOp::create(b, loc, addr, kb.cI64(4));
  int64_t fixed = ((lbo >> 4) << 16) | ((sbo >> 4) << 32);
  return arith::OrIOp::create(b, loc, addr, kb.cI64(fixed));
}

/// Builds the kernel launch replacing `func`'s body.
void buildWgmmaKernel(func::FuncOp func, const GemmPlan &p) {
  MLIRContext *ctx = func.getContext();
  Location loc = func.getLoc();
  Block &entry = func.getBody().front();
  // Drop the reference body; keep the arguments.
  func.getBody().getBlocks().erase(std::next(func.getBody().begin()),
                                   func.getBody().end());
  while (!entry.empty())
    entry.back().erase();
  OpBuilder b = OpBuilder::atBlockEnd(&entry);
  KernelBuilder kb(b, loc, p);

  // Flatten every operand to rank 1 (identity layouts: contiguous); the
  // kernel computes linear indices itself.
  SmallVector<Value> flat;
  for (BlockArgument arg : entry.getArguments()) {
    auto t = cast<MemRefType>(arg.getType());
    if (t.getRank() <= 1) {
      flat.push_back(arg);
      continue;
    }
    ReassociationIndices all =
        llvm::to_vector(llvm::seq<int64_t>(0, t.getRank()));
    auto flatType = MemRefType::get({t.getNumElements()}, t.getElementType());
    flat.push_back(memref::CollapseShapeOp::create(
        b, loc, flatType, arg, ArrayRef<ReassociationIndices>{all}));
  }
  Value lhs = flat[0], lhsS = flat[1], rhs = flat[2], rhsS = flat[3];
  Value bias = p.bias != GemmPlan::Bias::None ? flat[4] : Value();
  Value out = flat.back();

  const int64_t bn = p.bn;
  const int64_t aBytes = kBM * kBK, bBytes = bn * kBK;
  Value gridX = kb.cIdx(llvm::divideCeil(p.n, bn));
  Value gridY = kb.cIdx(llvm::divideCeil(p.m, kBM));
  Value gridZ = kb.cIdx(p.batch);
  Value one = kb.cIdx(1);
  Value smemSize =
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), aBytes + bBytes);
  auto launch = gpu::LaunchOp::create(b, loc, gridX, gridY, gridZ,
                                      kb.cIdx(kThreads), one, one, smemSize);
  func::ReturnOp::create(b, loc);

  b.setInsertionPointToStart(&launch.getBody().front());
  Value bx = launch.getBlockIds().x, by = launch.getBlockIds().y,
        bz = launch.getBlockIds().z;
  Value tid = launch.getThreadIds().x;
  Value n0 = kb.mulC(bx, bn), m0 = kb.mulC(by, kBM);

  // Shared memory: A tile then B tile.
  auto wg = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  auto rawType = MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                                 MemRefLayoutAttrInterface(), wg);
  Value raw = gpu::DynamicSharedMemoryOp::create(b, loc, rawType);
  auto aType = MemRefType::get({aBytes}, p.lhsType,
                               MemRefLayoutAttrInterface(), wg);
  auto bType = MemRefType::get({bBytes}, p.rhsType,
                               MemRefLayoutAttrInterface(), wg);
  Value tileA =
      memref::ViewOp::create(b, loc, aType, raw, kb.cIdx(0), ValueRange{});
  Value tileB =
      memref::ViewOp::create(b, loc, bType, raw, kb.cIdx(aBytes), ValueRange{});
  // The shared-window address of the buffer (ptrtoint of an addrspace(3)
  // pointer), for the wgmma descriptors.
  Value smemBase = arith::IndexCastOp::create(
      b, loc, kb.i64,
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, raw));

  // 16-byte copies need whole, aligned 16-byte chunks in every row.
  const bool vectorCopy = p.k % 16 == 0;
  Value lhsPtr, rhsPtr, smemPtr;
  if (vectorCopy) {
    lhsPtr = llvmPointer(kb, lhs, 1, /*fromGeneric=*/true);
    rhsPtr = llvmPointer(kb, rhs, 1, /*fromGeneric=*/true);
    smemPtr = llvmPointer(kb, raw, 3, /*fromGeneric=*/false);
  }

  // Per-batch element offsets of the operands.
  Value lhsBase = kb.mulC(bz, p.m * p.k);
  Value rhsBase = p.rhsBatched ? kb.mulC(bz, p.n * p.k) : kb.cIdx(0);
  Value outBase = kb.mulC(bz, p.m * p.n);

  // Accumulator fragment of thread `tid` (wgmma D layout, f32): register i
  // holds row 16*warp + lane/4 + 8*((i/2)%2), column 8*(i/4) + 2*(lane%4) +
  // i%2 of the 64 x bn tile.
  const int64_t nregs = bn / 2;
  Value warp = kb.divC(tid, 32), lane = kb.remC(tid, 32);
  Value row0 = kb.add(m0, kb.add(kb.mulC(warp, 16), kb.divC(lane, 4)));
  Value rows[2] = {row0, kb.addC(row0, 8)};
  Value col0 = kb.add(n0, kb.mulC(kb.remC(lane, 4), 2));
  auto colOf = [&](int64_t i) { return kb.addC(col0, 8 * (i / 4) + i % 2); };
  auto rowOf = [&](int64_t i) { return rows[(i / 2) % 2]; };

  auto accType = LLVM::LLVMStructType::getLiteral(
      ctx, SmallVector<Type>(nregs, kb.f32));
  Value zeroAcc = LLVM::ZeroOp::create(b, loc, accType);

  const bool lhsK = p.lhsScale.dependsOnK(), rhsK = p.rhsScale.dependsOnK();
  const int64_t numKTiles = llvm::divideCeil(p.k, kBK);
  const int64_t stepsPerUnit = p.promo / kMmaK;
  const int64_t unitsPerTile = kBK / p.promo;
  auto shape = NVVM::MMAShapeAttr::get(ctx, 64, bn, kMmaK);
  NVVM::WGMMATypes typeA = *wgmmaType(p.lhsType),
                   typeB = *wgmmaType(p.rhsType);

  auto kLoop = scf::ForOp::create(b, loc, kb.cIdx(0), kb.cIdx(numKTiles),
                                  kb.cIdx(1), ValueRange{zeroAcc});
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(kLoop.getBody());
    Value kt = kLoop.getInductionVar();
    Value total = kLoop.getRegionIterArgs()[0];
    Value k0 = kb.mulC(kt, kBK);

    if (vectorCopy) {
      copyTileVectorized(kb, lhsPtr, lhsBase, smemPtr, 0, tid, m0, kBM, p.m,
                         k0);
      copyTileVectorized(kb, rhsPtr, rhsBase, smemPtr, aBytes, tid, n0, bn,
                         p.n, k0);
    } else {
      copyTile(kb, lhs, lhsBase, tileA, tid, m0, kBM, p.m, k0);
      copyTile(kb, rhs, rhsBase, tileB, tid, n0, bn, p.n, k0);
    }
    // Generic-proxy stores -> async-proxy (wgmma) reads.
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b, loc);

    for (int64_t u = 0; u < unitsPerTile; ++u) {
      NVVM::WgmmaFenceAlignedOp::create(b, loc);
      Value partial = zeroAcc;
      for (int64_t s = 0; s < stepsPerUnit; ++s) {
        int64_t step = u * stepsPerUnit + s;
        // Step `step` covers tile columns [32 step, 32 step + 32): core
        // matrix columns 2 step and 2 step + 1.
        Value descA = descriptor(kb, smemBase, 2 * step * (kBM / 8) * 128,
                                 (kBM / 8) * 128, 128);
        Value descB =
            descriptor(kb, smemBase, aBytes + 2 * step * (bn / 8) * 128,
                       (bn / 8) * 128, 128);
        partial = NVVM::WgmmaMmaAsyncOp::create(
            b, loc, accType, partial, descA, descB, shape, typeA, typeB,
            NVVM::WGMMATypes::f32,
            s == 0 ? NVVM::WGMMAScaleOut::zero : NVVM::WGMMAScaleOut::one,
            NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
            NVVM::MMALayout::row, NVVM::MMALayout::col,
            /*satfinite=*/nullptr);
      }
      NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);

      // Promotion: total += partial * sa[row, kb] * sb[col, kb].
      Value kStart = kb.addC(k0, u * p.promo);
      // Units starting beyond K (the last tile's zero padding) must not
      // read scales past the end; their partial is zero, scale it by 0.
      const bool needGuard = (lhsK || rhsK) && p.k % kBK != 0 &&
                             u * p.promo >= p.k % kBK;
      Value kClamped = kb.minC(kStart, p.k - 1);
      Value inK = needGuard ? kb.ultC(kStart, p.k) : Value();
      Value sa[2];
      if (lhsK)
        for (int h = 0; h < 2; ++h)
          sa[h] = kb.scaleAt(lhsS, p.lhsScale, bz, kb.minC(rows[h], p.m - 1),
                             kClamped);
      // rhs scales per distinct column group: one per CTA when its row
      // blocks are whole CTA tiles, one per 8 columns when blocks are
      // multiples of 8, else per column.
      DenseMap<int64_t, Value> sbCache;
      auto sbFor = [&](int64_t i) -> Value {
        int64_t key = i / 4 * 2 + i % 2;
        if (p.rhsScale.rowBlock % bn == 0)
          key = 0;
        else if (p.rhsScale.rowBlock % 8 == 0)
          key = i / 4 * 2;
        Value &v = sbCache[key];
        if (!v)
          v = kb.scaleAt(rhsS, p.rhsScale, bz,
                         kb.minC(colOf(i), p.n - 1), kClamped);
        return v;
      };
      // The combined factor sa * sb of each fragment register, computed
      // once per distinct (row half, rhs scale) pair before the FMAs.
      SmallVector<Value> factors(nregs);
      DenseMap<std::pair<Value, Value>, Value> factorCache;
      for (int64_t i = 0; i < nregs; ++i) {
        Value fa = lhsK ? sa[(i / 2) % 2] : Value();
        Value fb = rhsK ? sbFor(i) : Value();
        Value &f = factorCache[{fa, fb}];
        if (!f) {
          f = fa && fb ? kb.fmul(fa, fb) : (fa ? fa : fb);
          if (f && inK)
            f = arith::SelectOp::create(b, loc, inK, f, kb.cF32(0.0f));
        }
        factors[i] = f;
      }
      Value next = total;
      for (int64_t i = 0; i < nregs; ++i) {
        Value pv = LLVM::ExtractValueOp::create(b, loc, partial, i);
        Value tv = LLVM::ExtractValueOp::create(b, loc, next, i);
        if (factors[i])
          pv = kb.fmul(pv, factors[i]);
        tv = arith::AddFOp::create(b, loc, tv, pv);
        next = LLVM::InsertValueOp::create(b, loc, next, tv, i);
      }
      total = next;
    }
    // All wgmmas of this stage completed (wait_group 0); the next stage may
    // overwrite the tiles once every warp got here.
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, total);
  }
  Value acc = kLoop.getResult(0);

  // Epilogue.
  Value zeroIdx = kb.cIdx(0);
  Value saOuter[2], sbTensor;
  if (!lhsK)
    for (int h = 0; h < 2; ++h)
      saOuter[h] = kb.scaleAt(lhsS, p.lhsScale, bz, kb.minC(rows[h], p.m - 1),
                              zeroIdx);
  if (!rhsK && p.rhsScale.perTensor)
    sbTensor = kb.scaleAt(rhsS, p.rhsScale, bz, zeroIdx, zeroIdx);
  for (int64_t i = 0; i < nregs; ++i) {
    Value row = rowOf(i), col = colOf(i);
    Value ok = arith::AndIOp::create(b, loc, kb.ultC(row, p.m),
                                     kb.ultC(col, p.n));
    auto ifOp = scf::IfOp::create(b, loc, ok, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    Value x = LLVM::ExtractValueOp::create(b, loc, acc, i);
    if (!lhsK)
      x = kb.fmul(x, saOuter[(i / 2) % 2]);
    if (!rhsK)
      x = kb.fmul(x, sbTensor ? sbTensor
                              : kb.scaleAt(rhsS, p.rhsScale, bz, col, zeroIdx));
    Value outLin = kb.add(outBase, kb.add(kb.mulC(row, p.n), col));
    if (p.bias == GemmPlan::Bias::Row)
      x = arith::AddFOp::create(b, loc, x,
                                kb.toF32(kb.load(bias, col)));
    else if (p.bias == GemmPlan::Bias::Full)
      x = arith::AddFOp::create(b, loc, x, kb.toF32(kb.load(bias, outLin)));
    x = buildEpilogue(b, loc, x, p.epilogue);
    if (!p.outType.isF32())
      x = arith::TruncFOp::create(b, loc, p.outType, x);
    memref::StoreOp::create(b, loc, x, out, ValueRange{outLin});
  }
  gpu::TerminatorOp::create(b, loc);
}

struct ConvertFP8GemmToGPUPass
    : fp8::impl::ConvertFP8GemmToGPUBase<ConvertFP8GemmToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chip != "sm_90a" && chip != "sm_89") {
      module.emitError("convert-fp8-gemm-to-gpu: unknown chip '")
          << chip << "' (expected sm_90a or sm_89)";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr(kGemmAttrName))
        funcs.push_back(func);
    for (func::FuncOp func : funcs) {
      std::string why;
      FailureOr<GemmPlan> plan = planGemm(func, why);
      if (succeeded(plan) && chip == "sm_89") {
        plan = failure();
        why = "the sm_89 mma.sync kernel is not implemented yet";
      }
      // Served or not, the function is an ordinary one from here on (the
      // description would otherwise reach the LLVM dialect, which has no
      // translation for fp8 attributes).
      func->removeAttr(kGemmAttrName);
      if (failed(plan)) {
        if (remarks)
          func.emitRemark() << "fp8 gemm: keeping the reference body: " << why;
        continue;
      }
      buildWgmmaKernel(func, *plan);
      if (remarks)
        func.emitRemark() << "fp8 gemm: wgmma kernel m64n" << plan->bn
                          << "k32, CTA tile 64x" << plan->bn << "x" << kBK
                          << ", promotion every " << plan->promo << " K"
                          << ", grid " << llvm::divideCeil(plan->n, plan->bn)
                          << "x" << llvm::divideCeil(plan->m, kBM) << "x"
                          << plan->batch;
    }
  }
};
} // namespace
