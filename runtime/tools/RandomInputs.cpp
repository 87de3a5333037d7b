//===- RandomInputs.cpp - fp8-run --random --------------------------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "RandomInputs.h"

#include "fp8rt/fp8rt.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace fp8rt {
namespace {
/// A decimal integer at p (after optional spaces), then one ' ' or '\n'
/// skipped: the signature's number syntax (runtime/cpu/model_shim.c).
bool parseInt(const char *&p, long long &out) {
  char *end;
  errno = 0;
  const long long v = std::strtoll(p, &end, 10);
  if (end == p || errno)
    return false;
  out = v;
  p = end;
  if (*p == ' ' || *p == '\n')
    ++p;
  return true;
}

/// The input a check message blames ("graph input 'NAME': ..." or "graph
/// input #N: ..."), and the smallest dimension size it states.
bool parseCheck(const std::string &msg, std::string &input, int64_t &bound) {
  const std::string named = "graph input '", numbered = "graph input #";
  const std::string sep = "': index out of range in ";
  if (msg.rfind(named, 0) == 0) {
    const size_t end = msg.find(sep, named.size());
    if (end == std::string::npos)
      return false;
    input = msg.substr(named.size(), end - named.size());
  } else if (msg.rfind(numbered, 0) == 0) {
    const size_t end = msg.find(':', numbered.size());
    if (end == std::string::npos || end == numbered.size())
      return false;
    input = "#" + msg.substr(numbered.size(), end - numbered.size());
  } else {
    return false; // an index computed inside the graph: no input to blame
  }
  auto number = [&](size_t at, int64_t &v) {
    const char *p = msg.c_str() + at;
    char *end;
    errno = 0;
    const long long n = std::strtoll(p, &end, 10);
    if (end == p || errno || n <= 0)
      return size_t(0);
    v = n;
    return size_t(end - msg.c_str());
  };
  const std::string one = "the dimension has ";
  const std::string tuples = "index tuples address dimensions of sizes ";
  if (size_t at = msg.find(one); at != std::string::npos)
    return number(at + one.size(), bound) != 0;
  size_t at = msg.find(tuples);
  if (at == std::string::npos)
    return false;
  at += tuples.size();
  bound = 0;
  for (;;) {
    int64_t v;
    const size_t end = number(at, v);
    if (!end)
      return bound > 0;
    bound = bound ? std::min(bound, v) : v;
    if (msg.compare(end, 2, ", ") != 0)
      return true;
    at = end + 2;
  }
}

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// xoshiro256** seeded through splitmix64 (its authors' recommendation).
struct Rng {
  uint64_t s[4];
  Rng(uint64_t seed) {
    for (uint64_t &w : s)
      w = splitmix64(seed);
  }
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t next() {
    const uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  /// Uniform in [0, 1), 53 bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  /// Uniform in [0, n), without modulo bias (Lemire's method).
  uint64_t below(uint64_t n) {
    const uint64_t threshold = (0 - n) % n;
    for (;;) {
      const unsigned __int128 m = (unsigned __int128)next() * n;
      if (uint64_t(m) >= threshold)
        return uint64_t(m >> 64);
    }
  }
  /// N(0, 1) (Box-Muller, one value per call).
  double normal() {
    const double u = 1.0 - uniform(); // (0, 1]
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2 * M_PI * uniform());
  }
};

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// float -> IEEE half, round to nearest even (finite inputs of N(0, 1)
/// size; overflow to infinity as the cast does).
uint16_t toHalf(float f) {
  const uint32_t x = floatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int exp = int((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFF;
  if (exp >= 31)
    return uint16_t(sign | 0x7C00);
  if (exp <= 0) { // subnormal half (or zero)
    if (exp < -10)
      return uint16_t(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t half = mant >> shift;
    const uint32_t rest = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = sign | uint32_t(exp) << 10 | mant >> 13;
  const uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // carries into the exponent correctly
  return uint16_t(half);
}

uint16_t toBFloat16(float f) {
  const uint32_t x = floatBits(f);
  const uint32_t rounded = x + 0x7FFF + ((x >> 16) & 1);
  return uint16_t(rounded >> 16);
}

/// The value of an FP8 code (E4M3FN: bias 7, no infinities, 0x7F/0xFF NaN;
/// E5M2: bias 15, IEEE-like), NaN for the non-finite codes.
double fp8Value(uint8_t code, bool e4m3) {
  const int mbits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int exp = (code & 0x7F) >> mbits, mant = code & ((1 << mbits) - 1);
  const bool nonFinite = e4m3 ? (code & 0x7F) == 0x7F : exp == 31;
  if (nonFinite)
    return NAN;
  const double m = exp ? 1.0 + mant / double(1 << mbits) : mant / double(1 << mbits);
  const double v = std::ldexp(m, (exp ? exp : 1) - bias);
  return code & 0x80 ? -v : v;
}

/// The nearest finite FP8 code to `v` (ties to the even code), saturating
/// at the largest finite one. Positive codes grow with their value, so a
/// binary search over them finds the two neighbours of |v|.
uint8_t toFP8(double v, bool e4m3) {
  const int maxCode = e4m3 ? 0x7E : 0x7B; // 448, 57344
  const double a = std::fabs(v);
  int code;
  if (!(a < fp8Value(uint8_t(maxCode), e4m3))) {
    code = maxCode;
  } else {
    int lo = 0, hi = maxCode; // value(lo) <= a < value(hi)
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      (fp8Value(uint8_t(mid), e4m3) <= a ? lo : hi) = mid;
    }
    const double below = a - fp8Value(uint8_t(lo), e4m3);
    const double above = fp8Value(uint8_t(hi), e4m3) - a;
    code = above < below || (above == below && !(hi & 1)) ? hi : lo;
  }
  return uint8_t(code && v < 0 ? code | 0x80 : code);
}

template <typename T> void put(HostTensor &t, int64_t i, T v) {
  std::memcpy(t.bytes.data() + size_t(i) * sizeof(T), &v, sizeof(T));
}
} // namespace

std::map<std::string, int64_t> indexBounds(const char *signature, bool &ok) {
  std::map<std::string, int64_t> bounds;
  ok = false;
  if (!signature)
    return bounds;
  const char *p = signature;
  // Version 3 (dynamic dimensions) adds a symbol count and table after the
  // header, and a dimension may be a polynomial token ("s0+s1").
  const char *header = "fp8rt-signature ";
  if (std::strncmp(p, header, std::strlen(header)) != 0)
    return bounds;
  p += std::strlen(header);
  long long version, nin, nout, nchecks, nsyms = 0;
  if (!parseInt(p, version) || (version != 2 && version != 3) ||
      !parseInt(p, nin) || !parseInt(p, nout) || !parseInt(p, nchecks) ||
      nin < 0 || nout < 0 || nchecks < 0 || nin + nout > 100000 ||
      nchecks > 100000 || (version == 3 && !parseInt(p, nsyms)) ||
      nsyms < 0 || nsyms > 100000)
    return bounds;
  for (long long i = 0; i < nsyms; ++i) {
    // "<lo>..<hi> <len> <name>"
    const char *space = std::strchr(p, ' ');
    long long len;
    if (!space)
      return {};
    p = space + 1;
    if (!parseInt(p, len) || len < 0 || (long long)std::strlen(p) < len)
      return {};
    p += len;
    if (*p == '\n')
      ++p;
  }
  for (long long i = 0; i < nin + nout; ++i) {
    long long dtype, rank, dim, len;
    if (!parseInt(p, dtype) || !parseInt(p, rank) || rank < 0 || rank > 64)
      return {};
    for (long long d = 0; d < rank; ++d) {
      if (version == 3) { // a size, or a dynamic dimension's polynomial
        if (*p == ' ' || *p == '\n' || *p == '\0')
          return {};
        p += std::strcspn(p, " \n");
        if (*p == ' ')
          ++p;
        continue;
      }
      if (!parseInt(p, dim))
        return {};
    }
    if (!parseInt(p, len) || len < 0 || (long long)std::strlen(p) < len)
      return {};
    p += len;
    if (*p == '\n')
      ++p;
  }
  for (long long i = 0; i < nchecks; ++i) {
    long long len;
    if (!parseInt(p, len) || len < 0 || (long long)std::strlen(p) < len)
      return {};
    std::string input;
    int64_t bound;
    if (parseCheck(std::string(p, size_t(len)), input, bound)) {
      auto [it, fresh] = bounds.emplace(input, bound);
      if (!fresh)
        it->second = std::min(it->second, bound);
    }
    p += len;
    if (*p == '\n')
      ++p;
  }
  ok = true;
  return bounds;
}

RandomFill fillRandom(HostTensor &t, uint64_t seed, int index, int64_t bound) {
  // One stream per input: an input's values do not change when another is
  // given from a file instead.
  uint64_t mixed = seed;
  Rng rng(splitmix64(mixed) ^ (uint64_t(index) + 1) * 0xD1B54A32D192ED03ULL);
  const int64_t n = t.numElements();
  RandomFill fill;
  const bool integer =
      t.dtype == FP8RT_INT8 || t.dtype == FP8RT_UINT8 ||
      t.dtype == FP8RT_INT16 || t.dtype == FP8RT_UINT16 ||
      t.dtype == FP8RT_INT32 || t.dtype == FP8RT_UINT32 ||
      t.dtype == FP8RT_INT64 || t.dtype == FP8RT_UINT64;
  if (integer) {
    // The largest value the type holds bounds the range too.
    const size_t size = fp8rt_dtype_size_inline(t.dtype);
    const bool isSigned = t.dtype == FP8RT_INT8 || t.dtype == FP8RT_INT16 ||
                          t.dtype == FP8RT_INT32 || t.dtype == FP8RT_INT64;
    const uint64_t typeMax =
        size == 8 ? (isSigned ? uint64_t(INT64_MAX) : UINT64_MAX)
                  : (uint64_t(1) << (8 * size - isSigned)) - 1;
    const uint64_t range =
        bound > 0 ? std::min<uint64_t>(uint64_t(bound), typeMax + (typeMax < UINT64_MAX))
                  : 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t v = range ? rng.below(range) : 1;
      switch (size) {
      case 1:
        t.bytes[size_t(i)] = uint8_t(v);
        break;
      case 2:
        put(t, i, uint16_t(v));
        break;
      case 4:
        put(t, i, uint32_t(v));
        break;
      default:
        put(t, i, v);
      }
    }
    fill.what = range ? "uniform in [0, " + std::to_string(range) +
                            ") (the range its index checks accept)"
                      : "all 1 (no index check names it)";
    return fill;
  }
  if (t.dtype == FP8RT_BOOL) {
    std::fill(t.bytes.begin(), t.bytes.end(), uint8_t(1));
    fill.what = "all true";
    return fill;
  }
  if (t.dtype == FP8RT_FLOAT8E8M0) {
    // Power-of-two scales near 1 (2^-2 to 2^2).
    for (int64_t i = 0; i < n; ++i)
      t.bytes[size_t(i)] = uint8_t(125 + rng.below(5));
    fill.what = "powers of two from 2^-2 to 2^2";
    return fill;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double v = rng.normal();
    switch (t.dtype) {
    case FP8RT_FLOAT:
      put(t, i, float(v));
      break;
    case FP8RT_DOUBLE:
      put(t, i, v);
      break;
    case FP8RT_FLOAT16:
      put(t, i, toHalf(float(v)));
      break;
    case FP8RT_BFLOAT16:
      put(t, i, toBFloat16(float(v)));
      break;
    case FP8RT_FLOAT8E4M3FN:
    case FP8RT_FLOAT8E5M2:
      t.bytes[size_t(i)] = toFP8(v, t.dtype == FP8RT_FLOAT8E4M3FN);
      break;
    default:
      break;
    }
  }
  fill.what = "normal(0, 1)";
  return fill;
}

} // namespace fp8rt
