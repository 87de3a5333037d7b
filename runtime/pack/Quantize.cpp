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
// Held: the piece read (raw source bytes, decoded as used), per block its
// amax and its scale, and the output, FP8-sized (permuted and padded, it is
// not written in source order); while amaxes are computed on several
// threads, at most about a piece's size more (the per-task copies below).
//
// A piece's work is shared by up to `threads` threads (tasks taken from a
// counter): quantizing writes disjoint bytes; amaxes are computed either by
// tasks of whole bands (disjoint blocks) or into a copy of the piece's
// blocks per task, merged after. max is the same in any order, so the
// output does not depend on the number of threads. Per element: the amax
// is a max of the raw bits with the sign cleared (|x| orders as those
// bits, NaN above infinity), x / scale is the FP32 division, and the cast
// is numerics::castToFP8Fast (castToFP8's function, on integers).
//
//===----------------------------------------------------------------------===//

#include "PackInternal.h"

#include "fp8/Numerics/Numerics.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <system_error>
#include <thread>
#include <type_traits>

namespace fp8rt::pack::detail {
namespace {

namespace num = mlir::fp8::numerics;

/// A task never has fewer elements than this (unless the piece has): a
/// thread costs about as much to start as quantizing this many.
constexpr uint64_t kMinTaskElements = uint64_t(1) << 14;
/// Tasks per thread in a piece: a slow thread or a short last task leaves
/// the others idle for a fraction of a task at most.
constexpr uint64_t kTasksPerThread = 4;
/// Per-task copies of the blocks' amaxes may take this much memory even
/// when the piece is smaller.
constexpr uint64_t kMinCopyBytes = uint64_t(1) << 20;
/// Where the output is transposed (its last dimension is not the source's),
/// a column of consecutive lines is usually consecutive bytes: groups of
/// kTileLines lines are quantized kTileColumns columns at a time into a
/// tile, then written a column at a time, cache line by cache line. (A byte
/// per cache line, line after line, is several times slower: with a
/// power-of-two stride the output's cache lines even compete for the same
/// few sets.)
constexpr uint64_t kTileLines = 64, kTileColumns = 64;
/// Elements quantized per batch (quantizeLine).
constexpr size_t kBatch = 64;

float floatOf(uint32_t u) {
  float v;
  std::memcpy(&v, &u, sizeof(v));
  return v;
}

/// numerics::f16ToFloat of every binary16 bit pattern (256 KiB, built
/// once): a load per element instead of a call and branches.
const float *f16Table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(size_t(1) << 16);
    for (uint32_t h = 0; h < t.size(); ++h)
      t[h] = num::f16ToFloat(uint16_t(h));
    return t;
  }();
  return table.data();
}

/// The quantizable dtypes: their raw bits (`Bits`, little-endian in the
/// source), widened to FP32 exactly as the folders widen constants.
/// `Bits & kAbs` is |x|, which orders as an unsigned integer.
struct F32 {
  using Bits = uint32_t;
  static constexpr Bits kAbs = 0x7FFFFFFF;
  float value(Bits b) const { return floatOf(b); }
};
struct F16 {
  using Bits = uint16_t;
  static constexpr Bits kAbs = 0x7FFF;
  const float *table = f16Table();
  float value(Bits b) const { return table[b]; }
};
struct BF16 {
  using Bits = uint16_t;
  static constexpr Bits kAbs = 0x7FFF;
  float value(Bits b) const { return num::bf16ToFloat(b); }
};

template <typename D> typename D::Bits bitsAt(const uint8_t *p, uint64_t i) {
  typename D::Bits b;
  std::memcpy(&b, p + sizeof(b) * i, sizeof(b));
  return b;
}

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

/// Calls fn with the format as a compile-time constant: the cast's
/// parameters become immediates in the element loops.
template <typename Fn> void withFormat(num::Fmt fmt, Fn &&fn) {
  if (fmt == num::Fmt::E4M3)
    fn(std::integral_constant<num::Fmt, num::Fmt::E4M3>{});
  else
    fn(std::integral_constant<num::Fmt, num::Fmt::E5M2>{});
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

/// Elements [begin, end) cut into `count` tasks of `size` (the last may be
/// shorter).
struct Tasks {
  Tasks(uint64_t from, uint64_t to, uint64_t perTask)
      : begin(from), end(to), size(std::max<uint64_t>(1, perTask)),
        count(ceilDiv(to - from, size)) {}
  uint64_t first(uint64_t t) const { return begin + t * size; }
  uint64_t last(uint64_t t) const { return std::min(end, first(t) + size); }

  uint64_t begin, end, size, count;
};

/// Runs work(t) for every t in [0, tasks) on up to `threads` threads, the
/// caller's included, each taking the next task from a shared counter. The
/// tasks write disjoint memory, so which thread runs which changes nothing.
/// A thread the system refuses to start leaves its share to the others.
template <typename Work>
void runTasks(unsigned threads, uint64_t tasks, const Work &work) {
  std::atomic<uint64_t> next{0};
  auto worker = [&] {
    for (uint64_t t;
         (t = next.fetch_add(1, std::memory_order_relaxed)) < tasks;)
      work(t);
  };
  const uint64_t helpers =
      std::max<uint64_t>(1, std::min<uint64_t>(threads, tasks)) - 1;
  std::vector<std::thread> started;
  started.reserve(helpers);
  for (uint64_t i = 0; i < helpers; ++i) {
    try {
      started.emplace_back(worker);
    } catch (const std::system_error &) {
      break;
    }
  }
  worker();
  for (std::thread &t : started)
    t.join();
}

/// Columns [from, to) of a line (the last dimension) of the source: the
/// elements from `first` on (row-major). Column c is in the block of grid
/// index blockBase + c / Layout::lineBlock and lands at data index outBase
/// + c * Layout::dataStep.
struct Line {
  uint64_t first, from, to, blockBase, outBase;
};

/// The geometry of one quantization, indexed by source dimension: each
/// element's block, the index of its block in the (unpermuted, row-major)
/// grid of blocks, and where it lands in the permuted, padded data. A
/// scalar is treated as shape [1].
class Layout {
public:
  Layout(const Source &s, const Quantization &q);

  /// Calls fn(Line) for each line holding source elements of [begin, end),
  /// in order.
  template <typename Fn>
  void forEachLine(uint64_t begin, uint64_t end, Fn &&fn) const;

  /// Scales in grid order (`bytes` each) in the output's permuted order.
  std::vector<uint8_t> permuteScales(const std::vector<uint8_t> &inGrid,
                                     size_t bytes) const;

  uint64_t elements;     // of the source
  uint64_t rows;         // source dimension 0
  uint64_t rowElements;  // elements per index of dimension 0
  uint64_t block0;       // block[0]
  uint64_t bandElements; // elements of a band: min(block0, rows) rows
  uint64_t gridRow;      // grid entries per block index of dimension 0
  uint64_t gridCount;    // blocks (= scales)
  uint64_t dataCount;    // FP8 bytes of the output, padding included
  uint64_t dataStep;     // data stride of the last source dimension
  uint64_t lineLength;   // the last source dimension
  uint64_t lineBlock;    // the block size of the last dimension

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
  bandElements = std::min(block0, rows) * rowElements;
  gridRow = product(grid, 1);
  gridCount = product(grid);
  dataCount = product(padded);
  dataStep = dataStride[rank - 1];
  lineLength = shape[rank - 1];
  lineBlock = block[rank - 1];
}

template <typename Fn>
void Layout::forEachLine(uint64_t begin, uint64_t end, Fn &&fn) const {
  const size_t last = shape.size() - 1;
  while (begin < end) {
    const uint64_t line = begin / lineLength, from = begin % lineLength;
    const uint64_t to = from + std::min(end - begin, lineLength - from);
    uint64_t blockBase = 0, outBase = 0, rest = line;
    for (size_t d = last; d-- > 0;) {
      const uint64_t i = rest % shape[d];
      rest /= shape[d];
      blockBase += i / block[d] * gridStride[d];
      outBase += i * dataStride[d];
    }
    fn(Line{begin, from, to, blockBase, outBase});
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
            const ReadSource &read, uint64_t chunkBytes, unsigned threads)
      : source(source), quant(quant), read(read), layout(source, quant),
        fmt(quant.format == kFloat8E5M2 ? num::Fmt::E5M2 : num::Fmt::E4M3),
        chunkBytes(std::max<uint64_t>(1, chunkBytes)),
        elementBytes(source.dtype == kFloat ? 4 : 2),
        threads(std::max(1u, threads)) {}

  std::string run(bool needData, Quantized &out);

private:
  bool mx() const { return quant.scaling == Quantization::Scaling::MX; }
  unsigned threadsFor(uint64_t elements) const;
  std::string load(uint64_t begin, uint64_t end);
  void accumulate(uint64_t begin, uint64_t end);
  template <typename D>
  void accumulateRange(uint64_t begin, uint64_t end, uint32_t *blocks,
                       uint64_t firstBlock) const;
  void computeScales(uint64_t begin, uint64_t end);
  void quantizeInto(uint64_t begin, uint64_t end, uint8_t *data) const;
  template <typename D, num::Fmt F>
  void quantizeLine(const Line &l, uint64_t from, uint64_t to, uint8_t *out,
                    uint64_t stride) const;
  template <typename D, num::Fmt F>
  void quantizeRange(uint64_t begin, uint64_t end, uint8_t *data) const;
  std::string byBands(uint8_t *data);
  std::string inTwoPasses(uint8_t *data);
  std::vector<uint8_t> gridScales() const;

  const Source &source;
  const Quantization &quant;
  const ReadSource &read;
  const Layout layout;
  const num::Fmt fmt;
  const uint64_t chunkBytes, elementBytes;
  const unsigned threads;
  std::vector<uint8_t> piece; // the source elements last loaded...
  uint64_t pieceBegin = 0;    // ...from this one on
  std::vector<uint32_t> amax; // per block: the largest |x|, as raw bits
  std::vector<float> value;   // per block: its scale's value
  std::vector<uint8_t> e8m0;  // per block, MX: its scale
};

/// Threads for `elements` of work: each gets kMinTaskElements at least.
unsigned Quantizer::threadsFor(uint64_t elements) const {
  return unsigned(
      std::clamp<uint64_t>(elements / kMinTaskElements, 1, threads));
}

/// Reads source elements [begin, end) into `piece`.
std::string Quantizer::load(uint64_t begin, uint64_t end) {
  piece.resize((end - begin) * elementBytes);
  pieceBegin = begin;
  return read(begin * elementBytes, piece.size(), piece.data());
}

/// Folds elements [begin, end) of `piece` into the amaxes of their blocks,
/// blocks[g - firstBlock] for grid index g, as fp8.amax does: the largest
/// |x|, NaN once a NaN is seen (a NaN's bits are above infinity's).
template <typename D>
void Quantizer::accumulateRange(uint64_t begin, uint64_t end, uint32_t *blocks,
                                uint64_t firstBlock) const {
  const uint8_t *p = piece.data();
  const uint64_t width = layout.lineBlock;
  layout.forEachLine(begin, end, [&](const Line &l) {
    // Column c is element k0 + c of the piece (modulo 2^64: k0 may wrap).
    const uint64_t k0 = l.first - pieceBegin - l.from;
    uint32_t *line = blocks + (l.blockBase - firstBlock);
    if (width == 1) { // a block per column: no run to keep in a register
      for (uint64_t c = l.from; c < l.to; ++c)
        line[c] = std::max<uint32_t>(line[c], bitsAt<D>(p, k0 + c) & D::kAbs);
      return;
    }
    for (uint64_t c = l.from; c < l.to;) {
      const uint64_t b = c / width, next = std::min(l.to, (b + 1) * width);
      uint32_t m = line[b];
      for (; c < next; ++c)
        m = std::max<uint32_t>(m, bitsAt<D>(p, k0 + c) & D::kAbs);
      line[b] = m;
    }
  });
}

/// The amaxes of elements [begin, end), in `piece`, on up to `threads`
/// threads.
void Quantizer::accumulate(uint64_t begin, uint64_t end) {
  withDecoder(source.dtype, [&](auto decoder) {
    using D = decltype(decoder);
    const uint64_t n = end - begin, bandElements = layout.bandElements;
    const uint64_t firstBand = begin / bandElements;
    const uint64_t bands = ceilDiv(end, bandElements) - firstBand;
    const unsigned t = threadsFor(n);
    if (t > 1 && begin % bandElements == 0 && bands >= 2 * uint64_t(t)) {
      // Tasks of whole bands: no two share a block.
      const Tasks tasks(begin, end,
                        std::max<uint64_t>(1, bands / (t * kTasksPerThread)) *
                            bandElements);
      runTasks(t, tasks.count, [&](uint64_t i) {
        accumulateRange<D>(tasks.first(i), tasks.last(i), amax.data(), 0);
      });
      return;
    }
    // A few bands (or one: per-tensor scaling) shared by the tasks: each
    // folds into its own copy of the piece's blocks, merged after. Fewer
    // tasks where the copies would take more memory than the piece.
    const uint64_t firstBlock = firstBand * layout.gridRow,
                   span = bands * layout.gridRow;
    const uint64_t budget = std::max(n * elementBytes, kMinCopyBytes);
    const uint64_t copies =
        std::clamp<uint64_t>(budget / (span * sizeof(uint32_t)), 1, t);
    if (copies == 1) {
      accumulateRange<D>(begin, end, amax.data(), 0);
      return;
    }
    std::vector<uint32_t> partial(copies * span, 0);
    const Tasks tasks(begin, end, ceilDiv(n, copies));
    runTasks(unsigned(copies), tasks.count, [&](uint64_t i) {
      accumulateRange<D>(tasks.first(i), tasks.last(i),
                         partial.data() + i * span, firstBlock);
    });
    for (uint64_t i = 0; i < tasks.count; ++i)
      for (uint64_t g = 0; g < span; ++g)
        amax[firstBlock + g] =
            std::max(amax[firstBlock + g], partial[i * span + g]);
  });
}

/// Turns the complete amaxes of blocks [begin, end) into scales.
void Quantizer::computeScales(uint64_t begin, uint64_t end) {
  const auto rounding =
      quant.rceil ? num::MXRounding::RCeil : num::MXRounding::Floor;
  withDecoder(source.dtype, [&](auto decoder) {
    using Bits = typename decltype(decoder)::Bits;
    for (uint64_t b = begin; b < end; ++b) {
      const float a = decoder.value(Bits(amax[b]));
      if (mx()) {
        e8m0[b] = num::mxScale(a, fmt, rounding);
        value[b] = num::e8m0ToFloat(e8m0[b]);
      } else {
        value[b] = num::currentScale(a, fmt, quant.eps, quant.pow2);
      }
    }
  });
}

/// FP8 bytes of columns [from, to) of line `l`, in `piece`: column c's to
/// out[(c - from) * stride]. In batches of one scale (one block, or one
/// column where blocks are one column wide): decoded, divided, cast, each
/// a loop of its own, so that the divisions are the vector unit's (still
/// one IEEE FP32 division per element).
template <typename D, num::Fmt F>
void Quantizer::quantizeLine(const Line &l, uint64_t from, uint64_t to,
                             uint8_t *out, uint64_t stride) const {
  const D decoder;
  const uint8_t *p = piece.data();
  const uint64_t width = layout.lineBlock;
  const uint64_t k0 = l.first - pieceBegin - l.from; // as in accumulateRange
  const float *scales = value.data() + l.blockBase;
  for (uint64_t c = from; c < to;) {
    const uint64_t next =
        width == 1 ? std::min(to, c + kBatch)
                   : std::min({to, (c / width + 1) * width, c + kBatch});
    const size_t n = size_t(next - c);
    float q[kBatch];
    for (size_t i = 0; i < n; ++i)
      q[i] = decoder.value(bitsAt<D>(p, k0 + c + i));
    if (width == 1) {
      for (size_t i = 0; i < n; ++i)
        q[i] = q[i] / scales[c + i];
    } else {
      const float scale = scales[c / width];
      for (size_t i = 0; i < n; ++i)
        q[i] = q[i] / scale;
    }
    for (size_t i = 0; i < n; ++i, out += stride)
      *out = num::castToFP8Fast(q[i], F);
    c = next;
  }
}

/// FP8 bytes of elements [begin, end), in `piece`, to their places.
template <typename D, num::Fmt F>
void Quantizer::quantizeRange(uint64_t begin, uint64_t end,
                              uint8_t *data) const {
  const uint64_t step = layout.dataStep;
  if (step == 1) {
    layout.forEachLine(begin, end, [&](const Line &l) {
      quantizeLine<D, F>(l, l.from, l.to, data + l.outBase + l.from, 1);
    });
    return;
  }
  Line group[kTileLines];
  size_t lines = 0;
  auto quantizeGroup = [&] {
    bool columns = true; // the same columns, consecutive bytes of a column
    for (size_t i = 1; i < lines; ++i)
      columns &= group[i].from == group[0].from && group[i].to == group[0].to &&
                 group[i].outBase == group[0].outBase + i;
    if (!columns) {
      for (size_t i = 0; i < lines; ++i)
        quantizeLine<D, F>(group[i], group[i].from, group[i].to,
                           data + group[i].outBase + group[i].from * step,
                           step);
      lines = 0;
      return;
    }
    // Transposed in a tile (in L1), then written a column (the lines'
    // bytes) at a time.
    uint8_t tile[kTileColumns * kTileLines];
    const Line &l0 = group[0];
    for (uint64_t c0 = l0.from; c0 < l0.to; c0 += kTileColumns) {
      const uint64_t c1 = std::min(l0.to, c0 + kTileColumns);
      for (size_t i = 0; i < lines; ++i)
        quantizeLine<D, F>(group[i], c0, c1, tile + i, lines);
      for (uint64_t c = c0; c < c1; ++c)
        std::memcpy(data + l0.outBase + c * step, tile + (c - c0) * lines,
                    lines);
    }
    lines = 0;
  };
  layout.forEachLine(begin, end, [&](const Line &l) {
    group[lines++] = l;
    if (lines == kTileLines)
      quantizeGroup();
  });
  if (lines)
    quantizeGroup();
}

/// quantizeRange on up to `threads` threads, in tasks whose sizes are
/// whole lines (whole groups of kTileLines where a task is that large)
/// where lines are shorter than a task.
void Quantizer::quantizeInto(uint64_t begin, uint64_t end,
                             uint8_t *data) const {
  const uint64_t n = end - begin;
  const unsigned t = threadsFor(n);
  uint64_t size = t == 1 ? n : ceilDiv(n, t * kTasksPerThread);
  const uint64_t line = layout.lineLength, group = kTileLines * line;
  if (size > group)
    size = ceilDiv(size, group) * group;
  else if (size > line)
    size = ceilDiv(size, line) * line;
  const Tasks tasks(begin, end, size);
  withDecoder(source.dtype, [&](auto decoder) {
    using D = decltype(decoder);
    withFormat(fmt, [&](auto format) {
      runTasks(t, tasks.count, [&](uint64_t i) {
        quantizeRange<D, decltype(format)::value>(tasks.first(i), tasks.last(i),
                                                  data);
      });
    });
  });
}

std::string Quantizer::byBands(uint8_t *data) {
  const uint64_t rows = layout.rows, bandRows = layout.block0;
  const uint64_t bandBytes = layout.bandElements * elementBytes;
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
  amax.assign(layout.gridCount, 0);
  value.assign(layout.gridCount, 0.0f);
  if (mx())
    e8m0.assign(layout.gridCount, 0);
  out.data.assign(needData ? layout.dataCount : 0, 0x00);
  uint8_t *data = needData ? out.data.data() : nullptr;
  if (layout.elements != 0) {
    const uint64_t bandBytes = layout.bandElements * elementBytes;
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
                     uint64_t chunkBytes, unsigned threads, bool needData,
                     const ReadSource &read, Quantized &out) {
  return Quantizer(source, quant, read, chunkBytes, threads).run(needData, out);
}

} // namespace fp8rt::pack::detail
