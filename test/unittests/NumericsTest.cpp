//===- NumericsTest.cpp - Scalar FP8 numerics against the specifications --===//
//
// Part of fp8-opt. Expected values are worked out by hand from OCP OFP8
// rev 1.0, OCP MX v1.0 and Transformer Engine's recipe definitions; the
// exhaustive tests check the cast against the format's own decode table.
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Numerics.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>

using namespace mlir::fp8::numerics;

namespace {
uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(Numerics, E4M3KnownValues) {
  EXPECT_EQ(castToFP8(0.0f, Fmt::E4M3), 0x00);
  EXPECT_EQ(castToFP8(-0.0f, Fmt::E4M3), 0x80);
  EXPECT_EQ(castToFP8(1.0f, Fmt::E4M3), 0x38);    // 0.0111.000
  EXPECT_EQ(castToFP8(448.0f, Fmt::E4M3), 0x7E);  // max
  EXPECT_EQ(castToFP8(449.0f, Fmt::E4M3), 0x7E);  // saturates
  EXPECT_EQ(castToFP8(464.0f, Fmt::E4M3), 0x7E);  // midpoint to "480"
  EXPECT_EQ(castToFP8(1e9f, Fmt::E4M3), 0x7E);
  EXPECT_EQ(castToFP8(INFINITY, Fmt::E4M3), 0x7E);
  EXPECT_EQ(castToFP8(-INFINITY, Fmt::E4M3), 0xFE);
  EXPECT_EQ(castToFP8(NAN, Fmt::E4M3), kCanonicalNaN);
  EXPECT_EQ(castToFP8(-NAN, Fmt::E4M3), kCanonicalNaN);
  // 17 lies halfway between 16 (mantissa 000) and 18 (001): ties to even.
  EXPECT_EQ(castToFP8(17.0f, Fmt::E4M3), 0x58);
  EXPECT_EQ(castToFP8(19.0f, Fmt::E4M3), 0x5A); // 18|20 -> 20 (even)
  // Subnormals: quantum 2^-9.
  EXPECT_EQ(castToFP8(0x1p-9f, Fmt::E4M3), 0x01);
  EXPECT_EQ(castToFP8(0x1p-10f, Fmt::E4M3), 0x00);  // tie -> 0 (even)
  EXPECT_EQ(castToFP8(0x1.8p-9f, Fmt::E4M3), 0x02); // 1.5 units -> 2
  EXPECT_EQ(castToFP8(-0x1p-11f, Fmt::E4M3), 0x80); // negative underflow
  EXPECT_EQ(castToFP8(0x1.ep-7f, Fmt::E4M3), 0x08); // 7.5 units -> 8 = 2^-6
  EXPECT_EQ(castToFP8(FLT_TRUE_MIN, Fmt::E4M3), 0x00);
}

TEST(Numerics, E5M2KnownValues) {
  EXPECT_EQ(castToFP8(1.0f, Fmt::E5M2), 0x3C);
  EXPECT_EQ(castToFP8(57344.0f, Fmt::E5M2), 0x7B);
  EXPECT_EQ(castToFP8(61440.0f, Fmt::E5M2), 0x7B); // would round to inf
  EXPECT_EQ(castToFP8(INFINITY, Fmt::E5M2), 0x7B);  // satfinite
  EXPECT_EQ(castToFP8(-1e30f, Fmt::E5M2), 0xFB);
  EXPECT_EQ(castToFP8(0x1p-16f, Fmt::E5M2), 0x01);  // min subnormal
  EXPECT_EQ(castToFP8(0x1p-17f, Fmt::E5M2), 0x00);  // tie -> even
  EXPECT_EQ(castToFP8(0x1.8p-17f, Fmt::E5M2), 0x01);
  EXPECT_EQ(castToFP8(5.0f, Fmt::E5M2), 0x45);      // exact: 1.01 x 2^2
  EXPECT_EQ(castToFP8(4.5f, Fmt::E5M2), 0x44);      // 4|5 -> 4 (even)
  EXPECT_EQ(castToFP8(6.5f, Fmt::E5M2), 0x46);      // 6|7 -> 6 (even)
  EXPECT_EQ(castToFP8(7.5f, Fmt::E5M2), 0x48);      // 7|8 -> 8 (even)
}

TEST(Numerics, DecodeSpecials) {
  EXPECT_TRUE(std::isnan(fp8ToFloat(0x7F, Fmt::E4M3)));
  EXPECT_TRUE(std::isnan(fp8ToFloat(0xFF, Fmt::E4M3)));
  EXPECT_EQ(fp8ToFloat(0x7E, Fmt::E4M3), 448.0f);
  EXPECT_EQ(fp8ToFloat(0x01, Fmt::E4M3), 0x1p-9f);
  EXPECT_EQ(fp8ToFloat(0x7C, Fmt::E5M2), INFINITY);
  EXPECT_EQ(fp8ToFloat(0xFC, Fmt::E5M2), -INFINITY);
  EXPECT_TRUE(std::isnan(fp8ToFloat(0x7D, Fmt::E5M2)));
  EXPECT_EQ(fp8ToFloat(0x7B, Fmt::E5M2), 57344.0f);
  EXPECT_EQ(e8m0ToFloat(127), 1.0f);
  EXPECT_EQ(e8m0ToFloat(0), 0x1p-127f);
  EXPECT_EQ(e8m0ToFloat(254), 0x1p127f);
  EXPECT_TRUE(std::isnan(e8m0ToFloat(255)));
}

// Every finite FP8 value converts back to itself; every value between two
// neighbours rounds to the nearer one (ties to the even mantissa).
class ExhaustiveCast : public ::testing::TestWithParam<Fmt> {};

TEST_P(ExhaustiveCast, RoundTripsAndMidpoints) {
  const Fmt fmt = GetParam();
  for (int b = 0; b < 256; ++b) {
    const float v = fp8ToFloat(static_cast<uint8_t>(b), fmt);
    if (std::isnan(v) || std::isinf(v))
      continue;
    EXPECT_EQ(castToFP8(v, fmt), b) << "value " << v;
  }
  // Walk the positive finite values in order.
  const uint8_t maxBits = maxFiniteBits(fmt);
  for (uint8_t b = 0; b < maxBits; ++b) {
    const float lo = fp8ToFloat(b, fmt), hi = fp8ToFloat(b + 1, fmt);
    const float mid = 0.5f * (lo + hi); // exact in f32
    const uint8_t even = (b % 2 == 0) ? b : static_cast<uint8_t>(b + 1);
    EXPECT_EQ(castToFP8(mid, fmt), even) << "midpoint of " << lo << ", " << hi;
    EXPECT_EQ(castToFP8(std::nextafter(mid, 0.0f), fmt), b);
    EXPECT_EQ(castToFP8(std::nextafter(mid, INFINITY), fmt), b + 1);
    EXPECT_EQ(castToFP8(-std::nextafter(mid, INFINITY), fmt),
              static_cast<uint8_t>(0x80 | (b + 1)));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, ExhaustiveCast,
                         ::testing::Values(Fmt::E4M3, Fmt::E5M2));

TEST(Numerics, CurrentScaling) {
  // e = 448 / 2 = 224 -> s = 1/224 (f32 division).
  EXPECT_EQ(currentScale(2.0f, Fmt::E4M3), 1.0f / 224.0f);
  EXPECT_EQ(currentScale(448.0f, Fmt::E4M3), 1.0f);
  // pow2: 448 / 3 = 149.33 -> 128 -> s = 2^-7.
  EXPECT_EQ(currentScale(3.0f, Fmt::E4M3, 0.0f, true), 0x1p-7f);
  // Unusable amax -> e = 1.
  EXPECT_EQ(currentScale(0.0f, Fmt::E4M3), 1.0f);
  EXPECT_EQ(currentScale(INFINITY, Fmt::E4M3), 1.0f);
  EXPECT_EQ(currentScale(NAN, Fmt::E4M3), 1.0f);
  // eps clamps tiny amaxes: 448 / 1 -> s = 1/448.
  EXPECT_EQ(currentScale(1e-30f, Fmt::E4M3, 1.0f), 1.0f / 448.0f);
  // 57344 / 1e-40 overflows: e = FLT_MAX.
  EXPECT_EQ(currentScale(1e-40f, Fmt::E5M2), 1.0f / FLT_MAX);
}

TEST(Numerics, DelayedScaling) {
  const float hist[] = {1.0f, 4.0f, 2.0f};
  EXPECT_EQ(reduceHistory(hist, 3, 1, HistoryAlgo::Max), 4.0f);
  EXPECT_EQ(reduceHistory(hist, 3, 1, HistoryAlgo::MostRecent), 1.0f);
  const float withNaN[] = {1.0f, NAN, 2.0f};
  EXPECT_TRUE(std::isnan(reduceHistory(withNaN, 3, 1, HistoryAlgo::Max)));
  // (448 / 4) / 2^1 = 56 -> s = 1/56.
  EXPECT_EQ(delayedScale(4.0f, 0.5f, Fmt::E4M3, 1), 1.0f / 56.0f);
  // Unusable history amax keeps the previous scale bit for bit.
  EXPECT_EQ(bits(delayedScale(0.0f, 0.123f, Fmt::E4M3, 0)), bits(0.123f));
  EXPECT_EQ(bits(delayedScale(NAN, 0.123f, Fmt::E4M3, 0)), bits(0.123f));
  EXPECT_EQ(bits(delayedScale(INFINITY, 0.123f, Fmt::E4M3, 0)), bits(0.123f));
  EXPECT_EQ(delayedScale(1e-40f, 1.0f, Fmt::E4M3, 0), 1.0f / FLT_MAX);
}

TEST(Numerics, MXScales) {
  // rceil: v = amax * f32(1/448); 448 * f32(1/448) rounds to exactly 1.
  EXPECT_EQ(mxScale(448.0f, Fmt::E4M3, MXRounding::RCeil), 127);
  EXPECT_EQ(mxScale(449.0f, Fmt::E4M3, MXRounding::RCeil), 128);
  EXPECT_EQ(mxScale(224.0f, Fmt::E4M3, MXRounding::RCeil), 126);
  EXPECT_EQ(mxScale(0.0f, Fmt::E4M3, MXRounding::RCeil), 0);
  EXPECT_EQ(mxScale(NAN, Fmt::E4M3, MXRounding::RCeil), 255);
  EXPECT_EQ(mxScale(INFINITY, Fmt::E4M3, MXRounding::RCeil), 254);
  EXPECT_EQ(mxScale(57344.0f, Fmt::E5M2, MXRounding::RCeil), 127);
  // floor (OCP): floor(log2 amax) - emax_elem + 127.
  EXPECT_EQ(mxScale(448.0f, Fmt::E4M3, MXRounding::Floor), 127);
  EXPECT_EQ(mxScale(511.0f, Fmt::E4M3, MXRounding::Floor), 127);
  EXPECT_EQ(mxScale(512.0f, Fmt::E4M3, MXRounding::Floor), 128);
  EXPECT_EQ(mxScale(1.0f, Fmt::E5M2, MXRounding::Floor), 112);
  EXPECT_EQ(mxScale(0x1p-140f, Fmt::E4M3, MXRounding::Floor), 0); // clamped
  EXPECT_EQ(mxScale(0x1p-149f, Fmt::E4M3, MXRounding::Floor), 0);
  EXPECT_EQ(mxScale(0x1p-110f, Fmt::E4M3, MXRounding::Floor), 9);
  EXPECT_EQ(mxScale(NAN, Fmt::E4M3, MXRounding::Floor), 255);
}
} // namespace
