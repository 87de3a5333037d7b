//===- ONNXProtoIO.cpp - Exception-safe ONNX parsing ----------------------===//
//
// Part of fp8-opt. Built with -fexceptions (see CMakeLists.txt): every call
// into libonnx or protobuf happens inside a try block here, and whatever it
// throws becomes an error string.
//
//===----------------------------------------------------------------------===//

#include "ONNXProtoIO.h"

#include "onnx/defs/parser.h"

#include <exception>
#include <limits>

using namespace mlir::fp8;

std::string detail::parseBinaryModel(llvm::StringRef bytes,
                                     onnx::ModelProto &model) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return "model file larger than 2 GiB (protobuf limit); store weights as "
           "external data";
  try {
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return "not a valid ONNX ModelProto (malformed or truncated protobuf)";
  } catch (const std::exception &e) {
    return std::string("protobuf parser failed: ") + e.what();
  } catch (...) {
    return "protobuf parser failed with an unknown exception";
  }
  return {};
}

std::string detail::parseTextModel(llvm::StringRef text,
                                   onnx::ModelProto &model) {
  // The parser reads a NUL-terminated string.
  std::string buffer = text.str();
  try {
    onnx::OnnxParser parser(buffer.c_str());
    onnx::Status status = parser.Parse(model);
    if (!status.IsOK())
      return "ONNX text parser: " + status.ErrorMessage();
  } catch (const std::exception &e) {
    return std::string("ONNX text parser failed: ") + e.what();
  } catch (...) {
    return "ONNX text parser failed with an unknown exception";
  }
  return {};
}
