//===- ONNXProtoIO.h - Exception-safe ONNX parsing --------------*- C++ -*-===//
//
// Part of fp8-opt. The only entry points into libonnx/protobuf that may
// throw. They are implemented in a translation unit built with -fexceptions
// and report failures as strings so that callers can stay exception-free.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_IMPORT_ONNXPROTOIO_H
#define FP8_LIB_IMPORT_ONNXPROTOIO_H

#include "llvm/ADT/StringRef.h"

#include "onnx/onnx_pb.h"

#include <string>

namespace mlir::fp8::detail {

/// Parses a binary ModelProto. Returns an empty string on success, else why
/// it failed.
std::string parseBinaryModel(llvm::StringRef bytes, onnx::ModelProto &model);

/// Parses ONNX's text format (onnx/defs/parser.h). Returns an empty string
/// on success, else the parser's message.
std::string parseTextModel(llvm::StringRef text, onnx::ModelProto &model);

/// Oldest default-domain opset the importer hands to ONNX's version
/// converter (1.12), whose adapters start at opset 1.
inline constexpr int kOldestUpgradableOpset = 1;

/// The domain of the nodes upgradeOpset leaves at the model's original
/// opset (imported as default-domain ops of that opset, whose version the
/// model's opset_import entry for this domain gives).
inline constexpr const char *kUnconvertedDomain = "fp8-opt.unconverted";

/// Converts `model` to default-domain opset `target` with ONNX's own version
/// converter (onnx/version_converter/convert.h), into `out`. Initializers
/// stored as external data are set aside while it runs (its IR holds tensor
/// bytes, and theirs are not loaded): each is a graph input of its type and
/// shape during the conversion and the same external initializer after it.
/// Softmax, LogSoftmax and Hardmax are not converted: the converter's
/// Softmax adapter needs the input's rank, which ONNX's shape inference
/// often cannot give (shapes computed at run time, such as attention
/// masks), and its Hardmax one drops the 2-D coercion of versions 1 and 11.
/// Each such node is cut out of the graph while the converter runs (its
/// output a graph input, its input a graph output) and put back after it in
/// kUnconvertedDomain, with an opset_import entry of the model's original
/// opset for that domain; the importer's handlers implement those versions.
/// Returns an empty string on success, else why it failed.
std::string upgradeOpset(const onnx::ModelProto &model, int target,
                         onnx::ModelProto &out);

/// ONNX's text parser knows only '#' comments; lit tests and onnx-mlir style
/// files use '//' lines too. Blanks those out (keeping line structure), as
/// the importer does before parseTextModel.
std::string stripSlashComments(llvm::StringRef text);

} // namespace mlir::fp8::detail

#endif // FP8_LIB_IMPORT_ONNXPROTOIO_H
