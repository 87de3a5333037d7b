//===- GraphWalk.cpp - The ONNX graph walk --------------------------------===//
//
// Part of fp8-opt. The Importer's walk over a model: the opset check (and
// the upgrade of older opsets), graph inputs and initializers, one handler
// call per node with its NameLoc, and the graph outputs; NodeContext, what a
// handler sees of its node; the size budgets every node's results are held
// to. Built without exceptions: the protobuf accessors used here do not
// throw, and the calls that may throw live in ONNXProtoIO.cpp.
//
//===----------------------------------------------------------------------===//

#include "Attention.h"
#include "Importer.h"
#include "TorchMetadata.h"
#include "ONNXProtoIO.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

static int64_t numElements(ArrayRef<int64_t> shape) {
  return numElementsSat(shape);
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

InFlightDiagnostic NodeContext::error() {
  return emitError(loc) << "'" << opType() << "' node \"" << name << "\": ";
}

FailureOr<Value> NodeContext::required(size_t i) {
  if (Value v = in(i))
    return v;
  return error() << "missing required input #" << i;
}

const onnx::AttributeProto *NodeContext::attr(StringRef attrName) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == attrName)
      return &a;
  return nullptr;
}

int64_t NodeContext::attrInt(StringRef attrName, int64_t dflt) const {
  const onnx::AttributeProto *a = attr(attrName);
  return a ? a->i() : dflt;
}

float NodeContext::attrFloat(StringRef attrName, float dflt) const {
  const onnx::AttributeProto *a = attr(attrName);
  return a ? a->f() : dflt;
}

std::string NodeContext::attrString(StringRef attrName, StringRef dflt) const {
  const onnx::AttributeProto *a = attr(attrName);
  return a ? a->s() : dflt.str();
}

std::optional<SmallVector<int64_t>>
NodeContext::attrInts(StringRef attrName) const {
  const onnx::AttributeProto *a = attr(attrName);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

FailureOr<SmallVector<int64_t>> NodeContext::constInts(size_t i,
                                                       StringRef what) {
  Value v = in(i);
  if (!v)
    return error() << "missing input '" << what << "'";
  std::optional<Lit> lit = imp.getLit(v);
  if (!lit || lit->isFloat())
    return error() << "input '" << what
                   << "' must be an integer constant (or fold to one) so that "
                      "shapes stay static";
  return lit->ints;
}

FailureOr<int64_t> NodeContext::normAxis(int64_t axis, int64_t rank) {
  // No axis of a rank-0 tensor is valid: callers index the shape with the
  // result (fuzzing: Concat of a scalar read shape[0] of an empty shape).
  if (axis < -rank || axis >= rank)
    return error() << "axis " << axis << " out of range for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

Importer::Importer(MLIRContext &ctx, const ImportOptions &opts,
                   StringRef fileName, const OpRegistry &registry)
    : ctx(&ctx), b(&ctx), opts(opts), fileName(fileName.str()),
      registry(registry) {}

Importer::~Importer() = default;

//===----------------------------------------------------------------------===//
// Size budgets
//===----------------------------------------------------------------------===//

std::string fp8::onnx_import::formatShapeSat(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "shape [";
  llvm::interleave(shape, os, "x");
  os << "]";
  int64_t n = numElementsSat(shape);
  if (n == INT64_MAX)
    os << " (over 2^63 elements)";
  else
    os << " (" << n << " elements)";
  return s;
}

LogicalResult Importer::checkConstantSize(NodeContext &nc,
                                          ArrayRef<int64_t> shape,
                                          Type elemType) {
  int64_t n = numElements(shape);
  if (n <= opts.maxConstantElements)
    return success();
  return nc.error() << "would create a constant of " << formatShapeSat(shape)
                    << " of " << elemType << ", over the importer's budget of "
                    << opts.maxConstantElements
                    << " elements for constants made from the model's data; "
                       "check the node's shape inputs";
}

/// Every value a node produces: a type no machine can hold is refused.
LogicalResult Importer::checkResultSize(NodeContext &nc, int i) {
  Value v = nc.results[i];
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return success();
  if (isDynamic(v)) {
    // The largest the dynamic dimensions' bounds allow.
    SymExpr count(1);
    for (const SymExpr &e : symShape(v))
      count = count * e;
    if (!count.isValid() || symbols.range(count).second > kMaxTensorElements)
      return nc.error() << "output #" << i << " ('" << nc.node.output(i)
                        << "') would have " << describe(v) << ", up to "
                        << symbols.range(count).second
                        << " elements within the bounds of its dynamic "
                           "dimensions, more than any machine holds";
    return success();
  }
  int64_t n = numElements(type.getShape());
  if (n > kMaxTensorElements)
    return nc.error() << "output #" << i << " ('" << nc.node.output(i)
                      << "') would have " << formatShapeSat(type.getShape())
                      << ", more elements than any machine holds";
  return success();
}

//===----------------------------------------------------------------------===//
// Graph walk
//===----------------------------------------------------------------------===//

Location Importer::graphLoc(StringRef what) {
  return NameLoc::get(StringAttr::get(ctx, what),
                      FileLineColLoc::get(ctx, fileName, 0, 0));
}

/// "48" or "1..8", as --input-shape and --dim spell a dimension.
static std::string formatBounds(const DimBounds &d) {
  return d.isStatic() ? std::to_string(d.lo)
                      : std::to_string(d.lo) + ".." + std::to_string(d.hi);
}

LogicalResult Importer::collectDimBounds(const onnx::GraphProto &graph,
                                         const llvm::StringSet<> &initNames) {
  paramBounds.clear();
  for (const auto &entry : opts.dimBounds)
    paramBounds[entry.getKey()] = {entry.getValue(),
                                   ("--dim " + entry.getKey()).str()};
  llvm::StringSet<> params;
  for (const onnx::ValueInfoProto &vi : graph.input()) {
    if (initNames.contains(vi.name()) || !vi.type().has_tensor_type() ||
        !vi.type().tensor_type().has_shape())
      continue;
    const auto &dims = vi.type().tensor_type().shape().dim();
    for (const onnx::TensorShapeProto_Dimension &dim : dims)
      if (!(dim.has_dim_value() && dim.dim_value() >= 0) && dim.has_dim_param())
        params.insert(dim.dim_param());
    auto given = opts.inputShapes.find(vi.name());
    if (given == opts.inputShapes.end())
      continue;
    if (given->second.size() != size_t(dims.size()))
      return emitError(graphLoc(vi.name()))
             << "--input-shape for '" << vi.name() << "' has rank "
             << given->second.size() << " but the model's input has rank "
             << dims.size();
    // A dimension named by a dim_param gives that name its size or bounds.
    for (auto [i, dim] : llvm::enumerate(dims)) {
      if ((dim.has_dim_value() && dim.dim_value() >= 0) || !dim.has_dim_param())
        continue;
      const DimBounds &g = given->second[i];
      std::string where = "--input-shape " + vi.name() + " (dimension " +
                          std::to_string(i) + ")";
      auto [it, inserted] = paramBounds.try_emplace(dim.dim_param(), g, where);
      if (!inserted && !(it->second.first == g))
        return emitError(graphLoc(vi.name()))
               << "dimension '" << dim.dim_param() << "' is given "
               << formatBounds(it->second.first) << " by " << it->second.second
               << " and " << formatBounds(g) << " by " << where
               << "; every dimension named '" << dim.dim_param()
               << "' is one size, give it once (--dim " << dim.dim_param()
               << "=...)";
    }
  }
  for (const auto &entry : opts.dimBounds)
    if (!params.contains(entry.getKey()))
      return emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
             << "--dim names '" << entry.getKey()
             << "', which is not a symbolic dimension (dim_param) of the "
                "model's inputs";
  return success();
}

FailureOr<SmallVector<Importer::InputDim>>
Importer::inputDims(const onnx::ValueInfoProto &vi, Location loc) {
  const onnx::TypeProto_Tensor &tt = vi.type().tensor_type();
  auto given = opts.inputShapes.find(vi.name());
  const bool hasGiven = given != opts.inputShapes.end();
  if (!tt.has_shape() && !hasGiven)
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has no shape; give one with --input-shape "
                          << vi.name() << "=D0xD1x...";
  const int rank = tt.has_shape() ? tt.shape().dim_size()
                                   : int(given->second.size());
  SmallVector<InputDim> out;
  for (int i = 0; i < rank; ++i) {
    const DimBounds *g = hasGiven ? &given->second[i] : nullptr;
    const onnx::TensorShapeProto_Dimension *dim =
        tt.has_shape() ? &tt.shape().dim(i) : nullptr;
    if (dim && dim->has_dim_value() && dim->dim_value() >= 0) {
      if (g && !(g->isStatic() && g->lo == dim->dim_value()))
        return emitError(loc) << "--input-shape for '" << vi.name()
                              << "' gives dimension #" << i << " = "
                              << formatBounds(*g)
                              << " but the model fixes it to "
                              << dim->dim_value();
      out.push_back({dim->dim_value(), "", 0, 0});
      continue;
    }
    std::string param = dim && dim->has_dim_param() ? dim->dim_param() : "";
    std::optional<DimBounds> bounds;
    if (g)
      bounds = *g;
    else if (auto it = paramBounds.find(param);
             !param.empty() && it != paramBounds.end())
      bounds = it->second.first;
    if (!bounds) {
      auto diag = emitError(loc) << "graph input '" << vi.name()
                                 << "' has dynamic dimension #" << i;
      if (!param.empty())
        diag << " ('" << param << "')";
      diag << "; give a static shape with --input-shape " << vi.name()
           << "=D0xD1x..., or bounds (--input-shape " << vi.name()
           << "=LO..HIx...";
      if (!param.empty())
        diag << ", --dim " << param << "=LO..HI";
      return diag << ")";
    }
    if (bounds->isStatic()) {
      out.push_back({bounds->lo, "", 0, 0});
      continue;
    }
    std::string symbol =
        param.empty() ? vi.name() + "[" + std::to_string(i) + "]" : param;
    out.push_back({ShapedType::kDynamic, symbol, bounds->lo, bounds->hi});
  }
  // The largest tensor the bounds allow must be one a machine can hold.
  SmallVector<int64_t> largest;
  bool bounded = false;
  for (const InputDim &d : out) {
    bounded |= ShapedType::isDynamic(d.size);
    largest.push_back(ShapedType::isDynamic(d.size) ? d.hi : d.size);
  }
  if (numElements(largest) > kMaxTensorElements)
    return emitError(loc) << "graph input '" << vi.name() << "' has "
                          << formatShapeSat(largest)
                          << (bounded ? " at its bounds" : "")
                          << ", more elements than any machine holds";
  return out;
}

FailureOr<OwningOpRef<ModuleOp>>
Importer::importModel(const onnx::ModelProto &model) {
  Location fileLoc = FileLineColLoc::get(ctx, fileName, 0, 0);
  if (model.ir_version() > 10)
    return emitError(fileLoc) << "unsupported ONNX IR version "
                              << model.ir_version() << " (at most 10)";
  opsets.clear();
  for (const onnx::OperatorSetIdProto &os : model.opset_import())
    opsets[canonicalDomain(os.domain())] = os.version();
  auto defaultOpset = opsets.find("");
  if (defaultOpset == opsets.end())
    return emitError(fileLoc) << "model imports no default-domain (ai.onnx) opset";
  opset = defaultOpset->second;
  if (opset < detail::kOldestUpgradableOpset || opset > kNewestOpset)
    return emitError(fileLoc)
           << "unsupported ai.onnx opset " << opset << " (supported: "
           << detail::kOldestUpgradableOpset << " to " << kNewestOpset
           << "; below 13 through ONNX's version converter)";
  // Older exports: ONNX's own version converter rewrites the graph to
  // opset 13 (attribute-to-input moves, renamed ops), which the handlers
  // implement; they then see opset 13.
  if (opset < 13) {
    onnx::ModelProto upgraded;
    std::string why = detail::upgradeOpset(model, 13, upgraded);
    if (!why.empty())
      return emitError(fileLoc)
             << "ai.onnx opset " << opset
             << " could not be upgraded to 13 by ONNX's version converter: "
             << why << "; re-export the model with opset 13 or newer";
    upgradedFrom = opset;
    return importModel(upgraded);
  }
  if (!model.has_graph())
    return emitError(fileLoc) << "model has no graph";

  OwningOpRef<ModuleOp> module(ModuleOp::create(fileLoc));
  if (failed(importGraph(model.graph(), *module)))
    return failure();
  if (failed(verify(*module)))
    return emitError(fileLoc) << "imported module failed to verify";
  return module;
}

LogicalResult Importer::importGraph(const onnx::GraphProto &graph,
                                    ModuleOp module) {
  llvm::StringSet<> initNames;
  for (const onnx::TensorProto &t : graph.initializer())
    initNames.insert(t.name());

  // Arguments: graph inputs that are not initializers (pre-IR-4 models list
  // initializers as inputs too).
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> argInfos;
  SmallVector<SmallVector<InputDim>> argDims;
  if (failed(collectDimBounds(graph, initNames)))
    return failure();
  for (const onnx::ValueInfoProto &vi : graph.input()) {
    if (initNames.contains(vi.name()))
      continue;
    Location loc = graphLoc(vi.name());
    if (!vi.type().has_tensor_type())
      return emitError(loc) << "graph input '" << vi.name()
                            << "' is not a tensor (sequences, maps and "
                               "optionals are not supported)";
    Type et = elementType(vi.type().tensor_type().elem_type());
    if (!et)
      return emitError(loc) << "graph input '" << vi.name()
                            << "' has unsupported element type "
                            << onnxTypeName(vi.type().tensor_type().elem_type());
    FailureOr<SmallVector<InputDim>> dims = inputDims(vi, loc);
    if (failed(dims))
      return failure();
    SmallVector<int64_t> shape(
        llvm::map_range(*dims, [](const InputDim &d) { return d.size; }));
    argTypes.push_back(RankedTensorType::get(shape, et));
    argInfos.push_back(&vi);
    argDims.push_back(std::move(*dims));
  }
  for (const auto &entry : opts.inputShapes)
    if (llvm::none_of(argInfos, [&](const onnx::ValueInfoProto *vi) {
          return vi->name() == entry.getKey();
        }))
      return emitError(FileLineColLoc::get(ctx, fileName, 0, 0))
             << "--input-shape names '" << entry.getKey()
             << "', which is not a graph input";

  b.setInsertionPointToEnd(module.getBody());
  std::string graphName = graph.name().empty() ? "main" : graph.name();
  auto func = func::FuncOp::create(b, graphLoc(graphName), "main",
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, vi] : llvm::enumerate(argInfos)) {
    func.setArgAttr(i, "onnx.name", b.getStringAttr(vi->name()));
    Value arg = entry->getArgument(i);
    values[vi->name()] = arg;
    if (isUnsignedONNXType(vi->type().tensor_type().elem_type())) {
      unsignedValues.insert(arg);
      // Signless MLIR integers lose uint8 vs int8; the model ABI reads the
      // ONNX type from here (lib/Target/ModelLibrary.cpp).
      func.setArgAttr(i, "onnx.dtype",
                      b.getI64IntegerAttr(
                          vi->type().tensor_type().elem_type()));
    }
  }
  b.setInsertionPointToStart(entry);
  bindInputSymbols(func, argDims, argInfos);

  for (const onnx::TensorProto &t : graph.initializer()) {
    Location loc = graphLoc(t.name());
    FailureOr<Value> ref = externalWeight(t, loc);
    if (failed(ref))
      return failure();
    if (*ref) {
      values[t.name()] = *ref;
      continue;
    }
    FailureOr<ElementsAttr> attr = tensorToAttr(t, loc, /*forceDense=*/false);
    if (failed(attr))
      return failure();
    Value v = constant(loc, *attr);
    values[t.name()] = v;
    if (isUnsignedONNXType(t.data_type()))
      unsignedValues.insert(v);
  }

  if (!registry.recognizers().empty())
    graphView = std::make_unique<GraphView>(graph, values);
  if (opts.fuseAttention)
    attention = std::make_unique<AttentionFusion>(*this, graph, values);
  for (auto [i, node] : llvm::enumerate(graph.node()))
    if (failed(importNode(node, i)))
      return failure();
  graphView.reset();
  attention.reset();

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const onnx::ValueInfoProto &vi : graph.output()) {
    Location loc = graphLoc(vi.name());
    Value v = values.lookup(vi.name());
    if (!v)
      return emitError(loc) << "graph output '" << vi.name()
                            << "' is not produced by any node, input or "
                               "initializer";
    // Check our shape propagation against whatever the model declares.
    if (vi.type().has_tensor_type()) {
      const onnx::TypeProto_Tensor &tt = vi.type().tensor_type();
      Type et = elementType(tt.elem_type());
      if (et && et != elemOf(v))
        return emitError(loc) << "graph output '" << vi.name()
                              << "' is declared with element type " << et
                              << " but computes " << elemOf(v);
      if (tt.has_shape()) {
        ArrayRef<int64_t> s = shapeOf(v);
        bool mismatch = tt.shape().dim_size() != static_cast<int>(s.size());
        for (int d = 0; !mismatch && d < tt.shape().dim_size(); ++d)
          mismatch = tt.shape().dim(d).has_dim_value() &&
                     tt.shape().dim(d).dim_value() != s[d];
        if (mismatch)
          return emitError(loc)
                 << "graph output '" << vi.name()
                 << "' shape mismatch: the model declares a different shape "
                    "than the computed "
                 << v.getType();
      }
    }
    results.push_back(v);
    resultTypes.push_back(v.getType());
  }
  // The run-time checks' status, last (the model ABI reads it).
  Value status = finishChecks(graphLoc(graphName));
  if (status) {
    results.push_back(status);
    resultTypes.push_back(status.getType());
  }
  func::ReturnOp::create(b, graphLoc(graphName), results);
  // Folding leaves the intermediate constants of shape subgraphs behind.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  func.setFunctionType(b.getFunctionType(argTypes, resultTypes));
  for (auto [i, vi] : llvm::enumerate(graph.output())) {
    func.setResultAttr(i, "onnx.name", b.getStringAttr(vi.name()));
    // As for the arguments: the ONNX type of unsigned results.
    if (isUnsigned(results[i])) {
      unsigned w = elemOf(results[i]).getIntOrFloatBitWidth();
      int dt = w == 8    ? onnx::TensorProto::UINT8
               : w == 16 ? onnx::TensorProto::UINT16
               : w == 32 ? onnx::TensorProto::UINT32
                         : onnx::TensorProto::UINT64;
      func.setResultAttr(i, "onnx.dtype", b.getI64IntegerAttr(dt));
    }
  }
  if (status) {
    func.setResultAttr(results.size() - 1, kCheckStatusAttr, b.getUnitAttr());
    func->setAttr(kChecksAttr,
                  b.getStrArrayAttr(SmallVector<StringRef>(
                      checkMessages.begin(), checkMessages.end())));
  }
  annotateDynamicShapes(
      func, ArrayRef<Value>(results).take_front(graph.output_size()));
  return success();
}

LogicalResult Importer::importNode(const onnx::NodeProto &node, size_t index) {
  std::string name = node.name().empty()
                         ? node.op_type() + "#" + std::to_string(index)
                         : node.name();
  Location loc = NameLoc::get(StringAttr::get(ctx, name),
                              FileLineColLoc::get(ctx, fileName, 0, 0));
  // The torch module that produced the node, where the exporter says.
  loc = withTorchModuleOf(node, loc);
  NodeContext nc(*this, node, loc, name);
  const OpRegistry::Entry *handler = dispatch(nc);
  if (!handler)
    return failure();

  for (const std::string &in : node.input()) {
    if (in.empty()) {
      nc.inputs.push_back(Value());
      continue;
    }
    Value v = values.lookup(in);
    if (!v)
      return nc.error() << "input '" << in
                        << "' is not defined (missing initializer, graph "
                           "input or producing node)";
    nc.inputs.push_back(v);
  }
  // Trailing omitted optional inputs are simply absent.
  while (!nc.inputs.empty() && !nc.inputs.back())
    nc.inputs.pop_back();

  // Node-group recognizers first (OpRegistry.h); the node's handler when
  // none of them takes it.
  // Attention chains (Attention.cpp) keep state across the walk.
  bool recognized = attention && attention->fuse(nc);
  for (const NodeGroupRecognizer &recognize : registry.recognizers()) {
    if (recognized)
      break;
    FailureOr<bool> r = recognize(nc, *graphView);
    if (failed(r))
      return failure();
    if ((recognized = *r))
      break;
  }
  if (!recognized &&
      (failed(checkDynamicInputs(nc, handler->shapes == ShapeSupport::Dynamic)) ||
       failed(handler->handler(nc))))
    return failure();
  if (failed(checkDynamicResults(nc)))
    return failure();
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    if (i >= static_cast<int>(nc.results.size()) || !nc.results[i])
      return nc.error() << "output #" << i << " ('" << node.output(i)
                        << "') is not supported";
    if (failed(checkResultSize(nc, i)))
      return failure();
    values[node.output(i)] = nc.results[i];
  }
  return success();
}

const OpRegistry::Entry *Importer::dispatch(NodeContext &nc) {
  const onnx::NodeProto &node = nc.node;
  StringRef domain = canonicalDomain(node.domain());
  // The version converter's leftovers (detail::kUnconvertedDomain) are
  // default-domain ops at that domain's opset, the model's original one.
  StringRef opsetDomain = domain;
  if (upgradedFrom && domain == detail::kUnconvertedDomain)
    domain = "";
  const OpRegistry::Op *op = registry.find(domain, node.op_type());
  if (!op) {
    if (!domain.empty())
      nc.error() << "unsupported op '" << node.op_type() << "' in domain '"
                 << node.domain() << "'";
    else
      nc.error() << "unsupported op type '" << node.op_type() << "'";
    return nullptr;
  }
  auto imported = opsets.find(opsetDomain);
  if (imported == opsets.end()) {
    nc.error() << "the model's opset_import has no entry for domain '"
               << node.domain() << "'";
    return nullptr;
  }
  const int64_t domainOpset = imported->second;
  nc.version = resolveVersion(op->since, domainOpset);
  if (nc.version == 0) {
    nc.error() << node.op_type() << " is defined from opset "
               << op->since.front() << ", the model has opset " << domainOpset;
    return nullptr;
  }
  if (const OpRegistry::Entry *entry = op->entryFor(nc.version))
    return entry;
  nc.error() << node.op_type() << "-" << nc.version << " (the version of "
             << (domain.empty() ? "ai.onnx" : domain) << " opset "
             << domainOpset << ") is not supported; the importer implements "
             << op->describeSupported()
             << "; re-export the model with one of those opsets";
  return nullptr;
}
