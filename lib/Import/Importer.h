//===- Importer.h - ONNX importer internals ---------------------*- C++ -*-===//
//
// Part of fp8-opt. The importer class shared by the files of lib/Import:
// the graph walk (GraphWalk.cpp), TensorProto decoding (TensorDecoding.cpp),
// constants and the folder (ConstantFolding.cpp), the IR builders
// (Builders.cpp, ScalarBuilders.cpp), run-time index checks
// (BoundsChecks.cpp) and the op handlers, one file per op family
// (Ops/*.cpp). Not a public header.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_IMPORT_IMPORTER_H
#define FP8_LIB_IMPORT_IMPORTER_H

#include "OpRegistry.h"

#include "fp8/Import/ONNXImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <memory>
#include <optional>

namespace mlir::fp8::onnx_import {

class Importer;
class AttentionFusion;

/// No tensor of a real model holds more elements than this (2^40: 4 TiB of
/// f32); a shape beyond it is a malformed or hostile model.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// Number of elements of `shape`, saturating at INT64_MAX instead of
/// overflowing (shapes come from untrusted files).
inline int64_t numElementsSat(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}

/// Element-wise operations, shared by the IR builder (linalg.generic bodies)
/// and the constant folder so that both agree on semantics.
enum class EwKind {
  Add, Sub, Mul, Div, Pow, Mod, FMod, Max, Min,
  Neg, Abs, Sqrt, Reciprocal, Erf, Tanh, Sigmoid, Relu, Exp, Log, Floor,
  Ceil, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh,
  Round, Softsign,
  Equal, Greater, GreaterOrEqual, Less, LessOrEqual,
  And, Or, Xor, Not,
  Where, Cast, Identity,
};

/// An index into a dimension of `dim` entries, inside a linalg body:
/// negative values wrap once (ONNX), then the result is clamped into
/// [0, dim) so that it never addresses memory out of bounds. Whether the
/// value was in range is checked separately (Importer::addIndexCheck).
Value safeIndex(OpBuilder &bb, Location l, Value idx, int64_t dim,
                bool isUnsigned);

/// "shape [AxBxC] (N elements)", for size diagnostics.
std::string formatShapeSat(ArrayRef<int64_t> shape);

/// What a handler sees of one ONNX node.
class NodeContext {
public:
  NodeContext(Importer &imp, const onnx::NodeProto &node, Location loc,
              StringRef name)
      : imp(imp), node(node), loc(loc), name(name) {}

  Importer &imp;
  const onnx::NodeProto &node;
  Location loc;
  std::string name;
  /// The version of the node's op that the model's opset selects (its
  /// since-version, OpRegistry.h); the handler is registered for it.
  int version = 0;
  /// One entry per ONNX input; null for omitted optional inputs ("").
  SmallVector<Value> inputs;
  /// Filled by the handler, one per ONNX output it produces.
  SmallVector<Value> results;

  StringRef opType() const { return node.op_type(); }
  /// An error at this node, prefixed with its op type and name.
  InFlightDiagnostic error();

  size_t numInputs() const { return inputs.size(); }
  Value in(size_t i) const { return i < inputs.size() ? inputs[i] : Value(); }
  /// Input `i`, or an error naming it when absent.
  FailureOr<Value> required(size_t i);
  /// Whether output `i` is requested by the graph.
  bool wantsOutput(int i) const {
    return i < node.output_size() && !node.output(i).empty();
  }

  const onnx::AttributeProto *attr(StringRef attrName) const;
  int64_t attrInt(StringRef attrName, int64_t dflt) const;
  float attrFloat(StringRef attrName, float dflt) const;
  std::string attrString(StringRef attrName, StringRef dflt) const;
  std::optional<SmallVector<int64_t>> attrInts(StringRef attrName) const;

  /// The value of input `i` as a list of integers; it must be a constant
  /// (after folding). `what` names the input in the error.
  FailureOr<SmallVector<int64_t>> constInts(size_t i, StringRef what);

  /// Normalises a possibly negative axis against `rank`; errors if out of
  /// range.
  FailureOr<int64_t> normAxis(int64_t axis, int64_t rank);
};

/// A small constant tensor in a form that is easy to compute on: integers
/// (incl. i1) as int64, floats as double.
struct Lit {
  SmallVector<int64_t> shape;
  Type elemType;
  bool isUnsigned = false;
  SmallVector<int64_t> ints;
  SmallVector<double> floats;

  bool isFloat() const { return isa<FloatType>(elemType); }
  int64_t size() const { return isFloat() ? floats.size() : ints.size(); }
};

class Importer {
public:
  /// An importer dispatching to `registry`'s handlers (tests pass their
  /// own; the entry points use OpRegistry::standard()).
  Importer(MLIRContext &ctx, const ImportOptions &opts, StringRef fileName,
           const OpRegistry &registry = OpRegistry::standard());
  ~Importer();

  FailureOr<OwningOpRef<ModuleOp>> importModel(const onnx::ModelProto &model);

  //===--- Used by handlers -------------------------------------------===//

  MLIRContext *ctx;
  OpBuilder b;
  const ImportOptions &opts;
  std::string fileName;
  /// The model's default-domain (ai.onnx) opset.
  int64_t opset = 0;
  /// Where the real paths of the external-data files read go (or null).
  SmallVectorImpl<std::string> *externalFiles = nullptr;
  /// Where the initializers read from external data go (or null).
  std::vector<ExternalDataRead> *externalReads = nullptr;

  /// Values whose ONNX type is unsigned (uint8/16/32/64); MLIR tensors use
  /// signless integers, so signedness is carried on the side.
  llvm::DenseSet<Value> unsignedValues;
  bool isUnsigned(Value v) const { return unsignedValues.contains(v); }

  /// Maps an ONNX TensorProto data type to an MLIR element type; null if
  /// unsupported.
  Type elementType(int onnxType);
  static bool isUnsignedONNXType(int onnxType);
  static StringRef onnxTypeName(int onnxType);

  /// Decodes a TensorProto into an attribute. `loc` is for diagnostics.
  FailureOr<ElementsAttr> tensorToAttr(const onnx::TensorProto &t,
                                       Location loc, bool forceDense);

  // Constants.
  Value constant(Location loc, ElementsAttr attr);
  Value splat(Location loc, RankedTensorType type, double fval, int64_t ival);
  Value scalarConst(Location loc, Type elemType, double v);
  /// The DenseElementsAttr behind `v`, if it is an arith.constant of one.
  DenseElementsAttr getConst(Value v);
  /// `v` as a Lit when it is a constant of at most `maxElements` elements
  /// (the folder never expands large constants, such as weights).
  std::optional<Lit> getLit(Value v, int64_t maxElements = kFoldLimit);
  /// Constant inputs with at most this many result elements are folded in
  /// the importer instead of emitting IR.
  static constexpr int64_t kFoldLimit = 4096;
  /// Checks a shape about to be given to a tensor that `nc`'s node creates
  /// from data (ConstantOfShape, Range, ...): an error naming the node when
  /// it exceeds the constant budget (ImportOptions::maxConstantElements).
  LogicalResult checkConstantSize(NodeContext &nc, ArrayRef<int64_t> shape,
                                  Type elemType);
  Value litConstant(Location loc, const Lit &lit);

  // Shape helpers.
  static RankedTensorType tensorType(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  static ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }
  static Type elemOf(Value v) { return tensorType(v).getElementType(); }

  // IR builders. Each folds when its inputs are small constants.
  Value emptyTensor(Location loc, ArrayRef<int64_t> shape, Type elemType);
  FailureOr<SmallVector<int64_t>> broadcastShapes(NodeContext &nc,
                                                  ArrayRef<Value> vals);
  /// Numpy-broadcasting element-wise op. `castTo` is the result element type
  /// for EwKind::Cast.
  FailureOr<Value> elementwise(NodeContext &nc, EwKind kind,
                               ArrayRef<Value> ins, Type castTo = {});
  /// A linalg.generic over `outShape` whose inputs are numpy-broadcast to it
  /// (they must be broadcast-compatible) and whose body is `body`.
  Value generic(Location loc, ArrayRef<Value> ins, ArrayRef<int64_t> outShape,
                Type outElem,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body);
  Value filled(Location loc, ArrayRef<int64_t> shape, TypedAttr init);
  /// Scalar cast with ONNX semantics (bool is `x != 0`).
  static Value castScalar(OpBuilder &bb, Location loc, Value x, bool inUns,
                          Type to, bool outUns);
  /// Broadcasts `v` to `shape` (numpy rules, already checked).
  Value broadcastTo(Location loc, Value v, ArrayRef<int64_t> shape);
  Value reshape(Location loc, Value v, ArrayRef<int64_t> shape);
  Value transpose(Location loc, Value v, ArrayRef<int64_t> perm);
  Value extractSlice(Location loc, Value v, ArrayRef<int64_t> offsets,
                     ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides);
  Value concat(Location loc, ArrayRef<Value> vals, int64_t axis);
  /// Reduces `axes` (sorted, unique) away; result drops those dims.
  enum class ReduceKind { Sum, Max, Min, Prod };
  Value reduce(Location loc, Value v, ArrayRef<int64_t> axes, ReduceKind kind);
  /// `reduce` followed by a reshape that keeps the reduced dims as 1.
  Value reduceKeepDims(Location loc, Value v, ArrayRef<int64_t> axes,
                       ReduceKind kind);
  Value matmul(NodeContext &nc, Value a, Value b);

  //===--- Run-time index checks (BoundsChecks.cpp) ---------------------===//

  /// Checks that every element of `indices` lies in [-dim, dim) ([0, dim)
  /// for unsigned indices): `dims` holds one size, or with `perComponent`
  /// one per position of the last axis (GatherND's tuples); `firstDim` is
  /// the data dimension the first one addresses (for messages). Constant
  /// indices are checked now, all of them (an error naming the node);
  /// others get a run-time check site.
  LogicalResult checkIndices(NodeContext &nc, Value indices,
                             ArrayRef<int64_t> dims, int64_t firstDim,
                             bool perComponent);
  /// The tensor<2xi64> status of every check recorded, or null if none.
  Value finishChecks(Location loc);
  /// Messages of the recorded checks, by site (status[0] - 1).
  SmallVector<std::string> checkMessages;

  /// Scalar body of an element-wise op, inside a linalg.generic.
  Value buildScalar(OpBuilder &bb, Location loc, EwKind kind, ValueRange args,
                    Type outType, ArrayRef<bool> argUnsigned);

private:
  LogicalResult importGraph(const onnx::GraphProto &graph, ModuleOp module);
  LogicalResult importNode(const onnx::NodeProto &node, size_t index);
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &vi,
                                        Location loc);
  /// An initializer's external_data entries.
  struct ExternalData {
    std::string location;
    uint64_t offset = 0;
    int64_t length = -1; // -1: to the end of the file
  };
  FailureOr<ExternalData> parseExternalData(const onnx::TensorProto &t,
                                            Location loc);
  /// An fp8.external_weight for an external-data initializer that should
  /// stay in its file (ImportOptions::externalWeightMinBytes), or a null
  /// Value when it should be read.
  FailureOr<Value> externalWeight(const onnx::TensorProto &t, Location loc);
  FailureOr<std::string> readExternalData(const onnx::TensorProto &t,
                                          Location loc);
  FailureOr<std::string> resolveExternalPath(const onnx::TensorProto &t,
                                             StringRef location, Location loc);
  LogicalResult checkResultSize(NodeContext &nc, int result);
  Location graphLoc(StringRef what);

  /// Finds the handler for `nc`'s node: its op type in its domain, at the
  /// version the model's opset import for that domain selects (sets
  /// nc.version). Null after an error at the node.
  const Handler *dispatch(NodeContext &nc);

  const OpRegistry &registry;
  /// The model's opset imports, by canonical domain ("" is ai.onnx).
  llvm::StringMap<int64_t> opsets;
  /// The model's default-domain opset when it was upgraded to 13 first
  /// (detail::upgradeOpset), else 0.
  int64_t upgradedFrom = 0;
  /// The graph being imported, for node-group recognizers.
  std::unique_ptr<GraphView> graphView;
  llvm::StringMap<Value> values;
  /// The check status so far: first failing site + 1 (0: none), its value.
  Value checkFlag, checkValue;
  unsigned resourceCounter = 0;
  /// Attention chains, tried before each node's handler (Attention.cpp).
  std::unique_ptr<AttentionFusion> attention;
};

} // namespace mlir::fp8::onnx_import

#endif // FP8_LIB_IMPORT_IMPORTER_H
