//===- NumericsTest.cpp - Scalar FP8 numerics against the specifications --===//
//
// Part of fp8-opt. Expected values are worked out by hand from OCP OFP8
// rev 1.0, OCP MX v1.0 and Transformer Engine's recipe definitions; the
// exhaustive tests check the cast against the format's own decode table,
// and the fast cast against the cast.
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Numerics.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>

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

// castToFP8Fast is castToFP8 computed another way (integer rounding of the
// float's bits). It was compared with castToFP8 on all 2^32 floats once
// (about a minute and a half); here, in well under a second: every bfloat16
// and binary16 value, the floats around every rounding boundary, the edges,
// and a few million seeded random floats.
class FastCast : public ::testing::TestWithParam<Fmt> {
protected:
  /// Compares the two casts on the float of bit pattern `u` (and on its
  /// negation); reports the first few differences.
  void check(uint32_t u) {
    for (uint32_t v : {u, u ^ 0x80000000u}) {
      float x;
      std::memcpy(&x, &v, sizeof(x));
      const uint8_t want = castToFP8(x, GetParam()),
                    got = castToFP8Fast(x, GetParam());
      if (want != got && ++failures <= 10)
        ADD_FAILURE() << "castToFP8Fast(bits 0x" << std::hex << v << ") = 0x"
                      << int(got) << ", castToFP8: 0x" << int(want);
    }
  }
  /// Floats from `ulps` below x to `ulps` above (x >= 0: bit patterns are
  /// consecutive floats).
  void checkAround(float x, uint32_t ulps) {
    const uint32_t c = bits(x);
    for (uint32_t u = c > ulps ? c - ulps : 0; u <= c + ulps; ++u)
      check(u);
  }

  int failures = 0;
};

TEST_P(FastCast, SixteenBitFormats) {
  for (uint32_t h = 0; h < 0x8000; ++h) {
    check(h << 16); // bfloat16: the floats whose low 16 bits are 0
    check(bits(f16ToFloat(uint16_t(h))));
    // Low halves that round up, down and to even at every FP8 mantissa
    // width (the sticky bits of the round to nearest).
    for (uint32_t low : {0x0001u, 0x7FFFu, 0x8000u, 0xFFFFu})
      check(h << 16 | low);
  }
}

TEST_P(FastCast, RoundingBoundaries) {
  const Fmt fmt = GetParam();
  const uint8_t maxBits = maxFiniteBits(fmt);
  for (uint8_t b = 0; b <= maxBits; ++b) {
    const float v = fp8ToFloat(b, fmt);
    checkAround(v, 64); // the value itself
    if (b < maxBits)    // the midpoint to the next value
      checkAround(0.5f * (v + fp8ToFloat(b + 1, fmt)), 64);
  }
  // Saturation: max, the midpoint to the next (absent) binade value, and the
  // binade's end; then the smallest normal and subnormal, half of it.
  const float max = maxFinite(fmt), step = max - fp8ToFloat(maxBits - 1, fmt);
  for (float x :
       {max, max + 0.5f * step, max + step, 2.0f * max, fp8ToFloat(1, fmt),
        0.5f * fp8ToFloat(1, fmt), 0.25f * fp8ToFloat(1, fmt)})
    checkAround(x, 1024);
}

TEST_P(FastCast, Edges) {
  const uint32_t edges[] = {0x00000000, 0x00000001, 0x00000002, 0x003FFFFF,
                            0x00400000, 0x007FFFFF, 0x00800000, 0x00800001,
                            0x7F7FFFFF, 0x7F7FFFFE, 0x7F800000, 0x7F800001,
                            0x7FBFFFFF, 0x7FC00000, 0x7FC00001, 0x7FFFFFFF,
                            0x3F800000, 0x33800000, 0x34000000};
  for (uint32_t u : edges)
    check(u);
  // Float subnormals: a sample of each binade's patterns.
  for (uint32_t u = 1; u < 0x00800000u; u = u * 3 + 1)
    check(u);
}

TEST_P(FastCast, RandomFloats) {
  std::mt19937 rng(20240601);
  for (int i = 0; i < 1000000; ++i) {
    const uint32_t u = rng();
    check(u); // any pattern: mostly saturating or flushing to zero
    // Exponents where FP8 values are: 2^-24 (below E5M2's subnormals) to
    // 2^17 (above its max).
    check((103 + u % 42) << 23 | (rng() & 0x7FFFFF));
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, FastCast,
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
