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
#include "SymbolicShapes.h"

#include "fp8/Import/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

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
/// The same for a dimension whose size is the `index` value `dim`.
Value safeIndex(OpBuilder &bb, Location l, Value idx, Value dim,
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
  /// The same for an input that may hold sizes known symbolically (a shape
  /// computed from dynamic dimensions).
  FailureOr<SmallVector<SymExpr>> symInts(size_t i, StringRef what);

  /// Normalises a possibly negative axis against `rank`; errors if out of
  /// range.
  FailureOr<int64_t> normAxis(int64_t axis, int64_t rank);
};

/// A small constant tensor in a form that is easy to compute on: integers
/// (incl. i1) as int64, floats as double; or a small integer tensor of
/// sizes known symbolically (a Shape of a tensor with dynamic dimensions
/// and what the graph computes from it), as SymExprs in `syms`.
struct Lit {
  SmallVector<int64_t> shape;
  Type elemType;
  bool isUnsigned = false;
  SmallVector<int64_t> ints;
  SmallVector<double> floats;
  SmallVector<SymExpr, 0> syms;

  bool isFloat() const { return isa<FloatType>(elemType); }
  /// Whether an element is a size known only at run time.
  bool isSymbolic() const {
    return llvm::any_of(syms, [](const SymExpr &e) { return !e.isConstant(); });
  }
  int64_t size() const {
    return isFloat() ? floats.size() : std::max(ints.size(), syms.size());
  }
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

  //===--- Dynamic dimensions (SymbolicShapes.h) --------------------------===//

  /// The symbols of the graph inputs' dynamic dimensions.
  ShapeSymbols symbols;
  /// Whether `v` has a dynamic dimension.
  static bool isDynamic(Value v);
  /// The sizes of `v`'s dimensions: constants where its type is static,
  /// the recorded expressions (withShape) where it is dynamic.
  SymShape symShape(Value v);
  /// Records the sizes of `v`'s dynamic dimensions; returns `v`.
  Value withShape(Value v, ArrayRef<SymExpr> shape);
  /// Whether every dynamic dimension of `v` has a recorded size.
  bool hasShape(Value v) const;
  /// The tensor type of `shape` (static where an expression is constant).
  RankedTensorType typeFor(ArrayRef<SymExpr> shape, Type elemType);
  /// `shape` as sizes for tensor ops: attributes where constant, index
  /// values computed from the symbols where not.
  SmallVector<OpFoldResult> foldResults(Location loc, ArrayRef<SymExpr> shape);
  /// Makes `a` and `b` equal (ShapeSymbols::unify) or fails with an error
  /// at the node naming `what` and both sizes.
  LogicalResult requireEqual(NodeContext &nc, const SymExpr &a,
                             const SymExpr &b, StringRef what);
  /// `v` as a Lit with symbolic elements: a shape tensor computed from
  /// dynamic dimensions, or (as constant SymExprs) a small integer
  /// constant; nothing for other values.
  std::optional<Lit> getSymLit(Value v);
  /// A value holding `lit`'s elements: a constant when they are all
  /// constant, else a tensor.from_elements of the sizes it computes
  /// (recorded, so getSymLit reads it back).
  Value symLitValue(Location loc, const Lit &lit);
  /// An element-wise op on shape tensors of which one holds sizes computed
  /// from dynamic dimensions (Add, Sub, Mul, exact Div, Neg, Abs, Max/Min,
  /// comparisons and integer Casts where the symbols' bounds decide them,
  /// Where with a constant condition), evaluated on the sizes; nothing when
  /// an input is not such a tensor or the result is not a size.
  std::optional<Value> foldSymbolic(Location loc, EwKind kind,
                                    ArrayRef<Value> ins,
                                    ArrayRef<int64_t> outShape, Type outT,
                                    bool outUnsigned);
  /// "shape [s10x?]"-style description of `v` for diagnostics: its type
  /// with the symbolic sizes of its dynamic dimensions.
  std::string describe(Value v);

  // Shape helpers.
  static RankedTensorType tensorType(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  static ArrayRef<int64_t> shapeOf(Value v) { return tensorType(v).getShape(); }
  static Type elemOf(Value v) { return tensorType(v).getElementType(); }

  // IR builders. Each folds when its inputs are small constants, and each
  // takes dynamic dimensions (sizes as SymExprs) where it has a SymShape
  // form.
  Value emptyTensor(Location loc, ArrayRef<int64_t> shape, Type elemType);
  Value emptyTensor(Location loc, ArrayRef<SymExpr> shape, Type elemType);
  FailureOr<SmallVector<int64_t>> broadcastShapes(NodeContext &nc,
                                                  ArrayRef<Value> vals);
  /// Numpy broadcasting of the symbolic shapes of `vals`: a dimension of 1
  /// broadcasts, other sizes must be equal (requireEqual).
  FailureOr<SymShape> broadcastSymShapes(NodeContext &nc,
                                         ArrayRef<SymShape> shapes);
  /// Numpy-broadcasting element-wise op. `castTo` is the result element type
  /// for EwKind::Cast.
  FailureOr<Value> elementwise(NodeContext &nc, EwKind kind,
                               ArrayRef<Value> ins, Type castTo = {});
  /// A linalg.generic over `outShape` whose inputs are numpy-broadcast to it
  /// (they must be broadcast-compatible) and whose body is `body`.
  Value generic(Location loc, ArrayRef<Value> ins, ArrayRef<int64_t> outShape,
                Type outElem,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body);
  Value generic(Location loc, ArrayRef<Value> ins, ArrayRef<SymExpr> outShape,
                Type outElem,
                function_ref<Value(OpBuilder &, Location, ValueRange)> body);
  Value filled(Location loc, ArrayRef<int64_t> shape, TypedAttr init);
  Value filled(Location loc, ArrayRef<SymExpr> shape, TypedAttr init);
  /// Scalar cast with ONNX semantics (bool is `x != 0`).
  static Value castScalar(OpBuilder &bb, Location loc, Value x, bool inUns,
                          Type to, bool outUns);
  /// Broadcasts `v` to `shape` (numpy rules, already checked).
  Value broadcastTo(Location loc, Value v, ArrayRef<int64_t> shape);
  Value broadcastTo(Location loc, Value v, ArrayRef<SymExpr> shape);
  Value reshape(Location loc, Value v, ArrayRef<int64_t> shape);
  /// A reshape to sizes known symbolically (their product must equal the
  /// input's, checked by the caller): collapse and expand shapes with
  /// dynamic sizes.
  Value reshape(Location loc, Value v, ArrayRef<SymExpr> shape);
  Value transpose(Location loc, Value v, ArrayRef<int64_t> perm);
  Value extractSlice(Location loc, Value v, ArrayRef<int64_t> offsets,
                     ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides);
  Value extractSlice(Location loc, Value v, ArrayRef<SymExpr> offsets,
                     ArrayRef<SymExpr> sizes, ArrayRef<int64_t> strides);
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
                             ArrayRef<SymExpr> dims, int64_t firstDim,
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
  const OpRegistry::Entry *dispatch(NodeContext &nc);

  const OpRegistry &registry;
  /// The model's opset imports, by canonical domain ("" is ai.onnx).
  llvm::StringMap<int64_t> opsets;
  /// The model's default-domain opset when it was upgraded to 13 first
  /// (detail::upgradeOpset), else 0.
  int64_t upgradedFrom = 0;
  /// The graph being imported, for node-group recognizers.
  std::unique_ptr<GraphView> graphView;
  llvm::StringMap<Value> values;
  /// The sizes of dynamic dimensions, by value (withShape).
  DenseMap<Value, SymShape> dynamicShapes;
  /// Shape tensors computed from dynamic dimensions (symLitValue).
  DenseMap<Value, Lit> symbolicValues;
  /// The inputs' dimensions as parsed from the model and the options: a
  /// symbol per dynamic one (inputType), created with the function.
  struct InputDim {
    int64_t size = 0;    // static size, or ShapedType::kDynamic
    std::string symbol;  // dynamic: the dim_param or "<input>[<dim>]"
    int64_t lo = 0, hi = 0;
  };
  FailureOr<SmallVector<InputDim>> inputDims(const onnx::ValueInfoProto &vi,
                                             Location loc);
  /// The sizes or bounds given to dim_params (--dim, and --input-shape of
  /// a dimension with a dim_param), with where each came from; conflicts
  /// and --dim names the inputs lack are errors.
  LogicalResult collectDimBounds(const onnx::GraphProto &graph,
                                 const llvm::StringSet<> &initNames);
  llvm::StringMap<std::pair<DimBounds, std::string>> paramBounds;
  /// The symbols of the function's arguments' dynamic dimensions.
  void bindInputSymbols(func::FuncOp func,
                        ArrayRef<SmallVector<InputDim>> dims,
                        ArrayRef<const onnx::ValueInfoProto *> infos);
  /// The symbol table and each argument's and result's sizes as function
  /// attributes (fp8::kDimsAttr, kShapeAttr) for the model ABI.
  void annotateDynamicShapes(func::FuncOp func, ArrayRef<Value> results);
  /// Refuses a node whose op has no dynamic-shape handler when an input
  /// has a dynamic dimension; after the handler, checks that every dynamic
  /// result has its sizes recorded.
  LogicalResult checkDynamicInputs(NodeContext &nc, bool handlerIsDynamic);
  LogicalResult checkDynamicResults(NodeContext &nc);
  /// The check status so far: first failing site + 1 (0: none), its value.
  Value checkFlag, checkValue;
  unsigned resourceCounter = 0;
  /// Attention chains, tried before each node's handler (Attention.cpp).
  std::unique_ptr<AttentionFusion> attention;
};

} // namespace mlir::fp8::onnx_import

#endif // FP8_LIB_IMPORT_IMPORTER_H
