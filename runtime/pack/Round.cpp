//===- Round.cpp - A weight rounded to BF16 and permuted ------------------===//
//
// Part of fp8-opt. The packer's "round" tensors (fp8.rounded_weight): the
// BF16 operand of a product kept out of FP8, from a weight in the model's
// files, rounded as arith.truncf rounds (numerics::floatToBF16) and
// transposed K-major once, where the library would otherwise do both every
// run.
//
// The source is read in bands of whole rows of its first dimension (about
// chunkBytes each); each band's rows are shared by the threads (a
// contiguous run each), which write disjoint elements of the output (held
// whole: a permutation may send one band anywhere in it).
//
//===----------------------------------------------------------------------===//

#include "PackInternal.h"

#include "fp8/Numerics/Numerics.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace fp8rt::pack::detail {

namespace {

float decode(const uint8_t *p, int32_t dtype) {
  if (dtype == kFloat) {
    float f;
    std::memcpy(&f, p, sizeof(f));
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, p, sizeof(bits));
  return dtype == kFloat16 ? mlir::fp8::numerics::f16ToFloat(bits)
                           : mlir::fp8::numerics::bf16ToFloat(bits);
}

} // namespace

std::string roundToBF16(const Source &source,
                        const std::vector<int64_t> &permutation,
                        uint64_t chunkBytes, unsigned threads,
                        const ReadSource &read, std::vector<uint8_t> &out) {
  const std::vector<int64_t> &shape = source.shape;
  const size_t rank = shape.size();
  const uint64_t elt = source.dtype == kFloat ? 4 : 2;
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  out.assign(size_t(count) * 2, 0);
  if (count == 0)
    return "";
  // Where one step along each source dimension moves in the output.
  std::vector<int64_t> outStride(rank, 1), step(rank, 1);
  for (size_t i = rank; i-- > 1;)
    outStride[i - 1] =
        outStride[i] * (permutation.empty() ? shape[i] : shape[permutation[i]]);
  for (size_t i = 0; i < rank; ++i)
    step[permutation.empty() ? i : permutation[i]] = outStride[i];
  // Rows: the source's first dimension (a scalar or vector is one row).
  const int64_t rows = rank ? shape[0] : 1;
  const int64_t perRow = rank ? count / std::max<int64_t>(rows, 1) : 1;
  const uint64_t rowBytes = uint64_t(perRow) * elt;
  const int64_t band = std::max<int64_t>(
      1, int64_t(chunkBytes / std::max<uint64_t>(rowBytes, 1)));
  std::vector<uint8_t> buffer;
  uint16_t *dst = reinterpret_cast<uint16_t *>(out.data());
  for (int64_t r0 = 0; r0 < rows; r0 += band) {
    const int64_t n = std::min(band, rows - r0);
    buffer.resize(size_t(n * rowBytes));
    if (std::string e =
            read(uint64_t(r0) * rowBytes, n * rowBytes, buffer.data());
        !e.empty())
      return e;
    // One source row: its elements in row-major order (the multi-index
    // below dimension 0 carried by hand), each to its permuted place.
    auto convertRow = [&](int64_t r) {
      const uint8_t *src = buffer.data() + size_t((r - r0) * rowBytes);
      std::vector<int64_t> index(rank, 0);
      int64_t at = rank ? r * step[0] : 0;
      for (int64_t i = 0; i < perRow; ++i) {
        dst[at] = mlir::fp8::numerics::floatToBF16(
            decode(src + i * elt, source.dtype));
        for (size_t d = rank; d-- > 1;) { // next index, last dim fastest
          at += step[d];
          if (++index[d] < shape[d])
            break;
          at -= step[d] * shape[d];
          index[d] = 0;
        }
      }
    };
    // Contiguous rows per thread: a transposed band's neighbouring rows
    // land in the same output lines, which one thread then writes.
    const unsigned workers =
        unsigned(std::min<int64_t>(std::max(1u, threads), n));
    auto convertRows = [&](unsigned w) {
      const int64_t from = r0 + n * w / workers;
      const int64_t to = r0 + n * (w + 1) / workers;
      for (int64_t r = from; r < to; ++r)
        convertRow(r);
    };
    std::vector<std::thread> started;
    for (unsigned w = 1; w < workers; ++w)
      started.emplace_back(convertRows, w);
    convertRows(0);
    for (std::thread &t : started)
      t.join();
  }
  return "";
}

} // namespace fp8rt::pack::detail
