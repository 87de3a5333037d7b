//===- Numerics.h - Scalar FP8 numerics (no MLIR dependency) ----*- C++ -*-===//
//
// Part of fp8-opt. The scalar definitions of FP8 casts and of every recipe's
// scale formula, written directly from the specifications (OCP OFP8 rev 1.0,
// OCP MX v1.0, Transformer Engine's scaling recipes). The compiler's constant
// folders use them, and so can hosts and runtimes: this header and its .cpp
// depend on the C++ standard library only.
//
// Scale convention: functions returning a "scale" return the dequantization
// scale s (x ~= q * s); the encode scale e = fp8_max / amax is internal.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_NUMERICS_NUMERICS_H
#define FP8_NUMERICS_NUMERICS_H

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace mlir::fp8::numerics {

enum class Fmt : uint8_t { E4M3, E5M2 };
enum class MXRounding : uint8_t { RCeil, Floor };
enum class HistoryAlgo : uint8_t { Max, MostRecent };

/// Largest finite value: 448 (E4M3FN) or 57344 (E5M2).
float maxFinite(Fmt fmt);
/// Exponent of the largest power of two of the element format (8 or 15), the
/// `emax_elem` of the OCP MX specification.
int emaxElem(Fmt fmt);
/// Bit pattern of the largest finite value (0x7E or 0x7B).
uint8_t maxFiniteBits(Fmt fmt);
/// Canonical NaN produced by every cast: 0x7F for both formats.
constexpr uint8_t kCanonicalNaN = 0x7F;

/// Saturating round-to-nearest-even cast (PTX `cvt.rn.satfinite`): NaN ->
/// 0x7F, +-inf and values beyond +-max -> +-max, signed zeros kept.
uint8_t castToFP8(float x, Fmt fmt);
/// The same function as castToFP8, bit for bit for every float (checked
/// over all 2^32 inputs, and in NumericsTest), computed by rounding the
/// float's bits as integers: over ten times faster (1-2 ns an element, not
/// about 18). Inline, so that loops over many elements (the weights packer)
/// compile it into their bodies; castToFP8 stays the reference.
inline uint8_t castToFP8Fast(float x, Fmt fmt);
/// Exact decode of an FP8 bit pattern (NaN, E5M2 infinities included).
float fp8ToFloat(uint8_t bits, Fmt fmt);
/// 2^(bits - 127); 0xFF is NaN.
float e8m0ToFloat(uint8_t bits);
/// Exact widening of IEEE binary16 and bfloat16 bit patterns (subnormals,
/// infinities and NaN payloads included): how weights stored in FP16/BF16
/// enter the FP32 arithmetic of the recipes (folders and the packer).
/// bf16ToFloat is inline: the packer widens every weight element with it.
float f16ToFloat(uint16_t bits);
inline float bf16ToFloat(uint16_t bits) {
  const uint32_t u = uint32_t(bits) << 16;
  float v;
  std::memcpy(&v, &u, sizeof(v));
  return v;
}

/// FP32 -> BF16 bits, round to nearest even (arith.truncf's rounding); a
/// NaN stays a quiet NaN of the same sign and top payload bits. How
/// BF16 products round constant weights (fp8-high-precision-products) and
/// the packer weights in files (fp8.rounded_weight).
inline uint16_t floatToBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
    return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

/// Per-tensor current / block scaling: e = fp8_max / max(amax, eps), with
/// amax 0, inf or NaN giving e = 1, infinite e clamped to FLT_MAX and, with
/// pow2, e rounded down to a power of two. Returns s = 1 / e.
float currentScale(float amax, Fmt fmt, float eps = 0.0f, bool pow2 = false);

/// Reduces an amax history (index 0 most recent, `stride` floats apart).
/// `Max` propagates NaN.
float reduceHistory(const float *history, int64_t length, int64_t stride,
                    HistoryAlgo algo);

/// Delayed scaling from an already reduced history amax: e = (fp8_max / a) /
/// 2^margin (inf -> FLT_MAX, optional pow2), s = 1 / e; where a is 0, inf or
/// NaN the previous scale is returned unchanged.
float delayedScale(float historyAmax, float previousScale, Fmt fmt,
                   int64_t margin, bool pow2 = false);

/// E8M0 block scale for MX formats (biased exponent; 0xFF = NaN).
uint8_t mxScale(float amax, Fmt fmt, MXRounding rounding);

/// Rounds a positive normal float down to a power of two.
float roundDownToPowerOfTwo(float value);

inline uint8_t castToFP8Fast(float x, Fmt fmt) {
  const bool e4m3 = fmt == Fmt::E4M3;
  const uint32_t mantissaBits = e4m3 ? 3 : 2;
  const uint32_t bias = e4m3 ? 7 : 15;
  const uint32_t maxAbs = e4m3 ? 0x43E00000u : 0x47600000u; // 448, 57344
  const uint32_t maxBits = e4m3 ? 0x7E : 0x7B;
  // The smallest normal, 2^(1 - bias), as float bits.
  const uint32_t minNormal = (128 - bias) << 23;
  uint32_t u;
  std::memcpy(&u, &x, sizeof(u));
  const uint32_t sign = (u >> 24) & 0x80;
  const uint32_t a = u & 0x7FFFFFFFu; // |x|, ordered as an integer
  // Normal range: round the float's bits to the FP8 mantissa (add half a
  // unit, less one on an even kept bit: ties to even, and drop the rest);
  // a carry out of the mantissa is the next binade, as in IEEE encodings;
  // then rebias. Computed for every x (no branch), used where it applies.
  const uint32_t drop = 23 - mantissaBits;
  uint32_t r = ((a + (1u << (drop - 1)) - 1 + ((a >> drop) & 1)) >> drop) -
               ((127 - bias) << mantissaBits);
  if (a < minNormal) {
    // FP8 subnormals (and zeros): |x| = m * 2^(e - 150), m with its
    // implicit bit (a float subnormal counts as e = 1, without one), in
    // units of the FP8 quantum 2^(1 - bias - mantissaBits): m >> shift,
    // rounded to even. Shifts above 24 give 0 (m < 2^24); clamped to 31 they
    // compute it without overflow. 2^mantissaBits units is the smallest
    // normal's encoding.
    const uint32_t e = a >> 23;
    const uint32_t m = e ? (a & 0x7FFFFFu) | 0x800000u : a;
    const uint32_t shift =
        std::min<uint32_t>(31, 151 - bias - mantissaBits - (e ? e : 1));
    r = (m + (1u << (shift - 1)) - 1 + ((m >> shift) & 1)) >> shift;
  }
  // Everything from max up saturates (below max nothing rounds past it).
  if (a >= maxAbs)
    r = maxBits;
  return a > 0x7F800000u ? kCanonicalNaN : static_cast<uint8_t>(sign | r);
}

} // namespace mlir::fp8::numerics

#endif // FP8_NUMERICS_NUMERICS_H
