//===- PackInternal.h - What the packer's files share -----------*- C++ -*-===//
//
// Part of fp8-opt. Internal to fp8rt_pack (runtime/include/fp8rt/pack.h is
// the API): the manifest's checks, which parseManifest and packWeights both
// run (Manifest.cpp), and the streaming quantization of one source tensor
// (Quantize.cpp), which packWeights feeds with the source's bytes
// (Pack.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef FP8RT_PACK_PACKINTERNAL_H
#define FP8RT_PACK_PACKINTERNAL_H

#include "fp8rt/pack.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fp8rt::pack::detail {

/// product(shape) * the size of `dtype` in `bytes`; false for a dtype a
/// weights file does not hold, a rank above FP8W_MAX_RANK, a negative
/// dimension, or more than 2^62 bytes (the weights file's limit).
bool tensorBytes(int32_t dtype, const std::vector<int64_t> &shape,
                 uint64_t &bytes);

/// True for an empty permutation (none) or one of 0..rank-1.
bool isPermutation(const std::vector<int64_t> &permutation, size_t rank);

/// "4096x14336", "scalar" for rank 0.
std::string formatShape(const std::vector<int64_t> &shape);
/// "f32", "e4m3", ..., or the number.
std::string dtypeName(int32_t dtype);

/// Every check parseManifest documents, on a manifest however it was made.
/// Returns an error naming `what` and the tensor, or "".
std::string validateManifest(const Manifest &manifest, const std::string &what);

/// Reads `bytes` bytes of the source, from byte `offset` of its data, into
/// `out`; returns "" or an error message.
using ReadSource =
    std::function<std::string(uint64_t offset, uint64_t bytes, uint8_t *out)>;

/// The two outputs of a quantization, as the weights file holds them.
struct Quantized {
  std::vector<uint8_t> data;   // FP8, dataShape (permuted, padded)
  std::vector<uint8_t> scales; // f32 or E8M0, scaleShape (permuted)
};

/// Quantizes `source` (a validated f32/f16/bf16 source of a validated
/// quantization), reading it through `read` in pieces of about `chunkBytes`
/// (Quantize.cpp describes the passes), each piece's work shared by up to
/// `threads` threads (>= 1; the output is the same for any number). `read`
/// is called from the calling thread only. Without `needData` only the
/// scales are computed. Returns "" or the first read error.
std::string quantize(const Source &source, const Quantization &quant,
                     uint64_t chunkBytes, unsigned threads, bool needData,
                     const ReadSource &read, Quantized &out);

/// The "round" tensor of `source` (a validated f32/f16/bf16 source):
/// every element decoded to FP32 exactly and rounded to BF16
/// (numerics::floatToBF16), output dimension i being source dimension
/// permutation[i] (empty: none), into `out` (the tensor's bytes, held
/// whole), reading bands of whole rows of about `chunkBytes` through
/// `read` (from the calling thread) and converting each band's rows on up
/// to `threads` threads. Returns "" or the first read error.
std::string roundToBF16(const Source &source,
                        const std::vector<int64_t> &permutation,
                        uint64_t chunkBytes, unsigned threads,
                        const ReadSource &read, std::vector<uint8_t> &out);

} // namespace fp8rt::pack::detail

#endif // FP8RT_PACK_PACKINTERNAL_H
