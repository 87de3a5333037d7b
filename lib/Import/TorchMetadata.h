//===- TorchMetadata.h - torch.onnx's node metadata -------------*- C++ -*-===//
//
// Part of fp8-opt. The module path and class that PyTorch's dynamo exporter
// writes into each ONNX node's metadata_props, carried on the node's
// location (fp8/Dialect/FP8/IR/TorchModule.h).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_IMPORT_TORCHMETADATA_H
#define FP8_LIB_IMPORT_TORCHMETADATA_H

#include "mlir/IR/Location.h"

#include "onnx/onnx_pb.h"

#include <string>
#include <vector>

namespace mlir::fp8 {

/// `loc` with the torch module of `node` attached, when its metadata_props
/// hold `pkg.torch.onnx.name_scopes` (and `pkg.torch.onnx.class_hierarchy`);
/// `loc` unchanged otherwise.
Location withTorchModuleOf(const onnx::NodeProto &node, Location loc);

/// The strings of a Python list literal of strings, as the exporter writes
/// them with repr() ("['', 'model', 'model.layers.0']"); nullopt-like empty
/// result and `ok` false when `text` is not one.
std::vector<std::string> parsePythonStringList(llvm::StringRef text, bool &ok);

} // namespace mlir::fp8

#endif // FP8_LIB_IMPORT_TORCHMETADATA_H
