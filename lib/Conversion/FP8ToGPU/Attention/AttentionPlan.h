//===- AttentionPlan.h - What a fused attention kernel computes -*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
// An AttentionPlan is what the fused attention generator reads: the problem
// (shapes, types, scale, causal, mask: what the outlined `fp8.attention`
// function computes) and the configuration (tile sizes, stages, warpgroups,
// registers: how the kernel computes it). `chooseAttentionConfig` is the
// only heuristic.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_ATTENTION_ATTENTIONPLAN_H
#define FP8_LIB_CONVERSION_FP8TOGPU_ATTENTION_ATTENTIONPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <string>
#include <utility>

namespace mlir::fp8::attention {

/// Rows of one wgmma (a consumer warpgroup's query rows).
constexpr int64_t kWgmmaM = 64;
constexpr int64_t kWarpgroupThreads = 128;
/// Bytes of one 128B-swizzled shared-memory row (a TMA box's inner extent).
constexpr int64_t kSwizzleBytes = 128;

/// What the function computes. q [B, Hq, Sq, D], k [B, Hkv, Skv, D], v [B,
/// Hkv, Skv, Dv], out [B, Hq, Sq, Dv] (or [B, Sq, Hq, Dv]: sequenceMajor),
/// all contiguous; query head h reads
/// kv head h / (Hq / Hkv). FP8 q, k, v come with three rank-0 f32
/// dequantization scales and a workspace [B, Hkv, Dv, SkvPad] after the
/// mask: the kernel's copy of v, K-major (FP8 wgmma reads both operands
/// K-major) with the keys of each 32 permuted as the P registers hold them
/// (see fp8ValueKey).
struct AttentionProblem {
  Type elementType, outType, maskType;
  int64_t batch = 1, heads = 1, kvHeads = 1, sq = 0, skv = 0, d = 0, dv = 0;
  /// FP8 operands (the scales and the workspace follow the mask).
  bool fp8 = false;
  /// FP8 scales per block of 128 positions of one (batch, head) (`block
  /// 128xD`: [B, H, ceil(S / 128), 1]), else one per tensor.
  bool blockScales = false;
  /// Applied to the scores (the op's `scale`).
  double scale = 1.0;
  /// Keys j > i + (Skv - Sq) are masked.
  bool causal = false;
  /// out is [B, Sq, Hq, Dv] (the op's `sequence_major`), not [B, Hq, Sq,
  /// Dv].
  bool sequenceMajor = false;
  /// An additive mask of shape [B|1, H|1, Sq|1, Skv|1] (dims of 1
  /// broadcast): element strides per dim (0 where broadcast).
  bool hasMask = false;
  int64_t maskStrides[4] = {0, 0, 0, 0};
  /// A decode step (Sq = 1, 16-bit operands) for the split-key kernel
  /// (decodeAttentionSplits): its splits of the keys; the f32 workspace [B,
  /// Hq, splits, Dv + 2] of the splits' partial outputs, maxima and sums
  /// follows the mask. 0: the FlashAttention kernel.
  int64_t decodeSplits = 0;
  /// A decode step reading an FP8 cache (the outlined function's
  /// `kv_dequant`; decodeSplits > 0): k and v are E4M3/E5M2 of `kvType`,
  /// each with a rank-0 f32 scale, and an element is x * scale in f32,
  /// then rounded to each of these types in turn (the dequantization's
  /// result type first; the last is elementType). The function takes (k8,
  /// k_scale, v8, v_scale, q, [mask], workspace, out); the kernel (q, k8,
  /// v8, [mask], k_scale, v_scale, workspace, out).
  Type kvType;
  SmallVector<Type, 4> kvDequant;

  int64_t groups() const { return heads / kvHeads; }
  int64_t elementBytes() const;
  /// Scale blocks per (batch, head) of q and of k/v (block scales).
  int64_t qScaleBlocks() const { return (sq + 127) / 128; }
  int64_t kvScaleBlocks() const { return (skv + 127) / 128; }
  /// Keys of the FP8 workspace: Skv rounded up to a whole k32 chunk.
  int64_t skvPadded() const { return (skv + 31) / 32 * 32; }
};

/// Keys per FP8 wgmma k-step.
constexpr int64_t kFp8KeyChunk = 32;

/// The key of a 32-key chunk that column `c` of the FP8 P operand holds.
/// A thread's P values sit where the S accumulator put them (columns 2t,
/// 2t + 1, 2t + 8, 2t + 9, then + 16 of each chunk, t = lane % 4), but an
/// 8-bit register-A wgmma reads columns 4t .. 4t + 3 and 16 + 4t .. 19 + 4t:
/// instead of moving bytes between threads, the kernel reads P as it is and
/// the workspace orders v's keys the same way (FlashAttention-3, section 3.3).
constexpr int64_t fp8ValueKey(int64_t c) {
  const int64_t half = c / 16, t = c % 16 / 4, e = c % 4;
  return 16 * half + 8 * (e / 2) + 2 * t + e % 2;
}

/// The split-key decode kernel (DecodeAttentionKernel.cpp): warps per CTA,
/// keys each lane group loads per step ahead of using them, and the CTAs it
/// aims for: 2.5 per SM of an H100/H200. Four fit (127 registers a thread),
/// but a grid past them runs a second, partial wave, and shorter splits
/// cost more merging: over 2080 keys of an E4M3 cache (H100, 2026-12-06,
/// split kernel + combine) batch 8 took 39.5 us with 6 splits (384 CTAs),
/// 42 with 8, 47.5 with 9 (576: two waves); batch 1 14.7 us with 33 (264),
/// 15.7 with 65, 17.3 with 17.
constexpr int64_t kDecodeWarps = 4;
constexpr int64_t kDecodeUnroll = 4;
constexpr int64_t kDecodeTargetCtas = 330;
/// The CTAs of one wave (4 an SM): the splits never take the grid past it
/// (unless B x Hkv alone does).
constexpr int64_t kDecodeWaveCtas = 4 * 132;

/// Keys one CTA of the decode kernel takes per step: a key row is read by
/// D / 8 lanes (16 bytes of 16-bit elements each), so a warp holds 256 / D
/// key groups.
constexpr int64_t decodeKeysPerStep(int64_t d) {
  return kDecodeWarps * (256 / d) * kDecodeUnroll;
}

/// The exponents e for which a cache scale 2^e folds out of an FP8 cache's
/// dequantization exactly (the decode kernel's folded loop): x * 2^e is
/// exact in every type of p.kvDequant, and in f32, for every finite value x
/// of p.kvType -- no overflow, no bit below the type's smallest subnormal --
/// and 2^e is a normal f32. {lo, hi}; lo > hi when none (a type with fewer
/// mantissa bits than the cache's). E4M3 through f16: {-15, 7}.
std::pair<int, int> foldableScaleExponents(const AttentionProblem &p);

/// Whether the decode kernel's tensor-core loop serves the problem when its
/// cache scales fold out (foldableScaleExponents): an FP8 cache, head dims
/// 64 or 128, at most 8 query heads per kv head (mma.m16n8k16's 8 columns).
bool decodeMmaServes(const AttentionProblem &p);

/// Keys per split of the decode kernel for `splits` splits.
int64_t decodeSplitKeys(int64_t skv, int64_t splits, int64_t d);

/// The splits of the keys the decode kernel takes for one query per (batch,
/// head) -- B * Hkv * splits CTAs near kDecodeTargetCtas and within one
/// wave (kDecodeWaveCtas), each a whole
/// number of steps -- or 0 where it does not serve the attention (Sq != 1,
/// FP8 or 32-bit operands, head dims other than 64 and 128 or unequal).
/// fp8-outline-attention sizes the workspace with it;
/// convert-fp8-attention-to-gpu serves any split count the workspace gives
/// whose splits of whole steps are none of them empty.
int64_t decodeAttentionSplits(int64_t batch, int64_t kvHeads, int64_t sq,
                              int64_t skv, int64_t d, int64_t dv,
                              Type elementType);

/// How the kernel computes it.
struct AttentionConfig {
  /// Query rows per CTA (64 per consumer warpgroup) and keys per K/V tile.
  int64_t bm = 128, bn = 128;
  /// K/V stages (each holds one K and one V tile).
  int64_t stages = 2;
  int64_t consumerWarpgroups = 2;
  /// setmaxnreg of the producer and the consumers.
  int64_t producerRegisters = 40, consumerRegisters = 232;
  /// FlashAttention-3's intra-warpgroup pipelining: block j's Q K^T and
  /// block j - 1's P V in flight together, block j's softmax under the
  /// latter (false: one block at a time).
  bool overlap = false;
  /// FlashAttention-3's ping-pong: the two consumer warpgroups take turns
  /// issuing Q K^T (named barriers), so one's softmax runs while the
  /// other's products use the tensor cores (one key block at a time only).
  bool pingPong = false;
  /// A decode step's split kernel has the tensor-core loop beside the
  /// CUDA-core one (AttentionOptions::decodeTensorCores, decodeMmaServes).
  bool decodeTensorCores = false;

  int64_t threads() const {
    return (consumerWarpgroups + 1) * kWarpgroupThreads;
  }
};

struct AttentionPlan {
  AttentionProblem problem;
  AttentionConfig config;
};

/// Checks the function (the fp8-outline-attention contract) against what the
/// generator serves; `why` says what did not fit.
FailureOr<AttentionProblem> analyzeAttention(func::FuncOp func,
                                             std::string &why);

/// Options of convert-fp8-attention-to-gpu that reach the heuristic.
struct AttentionOptions {
  bool overlap = false;
  bool pingPong = true;
  /// Decode steps over an FP8 cache: the tensor-core loop where it serves
  /// (decodeMmaServes) and the scales fold out (checked at run time).
  bool decodeTensorCores = true;
};

AttentionConfig chooseAttentionConfig(const AttentionProblem &problem,
                                      const AttentionOptions &options);

FailureOr<AttentionPlan> planAttention(func::FuncOp func,
                                       const AttentionOptions &options,
                                       std::string &why);

std::string describeAttentionPlan(const AttentionPlan &plan);

} // namespace mlir::fp8::attention

#endif // FP8_LIB_CONVERSION_FP8TOGPU_ATTENTION_ATTENTIONPLAN_H
