//===- TorchModule.h - The torch module an op came from ----------*- C++ -*-===//
//
// Part of fp8-opt. PyTorch's ONNX exporter (torch.onnx.export(dynamo=True))
// records, in each node's metadata_props, the module path that produced it
// (`pkg.torch.onnx.name_scopes`) and the modules' classes
// (`pkg.torch.onnx.class_hierarchy`). The importer keeps them in the node's
// location, a FusedLoc whose metadata is a dictionary
//
//   loc(fused<{torch_class = "torch.nn.modules.linear.Linear",
//              torch_module = "model.layers.0.self_attn.q_proj"}>
//       ["node_linear"("model.onnx":0:0)])
//
// so they survive every rewrite that keeps locations, next to the ONNX node
// name that fp8::getNodeName reads. fp8-insert-scales reports the module
// and matches policy rules against it ("exclude": ["*lm_head*"]).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_IR_TORCHMODULE_H
#define FP8_DIALECT_FP8_IR_TORCHMODULE_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::fp8 {

/// `loc` with the torch module path `module` (and its class, which may be
/// empty) attached; `loc` itself when `module` is empty.
Location withTorchModule(Location loc, StringRef module, StringRef moduleClass);

/// The torch module path of the ONNX node a location (or op) came from,
/// also inside fused and call-site locations; "" when the export did not
/// record one.
std::string getTorchModuleName(Location loc);
std::string getTorchModuleName(Operation *op);
/// The class of that module ("torch.nn.modules.linear.Linear"); "" if none.
std::string getTorchModuleClass(Location loc);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_IR_TORCHMODULE_H
