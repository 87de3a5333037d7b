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

#include <cmath>
#include <limits>

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
  DecodeGen(KernelIR &k, const AttentionProblem &p)
      : k(k), b(k.b), loc(k.loc), p(p) {
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
  /// of p.kvDequant's types in turn; as f32 values.
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

  // Arithmetic.
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value fma(Value x, Value y, Value acc) { return fadd(fmul(x, y), acc); }
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
  const int64_t steps = chunk / decodeKeysPerStep(p.d);
  SmallVector<Value> init;
  for (int64_t g = 0; g < groupsPerHead; ++g) {
    init.append({negInf(), k.cF32(0)});
    init.append(perLane, k.cF32(0));
  }
  auto loop =
      scf::ForOp::create(b, loc, k.cIdx(0), k.cIdx(steps), k.cIdx(1), init);
  {
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(loop.getBody());
    Value first =
        k.add(start, k.mulC(loop.getInductionVar(), decodeKeysPerStep(p.d)));
    SmallVector<Value> keys, valid, kRows, vRows;
    for (int64_t u = 0; u < kDecodeUnroll; ++u) {
      Value j = k.add(
          first, k.add(k.mulC(k.addC(warp, u * kDecodeWarps), groups), group));
      valid.push_back(k.ult(j, end));
      // Keys past the split read its first row (there, masked below).
      keys.push_back(arith::SelectOp::create(b, loc, valid.back(), j, start));
      Value at = k.add(k.mulC(k.add(kvRows, keys.back()), p.d), laneCol);
      SmallVector<Value> kr =
          p.kvType ? loadCacheRow(key, at, kScale) : loadRow(key, at);
      SmallVector<Value> vr =
          p.kvType ? loadCacheRow(val, at, vScale) : loadRow(val, at);
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
        if (p.hasMask) {
          Value at = k.add(k.add(k.mulC(batch, p.maskStrides[0]),
                                 k.mulC(heads[g], p.maskStrides[1])),
                           k.mulC(keys[u], p.maskStrides[3]));
          dot = fadd(dot, loadF32(mask, p.maskType, at));
        }
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
  }

  // Each key group's states to shared memory: state (warp * groups + group),
  // head g at floats ((state * G) + g) * (Dv + 2): o, then m and l.
  Value sp = sharedPtr();
  Value state = k.add(k.mulC(warp, groups), group);
  for (int64_t g = 0; g < groupsPerHead; ++g) {
    const int64_t base = g * (perLane + 2);
    Value row = k.mulC(k.addC(k.mulC(state, groupsPerHead), g), stride);
    for (int64_t e = 0; e < perLane; ++e)
      storeF32(loop.getResult(base + 2 + e), sp,
               k.add(row, k.addC(laneCol, e)));
    auto leader =
        scf::IfOp::create(b, loc, k.eqC(li, 0), /*withElseRegion=*/false);
    OpBuilder::InsertionGuard ig(b);
    b.setInsertionPointToStart(&leader.getThenRegion().front());
    storeF32(loop.getResult(base), sp, k.addC(row, p.dv));
    storeF32(loop.getResult(base + 1), sp, k.addC(row, p.dv + 1));
  }
  gpu::BarrierOp::create(b, loc);

  // Merge the states: thread t takes outputs (g, c) = t, t + threads, ...
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
    for (int64_t s = 0; s < states; ++s)
      m = fmax(m, loadF32(sp, k.f32, k.addC(rowOf(s), p.dv)));
    Value use = usableMax(m), l = k.cF32(0), o = k.cF32(0);
    for (int64_t s = 0; s < states; ++s) {
      Value row = rowOf(s);
      Value w = weight(loadF32(sp, k.f32, k.addC(row, p.dv)), use);
      l = fma(loadF32(sp, k.f32, k.addC(row, p.dv + 1)), w, l);
      o = fma(loadF32(sp, k.f32, k.add(row, c)), w, o);
    }
    Value plane =
        k.add(k.mulC(batch, p.heads), k.add(k.mulC(kvHead, groupsPerHead), g));
    if (p.decodeSplits == 1) {
      Value v = finalValue(o, l);
      LLVM::StoreOp::create(b, loc, v,
                            gep(out, p.outType, k.add(k.mulC(plane, p.dv), c)));
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
                                            const AttentionProblem &problem,
                                            SymbolTable &symbols) {
  DecodeGen(k, problem).build(func, symbols);
}
