//===- Numerics.cpp - Scalar FP8 numerics ---------------------------------===//
//
// Part of fp8-opt. Written from the specifications only; the lowering in
// lib/Dialect/FP8/Transforms/ExpandArithCasts.cpp implements the same casts
// with a different (bit-level) method, and test/reference/fp8ref.py a third
// time in numpy, so that each can check the others. castToFP8Fast
// (Numerics.h, inline: integer rounding, for loops over many elements) is
// checked against this file's castToFP8: in NumericsTest, and once over all
// 2^32 floats.
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Numerics.h"

#include <cfloat>
#include <cmath>
#include <cstring>

namespace mlir::fp8::numerics {
namespace {
struct FormatParams {
  int mantissaBits;
  int bias;
  float maxValue;
  uint8_t maxBits;
  int emax;
};

FormatParams params(Fmt fmt) {
  if (fmt == Fmt::E4M3)
    return {3, 7, 448.0f, 0x7E, 8};
  return {2, 15, 57344.0f, 0x7B, 15};
}

uint32_t bitsOf(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

float floatOf(uint32_t u) {
  float v;
  std::memcpy(&v, &u, sizeof(v));
  return v;
}

bool isUnusableAmax(float amax) {
  return std::isnan(amax) || std::isinf(amax) || amax == 0.0f;
}

float finishEncodeScale(float e, bool pow2) {
  if (std::isinf(e))
    e = FLT_MAX;
  if (pow2)
    e = roundDownToPowerOfTwo(e);
  return e;
}
} // namespace

float maxFinite(Fmt fmt) { return params(fmt).maxValue; }
int emaxElem(Fmt fmt) { return params(fmt).emax; }
uint8_t maxFiniteBits(Fmt fmt) { return params(fmt).maxBits; }

float f16ToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t mantissa = h & 0x3FFu;
  if (exponent == 0x1F) // infinity or NaN (payload kept)
    return floatOf(sign | 0x7F800000u | (mantissa << 13));
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in FP32
    float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint8_t castToFP8(float x, Fmt fmt) {
  const FormatParams p = params(fmt);
  if (std::isnan(x))
    return kCanonicalNaN;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float a = std::fabs(x);
  // Everything from max up (infinities included) saturates. Below max the
  // nearest-even neighbour is at most max itself, so no overflow is possible.
  if (a >= p.maxValue)
    return sign | p.maxBits;
  if (a == 0.0f)
    return sign;
  int e2;
  (void)std::frexp(a, &e2); // a = m * 2^e2, m in [0.5, 1)
  int exponent = e2 - 1;    // floor(log2(a))
  const int minExponent = 1 - p.bias;
  if (exponent < minExponent)
    exponent = minExponent; // subnormal: fixed quantum 2^(emin - mbits)
  // Units of the quantum 2^(exponent - mbits); exact in double.
  const double units = std::ldexp(static_cast<double>(a),
                                  p.mantissaBits - exponent);
  double r = std::nearbyint(units); // ties to even (default rounding mode)
  if (r >= std::ldexp(1.0, p.mantissaBits + 1)) {
    r = std::ldexp(1.0, p.mantissaBits); // carried into the next binade
    ++exponent;
  }
  const uint32_t ri = static_cast<uint32_t>(r);
  const uint32_t implicit = 1u << p.mantissaBits;
  uint32_t bits;
  if (ri < implicit) // subnormal (exponent == minExponent)
    bits = ri;
  else
    bits = (static_cast<uint32_t>(exponent + p.bias) << p.mantissaBits) |
           (ri - implicit);
  return sign | static_cast<uint8_t>(bits);
}

float fp8ToFloat(uint8_t bits, Fmt fmt) {
  const FormatParams p = params(fmt);
  const int expBits = 7 - p.mantissaBits;
  const int expField = (bits >> p.mantissaBits) & ((1 << expBits) - 1);
  const int mant = bits & ((1 << p.mantissaBits) - 1);
  const bool negative = bits & 0x80;
  const int expAllOnes = (1 << expBits) - 1;
  if (fmt == Fmt::E4M3 && expField == expAllOnes &&
      mant == (1 << p.mantissaBits) - 1)
    return NAN;
  if (fmt == Fmt::E5M2 && expField == expAllOnes)
    return mant == 0 ? (negative ? -INFINITY : INFINITY) : NAN;
  float v;
  if (expField == 0)
    v = std::ldexp(static_cast<float>(mant), 1 - p.bias - p.mantissaBits);
  else
    v = std::ldexp(static_cast<float>((1 << p.mantissaBits) + mant),
                   expField - p.bias - p.mantissaBits);
  return negative ? -v : v;
}

float e8m0ToFloat(uint8_t bits) {
  if (bits == 0xFF)
    return NAN;
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

float roundDownToPowerOfTwo(float value) {
  return floatOf(bitsOf(value) & 0xFF800000u);
}

float currentScale(float amax, Fmt fmt, float eps, bool pow2) {
  float e = 1.0f;
  if (!isUnusableAmax(amax)) {
    const float clamped = amax < eps ? eps : amax;
    e = finishEncodeScale(maxFinite(fmt) / clamped, pow2);
  }
  return 1.0f / e;
}

float reduceHistory(const float *history, int64_t length, int64_t stride,
                    HistoryAlgo algo) {
  if (algo == HistoryAlgo::MostRecent || length == 0)
    return history[0];
  float m = history[0];
  for (int64_t i = 0; i < length; ++i) {
    const float v = history[i * stride];
    if (std::isnan(v))
      return v;
    if (v > m)
      m = v;
  }
  return m;
}

float delayedScale(float historyAmax, float previousScale, Fmt fmt,
                   int64_t margin, bool pow2) {
  if (isUnusableAmax(historyAmax))
    return previousScale;
  const float twoToMargin = std::ldexp(1.0f, static_cast<int>(margin));
  const float e =
      finishEncodeScale((maxFinite(fmt) / historyAmax) / twoToMargin, pow2);
  return 1.0f / e;
}

uint8_t mxScale(float amax, Fmt fmt, MXRounding rounding) {
  if (rounding == MXRounding::RCeil) {
    const float reciprocal = 1.0f / maxFinite(fmt);
    const float v = amax * reciprocal;
    if (std::isnan(v))
      return 0xFF;
    if (std::isinf(v))
      return 0xFE;
    if (v == 0.0f)
      return 0x00;
    const uint32_t u = bitsOf(v);
    uint32_t exponent = (u >> 23) & 0xFF;
    const uint32_t mantissa = u & 0x7FFFFF;
    // Round the exponent up unless v is already a power of two; a subnormal
    // v at or below half the smallest normal rounds to 2^-127.
    if ((mantissa > 0 && exponent != 0xFE) &&
        !(exponent == 0 && mantissa <= 0x400000))
      ++exponent;
    return static_cast<uint8_t>(exponent);
  }
  if (std::isnan(amax))
    return 0xFF;
  if (std::isinf(amax))
    return 0xFE;
  if (amax == 0.0f)
    return 0x00;
  int biased = std::ilogb(amax) - emaxElem(fmt) + 127;
  if (biased < 0)
    biased = 0;
  if (biased > 254)
    biased = 254;
  return static_cast<uint8_t>(biased);
}

} // namespace mlir::fp8::numerics
