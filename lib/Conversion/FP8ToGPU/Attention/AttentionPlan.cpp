//===- AttentionPlan.cpp - What a fused attention kernel computes ---------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "AttentionPlan.h"

#include "fp8/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::attention;

int64_t AttentionProblem::elementBytes() const {
  return elementType.getIntOrFloatBitWidth() / 8;
}

namespace {

/// A static, contiguous memref of rank 4, or null.
MemRefType rank4(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || m.getRank() != 4 || !m.hasStaticShape() ||
      !m.getLayout().isIdentity())
    return {};
  return m;
}

} // namespace

std::pair<int, int>
attention::foldableScaleExponents(const AttentionProblem &p) {
  const auto &fp8 = cast<FloatType>(p.kvType).getFloatSemantics();
  auto asDouble = [](APFloat v) {
    bool lost;
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    return v.convertToDouble();
  };
  const double max8 = asDouble(APFloat::getLargest(fp8));
  const int tiny8 = llvm::ilogb(APFloat::getSmallest(fp8));
  int lo = -126, hi = 127;
  SmallVector<Type> chain(p.kvDequant.begin(), p.kvDequant.end());
  chain.push_back(Float32Type::get(p.kvType.getContext()));
  for (Type t : chain) {
    const auto &sem = cast<FloatType>(t).getFloatSemantics();
    if (APFloat::semanticsPrecision(sem) < APFloat::semanticsPrecision(fp8))
      return {1, 0};
    lo = std::max(lo, llvm::ilogb(APFloat::getSmallest(sem)) - tiny8);
    const double maxT = asDouble(APFloat::getLargest(sem));
    int e = llvm::ilogb(APFloat::getLargest(sem)) - std::ilogb(max8);
    while (std::ldexp(max8, e) > maxT)
      --e;
    hi = std::min(hi, e);
  }
  return {lo, hi};
}

bool attention::decodeMmaServes(const AttentionProblem &p) {
  return p.kvType && p.dv == p.d && (p.d == 64 || p.d == 128) &&
         p.groups() <= 8;
}

int64_t attention::decodeSplitKeys(int64_t skv, int64_t splits, int64_t d) {
  return llvm::alignTo(llvm::divideCeil(skv, splits), decodeKeysPerStep(d));
}

int64_t attention::decodeAttentionSplits(int64_t batch, int64_t kvHeads,
                                         int64_t sq, int64_t skv, int64_t d,
                                         int64_t dv, Type elementType) {
  if (sq != 1 || skv <= 0 || batch <= 0 || kvHeads <= 0 || dv != d ||
      (d != 64 && d != 128) || !(elementType.isBF16() || elementType.isF16()))
    return 0;
  const int64_t step = decodeKeysPerStep(d);
  const int64_t planes = batch * kvHeads;
  const int64_t wanted = std::clamp<int64_t>(
      std::min<int64_t>(llvm::divideCeil(kDecodeTargetCtas, planes),
                        kDecodeWaveCtas / planes),
      1, llvm::divideCeil(skv, step));
  // Whole steps per split: the last split may be shorter, none is empty.
  return llvm::divideCeil(skv, decodeSplitKeys(skv, wanted, d));
}

FailureOr<AttentionProblem> attention::analyzeAttention(func::FuncOp func,
                                                        std::string &why) {
  auto info = func->getAttrOfType<DictionaryAttr>(kAttentionAttrName);
  auto scale = info ? info.getAs<FloatAttr>("scale") : FloatAttr();
  auto causal = info ? info.getAs<BoolAttr>("causal") : BoolAttr();
  auto hasMask = info ? info.getAs<BoolAttr>("has_mask") : BoolAttr();
  if (!scale || !causal || !hasMask) {
    why = "the fp8.attention description lacks scale, causal or has_mask";
    return failure();
  }
  AttentionProblem p;
  p.scale = scale.getValueAsDouble();
  p.causal = causal.getValue();
  // Older outlined functions (no key): the head-major layout.
  auto seqMajor = info.getAs<BoolAttr>("sequence_major");
  p.sequenceMajor = seqMajor && seqMajor.getValue();
  p.hasMask = hasMask.getValue();
  SmallVector<Type> args(func.getArgumentTypes());
  // An FP8 cache read by the decode kernel: (k8, k_scale, v8, v_scale, q,
  // [mask], workspace, out), checked here as (q, k8, v8, [mask],
  // workspace, out) and two scales.
  if (auto steps = info.getAs<ArrayAttr>("kv_dequant")) {
    if (args.size() != 7u + p.hasMask) {
      why = "an FP8-cache decode function takes (k8, k_scale, v8, v_scale, "
            "q, [mask], workspace, out)";
      return failure();
    }
    for (unsigned s : {1u, 3u}) {
      auto scale = dyn_cast<MemRefType>(args[s]);
      if (!scale || scale.getRank() != 0 || !scale.getElementType().isF32()) {
        why = "the FP8 cache's scales must be rank-0 f32 memrefs";
        return failure();
      }
    }
    // Each step an extension or a rounding (as arith.extf / truncf), from
    // the f32 product on.
    Type prev = Float32Type::get(func.getContext());
    for (Attribute a : steps) {
      auto t = dyn_cast<TypeAttr>(a);
      if (!t || !isa<FloatType>(t.getValue()) ||
          (t.getValue() != prev && t.getValue().getIntOrFloatBitWidth() ==
                                       prev.getIntOrFloatBitWidth())) {
        why = "kv_dequant lists float element types, each wider or narrower "
              "than the one before (from f32)";
        return failure();
      }
      p.kvDequant.push_back(prev = t.getValue());
    }
    SmallVector<Type> canonical = {args[4], args[0], args[2]};
    canonical.append(args.begin() + 5, args.end());
    args = canonical;
    if (auto k = dyn_cast<MemRefType>(args[1]))
      p.kvType = k.getElementType();
    if (!isa_and_nonnull<Float8E4M3FNType, Float8E5M2Type>(p.kvType) ||
        p.kvDequant.empty()) {
      why = "an FP8-cache decode function reads an E4M3 or E5M2 cache";
      return failure();
    }
  }
  if (!args.empty())
    if (auto q = dyn_cast<MemRefType>(args[0]))
      p.fp8 = isa<Float8E4M3FNType, Float8E5M2Type>(q.getElementType());
  // q, k, v, [mask], [3 scales, workspace], out; a decode step's 16-bit
  // operands: q, k, v, [mask], workspace, out.
  const unsigned expected = 4 + p.hasMask + (p.fp8 ? 4 : 0);
  const bool decodeWorkspace = !p.fp8 && args.size() == expected + 1;
  if ((args.size() != expected && !decodeWorkspace) ||
      func.getNumResults() != 0) {
    why = llvm::formatv("expected {0} memref arguments and no result",
                        expected);
    return failure();
  }
  MemRefType q = rank4(args[0]), k = rank4(args[1]), v = rank4(args[2]),
             out = rank4(args.back());
  MemRefType mask = p.hasMask ? rank4(args[3]) : MemRefType();
  if (!q || !k || !v || !out || (p.hasMask && !mask)) {
    why = "every operand must be a static, contiguous rank-4 memref";
    return failure();
  }
  p.elementType = q.getElementType();
  p.outType = out.getElementType();
  const Type kvType = p.kvType ? p.kvType : p.elementType;
  if (!(p.elementType.isBF16() || p.elementType.isF16() || p.fp8) ||
      k.getElementType() != kvType || v.getElementType() != kvType ||
      (p.kvType && p.kvDequant.back() != p.elementType)) {
    why = "q, k and v must share a bf16, f16, f8E4M3FN or f8E5M2 element type";
    return failure();
  }
  if (!(p.outType.isBF16() || p.outType.isF16() || p.outType.isF32())) {
    why = "the result must be bf16, f16 or f32";
    return failure();
  }
  p.batch = q.getDimSize(0);
  p.heads = q.getDimSize(1);
  p.sq = q.getDimSize(2);
  p.d = q.getDimSize(3);
  p.kvHeads = k.getDimSize(1);
  p.skv = k.getDimSize(2);
  p.dv = v.getDimSize(3);
  if (k.getDimSize(0) != p.batch || v.getDimSize(0) != p.batch ||
      v.getDimSize(1) != p.kvHeads || v.getDimSize(2) != p.skv ||
      k.getDimSize(3) != p.d ||
      out.getShape() !=
          (p.sequenceMajor ? ArrayRef<int64_t>{p.batch, p.sq, p.heads, p.dv}
                           : ArrayRef<int64_t>{p.batch, p.heads, p.sq, p.dv})) {
    why = p.sequenceMajor
              ? "q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] "
                "and out [B, Sq, Hq, Dv] do not agree"
              : "q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B, Hkv, Skv, Dv] "
                "and out [B, Hq, Sq, Dv] do not agree";
    return failure();
  }
  if (p.kvHeads <= 0 || p.heads % p.kvHeads != 0) {
    why = "the query heads are not a multiple of the key/value heads";
    return failure();
  }
  if (p.fp8 && !isa<Float8E4M3FNType>(p.elementType)) {
    why = "E5M2 q, k and v: the FP8 kernel serves E4M3 (its E5M2 build "
          "spills at 232 registers)";
    return failure();
  }
  if (p.fp8) {
    // Scales per tensor (rank 0) or per block of 128 positions of one
    // (batch, head): the dictionary's scale_block says which.
    auto block = info.getAs<IntegerAttr>("scale_block");
    p.blockScales = block != nullptr;
    if (p.blockScales && block.getInt() != 128) {
      why = llvm::formatv("FP8 scale blocks of {0} positions: the kernel's "
                          "tiles take blocks of 128",
                          block.getInt());
      return failure();
    }
    const unsigned first = 3 + p.hasMask;
    const int64_t heads[3] = {q.getDimSize(1), k.getDimSize(1),
                              v.getDimSize(1)};
    const int64_t blocks[3] = {p.qScaleBlocks(), p.kvScaleBlocks(),
                               p.kvScaleBlocks()};
    for (unsigned i = 0; i < 3; ++i) {
      auto s = dyn_cast<MemRefType>(args[first + i]);
      bool ok = s && s.getElementType().isF32() && s.hasStaticShape() &&
                s.getLayout().isIdentity();
      if (ok && p.blockScales)
        ok = s.getShape() ==
             ArrayRef<int64_t>{p.batch, heads[i], blocks[i], 1};
      else if (ok)
        ok = s.getRank() == 0;
      if (!ok) {
        why = p.blockScales
                  ? "FP8 block scales must be contiguous f32 [B, H, "
                    "ceil(S / 128), 1] memrefs"
                  : "FP8 operands need three rank-0 f32 dequantization "
                    "scales";
        return failure();
      }
    }
    auto ws = dyn_cast<MemRefType>(args[first + 3]);
    if (!ws || rank4(ws) != ws || ws.getElementType() != p.elementType ||
        ws.getShape() != ArrayRef<int64_t>{p.batch, p.kvHeads, p.dv,
                                           p.skvPadded()}) {
      why = llvm::formatv("the FP8 workspace must be a contiguous [B, Hkv, "
                          "Dv, Skv rounded up to 32] = [{0}, {1}, {2}, {3}] "
                          "memref of the operand type",
                          p.batch, p.kvHeads, p.dv, p.skvPadded());
      return failure();
    }
    if (p.d != 128 || p.dv != 128) {
      why = llvm::formatv("head dim {0} (value {1}): the FP8 kernel serves "
                          "128 (one 128-byte swizzled row)",
                          p.d, p.dv);
      return failure();
    }
  }
  if ((p.d != 64 && p.d != 128) || p.dv != p.d) {
    why = llvm::formatv("head dim {0} (value {1}): the kernel serves 64 and "
                        "128, equal for keys and values",
                        p.d, p.dv);
    return failure();
  }
  if (!(p.scale > 0)) {
    why = "the kernel takes the row maxima of the raw scores: scale must be "
          "positive";
    return failure();
  }
  if (p.sq <= 0 || p.skv <= 0) {
    why = "empty sequence";
    return failure();
  }
  if (decodeWorkspace) {
    // The workspace's third dimension is the split count: the outliner
    // chooses it (decodeAttentionSplits); any count whose splits of whole
    // steps are all non-empty serves.
    auto ws = rank4(args[3 + p.hasMask]);
    const int64_t chosen = decodeAttentionSplits(
        p.batch, p.kvHeads, p.sq, p.skv, p.d, p.dv, p.elementType);
    if (!chosen) {
      why = "a workspace without FP8 operands is the decode kernel's: one "
            "query per (batch, head), bf16/f16 operands, head dim 64 or 128";
      return failure();
    }
    const int64_t splits = ws ? ws.getDimSize(2) : 0;
    if (!ws || !ws.getElementType().isF32() ||
        ws.getShape() !=
            ArrayRef<int64_t>{p.batch, p.heads, splits, p.dv + 2} ||
        splits < 1 ||
        llvm::divideCeilSigned(p.skv, decodeSplitKeys(p.skv, splits, p.d)) !=
            splits) {
      why = llvm::formatv(
          "the decode kernel's workspace is a contiguous f32 [B, Hq, splits, "
          "Dv + 2] = [{0}, {1}, splits, {2}] memref whose splits of whole "
          "{3}-key steps are none of them empty (fp8-outline-attention "
          "chooses {4})",
          p.batch, p.heads, p.dv + 2, decodeKeysPerStep(p.d), chosen);
      return failure();
    }
    p.decodeSplits = splits;
  } else if (p.kvType) {
    why = "an FP8 cache is read by the decode kernel only";
    return failure();
  }
  if (p.hasMask) {
    p.maskType = mask.getElementType();
    if (!isa<FloatType>(p.maskType) || p.maskType.getIntOrFloatBitWidth() < 16) {
      why = "the mask must be a float tensor";
      return failure();
    }
    const int64_t full[4] = {p.batch, p.heads, p.sq, p.skv};
    int64_t stride = 1;
    for (int i = 3; i >= 0; --i) {
      int64_t dim = mask.getDimSize(i);
      if (dim != full[i] && dim != 1) {
        why = "the mask does not broadcast to [B, Hq, Sq, Skv]";
        return failure();
      }
      p.maskStrides[i] = dim == 1 ? 0 : stride;
      stride *= dim;
    }
  }
  return p;
}

AttentionConfig
attention::chooseAttentionConfig(const AttentionProblem &p,
                                 const AttentionOptions &options) {
  AttentionConfig c;
  c.decodeTensorCores =
      p.decodeSplits && options.decodeTensorCores && decodeMmaServes(p);
  // With an additive mask the overlapped loop needs more registers than
  // the consumers have (ptxas spills the mask's addressing at head dim 128).
  // FP8 promotes each tile's P V into FP32 (a second accumulator): the
  // overlapped loop is for 16-bit operands only.
  c.overlap = options.overlap && !p.hasMask && !p.fp8;
  // Ping-pong orders the one-block-at-a-time loops of exactly two
  // consumers, FP8 ones only: on the H200 (2026-12-05) it made the FP8
  // kernel 7% faster at 8192 causal tokens and the BF16 one no faster
  // (causal) or 9% slower (4096 tokens, no mask). Not with FP8 block scales
  // where keys are masked (an additive mask, a partial last key block, a
  // cache offset): the per-tile scale state and the masking leave no
  // register for it (ptxas spills 4-8 bytes; test/GPU/attention-ptxas.test).
  const bool maskedKeys = p.hasMask || p.skv % 128 != 0 || p.sq != p.skv;
  c.pingPong = options.pingPong && p.fp8 && !c.overlap &&
               c.consumerWarpgroups == 2 && !(p.blockScales && maskedKeys);
  // FlashAttention-3's split for two consumers: the producer issues TMA
  // copies with 24 registers, each consumer gets 240 (2 x 240 + 24 = 504 of
  // the SM's 512 per lane); FP8 with a mask needs the room.
  if (c.pingPong) {
    c.producerRegisters = 24;
    c.consumerRegisters = 240;
  }
  c.bm = 128;
  c.bn = 128;
  // Q (bm x D) + stages x (K + V tiles, bn x D each) within 227 KB.
  c.stages = p.d == 64 || p.fp8 ? 4 : 2;
  return c;
}

FailureOr<AttentionPlan>
attention::planAttention(func::FuncOp func, const AttentionOptions &options,
                         std::string &why) {
  FailureOr<AttentionProblem> problem = analyzeAttention(func, why);
  if (failed(problem))
    return failure();
  return AttentionPlan{*problem, chooseAttentionConfig(*problem, options)};
}

std::string attention::describeAttentionPlan(const AttentionPlan &plan) {
  const AttentionProblem &p = plan.problem;
  const AttentionConfig &c = plan.config;
  if (p.decodeSplits) {
    std::string cache;
    if (p.kvType) {
      llvm::raw_string_ostream os(cache);
      os << ", reading a " << p.kvType << " cache (scaled, rounded to";
      for (Type t : p.kvDequant)
        os << " " << t;
      auto [lo, hi] = foldableScaleExponents(p);
      if (lo <= hi)
        os << "; scales 2^" << lo << "..2^" << hi << " fold out"
           << (c.decodeTensorCores ? ": tensor-core loop" : "");
      os << ")";
    }
    return llvm::formatv(
        "split-key decode attention kernel: {0} heads ({1} kv heads), 1 x "
        "{2} keys, head dim {3}{4}{10}; {5} splits of {6} keys x {1} kv "
        "heads x {7} sequences, {8} warps per CTA{9}",
        p.heads, p.kvHeads, p.skv, p.d, p.hasMask ? ", additive mask" : "",
        p.decodeSplits, decodeSplitKeys(p.skv, p.decodeSplits, p.d), p.batch,
        kDecodeWarps,
        p.decodeSplits > 1 ? ", then a kernel that combines the splits" : "",
        cache);
  }
  return llvm::formatv(
      "fused attention kernel{12}: {0} heads ({1} kv heads), {2} x {3} keys, "
      "head dim {4}{5}{6}{14}; {7} x {8} tiles, {9} stages, {10} consumer "
      "warpgroups + a TMA producer{11}{13}",
      p.heads, p.kvHeads, p.sq, p.skv, p.d, p.causal ? ", causal" : "",
      p.hasMask ? ", additive mask" : "", c.bm, c.bn, c.stages,
      c.consumerWarpgroups,
      c.overlap ? ", QK^T of block j under PV of block j - 1" : "",
      !p.fp8          ? ""
      : p.blockScales ? " (FP8 q, k, v, scales per 128 positions; P in E4M3)"
                      : " (FP8 q, k, v, scales per tensor; P in E4M3)",
      c.pingPong ? ", ping-pong" : "",
      p.sequenceMajor ? ", output [B, Sq, Hq, Dv]" : "");
}
