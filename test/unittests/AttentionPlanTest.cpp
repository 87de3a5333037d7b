//===- AttentionPlanTest.cpp - The decode attention kernel's splits -------===//
//
// Part of fp8-opt. attention::decodeAttentionSplits / decodeSplitKeys
// (lib/Conversion/FP8ToGPU/Attention): the split counts fp8-outline-attention
// gives a decode step's workspace.
//
//===----------------------------------------------------------------------===//

#include "AttentionPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fp8::attention;

TEST(AttentionPlanTest, DecodeSplitsAimAtTwoAndAHalfCtasPerSm) {
  MLIRContext ctx;
  Builder b(&ctx);
  Type bf16 = b.getBF16Type();
  // Llama-3-8B's 8 KV heads over 2080 keys: batch 8 -> 6 splits of 352
  // keys (384 CTAs, one wave at 4 an SM; 9 splits made 576, two waves);
  // batch 1 -> 33 splits of 64 (264 CTAs).
  EXPECT_EQ(decodeAttentionSplits(8, 8, 1, 2080, 128, 128, bf16), 6);
  EXPECT_EQ(decodeSplitKeys(2080, 6, 128), 352);
  EXPECT_EQ(decodeAttentionSplits(1, 8, 1, 2080, 128, 128, bf16), 33);
  EXPECT_EQ(decodeSplitKeys(2080, 33, 128), 64);
  // Batch 40 (320 planes): one split, not two (640 CTAs: a second wave).
  EXPECT_EQ(decodeAttentionSplits(40, 8, 1, 2080, 128, 128, bf16), 1);
  // Every split holds whole 32-key steps and none is empty.
  for (int64_t batch : {1, 2, 4, 8, 16, 24, 40, 64, 128})
    for (int64_t skv : {1, 31, 32, 33, 1000, 2080, 8191}) {
      const int64_t s = decodeAttentionSplits(batch, 8, 1, skv, 128, 128, bf16);
      ASSERT_GE(s, 1);
      const int64_t keys = decodeSplitKeys(skv, s, 128);
      EXPECT_EQ(keys % decodeKeysPerStep(128), 0);
      EXPECT_GT(skv, (s - 1) * keys) << batch << " x " << skv;
      // One wave of 4 CTAs an SM at most, unless B x Hkv alone is more.
      EXPECT_LE(batch * 8 * s, std::max<int64_t>(kDecodeWaveCtas, batch * 8))
          << batch << " x " << skv;
    }
  // Not served: several queries, FP8 or 32-bit operands, other head dims.
  EXPECT_EQ(decodeAttentionSplits(1, 8, 2, 2080, 128, 128, bf16), 0);
  EXPECT_EQ(decodeAttentionSplits(1, 8, 1, 2080, 128, 128, b.getF32Type()), 0);
  EXPECT_EQ(decodeAttentionSplits(1, 8, 1, 2080, 96, 96, bf16), 0);
}
