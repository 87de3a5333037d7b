//===- OpVersions.cpp - ONNX's since-versions of the handled ops ----------===//
//
// Part of fp8-opt. For every default-domain op the importer has a handler
// for, the opset versions in which ONNX (re)defined it -- its schema's
// since-versions -- up to opset 21, the newest the importer accepts. The
// graph walk resolves a node's version against this history
// (resolveVersion), so that a change of an op's definition in a newer
// opset is never imported with an older version's handler.
//
// Taken from ONNX's operator definitions (onnx/defs/*/defs.cc and old.cc,
// the ONNX_OPERATOR_SET_SCHEMA entries; docs/Changelog.md). Versions up to
// opset 17 are checked against ONNX 1.12's own schema registry (libonnx,
// test/unittests/ImportOpRegistryTest.cpp); 18 to 21 come from the newer
// ONNX releases that defined them.
//
//===----------------------------------------------------------------------===//

#include "OpRegistry.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

namespace {
struct OpVersions {
  const char *type;
  int since[8]; // ascending, then zeros
};
} // namespace

// Sorted by op type.
static const OpVersions kOpVersions[] = {
    {"Abs", {1, 6, 13}},
    {"Acos", {7}},
    {"Acosh", {9}},
    {"Add", {1, 6, 7, 13, 14}},
    {"And", {1, 7}},
    {"ArgMax", {1, 11, 12, 13}},
    {"ArgMin", {1, 11, 12, 13}},
    {"Asin", {7}},
    {"Asinh", {9}},
    {"Atan", {7}},
    {"Atanh", {9}},
    {"Cast", {1, 6, 9, 13, 19, 21}},
    {"CastLike", {15, 19, 21}},
    {"Ceil", {1, 6, 13}},
    {"Celu", {12}},
    {"Clip", {1, 6, 11, 12, 13}},
    {"Concat", {1, 4, 11, 13}},
    {"Constant", {1, 9, 11, 12, 13, 19, 21}},
    {"ConstantOfShape", {9, 20, 21}},
    {"Conv", {1, 11}},
    {"Cos", {7}},
    {"Cosh", {9}},
    {"CumSum", {11, 14}},
    {"DepthToSpace", {1, 11, 13}},
    {"DequantizeLinear", {10, 13, 19, 21}},
    {"Div", {1, 6, 7, 13, 14}},
    {"Dropout", {1, 6, 7, 10, 12, 13}},
    {"Elu", {1, 6}},
    {"Equal", {1, 7, 11, 13, 19}},
    {"Erf", {9, 13}},
    {"Exp", {1, 6, 13}},
    {"Expand", {8, 13}},
    {"EyeLike", {9}},
    {"Flatten", {1, 9, 11, 13, 21}},
    {"Floor", {1, 6, 13}},
    {"Gather", {1, 11, 13}},
    {"GatherElements", {11, 13}},
    {"GatherND", {11, 12, 13}},
    {"Gelu", {20}},
    {"Gemm", {1, 6, 7, 9, 11, 13}},
    {"GlobalAveragePool", {1}},
    {"GlobalMaxPool", {1}},
    {"Greater", {1, 7, 9, 13}},
    {"GreaterOrEqual", {12, 16}},
    {"HardSigmoid", {1, 6}},
    {"HardSwish", {14}},
    {"Hardmax", {1, 11, 13}},
    {"Identity", {1, 13, 14, 16, 19, 21}},
    {"IsInf", {10, 20}},
    {"IsNaN", {9, 13, 20}},
    {"LayerNormalization", {17}},
    {"LeakyRelu", {1, 6, 16}},
    {"Less", {1, 7, 9, 13}},
    {"LessOrEqual", {12, 16}},
    {"Log", {1, 6, 13}},
    {"LogSoftmax", {1, 11, 13}},
    {"MatMul", {1, 9, 13}},
    {"Max", {1, 6, 8, 12, 13}},
    {"Mean", {1, 6, 8, 13}},
    {"Min", {1, 6, 8, 12, 13}},
    {"Mod", {10, 13}},
    {"Mul", {1, 6, 7, 13, 14}},
    {"Neg", {1, 6, 13}},
    {"NegativeLogLikelihoodLoss", {12, 13}},
    {"Not", {1}},
    {"OneHot", {9, 11}},
    {"Or", {1, 7}},
    {"PRelu", {1, 6, 7, 9, 16}},
    {"Pow", {1, 7, 12, 13, 15}},
    {"QuantizeLinear", {10, 13, 19, 21}},
    {"Range", {11}},
    {"Reciprocal", {1, 6, 13}},
    {"ReduceL1", {1, 11, 13, 18}},
    {"ReduceL2", {1, 11, 13, 18}},
    {"ReduceLogSum", {1, 11, 13, 18}},
    {"ReduceLogSumExp", {1, 11, 13, 18}},
    {"ReduceMax", {1, 11, 12, 13, 18, 20}},
    {"ReduceMean", {1, 11, 13, 18}},
    {"ReduceMin", {1, 11, 12, 13, 18, 20}},
    {"ReduceProd", {1, 11, 13, 18}},
    {"ReduceSum", {1, 11, 13}},
    {"ReduceSumSquare", {1, 11, 13, 18}},
    {"Relu", {1, 6, 13, 14}},
    {"Reshape", {1, 5, 13, 14, 19, 21}},
    {"Round", {11}},
    {"Selu", {1, 6}},
    {"Shape", {1, 13, 15, 19, 21}},
    {"Shrink", {9}},
    {"Sigmoid", {1, 6, 13}},
    {"Sign", {9, 13}},
    {"Sin", {7}},
    {"Sinh", {9}},
    {"Size", {1, 13, 19, 21}},
    {"Slice", {1, 10, 11, 13}},
    {"Softmax", {1, 11, 13}},
    {"SoftmaxCrossEntropyLoss", {12, 13}},
    {"Softplus", {1}},
    {"Softsign", {1}},
    {"SpaceToDepth", {1, 13}},
    {"Split", {1, 2, 11, 13, 18}},
    {"Sqrt", {1, 6, 13}},
    {"Squeeze", {1, 11, 13, 21}},
    {"Sub", {1, 6, 7, 13, 14}},
    {"Sum", {1, 6, 8, 13}},
    {"Tan", {7}},
    {"Tanh", {1, 6, 13}},
    {"ThresholdedRelu", {10}},
    {"Tile", {1, 6, 13}},
    {"Transpose", {1, 13, 21}},
    {"Trilu", {14}},
    {"Unsqueeze", {1, 11, 13, 21}},
    {"Where", {9, 16}},
    {"Xor", {1, 7}},
};

ArrayRef<int> onnx_import::onnxSinceVersions(StringRef opType) {
  const OpVersions *it = llvm::lower_bound(
      kOpVersions, opType,
      [](const OpVersions &e, StringRef t) { return StringRef(e.type) < t; });
  if (it == std::end(kOpVersions) || opType != it->type)
    return {};
  ArrayRef<int> since(it->since);
  return since.take_while([](int v) { return v != 0; });
}
