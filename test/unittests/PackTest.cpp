//===- PackTest.cpp - The weights packer (fp8rt/pack.h) -------------------===//
//
// Part of fp8-opt. The packer's quantizations against a naive
// implementation written here from pack.h's specification (the whole tensor
// in memory, one plain loop per step, fp8/Numerics scalars), packed with
// the default pieces and with tiny ones (byte-identical files); the
// manifest's JSON round trip and its rejections; the confinement of sources
// to the data directory; literals from a base weights file.
//
//===----------------------------------------------------------------------===//

#include "fp8rt/pack.h"

#include "fp8/Numerics/Numerics.h"
#include "fp8rt/fp8w.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

namespace num = mlir::fp8::numerics;
using namespace fp8rt::pack;
using json = nlohmann::json;
using Shape = std::vector<int64_t>;

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

/// A temporary directory, removed with everything in it.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/fp8-pack-test-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string &name) const {
    return path + "/" + name;
  }
};

void writeFile(const std::string &path, const std::vector<uint8_t> &bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

std::vector<uint8_t> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

/// A weights file opened (and fully verified) for the test's checks.
class Weights {
public:
  explicit Weights(const std::string &path, uint64_t fingerprint = 0) {
    char error[512] = "";
    file = fp8w_open(path.c_str(), fingerprint, FP8W_VERIFY_DATA, error,
                     sizeof(error));
    EXPECT_NE(file, nullptr) << error;
  }
  ~Weights() { fp8w_close(file); }
  fp8w_file *get() const { return file; }

  /// The bytes of tensor `name`, with its dtype and shape checked.
  std::vector<uint8_t> bytes(const std::string &name, int32_t dtype,
                             const Shape &shape) const {
    if (!file)
      return {};
    const int64_t i = fp8w_find(file, name.data(), name.size());
    EXPECT_GE(i, 0) << name;
    if (i < 0)
      return {};
    const fp8w_entry *e = fp8w_entry_at(file, uint64_t(i));
    EXPECT_EQ(e->dtype, dtype) << name;
    EXPECT_EQ(Shape(e->dims, e->dims + e->rank), shape) << name;
    const auto *p = static_cast<const uint8_t *>(fp8w_data(file, uint64_t(i)));
    return std::vector<uint8_t>(p, p + e->bytes);
  }

private:
  fp8w_file *file = nullptr;
};

//===----------------------------------------------------------------------===//
// The reference: pack.h's Quantization, naively
//===----------------------------------------------------------------------===//

int64_t count(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape unravel(int64_t i, const Shape &shape) {
  Shape index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

int64_t ravel(const Shape &index, const Shape &shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    i = i * shape[d] + index[d];
  return i;
}

size_t elementBytes(int32_t dtype) { return dtype == kFloat ? 4 : 2; }

/// Element i of a source, by the definitions of the formats.
float decode(int32_t dtype, const std::vector<uint8_t> &raw, int64_t i) {
  if (dtype == kFloat) {
    float v;
    std::memcpy(&v, &raw[4 * i], 4);
    return v;
  }
  uint16_t h;
  std::memcpy(&h, &raw[2 * i], 2);
  if (dtype == kBFloat16) {
    const uint32_t u = uint32_t(h) << 16;
    float v;
    std::memcpy(&v, &u, 4);
    return v;
  }
  const int exponent = (h >> 10) & 31, mantissa = h & 1023;
  float v = exponent == 31  ? (mantissa ? NAN : INFINITY)
            : exponent == 0 ? std::ldexp(float(mantissa), -24)
                            : std::ldexp(float(mantissa + 1024), exponent - 25);
  return (h & 0x8000) ? -v : v;
}

struct Expected {
  std::vector<uint8_t> data, scales;
};

/// amax per block, scale per block, x / scale cast per element, then the
/// permutation and the padding: one loop each.
Expected reference(const Source &s, const std::vector<uint8_t> &raw,
                   const Quantization &q) {
  const Shape &shape = s.shape;
  const size_t rank = shape.size();
  const int64_t n = count(shape);
  Shape grid(rank), perm(rank);
  for (size_t d = 0; d < rank; ++d) {
    grid[d] = (shape[d] + q.block[d] - 1) / q.block[d];
    perm[d] = q.permutation.empty() ? int64_t(d) : q.permutation[d];
  }
  auto blockOf = [&](int64_t i) {
    Shape index = unravel(i, shape);
    for (size_t d = 0; d < rank; ++d)
      index[d] /= q.block[d];
    return ravel(index, grid);
  };
  std::vector<float> amax(count(grid), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(decode(s.dtype, raw, i));
    float &m = amax[blockOf(i)];
    if (std::isnan(a) || std::isnan(m))
      m = NAN;
    else if (a > m)
      m = a;
  }
  const num::Fmt fmt =
      q.format == kFloat8E4M3FN ? num::Fmt::E4M3 : num::Fmt::E5M2;
  const bool mx = q.scaling == Quantization::Scaling::MX;
  std::vector<float> scale(amax.size());
  std::vector<uint8_t> e8m0(amax.size());
  for (size_t b = 0; b < amax.size(); ++b) {
    if (mx) {
      e8m0[b] = num::mxScale(amax[b], fmt,
                             q.rceil ? num::MXRounding::RCeil
                                     : num::MXRounding::Floor);
      scale[b] = num::e8m0ToFloat(e8m0[b]);
    } else {
      scale[b] = num::currentScale(amax[b], fmt, q.eps, q.pow2);
    }
  }
  Expected e;
  e.data.assign(count(q.dataShape), 0x00);
  for (int64_t i = 0; i < n; ++i) {
    const Shape index = unravel(i, shape);
    Shape out(rank);
    for (size_t k = 0; k < rank; ++k)
      out[k] = index[perm[k]];
    e.data[ravel(out, q.dataShape)] =
        num::castToFP8(decode(s.dtype, raw, i) / scale[blockOf(i)], fmt);
  }
  Shape permutedGrid(rank);
  for (size_t k = 0; k < rank; ++k)
    permutedGrid[k] = grid[perm[k]];
  const size_t bytes = mx ? 1 : 4;
  e.scales.assign(amax.size() * bytes, 0);
  for (int64_t b = 0; b < int64_t(amax.size()); ++b) {
    const Shape index = unravel(b, grid);
    Shape out(rank);
    for (size_t k = 0; k < rank; ++k)
      out[k] = index[perm[k]];
    const void *from = mx ? static_cast<const void *>(&e8m0[b]) : &scale[b];
    std::memcpy(&e.scales[ravel(out, permutedGrid) * bytes], from, bytes);
  }
  return e;
}

//===----------------------------------------------------------------------===//
// Sources and manifests
//===----------------------------------------------------------------------===//

void store(std::vector<uint8_t> &raw, int32_t dtype, int64_t i, uint32_t u) {
  if (dtype == kFloat)
    std::memcpy(&raw[4 * i], &u, 4);
  else
    raw[2 * i] = uint8_t(u), raw[2 * i + 1] = uint8_t(u >> 8);
}

/// Random values of `dtype` spread over many binades: the first eighth zero
/// (all-zero blocks), the next eighth tiny (below eps, subnormal in f16),
/// then a sixteenth over a huge range (saturation, underflow); with
/// `specials`, NaN, infinities, -0 and subnormals at a few places.
std::vector<uint8_t> makeValues(int32_t dtype, int64_t n, unsigned seed,
                                bool specials) {
  std::mt19937 rng(seed);
  auto uniform = [&](uint32_t lo, uint32_t hi) {
    return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
  };
  const bool f16 = dtype == kFloat16;
  std::vector<uint8_t> raw(n * elementBytes(dtype));
  for (int64_t i = 0; i < n; ++i) {
    const bool zero = i < n / 8, tiny = i >= n / 8 && i < n / 4,
               wide = i >= n / 4 && i < n / 4 + n / 16;
    const uint32_t sign = uniform(0, 1);
    uint32_t u;
    if (f16) {
      const uint32_t e = tiny   ? uniform(0, 2)
                         : wide ? uniform(0, 30)
                                : uniform(8, 22);
      u = sign << 15 | e << 10 | uniform(0, 1023);
    } else {
      const uint32_t e = tiny   ? uniform(1, 40)
                         : wide ? uniform(1, 254)
                                : uniform(120, 134);
      u = dtype == kFloat ? sign << 31 | e << 23 | uniform(0, 0x7FFFFF)
                          : sign << 15 | e << 7 | uniform(0, 127);
    }
    store(raw, dtype, i, zero ? 0 : u);
  }
  if (specials && n > 16) {
    // NaN, +inf, -inf, -0, smallest and largest subnormal, largest finite.
    const uint32_t f32[] = {0x7FC00001, 0x7F800000, 0xFF800000, 0x80000000,
                            0x00000001, 0x807FFFFF, 0x7F7FFFFF};
    const uint32_t f16v[] = {0x7E01, 0x7C00, 0xFC00, 0x8000,
                             0x0001, 0x83FF, 0x7BFF};
    const uint32_t bf16[] = {0x7FC1, 0x7F80, 0xFF80, 0x8000,
                             0x0001, 0x807F, 0x7F7F};
    // Apart, so that the NaN's block holds no infinity (whose amax would
    // give the same scale as the NaN's).
    const int64_t at[] = {n / 2 + 3, n / 3 + 1,     7 * n / 8, n / 2 + 50,
                          5 * n / 6, 5 * n / 6 + 1, n - 1};
    for (int k = 0; k < 7; ++k)
      store(raw, dtype, at[k] % n,
            dtype == kFloat ? f32[k]
            : f16           ? f16v[k]
                            : bf16[k]);
  }
  return raw;
}

Source makeSource(const std::string &location, uint64_t offset, int32_t dtype,
                  const Shape &shape) {
  Source s;
  s.name = "init." + location;
  s.location = location;
  s.offset = offset;
  s.dtype = dtype;
  s.shape = shape;
  s.length = uint64_t(count(shape)) * elementBytes(dtype);
  return s;
}

Quantization makeQuant(int32_t format, Shape block, bool mx, float eps,
                       bool pow2, bool rceil, Shape perm, Shape dataShape) {
  Quantization q;
  q.format = format;
  q.block = std::move(block);
  q.scaling = mx ? Quantization::Scaling::MX : Quantization::Scaling::Current;
  q.eps = eps;
  q.pow2 = pow2;
  q.rceil = rceil;
  q.permutation = std::move(perm);
  q.dataShape = std::move(dataShape);
  return q;
}

Tensor copyTensor(const std::string &name, const Source &s) {
  Tensor t;
  t.name = name;
  t.kind = Tensor::Kind::Copy;
  t.dtype = s.dtype;
  t.shape = s.shape;
  t.source = s;
  return t;
}

Tensor dataTensor(const std::string &name, const Source &s,
                  const Quantization &q) {
  Tensor t = copyTensor(name, s);
  t.kind = Tensor::Kind::Data;
  t.dtype = q.format;
  t.shape = q.dataShape;
  t.quant = q;
  return t;
}

Tensor scaleTensor(const std::string &name, const Source &s,
                   const Quantization &q) {
  Tensor t = dataTensor(name, s, q);
  t.kind = Tensor::Kind::Scale;
  t.dtype = q.scaleDtype();
  t.shape = q.scaleShape(s.shape);
  return t;
}

Tensor literalTensor(const std::string &name, int32_t dtype, Shape shape,
                     const std::vector<uint8_t> &bytes) {
  Tensor t;
  t.name = name;
  t.kind = Tensor::Kind::Literal;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.hash = fp8w_hash_bytes(bytes.data(), bytes.size());
  return t;
}

Manifest makeManifest(std::vector<Tensor> tensors) {
  Manifest m;
  m.fingerprint = 0x0123456789abcdefULL;
  m.weightsFile = "model.fp8w";
  m.tensors = std::move(tensors);
  return m;
}

std::string pack(const Manifest &m, const std::string &dataDir,
                 const std::string &out, uint64_t chunkBytes = 64 << 20,
                 const fp8w_file *base = nullptr, PackStats *stats = nullptr) {
  PackOptions o;
  o.dataDir = dataDir;
  o.chunkBytes = chunkBytes;
  o.base = base;
  return packWeights(m, o, out, stats);
}

//===----------------------------------------------------------------------===//
// (a) + (b): quantizations against the reference, in any piece size
//===----------------------------------------------------------------------===//

struct Case {
  const char *name;
  int32_t dtype;
  Shape shape;
  Quantization quant;
  bool specials;
};

std::vector<Case> cases() {
  const int32_t E4 = kFloat8E4M3FN, E5 = kFloat8E5M2;
  const Shape s = {300, 200};
  return {
      {"PerTensorF32", kFloat, s,
       makeQuant(E4, s, false, 0, false, true, {}, s), false},
      {"PerTensorF16Pow2", kFloat16, s,
       makeQuant(E5, s, false, 1e-3f, true, true, {}, {304, 208}), false},
      {"PerTensorBF16Specials", kBFloat16, s,
       makeQuant(E4, s, false, 0, false, true, {1, 0}, {200, 300}), true},
      {"Block128x128Transposed", kFloat, s,
       makeQuant(E4, {128, 128}, false, 0, false, true, {1, 0}, {256, 384}),
       true},
      {"Block1x128Bf16Pow2", kBFloat16, s,
       makeQuant(E4, {1, 128}, false, 1e-4f, true, true, {1, 0}, {200, 300}),
       true},
      {"Block1x128F16Eps", kFloat16, s,
       makeQuant(E5, {1, 128}, false, 1e-2f, false, true, {}, s), true},
      {"Block128x128E5M2", kFloat16, s,
       makeQuant(E5, {128, 128}, false, 1e-12f, true, true, {}, {384, 256}),
       true},
      {"ColumnBlocks", kFloat, s,
       makeQuant(E4, {300, 1}, false, 0, false, true, {1, 0}, {200, 300}),
       true},
      {"MX32x1RCeil", kFloat, s,
       makeQuant(E4, {32, 1}, true, 0, false, true, {1, 0}, {224, 320}), true},
      {"MX32x1FloorF16E5M2", kFloat16, s,
       makeQuant(E5, {32, 1}, true, 0, false, false, {}, {320, 200}), true},
      {"MX1x32Bf16", kBFloat16, s,
       makeQuant(E4, {1, 32}, true, 0, false, true, {}, s), true},
      {"MX1x32FloorF32", kFloat, s,
       makeQuant(E4, {1, 32}, true, 0, false, false, {1, 0}, {208, 300}), true},
      {"Scalar",
       kFloat,
       {},
       makeQuant(E4, {}, false, 0, false, true, {}, {}),
       false},
      {"Rank1",
       kFloat16,
       {1000},
       makeQuant(E4, {128}, false, 0, true, true, {}, {1024}),
       true},
      {"Rank3",
       kFloat,
       {7, 11, 13},
       makeQuant(E4, {2, 3, 5}, false, 0, false, true, {2, 0, 1}, {16, 8, 12}),
       true},
      {"Rank3MX",
       kBFloat16,
       {5, 64, 6},
       makeQuant(E5, {1, 32, 1}, true, 0, false, false, {1, 2, 0}, {64, 8, 5}),
       true},
      {"Empty",
       kFloat,
       {0, 64},
       makeQuant(E4, {1, 32}, false, 0, false, true, {}, {16, 64}),
       false},
  };
}

/// Data, scales and a copy of one source, in an order that varies with
/// `order` (scales first: the packer keeps the data for the later entry).
Manifest caseManifest(const Case &c, int order) {
  const Source s = makeSource("weights.bin", 100, c.dtype, c.shape);
  Tensor data = dataTensor("w.data", s, c.quant),
         scale = scaleTensor("w.scale", s, c.quant),
         copy = copyTensor("w.copy", s);
  if (order == 0)
    return makeManifest({data, scale, copy});
  // A second data entry of the same quantization, after its scales.
  Tensor again = dataTensor("w.data2", s, c.quant);
  return makeManifest({copy, scale, data, again});
}

TEST(Pack, QuantizationMatchesReference) {
  unsigned seed = 1;
  for (const Case &c : cases()) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    const int64_t n = count(c.shape);
    std::vector<uint8_t> raw = makeValues(c.dtype, n, seed++, c.specials);
    std::vector<uint8_t> file(100, 0xA5); // the source sits at offset 100
    file.insert(file.end(), raw.begin(), raw.end());
    file.insert(file.end(), 7, 0x5A);
    writeFile(dir / "weights.bin", file);
    const Source s = makeSource("weights.bin", 100, c.dtype, c.shape);
    const Expected want = reference(s, raw, c.quant);
    for (int order = 0; order < 2; ++order) {
      const Manifest m = caseManifest(c, order);
      std::vector<uint8_t> first;
      // Default pieces, one byte (band by band, element by element in two
      // passes), and an uneven size.
      for (uint64_t chunk : {uint64_t(64) << 20, uint64_t(1), uint64_t(1000)}) {
        SCOPED_TRACE("chunkBytes " + std::to_string(chunk) + ", order " +
                     std::to_string(order));
        const std::string out = dir / "out.fp8w";
        PackStats stats;
        ASSERT_EQ(pack(m, dir.path, out, chunk, nullptr, &stats), "");
        EXPECT_EQ(stats.tensors, m.tensors.size());
        EXPECT_GE(stats.bytesRead, 2 * raw.size()); // the copy and the data
        const std::vector<uint8_t> bytes = readFile(out);
        EXPECT_EQ(stats.bytesWritten, bytes.size());
        if (first.empty()) {
          first = bytes;
        } else {
          EXPECT_TRUE(bytes == first) << "files differ with piece size";
        }
        Weights w(out, m.fingerprint);
        EXPECT_TRUE(w.bytes("w.data", c.quant.format, c.quant.dataShape) ==
                    want.data);
        EXPECT_TRUE(w.bytes("w.scale", c.quant.scaleDtype(),
                            c.quant.scaleShape(c.shape)) == want.scales);
        EXPECT_TRUE(w.bytes("w.copy", c.dtype, c.shape) == raw);
        if (order == 1) {
          EXPECT_TRUE(w.bytes("w.data2", c.quant.format, c.quant.dataShape) ==
                      want.data);
        }
      }
    }
  }
}

/// The reference itself, on values whose outcome is known by hand.
TEST(Pack, ReferenceSanity) {
  const float values[] = {448.0f, -224.0f, NAN, 1.0f};
  std::vector<uint8_t> raw(sizeof(values));
  std::memcpy(raw.data(), values, sizeof(values));
  const Source s = makeSource("x", 0, kFloat, {2, 2});
  const Expected e = reference(
      s, raw,
      makeQuant(kFloat8E4M3FN, {1, 2}, false, 0, false, true, {}, {2, 2}));
  // Row 0: amax 448, scale 1: 448 -> 0x7E, -224 -> 0xF6. Row 1: NaN amax,
  // scale 1: NaN -> 0x7F, 1 -> 0x38.
  EXPECT_EQ(e.data, (std::vector<uint8_t>{0x7E, 0xF6, 0x7F, 0x38}));
  float scales[2];
  std::memcpy(scales, e.scales.data(), sizeof(scales));
  EXPECT_EQ(scales[0], 1.0f);
  EXPECT_EQ(scales[1], 1.0f);
}

/// PackOptions::threads: one thread, four and one per core write the same
/// file (the reference's bytes), whichever way the amaxes are shared out:
/// tasks of whole bands, or a copy of the blocks per task (per-tensor
/// scaling in two passes, or pieces of a band or a few bands).
TEST(Pack, ThreadsDoNotChangeTheFile) {
  const int32_t E4 = kFloat8E4M3FN, E5 = kFloat8E5M2;
  const Shape s = {520, 384}; // 5 bands of 128 rows, the last partial
  const Case threadCases[] = {
      {"PerTensorF16", kFloat16, s,
       makeQuant(E4, s, false, 0, false, true, {1, 0}, {384, 528}), true},
      {"Block128x128Bf16", kBFloat16, s,
       makeQuant(E5, {128, 128}, false, 1e-6f, true, true, {1, 0}, {384, 640}),
       true},
      {"MX32x1F32", kFloat, s,
       makeQuant(E4, {32, 1}, true, 0, false, true, {1, 0}, {384, 520}), true},
  };
  unsigned seed = 100;
  for (const Case &c : threadCases) {
    SCOPED_TRACE(c.name);
    TempDir dir;
    const std::vector<uint8_t> raw =
        makeValues(c.dtype, count(c.shape), seed++, c.specials);
    writeFile(dir / "weights.bin", raw);
    const Source src = makeSource("weights.bin", 0, c.dtype, c.shape);
    const Expected want = reference(src, raw, c.quant);
    const Manifest m = makeManifest({dataTensor("w.data", src, c.quant),
                                     scaleTensor("w.scale", src, c.quant)});
    std::vector<uint8_t> first;
    for (uint64_t chunk : {uint64_t(64) << 20, uint64_t(64) << 10})
      for (unsigned threads : {1u, 4u, 0u}) {
        SCOPED_TRACE("chunkBytes " + std::to_string(chunk) + ", threads " +
                     std::to_string(threads));
        PackOptions o;
        o.dataDir = dir.path;
        o.chunkBytes = chunk;
        o.threads = threads;
        const std::string out = dir / "out.fp8w";
        ASSERT_EQ(packWeights(m, o, out), "");
        const std::vector<uint8_t> bytes = readFile(out);
        if (first.empty()) {
          first = bytes;
          Weights w(out, m.fingerprint);
          EXPECT_TRUE(w.bytes("w.data", c.quant.format, c.quant.dataShape) ==
                      want.data);
          EXPECT_TRUE(w.bytes("w.scale", c.quant.scaleDtype(),
                              c.quant.scaleShape(c.shape)) == want.scales);
        } else {
          EXPECT_TRUE(bytes == first) << "files differ";
        }
      }
  }
}

//===----------------------------------------------------------------------===//
// (c) JSON round trip
//===----------------------------------------------------------------------===//

Manifest jsonManifest() {
  const Source a = makeSource("model.onnx.data", 4096, kFloat, {300, 200});
  const Source b = makeSource("sub/other.bin", 0, kBFloat16, {64, 96});
  const Quantization qa = makeQuant(kFloat8E4M3FN, {128, 128}, false, 1e-12f,
                                    true, true, {1, 0}, {256, 384});
  const Quantization qb =
      makeQuant(kFloat8E5M2, {32, 1}, true, 0.0f, false, false, {}, {64, 96});
  std::vector<uint8_t> lit(64, 3);
  return makeManifest({copyTensor("w.copy", a), dataTensor("w.data", a, qa),
                       scaleTensor("w.scale", a, qa),
                       dataTensor("v.data", b, qb),
                       scaleTensor("v.scale", b, qb),
                       literalTensor("lit", kFloat, {4, 4}, lit)});
}

uint32_t bitsOf(float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

void expectSameManifest(const Manifest &a, const Manifest &b) {
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.weightsFile, b.weightsFile);
  ASSERT_EQ(a.tensors.size(), b.tensors.size());
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor &x = a.tensors[i], &y = b.tensors[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dtype, y.dtype);
    EXPECT_EQ(x.shape, y.shape);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.hash, y.hash);
    if (x.kind == Tensor::Kind::Literal)
      continue;
    EXPECT_EQ(x.source.name, y.source.name);
    EXPECT_EQ(x.source.location, y.source.location);
    EXPECT_EQ(x.source.offset, y.source.offset);
    EXPECT_EQ(x.source.length, y.source.length);
    EXPECT_EQ(x.source.dtype, y.source.dtype);
    EXPECT_EQ(x.source.shape, y.source.shape);
    if (x.kind == Tensor::Kind::Copy)
      continue;
    EXPECT_EQ(x.quant.format, y.quant.format);
    EXPECT_EQ(x.quant.block, y.quant.block);
    EXPECT_EQ(x.quant.scaling, y.quant.scaling);
    EXPECT_EQ(bitsOf(x.quant.eps), bitsOf(y.quant.eps));
    EXPECT_EQ(x.quant.pow2, y.quant.pow2);
    EXPECT_EQ(x.quant.rceil, y.quant.rceil);
    EXPECT_EQ(x.quant.permutation, y.quant.permutation);
    EXPECT_EQ(x.quant.dataShape, y.quant.dataShape);
  }
}

TEST(Pack, JSONRoundTrip) {
  Manifest m = jsonManifest();
  const std::string text = toJSON(m);
  Manifest back;
  ASSERT_EQ(parseManifest(text, back, "m.json"), "");
  expectSameManifest(m, back);
  EXPECT_EQ(toJSON(back), text);
  const json j = json::parse(text);
  EXPECT_EQ(j["format"], "fp8-opt weights manifest");
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["fingerprint"], "0123456789abcdef");
  EXPECT_EQ(j["tensors"][1]["quantization"]["scaling"], "current");
  EXPECT_EQ(j["tensors"][3]["quantization"]["rounding"], "floor");
  EXPECT_EQ(j["tensors"][5]["hash"].get<std::string>().size(), 16u);
  // Every eps reads back to the same float bits, odd ones included.
  for (float eps : {1e-12f, 0.1f, std::numeric_limits<float>::denorm_min(),
                    std::nextafter(1.0f, 2.0f), FLT_MAX, 0.0f, 3e-39f}) {
    SCOPED_TRACE(eps);
    m.tensors[1].quant.eps = m.tensors[2].quant.eps = eps;
    ASSERT_EQ(parseManifest(toJSON(m), back, "m.json"), "");
    EXPECT_EQ(bitsOf(back.tensors[1].quant.eps), bitsOf(eps));
  }
  // One scale of a per-tensor quantization may be a scalar, as in fp8 IR.
  m.tensors[2].quant.block = {300, 200};
  m.tensors[2].shape = {};
  EXPECT_EQ(parseManifest(toJSON(m), back, "m.json"), "");
}

/// Packed weights concatenated along dimension 0 (fp8-merge-sibling-
/// products): the tensor is its parts' bytes in order, each what it would
/// be alone; a part also packed alone is quantized once for both.
TEST(Pack, ConcatenationsAreTheirPartsInOrder) {
  TempDir dir;
  const Shape s1 = {256, 384}, s2 = {256, 128}; // [K, N]: N = 384 and 128
  const std::vector<uint8_t> raw1 = makeValues(kFloat16, count(s1), 7, true);
  const std::vector<uint8_t> raw2 = makeValues(kFloat16, count(s2), 8, false);
  std::vector<uint8_t> raw = raw1;
  raw.insert(raw.end(), raw2.begin(), raw2.end());
  writeFile(dir / "w.bin", raw);
  const Source a = makeSource("w.bin", 0, kFloat16, s1);
  const Source b = makeSource("w.bin", raw1.size(), kFloat16, s2);
  const Quantization qa = makeQuant(kFloat8E4M3FN, {128, 128}, false, 0, true,
                                    true, {1, 0}, {384, 256});
  Quantization qb = qa;
  qb.dataShape = {128, 256};
  auto concat = [](const std::string &name, std::vector<Tensor> parts) {
    Tensor t;
    t.name = name;
    t.kind = Tensor::Kind::Concat;
    t.dtype = parts[0].dtype;
    t.shape = parts[0].shape;
    t.shape[0] = 0;
    for (const Tensor &p : parts)
      t.shape[0] += p.shape[0];
    t.parts = std::move(parts);
    return t;
  };
  const Manifest m = makeManifest(
      {concat("ab", {dataTensor("a", a, qa), dataTensor("b", b, qb)}),
       concat("ab.scale", {scaleTensor("a", a, qa), scaleTensor("b", b, qb)}),
       dataTensor("a.alone", a, qa)});
  PackOptions o;
  o.dataDir = dir.path;
  const std::string out = dir / "out.fp8w";
  PackStats stats;
  ASSERT_EQ(packWeights(m, o, out, &stats), "");
  // Each source read once for data and scales of both uses.
  EXPECT_EQ(stats.bytesRead, raw.size());
  const Expected wa = reference(a, raw1, qa), wb = reference(b, raw2, qb);
  Weights w(out, m.fingerprint);
  std::vector<uint8_t> data = wa.data, scales = wa.scales;
  data.insert(data.end(), wb.data.begin(), wb.data.end());
  scales.insert(scales.end(), wb.scales.begin(), wb.scales.end());
  EXPECT_TRUE(w.bytes("ab", kFloat8E4M3FN, {512, 256}) == data);
  EXPECT_TRUE(w.bytes("ab.scale", kFloat, {4, 2}) == scales);
  EXPECT_TRUE(w.bytes("a.alone", kFloat8E4M3FN, {384, 256}) == wa.data);

  // Through JSON and back; a part that is itself a concatenation, or parts
  // that do not add up, are refused.
  Manifest back;
  ASSERT_EQ(parseManifest(toJSON(m), back, "m.json"), "");
  ASSERT_EQ(back.tensors[0].parts.size(), 2u);
  expectSameManifest(makeManifest(m.tensors[0].parts),
                     makeManifest(back.tensors[0].parts));
  EXPECT_EQ(toJSON(back), toJSON(m));
  json j = json::parse(toJSON(m));
  j["tensors"][0]["parts"][1] = j["tensors"][1];
  EXPECT_NE(parseManifest(j.dump(), back, "m.json")
                .find("part 1: a part of a concatenation cannot be one"),
            std::string::npos);
  j = json::parse(toJSON(m));
  j["tensors"][1]["shape"][0] = 3;
  EXPECT_NE(parseManifest(j.dump(), back, "m.json")
                .find("the parts have 4 rows, the tensor 3"),
            std::string::npos);
  // Parts on a tensor of another kind (made in memory) are refused too.
  Manifest odd = m;
  odd.tensors[2].parts = m.tensors[0].parts;
  EXPECT_NE(packWeights(odd, o, out).find("parts, but not a concatenation"),
            std::string::npos);
}

/// BF16 of an FP32 value from the spec, independently of
/// numerics::floatToBF16: the nearer of the two BF16 values around x (its
/// truncation and the next one away from zero), the even one on a tie; a
/// NaN is any NaN of x's sign.
bool isReferenceBF16(float x, uint16_t got) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const float back = num::bf16ToFloat(got);
  if (std::isnan(x))
    return std::isnan(back) && (got >> 15) == (bits >> 31);
  const uint16_t lo = uint16_t(bits >> 16), hi = uint16_t(lo + 1);
  const double dlo = std::fabs(double(x) - double(num::bf16ToFloat(lo)));
  // Past the largest finite value, the next one up is 2^128 (unbounded
  // exponent): x rounds to infinity from half an ulp above the largest.
  const double up = (hi & 0x7FFF) == 0x7F80
                        ? std::ldexp(std::signbit(x) ? -1.0 : 1.0, 128)
                        : double(num::bf16ToFloat(hi));
  const double dhi = std::fabs(double(x) - up);
  const uint16_t want = (bits & 0xFFFF) == 0 ? lo
                        : dlo < dhi          ? lo
                        : dhi < dlo          ? hi
                        : (lo & 1)           ? hi
                                             : lo;
  return got == want;
}

float widen(const std::vector<uint8_t> &raw, int32_t dtype, int64_t i) {
  if (dtype == kFloat) {
    float f;
    std::memcpy(&f, &raw[4 * i], 4);
    return f;
  }
  const uint16_t b = uint16_t(raw[2 * i] | raw[2 * i + 1] << 8);
  return dtype == kFloat16 ? num::f16ToFloat(b) : num::bf16ToFloat(b);
}

/// "round" tensors (fp8.rounded_weight): every element of an f32, f16 or
/// bf16 source rounded to BF16 as the spec says and moved to its permuted
/// place, whatever the band size and thread count; through JSON and back;
/// a wrong shape, dtype or permutation is refused.
TEST(Pack, RoundedWeightsAreBF16Permuted) {
  TempDir dir;
  struct Case {
    int32_t dtype;
    Shape shape, perm;
  };
  const Case cases[] = {{kFloat, {96, 40}, {1, 0}},
                        {kFloat16, {33, 70}, {1, 0}},
                        {kBFloat16, {64, 48}, {1, 0}},
                        {kFloat16, {5, 12, 7}, {0, 2, 1}},
                        {kFloat, {130, 3}, {}}};
  unsigned seed = 40;
  for (const Case &c : cases) {
    SCOPED_TRACE(std::to_string(c.dtype) + " rank " +
                 std::to_string(c.shape.size()));
    const std::vector<uint8_t> raw =
        makeValues(c.dtype, count(c.shape), seed++, true);
    writeFile(dir / "r.bin", raw);
    Tensor t = copyTensor("r", makeSource("r.bin", 0, c.dtype, c.shape));
    t.kind = Tensor::Kind::Round;
    t.dtype = kBFloat16;
    t.permutation = c.perm;
    for (size_t i = 0; i < c.perm.size(); ++i)
      t.shape[i] = c.shape[c.perm[i]];
    const Manifest m = makeManifest({t});
    std::vector<uint8_t> first;
    for (auto [chunk, threads] : {std::pair<uint64_t, unsigned>{1 << 20, 1},
                                  {1 << 20, 4},
                                  {100, 3},
                                  {1, 2}}) {
      PackOptions o;
      o.dataDir = dir.path;
      o.chunkBytes = chunk;
      o.threads = threads;
      ASSERT_EQ(packWeights(m, o, dir / "out.fp8w"), "");
      Weights w(dir / "out.fp8w", m.fingerprint);
      const std::vector<uint8_t> got = w.bytes("r", kBFloat16, t.shape);
      ASSERT_EQ(got.size(), size_t(count(c.shape)) * 2);
      if (first.empty()) {
        first = got;
        // Source element (i, j[, k]) at its permuted place.
        const int64_t rank = int64_t(c.shape.size());
        Shape index(rank, 0);
        for (int64_t e = 0; e < count(c.shape); ++e) {
          int64_t at = 0;
          for (int64_t d = 0; d < rank; ++d)
            at = at * t.shape[d] + index[c.perm.empty() ? d : c.perm[d]];
          const uint16_t b = uint16_t(got[2 * at] | got[2 * at + 1] << 8);
          ASSERT_TRUE(isReferenceBF16(widen(raw, c.dtype, e), b))
              << "element " << e << " -> " << at << ": " << std::hex << b;
          for (int64_t d = rank; d-- > 0;)
            if (++index[d] < c.shape[d])
              break;
            else
              index[d] = 0;
        }
      } else {
        EXPECT_TRUE(got == first)
            << "chunk " << chunk << ", threads " << threads;
      }
    }
    Manifest back;
    ASSERT_EQ(parseManifest(toJSON(m), back, "m.json"), "");
    EXPECT_EQ(back.tensors[0].kind, Tensor::Kind::Round);
    EXPECT_EQ(back.tensors[0].permutation, c.perm);
    EXPECT_EQ(toJSON(back), toJSON(m));
  }
  // Refusals: a shape that is not the permuted source's, another dtype, a
  // bad permutation, an FP8 source.
  Tensor t = copyTensor("r", makeSource("r.bin", 0, kFloat16, {8, 4}));
  t.kind = Tensor::Kind::Round;
  t.dtype = kBFloat16;
  t.permutation = {1, 0};
  Manifest back;
  auto refused = [&](const Tensor &bad, const std::string &mention) {
    const std::string e =
        parseManifest(toJSON(makeManifest({bad})), back, "m.json");
    EXPECT_NE(e.find(mention), std::string::npos) << e;
  };
  refused(t, "a rounding of 8x4 f16 is 4x8 bf16, not 8x4 bf16");
  Tensor u = t;
  u.shape = {4, 8};
  u.dtype = kFloat16;
  refused(u, "not 4x8 f16");
  u = t;
  u.shape = {4, 8};
  u.permutation = {1, 1};
  refused(u, "the permutation is not one of 0..2 - 1");
  u = t;
  u.shape = {4, 8};
  u.source = makeSource("r.bin", 0, kFloat8E4M3FN, {8, 4});
  refused(u, "only f32, f16 and bf16 sources are quantized");
}

//===----------------------------------------------------------------------===//
// (d) bad manifests
//===----------------------------------------------------------------------===//

struct BadCase {
  const char *problem;
  std::function<void(json &)> edit;
  std::vector<std::string> mentions;
};

TEST(Pack, BadManifestsAreRejected) {
  const json good = json::parse(toJSON(jsonManifest()));
  // tensors: 0 w.copy, 1 w.data, 2 w.scale, 3 v.data, 4 v.scale, 5 lit.
  const std::vector<BadCase> bad = {
      {"wrong version", [](json &j) { j["version"] = 2; }, {"version 2"}},
      {"wrong format",
       [](json &j) { j["format"] = "something else"; },
       {"not an fp8-opt weights manifest"}},
      {"missing field",
       [](json &j) { j["tensors"][0]["source"].erase("offset"); },
       {"w.copy", "source.offset is missing"}},
      {"missing quantization",
       [](json &j) { j["tensors"][1].erase("quantization"); },
       {"w.data", "quantization is missing"}},
      {"mistyped field",
       [](json &j) { j["tensors"][1]["dtype"] = "e4m3"; },
       {"w.data", "dtype must be an integer, not string"}},
      {"fractional field",
       [](json &j) { j["tensors"][0]["source"]["length"] = 1.5; },
       {"w.copy", "length", "fractional"}},
      {"bad fingerprint",
       [](json &j) { j["fingerprint"] = "12345"; },
       {"fingerprint", "16 lowercase hex digits"}},
      {"zero fingerprint",
       [](json &j) { j["fingerprint"] = "0000000000000000"; },
       {"fingerprint is 0"}},
      {"bad dtype",
       [](json &j) { j["tensors"][0]["dtype"] = 99; },
       {"w.copy", "unsupported dtype (99)"}},
      {"data dtype not the format",
       [](json &j) { j["tensors"][1]["dtype"] = kFloat8E5M2; },
       {"w.data", "a data tensor of e5m2", "makes e4m3"}},
      {"scale dtype",
       [](json &j) { j["tensors"][2]["dtype"] = kFloat16; },
       {"w.scale", "a scale tensor of f16"}},
      {"scale shape",
       [](json &j) {
         j["tensors"][2]["shape"] = {3, 2};
       },
       {"w.scale", "a scale tensor of shape 3x2", "2x3"}},
      {"source dtype not quantizable",
       [](json &j) {
         j["tensors"][1]["source"]["dtype"] = 7; // int64, 8 bytes
         j["tensors"][1]["source"]["length"] = 480000;
       },
       {"w.data", "only f32, f16 and bf16"}},
      {"negative dim",
       [](json &j) { j["tensors"][0]["shape"][0] = -1; },
       {"w.copy", "negative"}},
      {"negative source dim",
       [](json &j) { j["tensors"][1]["source"]["shape"][1] = -200; },
       {"w.data", "negative"}},
      {"overflowing size",
       [](json &j) {
         j["tensors"][0]["shape"] = {int64_t(1) << 40, int64_t(1) << 40};
       },
       {"w.copy", "too many bytes"}},
      {"too many dims",
       [](json &j) {
         j["tensors"][5]["shape"] = json::array({1, 1, 1, 1, 1, 1, 1, 1, 1});
       },
       {"lit", "shape has 9 entries"}},
      {"duplicate name",
       [](json &j) { j["tensors"][3]["name"] = "w.data"; },
       {"tensor 3 ('w.data')", "also tensor 1", "distinct"}},
      {"empty name",
       [](json &j) { j["tensors"][5]["name"] = ""; },
       {"tensor 5", "an empty name"}},
      {"unknown kind",
       [](json &j) { j["tensors"][0]["kind"] = "move"; },
       {"w.copy", "kind \"move\""}},
      {"bad permutation",
       [](json &j) {
         j["tensors"][1]["quantization"]["permutation"] = {1, 1};
       },
       {"w.data", "permutation"}},
      {"permutation rank",
       [](json &j) {
         j["tensors"][1]["quantization"]["permutation"] = {1, 0, 2};
       },
       {"w.data", "permutation"}},
      {"data shape smaller than the permuted source",
       [](json &j) {
         for (int i : {1, 2})
           j["tensors"][i]["quantization"]["data_shape"] = {256, 299};
         j["tensors"][1]["shape"] = {256, 299};
       },
       {"w.data", "smaller than the (permuted) source shape", "299 < 300"}},
      {"data shape not the tensor's",
       [](json &j) {
         j["tensors"][1]["shape"] = {200, 300};
       },
       {"w.data", "shape 200x300", "data_shape is 256x384"}},
      {"block below 1",
       [](json &j) {
         j["tensors"][1]["quantization"]["block"] = {128, 0};
       },
       {"w.data", "block entry 0 is below 1"}},
      {"block rank",
       [](json &j) { j["tensors"][1]["quantization"]["block"] = {128}; },
       {"w.data", "block has 1 entries", "rank 2"}},
      {"negative eps",
       [](json &j) { j["tensors"][1]["quantization"]["eps"] = -1.0; },
       {"w.data", "eps"}},
      {"unknown scaling",
       [](json &j) { j["tensors"][1]["quantization"]["scaling"] = "delayed"; },
       {"w.data", "scaling"}},
      {"copy length mismatch",
       [](json &j) { j["tensors"][0]["source"]["length"] = 239999; },
       {"w.copy", "length 239999", "240000 bytes"}},
      {"copy shape mismatch",
       [](json &j) {
         j["tensors"][0]["shape"] = {200, 300};
       },
       {"w.copy", "a copy of 300x200 f32 cannot be 200x300 f32"}},
      {"location with ..",
       [](json &j) { j["tensors"][0]["source"]["location"] = "../x"; },
       {"w.copy", "'../x'", "'..' component"}},
      {"location with inner ..",
       [](json &j) { j["tensors"][1]["source"]["location"] = "a/../../x"; },
       {"w.data", "'..' component"}},
      {"absolute location",
       [](json &j) { j["tensors"][0]["source"]["location"] = "/abs"; },
       {"w.copy", "'/abs'", "absolute"}},
      {"empty location",
       [](json &j) { j["tensors"][0]["source"]["location"] = ""; },
       {"w.copy", "location is empty"}},
      {"file with a directory",
       [](json &j) { j["file"] = "dir/model.fp8w"; },
       {"\"file\"", "dir/model.fp8w"}},
      {"bad hash",
       [](json &j) { j["tensors"][5]["hash"] = "XYZ"; },
       {"lit", "hash"}},
      {"tensors not an array",
       [](json &j) { j["tensors"] = 3; },
       {"tensors must be an array"}},
  };
  for (const BadCase &c : bad) {
    SCOPED_TRACE(c.problem);
    json j = good;
    c.edit(j);
    Manifest m;
    const std::string error = parseManifest(j.dump(), m, "the-manifest.json");
    ASSERT_NE(error, "");
    EXPECT_NE(error.find("the-manifest.json"), std::string::npos) << error;
    for (const std::string &mention : c.mentions)
      EXPECT_NE(error.find(mention), std::string::npos)
          << "'" << mention << "' not in: " << error;
  }
  Manifest m;
  EXPECT_NE(parseManifest("{\"format\": ", m, "x.json")
                .find("x.json: not valid JSON"),
            std::string::npos);
  EXPECT_NE(parseManifest("[1, 2]", m, "x.json").find("must be an object"),
            std::string::npos);
  EXPECT_NE(parseManifest(std::string("\xff\xfe", 2), m, "x.json"), "");
  // packWeights checks a manifest built in memory the same way.
  Manifest built = jsonManifest();
  built.tensors[1].quant.block = {0, 128};
  TempDir dir;
  EXPECT_NE(pack(built, dir.path, dir / "o.fp8w").find("below 1"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// (e) confinement
//===----------------------------------------------------------------------===//

/// Packs one copy of `location` (64 bytes at offset 0) from `dir`.
std::string packLocation(const TempDir &dir, const std::string &location) {
  const Manifest m =
      makeManifest({copyTensor("t", makeSource(location, 0, kFloat, {16}))});
  return pack(m, dir.path, dir / "out.fp8w");
}

void expectError(const std::string &error,
                 const std::vector<std::string> &mentions) {
  ASSERT_NE(error, "");
  for (const std::string &mention : mentions)
    EXPECT_NE(error.find(mention), std::string::npos)
        << "'" << mention << "' not in: " << error;
}

TEST(Pack, SourcesStayInTheDataDirectory) {
  TempDir dir, outside;
  const std::vector<uint8_t> bytes(64, 1);
  writeFile(outside / "secret.bin", bytes);
  writeFile(dir / "inside.bin", bytes);
  ::mkdir((dir / "sub").c_str(), 0755);
  ASSERT_EQ(
      ::symlink((outside / "secret.bin").c_str(), (dir / "link.bin").c_str()),
      0);
  ASSERT_EQ(::symlink("../inside.bin", (dir / "sub/up.bin").c_str()), 0);
  ASSERT_EQ(::symlink(outside.path.c_str(), (dir / "out").c_str()), 0);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  writeFile(dir / "short.bin", std::vector<uint8_t>(63, 1));

  EXPECT_EQ(packLocation(dir, "inside.bin"), "");
  // A link that stays inside is fine.
  EXPECT_EQ(packLocation(dir, "sub/up.bin"), "");
  expectError(packLocation(dir, "link.bin"),
              {"tensor 't'", "link.bin", "initializer 'init.link.bin'",
               "leads out of the data directory"});
  expectError(packLocation(dir, "out/secret.bin"),
              {"out/secret.bin", "leads out of the data directory"});
  // A FIFO is refused without being opened (which would block).
  expectError(packLocation(dir, "fifo"), {"fifo", "not a regular file"});
  expectError(packLocation(dir, "sub"), {"sub", "not a regular file"});
  expectError(packLocation(dir, "short.bin"),
              {"short.bin", "ends early", "[0, 64)", "63-byte file"});
  expectError(packLocation(dir, "missing.bin"),
              {"missing.bin", "No such file"});
  // Nothing is created when a source fails its checks.
  ::unlink((dir / "out.fp8w").c_str());
  EXPECT_NE(packLocation(dir, "short.bin"), "");
  EXPECT_NE(::access((dir / "out.fp8w").c_str(), F_OK), 0);
  // The data directory may itself be a link.
  TempDir links;
  ASSERT_EQ(::symlink(dir.path.c_str(), (links / "model").c_str()), 0);
  const Manifest m = makeManifest(
      {copyTensor("t", makeSource("inside.bin", 0, kFloat, {16}))});
  EXPECT_EQ(pack(m, links / "model", dir / "o.fp8w"), "");
}

//===----------------------------------------------------------------------===//
// (f) literals
//===----------------------------------------------------------------------===//

/// A weights file holding `name` (f32 4x4) with `bytes`.
void writeBase(const std::string &path, const std::string &name,
               const std::vector<uint8_t> &bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  const int64_t dims[] = {4, 4};
  const fp8w_tensor_desc descs[] = {
      {"other", 5, kFloat8E4M3FN, 2, dims},
      {name.data(), name.size(), kFloat, 2, dims}};
  char error[256];
  fp8w_writer *w = fp8w_writer_create(fd, 42, descs, 2, error, sizeof(error));
  ASSERT_NE(w, nullptr) << error;
  const std::vector<uint8_t> other(16, 0x38);
  ASSERT_EQ(fp8w_writer_write(w, other.data(), other.size()), 0);
  ASSERT_EQ(fp8w_writer_write(w, bytes.data(), bytes.size()), 0);
  ASSERT_EQ(fp8w_writer_finish(w, error, sizeof(error)), 0) << error;
  ::close(fd);
}

TEST(Pack, LiteralsComeFromTheBaseFile) {
  TempDir dir;
  std::vector<uint8_t> lit(64);
  for (size_t i = 0; i < lit.size(); ++i)
    lit[i] = uint8_t(i * 7);
  writeBase(dir / "base.fp8w", "rope", lit);
  writeFile(dir / "w.bin", std::vector<uint8_t>(64, 9));
  const Source s = makeSource("w.bin", 0, kFloat, {16});
  Manifest m = makeManifest(
      {copyTensor("w", s), literalTensor("rope", kFloat, {4, 4}, lit)});
  Weights base(dir / "base.fp8w");
  ASSERT_NE(base.get(), nullptr);

  ASSERT_EQ(pack(m, dir.path, dir / "out.fp8w", 1 << 20, base.get()), "");
  {
    Weights out(dir / "out.fp8w", m.fingerprint);
    EXPECT_TRUE(out.bytes("rope", kFloat, {4, 4}) == lit);
  }
  // Without a base: the error says what to give.
  expectError(pack(m, dir.path, dir / "out2.fp8w"),
              {"literal", "'rope'", "--base"});
  // Another build's literal: another hash.
  Manifest other = m;
  other.tensors[1].hash ^= 1;
  expectError(pack(other, dir.path, dir / "out2.fp8w", 1 << 20, base.get()),
              {"tensor 'rope'", "base.fp8w", "other bytes", "another build"});
  // Not in the base, or of another shape.
  other = m;
  other.tensors[1].name = "nope";
  expectError(pack(other, dir.path, dir / "out2.fp8w", 1 << 20, base.get()),
              {"tensor 'nope'", "does not hold"});
  other = m;
  other.tensors[1].shape = {16};
  expectError(pack(other, dir.path, dir / "out2.fp8w", 1 << 20, base.get()),
              {"tensor 'rope'", "the literal is 16 f32", "4x4 f32"});
  // A caller that holds the literals writes them itself.
  PackOptions o;
  o.dataDir = dir.path;
  o.writeLiteral = [&](const Tensor &t, fp8w_writer *w) -> std::string {
    EXPECT_EQ(t.name, "rope");
    return fp8w_writer_write(w, lit.data(), lit.size()) ? "failed" : "";
  };
  ASSERT_EQ(packWeights(m, o, dir / "out3.fp8w"), "");
  EXPECT_TRUE(readFile(dir / "out3.fp8w") == readFile(dir / "out.fp8w"));
  o.writeLiteral = [](const Tensor &, fp8w_writer *) -> std::string {
    return "not available";
  };
  expectError(packWeights(m, o, dir / "out4.fp8w"),
              {"tensor 'rope'", "not available"});
}

} // namespace
