//===- Quantize.cpp - One weight's quantization, streamed -----------------===//
//
// Part of fp8-opt. The FP8 data and the scales of a Quantization
// (fp8rt/pack.h) of one source tensor, bit for bit what the constant folders
// of fp8.amax, fp8.compute_scale, fp8.quantize and fp8.transpose compute
// (lib/Dialect/FP8/IR/FP8Ops.cpp): the same fp8/Numerics scalars, FP32
// division, NaN-propagating amax.
//
// The source is read, never held whole:
//  * by bands: a band is block[0] indices of dimension 0, so it holds whole
//    blocks; as many bands as fit in chunkBytes (at least one) are read at
//    once, their blocks' amaxes and scales computed, and their elements
//    quantized, in one read of the source;
//  * in two passes, when one band is the whole tensor (per-tensor scaling,
//    blocks spanning dimension 0) and larger than chunkBytes: pieces of
//    chunkBytes for the amaxes, then again for the FP8 bytes.
// Held: the piece read (raw source bytes, decoded as used), one float per
// block, and the output, FP8-sized (permuted and padded, it is not written
// in source order).
//
//===----------------------------------------------------------------------===//

#include "PackInternal.h"

#include "fp8/Numerics/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace fp8rt::pack::detail {
namespace {

namespace num = mlir::fp8::numerics;

/// Element i of a little-endian buffer of each quantizable dtype, widened
/// to FP32 exactly, as the folders widen constants.
struct F32 {
  static float at(const uint8_t *p, uint64_t i) {
    float v;
    std::memcpy(&v, p + 4 * i, 4);
    return v;
  }
};
struct F16 {
  static float at(const uint8_t *p, uint64_t i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return num::f16ToFloat(h);
  }
};
struct BF16 {
  static float at(const uint8_t *p, uint64_t i) {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return num::bf16ToFloat(h);
  }
};

/// Calls fn with the decoder of `dtype` (validated: f32, f16 or bf16), so
/// that the element loops are compiled once per dtype.
template <typename Fn> void withDecoder(int32_t dtype, Fn &&fn) {
  if (dtype == kFloat)
    fn(F32{});
  else if (dtype == kFloat16)
    fn(F16{});
  else
    fn(BF16{});
}

uint64_t ceilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

uint64_t product(const std::vector<uint64_t> &v, size_t from = 0) {
  uint64_t p = 1;
  for (size_t i = from; i < v.size(); ++i)
    p *= v[i];
  return p;
}

std::vector<uint64_t> rowMajorStrides(const std::vector<uint64_t> &shape) {
  std::vector<uint64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// The geometry of one quantization, indexed by source dimension: each
/// element's block, the index of its block in the (unpermuted, row-major)
/// grid of blocks, and where it lands in the permuted, padded data. A
/// scalar is treated as shape [1].
class Layout {
public:
  Layout(const Source &s, const Quantization &q);

  /// Calls fn(first, count, block, out) for each run of `count` source
  /// elements from `first` (row-major) in [begin, end) that lie in one line
  /// (last dimension) and one block: `block` is the grid index of their
  /// block, `out` the data index of the first (then + dataStep each).
  template <typename Fn>
  void forEachRun(uint64_t begin, uint64_t end, Fn &&fn) const;

  /// Scales in grid order (`bytes` each) in the output's permuted order.
  std::vector<uint8_t> permuteScales(const std::vector<uint8_t> &inGrid,
                                     size_t bytes) const;

  uint64_t elements;    // of the source
  uint64_t rows;        // source dimension 0
  uint64_t rowElements; // elements per index of dimension 0
  uint64_t block0;      // block[0]
  uint64_t gridRow;     // grid entries per block index of dimension 0
  uint64_t gridCount;   // blocks (= scales)
  uint64_t dataCount;   // FP8 bytes of the output, padding included
  uint64_t dataStep;    // data stride of the last source dimension

private:
  std::vector<uint64_t> shape, block, grid, gridStride;
  std::vector<uint64_t> dataStride, scaleStride; // of source dimensions
};

Layout::Layout(const Source &s, const Quantization &q) {
  const size_t rank = std::max<size_t>(1, s.shape.size());
  shape.assign(rank, 1);
  block.assign(rank, 1);
  std::vector<uint64_t> padded(rank, 1), perm(rank);
  for (size_t d = 0; d < s.shape.size(); ++d) {
    shape[d] = uint64_t(s.shape[d]);
    block[d] = uint64_t(q.block[d]);
    padded[d] = uint64_t(q.dataShape[d]);
  }
  for (size_t i = 0; i < rank; ++i)
    perm[i] = q.permutation.empty() ? i : uint64_t(q.permutation[i]);
  grid.resize(rank);
  for (size_t d = 0; d < rank; ++d)
    grid[d] = ceilDiv(shape[d], block[d]);
  gridStride = rowMajorStrides(grid);
  // Output dimension i is source dimension perm[i], for data and scales.
  std::vector<uint64_t> permutedGrid(rank);
  for (size_t i = 0; i < rank; ++i)
    permutedGrid[i] = grid[perm[i]];
  const std::vector<uint64_t> ds = rowMajorStrides(padded),
                              ss = rowMajorStrides(permutedGrid);
  dataStride.resize(rank);
  scaleStride.resize(rank);
  for (size_t i = 0; i < rank; ++i) {
    dataStride[perm[i]] = ds[i];
    scaleStride[perm[i]] = ss[i];
  }
  elements = product(shape);
  rows = shape[0];
  rowElements = product(shape, 1);
  block0 = block[0];
  gridRow = product(grid, 1);
  gridCount = product(grid);
  dataCount = product(padded);
  dataStep = dataStride[rank - 1];
}

template <typename Fn>
void Layout::forEachRun(uint64_t begin, uint64_t end, Fn &&fn) const {
  const size_t last = shape.size() - 1;
  const uint64_t length = shape[last], width = block[last];
  while (begin < end) {
    const uint64_t line = begin / length, from = begin % length;
    const uint64_t to = from + std::min(end - begin, length - from);
    uint64_t blockBase = 0, outBase = 0, rest = line;
    for (size_t d = last; d-- > 0;) {
      const uint64_t i = rest % shape[d];
      rest /= shape[d];
      blockBase += i / block[d] * gridStride[d];
      outBase += i * dataStride[d];
    }
    // Block b of the line covers columns [b * width, (b + 1) * width).
    uint64_t b = from / width, blockEnd = (b + 1) * width;
    for (uint64_t c = from; c < to; ++b, blockEnd += width) {
      const uint64_t next = std::min(blockEnd, to);
      fn(begin + (c - from), next - c, blockBase + b, outBase + c * dataStep);
      c = next;
    }
    begin += to - from;
  }
}

std::vector<uint8_t> Layout::permuteScales(const std::vector<uint8_t> &inGrid,
                                           size_t bytes) const {
  std::vector<uint8_t> out(inGrid.size());
  std::vector<uint64_t> index(grid.size(), 0);
  for (uint64_t g = 0; g < gridCount; ++g) {
    uint64_t o = 0;
    for (size_t d = 0; d < grid.size(); ++d)
      o += index[d] * scaleStride[d];
    std::memcpy(&out[o * bytes], &inGrid[g * bytes], bytes);
    for (size_t d = grid.size(); d-- > 0;) {
      if (++index[d] < grid[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

/// One quantization, computed from pieces of the source.
class Quantizer {
public:
  Quantizer(const Source &source, const Quantization &quant,
            const ReadSource &read, uint64_t chunkBytes)
      : source(source), quant(quant), read(read), layout(source, quant),
        fmt(quant.format == kFloat8E5M2 ? num::Fmt::E5M2 : num::Fmt::E4M3),
        chunkBytes(std::max<uint64_t>(1, chunkBytes)),
        elementBytes(source.dtype == kFloat ? 4 : 2) {}

  std::string run(bool needData, Quantized &out);

private:
  bool mx() const { return quant.scaling == Quantization::Scaling::MX; }
  std::string load(uint64_t begin, uint64_t end);
  void accumulate(uint64_t begin, uint64_t end);
  void computeScales(uint64_t begin, uint64_t end);
  void quantizeInto(uint64_t begin, uint64_t end, uint8_t *data) const;
  std::string byBands(uint8_t *data);
  std::string inTwoPasses(uint8_t *data);
  std::vector<uint8_t> gridScales() const;

  const Source &source;
  const Quantization &quant;
  const ReadSource &read;
  const Layout layout;
  const num::Fmt fmt;
  const uint64_t chunkBytes, elementBytes;
  std::vector<uint8_t> piece; // the source elements last loaded
  std::vector<float> value;   // per block: its amax, then its scale's value
  std::vector<uint8_t> e8m0;  // per block, MX: its scale
};

/// Reads source elements [begin, end) into `piece`.
std::string Quantizer::load(uint64_t begin, uint64_t end) {
  piece.resize((end - begin) * elementBytes);
  return read(begin * elementBytes, piece.size(), piece.data());
}

/// Folds elements [begin, end), in `piece`, into their blocks' amaxes as
/// fp8.amax does: the largest |x|, NaN once a NaN is seen.
void Quantizer::accumulate(uint64_t begin, uint64_t end) {
  withDecoder(source.dtype, [&](auto decoder) {
    using Decoder = decltype(decoder);
    const uint8_t *p = piece.data();
    layout.forEachRun(
        begin, end,
        [&](uint64_t first, uint64_t count, uint64_t block, uint64_t) {
          float m = value[block];
          for (uint64_t k = first - begin, stop = k + count; k < stop; ++k) {
            const float a = std::fabs(Decoder::at(p, k));
            if (std::isnan(a) || std::isnan(m))
              m = NAN;
            else if (a > m)
              m = a;
          }
          value[block] = m;
        });
  });
}

/// Turns the complete amaxes of blocks [begin, end) into scales.
void Quantizer::computeScales(uint64_t begin, uint64_t end) {
  const auto rounding =
      quant.rceil ? num::MXRounding::RCeil : num::MXRounding::Floor;
  for (uint64_t b = begin; b < end; ++b) {
    if (mx()) {
      e8m0[b] = num::mxScale(value[b], fmt, rounding);
      value[b] = num::e8m0ToFloat(e8m0[b]);
    } else {
      value[b] = num::currentScale(value[b], fmt, quant.eps, quant.pow2);
    }
  }
}

/// FP8 bytes of elements [begin, end), in `piece`, to their places.
void Quantizer::quantizeInto(uint64_t begin, uint64_t end,
                             uint8_t *data) const {
  withDecoder(source.dtype, [&](auto decoder) {
    using Decoder = decltype(decoder);
    const uint8_t *p = piece.data();
    const uint64_t step = layout.dataStep;
    layout.forEachRun(
        begin, end,
        [&](uint64_t first, uint64_t count, uint64_t block, uint64_t out) {
          const float scale = value[block];
          for (uint64_t k = first - begin, stop = k + count; k < stop;
               ++k, out += step)
            data[out] = num::castToFP8(Decoder::at(p, k) / scale, fmt);
        });
  });
}

std::string Quantizer::byBands(uint8_t *data) {
  const uint64_t rows = layout.rows, bandRows = layout.block0;
  const uint64_t bandBytes =
      std::min(bandRows, rows) * layout.rowElements * elementBytes;
  const uint64_t bands = std::max<uint64_t>(1, chunkBytes / bandBytes);
  const uint64_t rowsPerPiece =
      bands > rows / bandRows ? rows : bands * bandRows;
  for (uint64_t r0 = 0; r0 < rows; r0 += rowsPerPiece) {
    const uint64_t r1 = std::min(rows, r0 + rowsPerPiece);
    const uint64_t begin = r0 * layout.rowElements,
                   end = r1 * layout.rowElements;
    if (std::string e = load(begin, end); !e.empty())
      return e;
    accumulate(begin, end);
    computeScales(r0 / bandRows * layout.gridRow,
                  ceilDiv(r1, bandRows) * layout.gridRow);
    if (data)
      quantizeInto(begin, end, data);
  }
  return "";
}

std::string Quantizer::inTwoPasses(uint8_t *data) {
  const uint64_t step = std::max<uint64_t>(1, chunkBytes / elementBytes);
  const uint64_t n = layout.elements;
  for (uint64_t begin = 0; begin < n; begin += step) {
    const uint64_t end = std::min(n, begin + step);
    if (std::string e = load(begin, end); !e.empty())
      return e;
    accumulate(begin, end);
  }
  computeScales(0, layout.gridCount);
  for (uint64_t begin = 0; data && begin < n; begin += step) {
    const uint64_t end = std::min(n, begin + step);
    if (std::string e = load(begin, end); !e.empty())
      return e;
    quantizeInto(begin, end, data);
  }
  return "";
}

/// The scales' bytes in grid order: E8M0 bits or FP32 values.
std::vector<uint8_t> Quantizer::gridScales() const {
  if (mx())
    return e8m0;
  std::vector<uint8_t> bytes(value.size() * sizeof(float));
  if (!value.empty())
    std::memcpy(bytes.data(), value.data(), bytes.size());
  return bytes;
}

std::string Quantizer::run(bool needData, Quantized &out) {
  value.assign(layout.gridCount, 0.0f);
  if (mx())
    e8m0.assign(layout.gridCount, 0);
  out.data.assign(needData ? layout.dataCount : 0, 0x00);
  uint8_t *data = needData ? out.data.data() : nullptr;
  if (layout.elements != 0) {
    const uint64_t bandBytes = std::min(layout.block0, layout.rows) *
                               layout.rowElements * elementBytes;
    const bool oneBand = layout.block0 >= layout.rows;
    std::string e =
        oneBand && bandBytes > chunkBytes ? inTwoPasses(data) : byBands(data);
    if (!e.empty())
      return e;
  }
  out.scales = layout.permuteScales(gridScales(), mx() ? 1 : sizeof(float));
  piece = {};
  return "";
}

} // namespace

std::string quantize(const Source &source, const Quantization &quant,
                     uint64_t chunkBytes, bool needData, const ReadSource &read,
                     Quantized &out) {
  return Quantizer(source, quant, read, chunkBytes).run(needData, out);
}

} // namespace fp8rt::pack::detail
