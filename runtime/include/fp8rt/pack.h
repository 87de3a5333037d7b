//===- pack.h - The weights packer: manifest in, weights file out -*- C++ -*-===//
//
// Part of fp8-opt. A model library compiled with external weights records,
// for every tensor of its weights file, where the tensor comes from and how
// it is made: a copy of an ONNX initializer's external data, the FP8 data or
// the scales of the recipe's weight quantization of one (fp8.packed_weight),
// or a literal the compiler computed. That is the weights manifest
// (`model.fp8w.json`, docs/Weights.md). The packer turns the model's
// external data and a manifest into the weights file, streaming: it holds a
// band of blocks of one source tensor and one quantized output tensor at a
// time, never the model.
//
// fp8-compile packs with this library when it writes a library; fp8-pack
// (runtime/tools/fp8-pack.cpp) runs it anywhere else: where the weights are
// (the GPU machine), and for new weights of the same graph (refit). Both
// produce the same file, byte for byte, and the quantized bytes are those
// fp8-opt's constant folders compute (lib/Dialect/FP8/IR/FP8Ops.cpp): both
// evaluate with fp8/Numerics.
//
// C++17 and the C library only (no MLIR, no LLVM): errors are returned as
// messages that name the file and tensor; nothing here throws or aborts on
// bad input.
//
//===----------------------------------------------------------------------===//

#ifndef FP8RT_PACK_H
#define FP8RT_PACK_H

#include "fp8rt/fp8rt.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

struct fp8w_file;
struct fp8w_writer;

namespace fp8rt::pack {

/// The fp8rt_dtype values (fp8rt/fp8rt.h) the packer works with.
enum Dtype : int32_t {
  kFloat = FP8RT_FLOAT, kFloat16 = FP8RT_FLOAT16, kBFloat16 = FP8RT_BFLOAT16,
  kFloat8E4M3FN = FP8RT_FLOAT8E4M3FN, kFloat8E5M2 = FP8RT_FLOAT8E5M2,
  kFloat8E8M0 = FP8RT_FLOAT8E8M0,
};

/// An ONNX initializer's bytes in the model's external data: `length` bytes
/// at `offset` of the file `location`, relative to the model's directory
/// (and confined to it), little-endian, row-major.
struct Source {
  std::string name; // the initializer's name in the ONNX graph
  std::string location;
  uint64_t offset = 0;
  uint64_t length = 0;
  int32_t dtype = 0; // any fp8w dtype for a copy; f32, f16 or bf16 to quantize
  std::vector<int64_t> shape;
};

/// The recipe's weight quantization of a source tensor x, as the fp8 ops
/// fp8.amax -> fp8.compute_scale -> fp8.quantize [-> fp8.transpose]
/// [-> tensor.pad] compute it:
///  - x is decoded to FP32 exactly (f16 and bf16 widen without rounding);
///  - the source is cut into blocks of `block` elements per dimension (the
///    last block of a dimension may be partial); per-tensor scaling is one
///    block of the whole shape;
///  - amax(b) = the largest |x| in block b (0 for an all-zero block; NaN if
///    the block holds a NaN);
///  - Current: scale(b) = numerics::currentScale(amax(b), format, eps,
///    pow2), an FP32 scale; MX: the E8M0 scale numerics::mxScale(amax(b),
///    format, rceil ? RCeil : Floor), whose value is numerics::e8m0ToFloat;
///  - q = numerics::castToFP8(x / value(scale(b)), format), FP32 division;
///  - with a permutation, data and scales are transposed: output dimension
///    i is source dimension permutation[i] (the block shape is permuted
///    with them: nothing is re-rounded);
///  - the data output is `dataShape`, which is the (permuted) shape padded
///    at the high end of each dimension with FP8 zeros (byte 0x00). Scales
///    are never padded: their shape is ceil(shape / block), permuted.
struct Quantization {
  int32_t format = kFloat8E4M3FN; // kFloat8E4M3FN or kFloat8E5M2
  std::vector<int64_t> block;     // per source dimension, each >= 1
  enum class Scaling { Current, MX } scaling = Scaling::Current;
  float eps = 0.0f;  // Current
  bool pow2 = false; // Current
  bool rceil = true; // MX: RCeil (true) or Floor rounding of the exponent
  std::vector<int64_t> permutation; // empty: none
  std::vector<int64_t> dataShape;

  /// ceil(source shape / block), permuted: the scale output's shape.
  std::vector<int64_t> scaleShape(const std::vector<int64_t> &sourceShape) const;
  /// kFloat (Current) or kFloat8E8M0 (MX).
  int32_t scaleDtype() const {
    return scaling == Scaling::MX ? kFloat8E8M0 : kFloat;
  }
};

/// One tensor of the weights file, in file order.
struct Tensor {
  enum class Kind {
    Copy,    // the source's bytes as they are (dtype and shape = source's)
    Data,    // the FP8 data of quant applied to source
    Scale,   // the scales of quant applied to source
    Literal, // bytes the compiler computed: taken from a base weights file
    Concat,  // its parts one after the other: concatenated along dimension 0
    Round    // the source rounded to BF16, then permuted (below)
  };
  std::string name; // in the weights file (the library's global)
  int32_t dtype = 0;
  std::vector<int64_t> shape;
  Kind kind = Kind::Copy;
  Source source;      // Copy, Data, Scale
  Quantization quant; // Data, Scale
  /// Round: an f32/f16/bf16 source decoded to FP32 exactly and rounded to
  /// BF16 (numerics::floatToBF16: to nearest even, a NaN stays a quiet
  /// NaN), then permuted: dimension i is source dimension permutation[i]
  /// (empty: none). dtype is kBFloat16 and shape the permuted source shape:
  /// the K-major BF16 operand of a product kept out of FP8
  /// (fp8.rounded_weight).
  std::vector<int64_t> permutation;
  uint64_t hash = 0;  // Literal: XXH64 of its bytes (fp8w_hash_bytes)
  /// Concat: Data or Scale tensors of this dtype whose shapes equal this
  /// one's but in dimension 0, where they sum to it (weights of products
  /// merged into one GEMM: fp8-merge-sibling-products). Their names only
  /// label them in messages.
  std::vector<Tensor> parts;
};

/// An initializer of the model's external data that the compiler read
/// (smaller than fp8-compile --weights-read-limit): its values are part of
/// the library. Data a weights file is packed from must hold the same bytes
/// there (XXH64 of `length` bytes at `offset` of `location`), or the
/// library would compute with values other than the data's.
struct CompiledIn {
  std::string name; // the initializer
  std::string location;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t hash = 0;
};

/// What a library needs from its weights file.
struct Manifest {
  static constexpr int kVersion = 1;
  uint64_t fingerprint = 0;   // the library's (non-zero)
  std::string weightsFile;    // the file name the library looks for
  std::vector<Tensor> tensors;
  std::vector<CompiledIn> compiledIn; // "compiled_in"; checked by packWeights
};

/// The manifest as JSON (docs/Weights.md: "format": "fp8-opt weights
/// manifest", "version": 1, fingerprint as 16 hex digits, tensors with
/// "kind" copy/data/scale/literal/concat/round).
std::string toJSON(const Manifest &manifest);

/// Parses and validates a manifest (every field present and typed; dtypes
/// known; shapes non-negative and without overflow; sizes consistent:
/// a copy's length is its shape's bytes, a rounded tensor is BF16 of the
/// permuted source shape, a data tensor's shape is
/// dataShape and at least the permuted source shape, a scale tensor's shape
/// and dtype are the quantization's; a concatenation's parts are data or
/// scales of its dtype whose first dimensions add up to its own, the rest
/// equal; names distinct and non-empty;
/// locations relative without "..": see confinement in packWeights).
/// Returns an error message naming `what` (the manifest's path) and the
/// tensor, or "".
std::string parseManifest(std::string_view json, Manifest &out,
                          const std::string &what = "the manifest");

struct PackOptions {
  /// Where the sources' locations are (the model's directory). A location
  /// that leaves it (absolute, "..", or a symbolic link out of it) is an
  /// error.
  std::string dataDir;
  /// Literal tensors: either written by this callback (fp8-compile, which
  /// holds them), which appends exactly the tensor's bytes with
  /// fp8w_writer_write and returns "" or an error...
  std::function<std::string(const Tensor &, fp8w_writer *)> writeLiteral;
  /// ...or copied from this weights file by name (dtype, shape and hash
  /// must match the manifest's).
  const fp8w_file *base = nullptr;
  /// Bytes of source read per piece (a band of whole blocks along the
  /// first dimension is read at once even when larger).
  uint64_t chunkBytes = uint64_t(64) << 20;
  /// Threads quantizing a piece: 0 for one per core
  /// (std::thread::hardware_concurrency()). The file is the same, byte for
  /// byte, for any number; reading stays on the calling thread.
  unsigned threads = 0;
  /// Progress on stderr, one line per tensor.
  bool verbose = false;
};

struct PackStats {
  uint64_t tensors = 0;
  uint64_t bytesRead = 0;    // of source data
  uint64_t bytesWritten = 0; // of the weights file
  double seconds = 0.0;
};

/// Writes the weights file for `manifest` to `outPath` (created or
/// truncated; the caller writes to a temporary name and renames it into
/// place), with the manifest's fingerprint, after checking that the data
/// holds the bytes the library was compiled with (`compiledIn`). Returns an error message naming
/// the file and tensor, or "". On error the file is incomplete: the caller
/// removes it.
std::string packWeights(const Manifest &manifest, const PackOptions &options,
                        const std::string &outPath, PackStats *stats = nullptr);

} // namespace fp8rt::pack

#endif // FP8RT_PACK_H
