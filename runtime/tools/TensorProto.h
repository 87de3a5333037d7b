//===- TensorProto.h - ONNX TensorProto files without protobuf --*- C++ -*-===//
//
// Part of fp8-opt. Reads and writes the tensors of ONNX's test-data layout
// (`input_N.pb`, `output_N.pb`) with a minimal protobuf wire-format codec, so
// that runners deployed next to a compiled model need neither libprotobuf
// nor libonnx.
//
//===----------------------------------------------------------------------===//

#ifndef FP8RT_TOOLS_TENSORPROTO_H
#define FP8RT_TOOLS_TENSORPROTO_H

#include <cstdint>
#include <string>
#include <vector>

namespace fp8rt {

struct HostTensor {
  std::string name;
  int32_t dtype = 0; // ONNX TensorProto.DataType (= fp8rt_dtype)
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes; // dense, row-major, little-endian

  int64_t numElements() const;
};

/// Reads a TensorProto file; returns false and sets `error` on failure.
bool readTensorProto(const std::string &path, HostTensor &out,
                     std::string &error);
/// Writes `t` as a TensorProto with raw_data; atomic (temporary + rename).
bool writeTensorProto(const std::string &path, const HostTensor &t,
                      std::string &error);
/// Element values as doubles (for comparisons); false for unknown dtypes.
bool toDoubles(const HostTensor &t, std::vector<double> &out);

} // namespace fp8rt

#endif // FP8RT_TOOLS_TENSORPROTO_H
