//===- Ops.h - ONNX op handlers, by family ----------------------*- C++ -*-===//
//
// Part of fp8-opt. Shared by the op-family files of lib/Import/Ops: one
// registration function per family, which adds each of its op types to the
// handler table with the ONNX since-versions the handler implements
// (OpRegistry.h), and the helpers several families use (OpHelpers.cpp).
// Not a public header.
//
// A handler implements the versions of its op that opsets 13 to 21 select,
// and NodeContext::version says which one the node is (the attribute-to-
// input moves: Split/Squeeze/Unsqueeze/ReduceSum axes in version 13, the
// other Reduce ops' in 18). Models of opsets 1 to 12 reach the handlers
// rewritten to 13 by ONNX's version converter (importModel,
// detail::upgradeOpset). Handlers compute static result shapes themselves
// and refuse anything they cannot express statically with a diagnostic at
// the node.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_IMPORT_OPS_OPS_H
#define FP8_LIB_IMPORT_OPS_OPS_H

#include "../Importer.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace mlir::fp8::onnx_import {

//===--- Families (one file each) -----------------------------------------===//

/// Arithmetic, math, comparison and logic ops, Cast/CastLike, Clip, Sign,
/// IsNaN/IsInf, Identity/Dropout.
void registerElementwiseOps(OpRegistry &r);
/// Activations with attributes (LeakyRelu, Elu, ...) and Gelu.
void registerActivationOps(OpRegistry &r);
/// Constant, ConstantOfShape, Range, EyeLike.
void registerGeneratorOps(OpRegistry &r);
/// Shape, Size, Reshape, Flatten, (Un)Squeeze, Transpose, Expand, Concat,
/// Split, Slice, Tile, DepthToSpace/SpaceToDepth.
void registerShapeOps(OpRegistry &r);
/// Gather, GatherElements, GatherND, OneHot, Trilu.
void registerIndexingOps(OpRegistry &r);
/// Reduce*, ArgMax/ArgMin, Hardmax, CumSum.
void registerReductionOps(OpRegistry &r);
/// Softmax, LogSoftmax, LayerNormalization.
void registerNormalizationOps(OpRegistry &r);
/// MatMul, Gemm.
void registerMatMulOps(OpRegistry &r);
/// Conv, GlobalAveragePool, GlobalMaxPool.
void registerConvOps(OpRegistry &r);
/// QuantizeLinear, DequantizeLinear.
void registerQuantizeOps(OpRegistry &r);
/// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
void registerLossOps(OpRegistry &r);

//===--- Shared helpers (OpHelpers.cpp) -----------------------------------===//

/// Prints a list of dimensions as [a, b, c] in diagnostics.
std::string dims(ArrayRef<int64_t> xs);

inline int64_t product(ArrayRef<int64_t> xs) { return numElementsSat(xs); }

/// Checks the number of ONNX inputs given (omitted trailing optionals do not
/// count).
LogicalResult checkArity(NodeContext &nc, size_t min, size_t max);

/// A rank-0 constant of `et`.
Value scalarTensor(NodeContext &nc, Type et, double v);

inline bool isFloat8(Type t) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(t);
}

/// Converts the float scalar `v` to `t` (f8E4M3FN or f8E5M2) with ONNX's
/// Cast semantics (opset 19+, the table under "saturate").
Value toFloat8(OpBuilder &bb, Location l, Value v, Type t, bool saturate);

/// A handler for the element-wise op `kind` of `arity` inputs.
Handler elementwiseHandler(EwKind kind, size_t arity);

/// Max/Min take one or more inputs.
Handler variadicHandler(EwKind kind);

/// Axes from input #1 (op version >= `inputSince`) or the `axes` attribute.
FailureOr<std::optional<SmallVector<int64_t>>> axesOf(NodeContext &nc,
                                                      int64_t inputSince);

/// `axes` normalised against `rank`, sorted; an error on a repeated axis.
FailureOr<SmallVector<int64_t>>
normAxes(NodeContext &nc, ArrayRef<int64_t> axes, int64_t rank);

} // namespace mlir::fp8::onnx_import

#endif // FP8_LIB_IMPORT_OPS_OPS_H
