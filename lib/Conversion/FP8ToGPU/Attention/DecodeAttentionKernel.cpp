//===- DecodeAttentionKernel.cpp - Split-key attention of a decode step ---===//
//
// Part of fp8-opt.
//
// A decode step asks one query per (batch, head) to attend to the whole
// cache: the FlashAttention kernel's 128-query tile would hold one row, and
// its B x Hq CTAs (32 at batch 1 of a Llama-3-8B) would each walk every key
// block in turn. This kernel splits the keys instead (flash-decoding): CTA
// (split, kv head, sequence) reads one split's K and V rows once for the
// Hq / Hkv query heads that share them, on CUDA cores --
//
//   a key row is read by D / 8 lanes, 16 bytes each (a warp holds 256 / D
//   key groups), kDecodeUnroll rows per group loaded before they are used
//   (an FP8 cache, AttentionProblem::kvType: 8 bytes each, decoded in
//   pairs to f16, times the scale, rounded through kvDequant's types);
//   scores q.k reduce over the group's lanes (xor shuffles), then an online
//   softmax per key group and query head (running max, sum and output in
//   registers: the natural scale, so that a row of the mask's lowest values
//   stays finite, as the reference computes it);
//
// or, for an FP8 cache whose two scales are powers of two that fold out
// exactly (checked at run time), on tensor cores (mmaLoop: mma.sync with the
// GQA group's heads as the columns);
//
// then the CTA merges its warps' and groups' states in shared memory and
// writes the split's unnormalized output, maximum and sum to the workspace
// [B, Hq, splits, Dv + 2]; a second kernel (one CTA per (batch, head), a
// thread per output element; the splits' maxima and sums staged in shared
// memory) combines the splits and divides. With one
// split the first kernel writes the output itself. Sq = 1 makes the causal
// mask empty and both output layouts ([B, Hq, 1, Dv], [B, 1, Hq, Dv]) the
// same bytes.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernel.h"

#include "../KernelIR.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/Support/MathExtras.h"

#include <array>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::attention;

namespace {

constexpr int64_t kWarpThreads = 32;
constexpr int64_t kDecodeThreads = kDecodeWarps * kWarpThreads;
/// Bytes of a key row one lane loads at once.
constexpr int64_t kLaneBytes = 16;

class DecodeGen {
public:
  DecodeGen(KernelIR &k, const AttentionProblem &p, bool tensorCores)
      : k(k), b(k.b), loc(k.loc), p(p), tensorCores(tensorCores) {
    perLane = kLaneBytes / p.elementBytes();
    lanes = p.d / perLane;
    groups = kWarpThreads / lanes;
    chunk = decodeSplitKeys(p.skv, p.decodeSplits, p.d);
    states = kDecodeWarps * groups;
    stride = p.dv + 2;
  }

  void build(func::FuncOp func, SymbolTable &symbols);

private:
  void buildSplitKernel(gpu::GPUFuncOp kernel);
  void buildCombineKernel(gpu::GPUFuncOp kernel);

  // The tensor-core loop (folded FP8 cache scales; decodeMmaServes).
  bool mmaServes() const { return tensorCores; }
  struct MmaInputs {
    Value q, key, val, mask, kScale, vScale, sp, warp, lane, batch, kvHead,
        start, end, kvRows;
  };
  /// Walks the split's keys in blocks of 16 per warp with mma.sync and
  /// writes each warp's states to shared memory (state = warp).
  void mmaLoop(const MmaInputs &in);
  /// d = a * b + c, mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32:
  /// a 4 and b 2 registers of f16 pairs, c 4 f32.
  SmallVector<Value> mma(ArrayRef<Value> a, ArrayRef<Value> bRegs,
                         ArrayRef<Value> c);
  /// The transpose of an 8 x 8 f16 fragment
  /// (movmatrix.sync.aligned.m8n8.trans.b16).
  Value transpose8x8(Value x);
  /// The FP8 pair in half `half` (0: bytes 0-1, 1: bytes 2-3) of the
  /// 32-bit `word`, decoded exactly to an f16 pair.
  Value decodeHalf(Value word, int64_t half);
  /// Bytes `first` and `first` + 1 of `x` interleaved with those of `y`
  /// (prmt): x[first], y[first], x[first + 1], y[first + 1].
  Value interleave(Value x, Value y, int64_t first);

  /// The online-softmax state of one key group and query head.
  struct State {
    Value m, l;
    SmallVector<Value> o;
  };
  /// Folds the scores `x` (one per row, natural units, -inf for keys past
  /// the split) and the rows' values into `s`.
  void update(State &s, ArrayRef<Value> x, ArrayRef<Value> rows);
  /// Weights of a merge: exp(m - max) with a max of -inf (no key yet) read
  /// as 0, so that -inf - -inf never makes a NaN.
  Value weight(Value m, Value maxUse) {
    return exp2(fmul(arith::SubFOp::create(b, loc, m, maxUse),
                     k.cF32(static_cast<float>(M_LOG2E))));
  }
  Value usableMax(Value m) {
    Value none =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf());
    return arith::SelectOp::create(b, loc, none, k.cF32(0), m);
  }
  /// O / L, or 0 where no key had weight (a row whose keys were all -inf,
  /// as the reference gives it), in the output type.
  Value finalValue(Value o, Value l);

  // Memory.
  /// The kernel's dynamic shared memory (!llvm.ptr<3>).
  Value sharedPtr() {
    auto space = gpu::AddressSpaceAttr::get(b.getContext(),
                                            gpu::AddressSpace::Workgroup);
    Value smem = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), space));
    return llvmPointer(k, smem, 3, /*fromGeneric=*/false);
  }
  Value globalPtr(Value memref) {
    return llvmPointer(k, memref, 1, /*fromGeneric=*/true);
  }
  Value gep(Value ptr, Type elem, Value offset) {
    return LLVM::GEPOp::create(b, loc, ptr.getType(), elem, ptr,
                               ArrayRef<LLVM::GEPArg>{k.toI64(offset)});
  }
  Value loadF32(Value ptr, Type elem, Value offset) {
    Value v = LLVM::LoadOp::create(b, loc, elem, gep(ptr, elem, offset));
    return elem.isF32() ? v : Value(arith::ExtFOp::create(b, loc, k.f32, v));
  }
  void storeF32(Value v, Value ptr, Value offset) {
    LLVM::StoreOp::create(b, loc, v, gep(ptr, k.f32, offset));
  }
  /// The 16 bytes of a row a lane reads, as perLane f32 values.
  SmallVector<Value> loadRow(Value ptr, Value offset) {
    auto vec = VectorType::get({perLane}, p.elementType);
    Value v = LLVM::LoadOp::create(b, loc, vec, gep(ptr, p.elementType, offset),
                                   /*alignment=*/kLaneBytes);
    SmallVector<Value> out;
    for (int64_t e = 0; e < perLane; ++e) {
      Value x = LLVM::ExtractElementOp::create(b, loc, v, k.cI32(e));
      out.push_back(arith::ExtFOp::create(b, loc, k.f32, x));
    }
    return out;
  }

  /// The 8 bytes of an FP8 cache row a lane reads (perLane elements), each
  /// dequantized as the graph did: x * scale in f32, then rounded to each
  /// of p.kvDequant's types in turn; as f32 values. Without a scale (the
  /// folded loop, foldableScales): x itself.
  SmallVector<Value> loadCacheRow(Value ptr, Value offset, Value scale) {
    auto i8 = b.getI8Type();
    auto vec = VectorType::get({perLane}, i8);
    Value v = LLVM::LoadOp::create(b, loc, vec, gep(ptr, i8, offset),
                                   /*alignment=*/perLane);
    // Pairs decode exactly to f16 (cvt.rn.f16x2.e4m3x2 / e5m2x2).
    auto v2i8 = VectorType::get({2}, i8);
    auto v2f16 = VectorType::get({2}, b.getF16Type());
    SmallVector<Value> decoded;
    for (int64_t e = 0; e < perLane; e += 2) {
      Value pair = LLVM::ShuffleVectorOp::create(
          b, loc, v2i8, v, v, ArrayRef<int32_t>{int32_t(e), int32_t(e + 1)});
      Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
          b, loc, v2f16, pair, /*relu=*/false, p.kvType);
      for (int64_t h = 0; h < 2; ++h)
        decoded.push_back(arith::ExtFOp::create(
            b, loc, k.f32,
            LLVM::ExtractElementOp::create(b, loc, halves, k.cI32(h))
                .getResult()));
    }
    if (!scale)
      return decoded;
    SmallVector<Value> out;
    for (int64_t e = 0; e < perLane; ++e) {
      Value f = fmul(decoded[e], scale);
      Type cur = k.f32;
      for (Type t : p.kvDequant) {
        const unsigned from = cur.getIntOrFloatBitWidth(),
                       to = t.getIntOrFloatBitWidth();
        if (to < from)
          f = arith::TruncFOp::create(b, loc, t, f);
        else if (to > from)
          f = arith::ExtFOp::create(b, loc, t, f);
        cur = t;
      }
      out.push_back(
          cur.isF32() ? f : Value(arith::ExtFOp::create(b, loc, k.f32, f)));
    }
    return out;
  }

  /// Whether both cache scales fold out of the dequantization exactly
  /// (an i1, uniform across the grid), or null where no scale can: a power
  /// of two 2^e whose every product x * 2^e with an FP8 value x is exact in
  /// each of p.kvDequant's types (foldableScaleExponents) leaves every rounding
  /// of the graph's casts a no-op, and commutes with every f32 rounding of
  /// the kernel's sums and products (away from f32's overflow and
  /// subnormals). So q.(x * s) = (q.x) * s and sum p (y * s) = (sum p y) * s
  /// bit for bit, and the loop skips the multiplication and casts per element
  /// (ten instructions per pair of cache bytes).
  Value foldableScales(Value kScale, Value vScale) {
    // (Not a structured binding: clang's C++17 rejects capturing one.)
    const std::pair<int, int> range = foldableScaleExponents(p);
    const int lo = range.first, hi = range.second;
    if (lo > hi)
      return Value();
    // A positive power of two 2^e, lo <= e <= hi: a zero sign and mantissa,
    // its biased exponent within [127 + lo, 127 + hi].
    auto fits = [&](Value scale) {
      Value bits = arith::BitcastOp::create(b, loc, k.i32, scale);
      Value signAndMantissa = arith::AndIOp::create(
          b, loc, bits, k.cI32(static_cast<int32_t>(0x807fffffu)));
      Value shifted =
          arith::SubIOp::create(b, loc, bits, k.cI32(int64_t(127 + lo) << 23));
      return arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                signAndMantissa, k.cI32(0)),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, shifted,
                                k.cI32(int64_t(hi - lo) << 23)));
    };
    Value kFits = fits(kScale), vFits = fits(vScale);
    return arith::AndIOp::create(b, loc, kFits, vFits);
  }
  /// Key `j` of the split [start, end): whether it is one of the split's,
  /// and the key a load reads (keys past the split read its first row;
  /// their scores are -inf).
  std::pair<Value, Value> splitKey(Value j, Value start, Value end) {
    Value valid = k.ult(j, end);
    return {valid, arith::SelectOp::create(b, loc, valid, j, start)};
  }
  /// The additive mask at (sequence, query head, key), as f32.
  Value maskAt(Value mask, Value batch, Value head, Value key) {
    Value at = k.add(
        k.add(k.mulC(batch, p.maskStrides[0]), k.mulC(head, p.maskStrides[1])),
        k.mulC(key, p.maskStrides[3]));
    return loadF32(mask, p.maskType, at);
  }

  // Arithmetic.
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  /// x * y + acc rounded once (fma.rn.f32): the kernel is bound by
  /// instruction issue, and its dot products and P.V sums are most of it.
  Value fma(Value x, Value y, Value acc) {
    return LLVM::FMAOp::create(b, loc, x, y, acc);
  }
  Value fmax(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value negInf() { return k.cF32(-std::numeric_limits<float>::infinity()); }
  Value exp2(Value x) { return k.exp2Approx(x); }
  Value shuffleXor(Value x, int64_t offset) {
    return gpu::ShuffleOp::create(b, loc, x, k.cI32(offset),
                                  k.cI32(kWarpThreads), gpu::ShuffleMode::XOR)
        .getShuffleResult();
  }

  KernelIR &k;
  OpBuilder &b;
  Location loc;
  const AttentionProblem &p;
  /// AttentionConfig::decodeTensorCores.
  bool tensorCores;
  /// Elements per lane and key row, lanes per key row, key groups per warp,
  /// keys per split, softmax states per CTA and query head, floats per
  /// workspace row.
  int64_t perLane, lanes, groups, chunk, states, stride;
};

void DecodeGen::build(func::FuncOp func, SymbolTable &symbols) {
  const std::string name = (func.getSymName() + "_kernel").str();
  gpu::GPUModuleOp gpuModule = createKernelModule(func, name, symbols);

  // q, k, v, [mask], [k_scale, v_scale], workspace, out (an FP8 cache's
  // function takes k8, k_scale, v8, v_scale, q first).
  SmallVector<Value> flat;
  for (BlockArgument arg : func.getBody().front().getArguments())
    flat.push_back(flattenMemRef(k, arg));
  if (p.kvType) {
    SmallVector<Value> cache(flat.begin(), flat.begin() + 4);
    flat.erase(flat.begin(), flat.begin() + 4);
    flat.insert(flat.begin() + 1, {cache[0], cache[2]});
    flat.insert(flat.begin() + 3 + p.hasMask, {cache[1], cache[3]});
  }
  TypeRange types = ValueRange(flat).getTypes();
  gpu::GPUFuncOp split =
      createKernelFunc(gpuModule, name, types, kDecodeThreads);
  const int64_t smemBytes = 4 * states * (p.heads / p.kvHeads) * stride;
  gpu::LaunchFuncOp::create(
      b, loc, split,
      gpu::KernelDim3{k.cIdx(p.decodeSplits), k.cIdx(p.kvHeads),
                      k.cIdx(p.batch)},
      gpu::KernelDim3{k.cIdx(kDecodeThreads), k.cIdx(1), k.cIdx(1)},
      k.cI32(smemBytes), flat);
  gpu::GPUFuncOp combine;
  if (p.decodeSplits > 1) {
    const unsigned ws = 3 + p.hasMask + (p.kvType ? 2 : 0);
    combine = createKernelFunc(gpuModule, name + "_combine",
                               TypeRange{types[ws], types.back()}, p.dv);
    gpu::LaunchFuncOp::create(
        b, loc, combine,
        gpu::KernelDim3{k.cIdx(p.batch * p.heads), k.cIdx(1), k.cIdx(1)},
        gpu::KernelDim3{k.cIdx(p.dv), k.cIdx(1), k.cIdx(1)},
        k.cI32(8 * p.decodeSplits), ValueRange{flat[ws], flat.back()});
  }
  func::ReturnOp::create(b, loc);

  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(&split.front());
  buildSplitKernel(split);
  if (combine) {
    b.setInsertionPointToStart(&combine.front());
    buildCombineKernel(combine);
  }
}

void DecodeGen::update(State &s, ArrayRef<Value> x, ArrayRef<Value> rows) {
  Value m = s.m;
  for (Value xi : x)
    m = fmax(m, xi);
  Value use = usableMax(m);
  Value alpha = weight(s.m, use);
  SmallVector<Value> pr;
  Value l = fmul(s.l, alpha);
  for (Value xi : x) {
    pr.push_back(weight(xi, use));
    l = fadd(l, pr.back());
  }
  for (int64_t e = 0; e < perLane; ++e) {
    Value o = fmul(s.o[e], alpha);
    for (size_t u = 0; u < x.size(); ++u)
      o = fma(pr[u], rows[u * perLane + e], o);
    s.o[e] = o;
  }
  s.m = m;
  s.l = l;
}

Value DecodeGen::finalValue(Value o, Value l) {
  Value any =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, k.cF32(0));
  Value v = arith::SelectOp::create(
      b, loc, any, arith::DivFOp::create(b, loc, o, l), k.cF32(0));
  if (!p.outType.isF32())
    v = arith::TruncFOp::create(b, loc, p.outType, v);
  return v;
}

SmallVector<Value> DecodeGen::mma(ArrayRef<Value> a, ArrayRef<Value> bRegs,
                                  ArrayRef<Value> c) {
  auto f32 = k.f32;
  auto type =
      LLVM::LLVMStructType::getLiteral(b.getContext(), {f32, f32, f32, f32});
  SmallVector<Value> operands(a);
  operands.append(bRegs.begin(), bRegs.end());
  operands.append(c.begin(), c.end());
  Value d = k.inlinePtx(
      type, operands,
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0,$1,$2,$3}, "
      "{$4,$5,$6,$7}, {$8,$9}, {$10,$11,$12,$13};",
      "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f");
  SmallVector<Value> out;
  for (int64_t i = 0; i < 4; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
  return out;
}

Value DecodeGen::transpose8x8(Value x) {
  return k.inlinePtx(k.i32, x, "movmatrix.sync.aligned.m8n8.trans.b16 $0, $1;",
                     "=r,r");
}

Value DecodeGen::decodeHalf(Value word, int64_t half) {
  auto i16 = b.getI16Type();
  if (half)
    word = arith::ShRUIOp::create(b, loc, word, k.cI32(16));
  Value pair =
      LLVM::BitcastOp::create(b, loc, VectorType::get({2}, b.getI8Type()),
                              arith::TruncIOp::create(b, loc, i16, word));
  Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
      b, loc, VectorType::get({2}, b.getF16Type()), pair, /*relu=*/false,
      p.kvType);
  return LLVM::BitcastOp::create(b, loc, k.i32, halves);
}

Value DecodeGen::interleave(Value x, Value y, int64_t first) {
  // Selector nibbles: result byte i takes pool byte n_i (x: 0-3, y: 4-7).
  const int64_t selector = first == 0 ? 0x5140 : 0x7362;
  return NVVM::PermuteOp::create(b, loc, k.i32, x, y, k.cI32(selector),
                                 NVVM::PermuteMode::DEFAULT);
}

// The tensor-core loop, flash-decoding with the GQA group's heads as mma's
// columns (the roles transposed, so that the group's <= 8 heads are n and
// the keys and dims m): per block of 16 keys a warp computes
//   S^T [16 keys x 8 heads] = K [16 keys x D] . Q^T [D x 8 heads]
// (D / 16 mma k-steps; K as A straight from its rows, Q^T as B, the heads
// past the group's zeros), the online softmax per head on S^T's fragment
// (lane: keys r = lane / 4 and r + 8, heads 2 q4 and 2 q4 + 1, q4 = lane %
// 4; maxima and sums over the 8 lanes of a column, xor 4, 8, 16), then
//   O^T [D x 8 heads] += V^T [D x 16 keys] . P^T [16 keys x 8 heads]
// (D / 16 m-tiles; P^T's two 8 x 8 halves transposed in registers by
// movmatrix into the B fragment, V^T's A fragment two key rows' bytes
// interleaved). The sums are over dims and keys, so both may be permuted
// consistently: lane q4 reads dims [D/4 q4, D/4 (q4 + 1)) of its K rows and
// Q row (k-step c takes its bytes 4c .. 4c + 3), lane r dims [D/8 r,
// D/8 (r + 1)) of its V rows, whose m-tile i is dims D/8 r + 2i (fragment
// row r) and D/8 r + 2i + 1 (row r + 8). The cache's values enter unscaled
// (f16 holds E4M3/E5M2 exactly): the scores are S * k_scale * scale and
// the outputs O * v_scale, exact for the power-of-two scales this loop
// serves (foldableScales); q is rounded to f16 (bf16 -> f16 is exact in
// f16's range) and P to f16, as FlashAttention's P.V does.
void DecodeGen::mmaLoop(const MmaInputs &in) {
  const int64_t groupsPerHead = p.groups();
  const int64_t kBytes = p.d / 4, vBytes = p.d / 8, ksteps = p.d / 16;
  auto i8 = b.getI8Type();
  Value r = k.divC(in.lane, 4), q4 = k.remC(in.lane, 4);

  // Q^T's B fragments: head r of the group (zeros past it), dims
  // [kBytes q4, kBytes (q4 + 1)).
  Value headOk = k.ultC(r, groupsPerHead);
  Value hq = arith::SelectOp::create(b, loc, headOk, r, k.cIdx(0));
  Value qRow = k.add(k.mulC(in.batch, p.heads),
                     k.add(k.mulC(in.kvHead, groupsPerHead), hq));
  Value qv = LLVM::LoadOp::create(
      b, loc, VectorType::get({kBytes}, p.elementType),
      gep(in.q, p.elementType, k.add(k.mulC(qRow, p.d), k.mulC(q4, kBytes))),
      /*alignment=*/16);
  SmallVector<Value> qf;
  for (int64_t e = 0; e < kBytes; ++e) {
    Value x = arith::ExtFOp::create(
        b, loc, k.f32,
        LLVM::ExtractElementOp::create(b, loc, qv, k.cI32(e)).getResult());
    qf.push_back(arith::SelectOp::create(b, loc, headOk, x, k.cF32(0)));
  }
  SmallVector<std::array<Value, 2>> qb;
  for (int64_t c = 0; c < ksteps; ++c)
    qb.push_back({k.packPair(b.getF16Type(), qf[4 * c], qf[4 * c + 1]),
                  k.packPair(b.getF16Type(), qf[4 * c + 2], qf[4 * c + 3])});
  // The score factor k_scale * scale (exact: k_scale is a power of two).
  Value factor = fmul(in.kScale, k.cF32(static_cast<float>(p.scale)));

  // Loop-carried: m and l of heads 2 q4 + j, then O^T's D / 16 x 4 values.
  const int64_t blockKeys = 16 * kDecodeWarps;
  const int64_t steps = llvm::divideCeil(chunk, blockKeys);
  SmallVector<Value> init{negInf(), negInf(), k.cF32(0), k.cF32(0)};
  init.append(4 * ksteps, k.cF32(0));
  auto loop =
      scf::ForOp::create(b, loc, k.cIdx(0), k.cIdx(steps), k.cIdx(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    auto iter = loop.getRegionIterArgs();
    Value kb = k.add(
        in.start,
        k.mulC(k.add(in.warp, k.mulC(loop.getInductionVar(), kDecodeWarps)),
               16));
    // n bytes of a row from column `col`, as n / 4 32-bit words.
    auto loadWords = [&](Value base, Value row, Value col, int64_t n) {
      Value v =
          LLVM::LoadOp::create(b, loc, VectorType::get({n / 4}, k.i32),
                               gep(base, i8, k.add(k.mulC(row, p.d), col)),
                               /*alignment=*/std::min<int64_t>(n, 16));
      SmallVector<Value> words;
      for (int64_t w = 0; w < n / 4; ++w)
        words.push_back(LLVM::ExtractElementOp::create(b, loc, v, k.cI32(w)));
      return words;
    };
    // K rows r and r + 8 (A), V rows 2 q4 + {0, 1, 8, 9} (V^T's A).
    Value keys[2], valid[2];
    SmallVector<Value> kRows[2], vRows[4];
    for (int64_t t = 0; t < 2; ++t) {
      std::tie(valid[t], keys[t]) =
          splitKey(k.add(kb, k.addC(r, 8 * t)), in.start, in.end);
      kRows[t] = loadWords(in.key, k.add(in.kvRows, keys[t]),
                           k.mulC(q4, kBytes), kBytes);
    }
    const int64_t vKeys[4] = {0, 1, 8, 9};
    for (int64_t t = 0; t < 4; ++t) {
      Value read =
          splitKey(k.add(kb, k.addC(k.mulC(q4, 2), vKeys[t])), in.start, in.end)
              .second;
      vRows[t] =
          loadWords(in.val, k.add(in.kvRows, read), k.mulC(r, vBytes), vBytes);
    }

    // S^T = K . Q^T.
    SmallVector<Value> acc(4, k.cF32(0));
    for (int64_t c = 0; c < ksteps; ++c)
      acc = mma({decodeHalf(kRows[0][c], 0), decodeHalf(kRows[1][c], 0),
                 decodeHalf(kRows[0][c], 1), decodeHalf(kRows[1][c], 1)},
                {qb[c][0], qb[c][1]}, acc);

    // Scores s[t][j] (key r + 8t, head 2 q4 + j), the online softmax per
    // head over the block's 16 keys.
    Value sc[2][2], pr[2][2], alpha[2];
    SmallVector<Value> yields;
    for (int64_t j = 0; j < 2; ++j) {
      Value h = k.addC(k.mulC(q4, 2), j);
      Value hOk = k.ultC(h, groupsPerHead);
      Value hq = arith::SelectOp::create(b, loc, hOk, h, k.cIdx(0));
      Value bm = negInf();
      for (int64_t t = 0; t < 2; ++t) {
        Value x = fmul(acc[2 * t + j], factor);
        if (p.hasMask)
          x = fadd(x, maskAt(in.mask, in.batch,
                             k.add(k.mulC(in.kvHead, groupsPerHead), hq),
                             keys[t]));
        Value ok = arith::AndIOp::create(b, loc, valid[t], hOk);
        sc[t][j] = arith::SelectOp::create(b, loc, ok, x, negInf());
        bm = fmax(bm, sc[t][j]);
      }
      for (int64_t off : {4, 8, 16})
        bm = fmax(bm, shuffleXor(bm, off));
      Value m = fmax(iter[j], bm);
      Value use = usableMax(m);
      alpha[j] = weight(iter[j], use);
      for (int64_t t = 0; t < 2; ++t)
        pr[t][j] = weight(sc[t][j], use);
      yields.push_back(m);
    }
    for (int64_t j = 0; j < 2; ++j)
      yields.push_back(
          fadd(fadd(fmul(iter[2 + j], alpha[j]), pr[0][j]), pr[1][j]));

    // O^T += V^T . P^T.
    Value pb[2] = {
        transpose8x8(k.packPair(b.getF16Type(), pr[0][0], pr[0][1])),
        transpose8x8(k.packPair(b.getF16Type(), pr[1][0], pr[1][1]))};
    // m-tile i reads columns 2i, 2i + 1 of the lane's V bytes: word i / 2,
    // interleaved from the key rows (2 q4, 2 q4 + 1) and (2 q4 + 8, 2 q4 + 9).
    for (int64_t i = 0; i < ksteps; ++i) {
      SmallVector<Value> o;
      for (int64_t e = 0; e < 4; ++e)
        o.push_back(fmul(iter[4 + 4 * i + e], alpha[e % 2]));
      Value lo = interleave(vRows[0][i / 2], vRows[1][i / 2], 2 * (i % 2));
      Value hi = interleave(vRows[2][i / 2], vRows[3][i / 2], 2 * (i % 2));
      o = mma({decodeHalf(lo, 0), decodeHalf(lo, 1), decodeHalf(hi, 0),
               decodeHalf(hi, 1)},
              {pb[0], pb[1]}, o);
      yields.append(o);
    }
    scf::YieldOp::create(b, loc, yields);
  }

  // Each warp's states to shared memory (state = warp): l summed over the
  // column's 8 lanes, O in the output's units; lane (r, q4) holds dims
  // D/8 r + 2i (+ 1) of heads 2 q4 + j.
  auto res = loop.getResults();
  for (int64_t j = 0; j < 2; ++j) {
    Value l = res[2 + j];
    for (int64_t off : {4, 8, 16})
      l = fadd(l, shuffleXor(l, off));
    Value h = k.addC(k.mulC(q4, 2), j);
    auto inGroup = scf::IfOp::create(b, loc, k.ultC(h, groupsPerHead),
                                     /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&inGroup.getThenRegion().front());
    Value row = k.mulC(k.add(k.mulC(in.warp, groupsPerHead), h), stride);
    for (int64_t i = 0; i < ksteps; ++i)
      for (int64_t half = 0; half < 2; ++half)
        storeF32(fmul(res[4 + 4 * i + 2 * half + j], in.vScale), in.sp,
                 k.add(row, k.addC(k.mulC(r, vBytes), 2 * i + half)));
    auto leader =
        scf::IfOp::create(b, loc, k.eqC(r, 0), /*withElseRegion=*/false);
    b.setInsertionPointToStart(&leader.getThenRegion().front());
    storeF32(res[j], in.sp, k.addC(row, p.dv));
    storeF32(l, in.sp, k.addC(row, p.dv + 1));
  }
}

void DecodeGen::buildSplitKernel(gpu::GPUFuncOp kernel) {
  const int64_t groupsPerHead = p.heads / p.kvHeads; // query heads per kv head
  auto args = kernel.getArguments();
  unsigned i = 0;
  Value q = globalPtr(args[i++]), key = globalPtr(args[i++]),
        val = globalPtr(args[i++]);
  Value mask = p.hasMask ? globalPtr(args[i++]) : Value();
  Value kScale, vScale;
  if (p.kvType) {
    kScale = loadF32(globalPtr(args[i++]), k.f32, k.cIdx(0));
    vScale = loadF32(globalPtr(args[i++]), k.f32, k.cIdx(0));
  }
  Value ws = globalPtr(args[i++]), out = globalPtr(args[i++]);

  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = k.divC(tid, kWarpThreads), lane = k.remC(tid, kWarpThreads);
  Value group = k.divC(lane, lanes), li = k.remC(lane, lanes);
  Value split = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value kvHead = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  Value batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  Value start = k.mulC(split, chunk);
  Value end =
      arith::MinUIOp::create(b, loc, k.addC(start, chunk), k.cIdx(p.skv));
  Value kvRows = k.mulC(k.add(k.mulC(batch, p.kvHeads), kvHead), p.skv);
  Value laneCol = k.mulC(li, perLane);
  // The group's query heads, pre-scaled: h = kvHead * G + g.
  SmallVector<Value> heads;
  SmallVector<SmallVector<Value>> qs;
  for (int64_t g = 0; g < groupsPerHead; ++g) {
    heads.push_back(k.addC(k.mulC(kvHead, groupsPerHead), g));
    Value row = k.add(k.mulC(batch, p.heads), heads.back());
    SmallVector<Value> qv = loadRow(q, k.add(k.mulC(row, p.d), laneCol));
    for (Value &x : qv)
      x = fmul(x, k.cF32(static_cast<float>(p.scale)));
    qs.push_back(qv);
  }

  // The K loop: per step each key group loads kDecodeUnroll K and V rows.
  // `folded`: the cache's values unscaled, the key scale applied to each
  // score and the value scale to the outputs after the loop (foldableScales).
  const int64_t steps = chunk / decodeKeysPerStep(p.d);
  SmallVector<Value> init;
  for (int64_t g = 0; g < groupsPerHead; ++g) {
    init.append({negInf(), k.cF32(0)});
    init.append(perLane, k.cF32(0));
  }
  auto keyLoop = [&](bool folded) -> SmallVector<Value> {
    auto loop =
        scf::ForOp::create(b, loc, k.cIdx(0), k.cIdx(steps), k.cIdx(1), init);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first =
        k.add(start, k.mulC(loop.getInductionVar(), decodeKeysPerStep(p.d)));
    SmallVector<Value> keys, valid, kRows, vRows;
    for (int64_t u = 0; u < kDecodeUnroll; ++u) {
      Value j = k.add(
          first, k.add(k.mulC(k.addC(warp, u * kDecodeWarps), groups), group));
      auto [ok, read] = splitKey(j, start, end);
      valid.push_back(ok);
      keys.push_back(read);
      Value at = k.add(k.mulC(k.add(kvRows, keys.back()), p.d), laneCol);
      SmallVector<Value> kr =
          p.kvType ? loadCacheRow(key, at, folded ? Value() : kScale)
                   : loadRow(key, at);
      SmallVector<Value> vr =
          p.kvType ? loadCacheRow(val, at, folded ? Value() : vScale)
                   : loadRow(val, at);
      kRows.append(kr);
      vRows.append(vr);
    }
    auto iter = loop.getRegionIterArgs();
    SmallVector<Value> yields;
    for (int64_t g = 0; g < groupsPerHead; ++g) {
      SmallVector<Value> x;
      for (int64_t u = 0; u < kDecodeUnroll; ++u) {
        Value dot = k.cF32(0);
        for (int64_t e = 0; e < perLane; ++e)
          dot = fma(qs[g][e], kRows[u * perLane + e], dot);
        for (int64_t off = lanes / 2; off >= 1; off /= 2)
          dot = fadd(dot, shuffleXor(dot, off));
        if (folded)
          dot = fmul(dot, kScale);
        if (p.hasMask)
          dot = fadd(dot, maskAt(mask, batch, heads[g], keys[u]));
        x.push_back(arith::SelectOp::create(b, loc, valid[u], dot, negInf()));
      }
      const int64_t base = g * (perLane + 2);
      State s{iter[base], iter[base + 1],
              SmallVector<Value>(iter.begin() + base + 2,
                                 iter.begin() + base + 2 + perLane)};
      update(s, x, vRows);
      yields.append({s.m, s.l});
      yields.append(s.o);
    }
    scf::YieldOp::create(b, loc, yields);
    b.setInsertionPointAfter(loop);
    SmallVector<Value> results(loop.getResults());
    if (folded)
      for (int64_t g = 0; g < groupsPerHead; ++g)
        for (int64_t e = 0; e < perLane; ++e) {
          Value &o = results[g * (perLane + 2) + 2 + e];
          o = fmul(o, vScale);
        }
    return results;
  };
  // Each key group's states to shared memory: state (warp * groups + group),
  // head g at floats ((state * G) + g) * (Dv + 2): o, then m and l.
  Value sp = sharedPtr();
  auto storeLaneStates = [&](ArrayRef<Value> results) {
    Value state = k.add(k.mulC(warp, groups), group);
    for (int64_t g = 0; g < groupsPerHead; ++g) {
      const int64_t base = g * (perLane + 2);
      Value row = k.mulC(k.addC(k.mulC(state, groupsPerHead), g), stride);
      for (int64_t e = 0; e < perLane; ++e)
        storeF32(results[base + 2 + e], sp, k.add(row, k.addC(laneCol, e)));
      auto leader =
          scf::IfOp::create(b, loc, k.eqC(li, 0), /*withElseRegion=*/false);
      OpBuilder::InsertionGuard ig(b);
      b.setInsertionPointToStart(&leader.getThenRegion().front());
      storeF32(results[base], sp, k.addC(row, p.dv));
      storeF32(results[base + 1], sp, k.addC(row, p.dv + 1));
    }
  };

  // Merge `count` states: thread t takes outputs (g, c) = t, t + threads, ...
  auto mergeStates = [&](int64_t count) {
    gpu::BarrierOp::create(b, loc);
    const int64_t outputs = groupsPerHead * p.dv;
    for (int64_t first = 0; first < outputs; first += kDecodeThreads) {
      Value idx = k.addC(tid, first);
      auto inRange = scf::IfOp::create(b, loc, k.ultC(idx, outputs),
                                       /*withElseRegion=*/false);
      OpBuilder::InsertionGuard ig(b);
      b.setInsertionPointToStart(&inRange.getThenRegion().front());
      Value g = k.divC(idx, p.dv), c = k.remC(idx, p.dv);
      auto rowOf = [&](int64_t s) {
        return k.mulC(k.add(k.cIdx(s * groupsPerHead), g), stride);
      };
      Value m = negInf();
      for (int64_t s = 0; s < count; ++s)
        m = fmax(m, loadF32(sp, k.f32, k.addC(rowOf(s), p.dv)));
      Value use = usableMax(m), l = k.cF32(0), o = k.cF32(0);
      for (int64_t s = 0; s < count; ++s) {
        Value row = rowOf(s);
        Value w = weight(loadF32(sp, k.f32, k.addC(row, p.dv)), use);
        l = fma(loadF32(sp, k.f32, k.addC(row, p.dv + 1)), w, l);
        o = fma(loadF32(sp, k.f32, k.add(row, c)), w, o);
      }
      Value plane = k.add(k.mulC(batch, p.heads),
                          k.add(k.mulC(kvHead, groupsPerHead), g));
      if (p.decodeSplits == 1) {
        Value v = finalValue(o, l);
        LLVM::StoreOp::create(
            b, loc, v, gep(out, p.outType, k.add(k.mulC(plane, p.dv), c)));
        continue;
      }
      Value row = k.mulC(k.add(k.mulC(plane, p.decodeSplits), split), stride);
      storeF32(o, ws, k.add(row, c));
      auto leader =
          scf::IfOp::create(b, loc, k.eqC(c, 0), /*withElseRegion=*/false);
      b.setInsertionPointToStart(&leader.getThenRegion().front());
      storeF32(m, ws, k.addC(row, p.dv));
      storeF32(l, ws, k.addC(row, p.dv + 1));
    }
  };
  auto cudaCorePath = [&](bool folded) {
    storeLaneStates(keyLoop(folded));
    mergeStates(states);
  };

  // With foldable scales (uniform), the tensor-core loop where it serves
  // (mmaServes), else the CUDA-core loop without the per-element scaling.
  if (Value fold = p.kvType ? foldableScales(kScale, vScale) : Value()) {
    auto choice = scf::IfOp::create(b, loc, fold, /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(&choice.getThenRegion().front());
      if (mmaServes()) {
        MmaInputs in{q,    key,  val,   mask,   kScale, vScale, sp,
                     warp, lane, batch, kvHead, start,  end,    kvRows};
        mmaLoop(in);
        mergeStates(kDecodeWarps);
      } else {
        cudaCorePath(/*folded=*/true);
      }
      b.setInsertionPointToStart(&choice.getElseRegion().front());
      cudaCorePath(/*folded=*/false);
    }
  } else {
    cudaCorePath(/*folded=*/false);
  }
  gpu::ReturnOp::create(b, loc);
}

void DecodeGen::buildCombineKernel(gpu::GPUFuncOp kernel) {
  const int64_t splits = p.decodeSplits;
  Value ws = globalPtr(kernel.getArgument(0));
  Value out = globalPtr(kernel.getArgument(1));
  Value c = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value plane = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  Value base = k.mulC(plane, splits * stride);
  auto rowOf = [&](Value s) { return k.add(base, k.mulC(s, stride)); };
  // The splits' maxima and sums to shared memory (m at s, l at splits + s),
  // each loaded once, all at once.
  Value sp = sharedPtr();
  for (int64_t first = 0; first < splits; first += p.dv) {
    Value s = k.addC(c, first);
    auto inRange = scf::IfOp::create(b, loc, k.ultC(s, splits),
                                     /*withElseRegion=*/false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(&inRange.getThenRegion().front());
    storeF32(loadF32(ws, k.f32, k.addC(rowOf(s), p.dv)), sp, s);
    storeF32(loadF32(ws, k.f32, k.addC(rowOf(s), p.dv + 1)), sp,
             k.addC(s, splits));
  }
  gpu::BarrierOp::create(b, loc);
  // A loop over the splits whose body takes `unroll` of them at a time
  // (their loads issued together), then the rest.
  auto over = [&](ValueRange init, int64_t unroll,
                  function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    const int64_t whole = splits / unroll * unroll;
    SmallVector<Value> acc(init);
    if (whole) {
      auto loop = scf::ForOp::create(b, loc, k.cIdx(0), k.cIdx(whole),
                                     k.cIdx(unroll), init);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> it(loop.getRegionIterArgs());
      for (int64_t u = 0; u < unroll; ++u)
        it = body(k.addC(loop.getInductionVar(), u), it);
      scf::YieldOp::create(b, loc, it);
      acc.assign(loop.getResults().begin(), loop.getResults().end());
    }
    for (int64_t s = whole; s < splits; ++s)
      acc = body(k.cIdx(s), acc);
    return acc;
  };
  Value m = over(ValueRange{negInf()}, 8, [&](Value s, ValueRange it) {
    return SmallVector<Value>{fmax(it[0], loadF32(sp, k.f32, s))};
  })[0];
  Value use = usableMax(m);
  auto sums =
      over(ValueRange{k.cF32(0), k.cF32(0)}, 4, [&](Value s, ValueRange it) {
        Value w = weight(loadF32(sp, k.f32, s), use);
        return SmallVector<Value>{
            fma(loadF32(sp, k.f32, k.addC(s, splits)), w, it[0]),
            fma(loadF32(ws, k.f32, k.add(rowOf(s), c)), w, it[1])};
      });
  Value v = finalValue(sums[1], sums[0]);
  LLVM::StoreOp::create(b, loc, v,
                        gep(out, p.outType, k.add(k.mulC(plane, p.dv), c)));
  gpu::ReturnOp::create(b, loc);
}

} // namespace

void attention::buildDecodeAttentionKernels(KernelIR &k, func::FuncOp func,
                                            const AttentionPlan &plan,
                                            SymbolTable &symbols) {
  DecodeGen(k, plan.problem, plan.config.decodeTensorCores)
      .build(func, symbols);
}
