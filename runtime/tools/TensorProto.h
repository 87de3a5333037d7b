//===- TensorProto.h - ONNX TensorProto files without protobuf --*- C++ -*-===//
//
// Part of fp8-opt. Reads and writes the tensors of ONNX's test-data layout
// (`input_N.pb`, `output_N.pb`) with a minimal protobuf wire-format codec, so
// that runners deployed next to a compiled model need neither libprotobuf
// nor libonnx.
//
// Nothing here trusts its input: files are read only if they are regular
// files (never a directory, FIFO or device: reading one could block or never
// end), at most their size; every length, varint, dimension and element count
// is checked (no overflow) before anything is allocated from it; a failure is
// `false` plus a message naming the file, never an exception.
//
//===----------------------------------------------------------------------===//

#ifndef FP8RT_TOOLS_TENSORPROTO_H
#define FP8RT_TOOLS_TENSORPROTO_H

#include <cstdint>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace fp8rt {

struct HostTensor {
  std::string name;
  int32_t dtype = 0; // ONNX TensorProto.DataType (= fp8rt_dtype)
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // dense, row-major, little-endian

  /// Product of the dimensions; -1 if one is negative or it overflows.
  int64_t numElements() const;
};

/// Product of `rank` dimensions into `elements`; false (and `error` says why)
/// when a dimension is negative or the product exceeds INT64_MAX.
bool checkedElementCount(const int64_t *shape, size_t rank, int64_t &elements,
                         std::string &error);
/// elements * elementSize into `bytes`; false when it exceeds SIZE_MAX.
bool checkedByteCount(int64_t elements, size_t elementSize, size_t &bytes);

/// "4x8", or "scalar" for rank 0.
std::string shapeString(const int64_t *shape, size_t rank);
/// "float32", "int64", ... ("dtype N" for unknown codes).
std::string dtypeName(int32_t dtype);
/// "a directory", "a FIFO", "a character device", ... for a stat mode.
const char *fileKind(mode_t mode);

/// Reads a whole regular file (following symbolic links), at most its size
/// at open time. A directory, FIFO, device or socket is refused without
/// reading it (opening does not block). Returns false and sets `error`.
bool readRegularFile(const std::string &path, std::vector<uint8_t> &out,
                     std::string &error);

/// Reads a TensorProto file; returns false and sets `error` on failure
/// (unreadable or non-regular file, malformed protobuf, unsupported data
/// type, values in the wrong field for the data type, dimensions whose
/// element count does not match the data).
bool readTensorProto(const std::string &path, HostTensor &out,
                     std::string &error);

/// Writes `t` as a TensorProto with raw_data.
/// * A missing path or a regular file is replaced atomically: a temporary
///   file in the same folder (mkstemp) renamed over it.
/// * A symbolic link is followed: its target is written by these rules and
///   the link itself stays; a dangling link is refused.
/// * A character device (/dev/null) or a FIFO is written into (never
///   replaced); a FIFO no process is reading is refused instead of blocking.
/// * A directory, block device or socket is refused.
bool writeTensorProto(const std::string &path, const HostTensor &t,
                      std::string &error);
/// Writes `bytes` to `path` by the rules of writeTensorProto (for the other
/// file formats fp8-run writes).
bool writeOutputFile(const std::string &path, const std::string &bytes,
                     std::string &error);

/// Element values as doubles (for comparisons); false for dtypes without a
/// numeric reading here (FP8 encodings: compare those bytewise).
bool toDoubles(const HostTensor &t, std::vector<double> &out);

} // namespace fp8rt

#endif // FP8RT_TOOLS_TENSORPROTO_H
