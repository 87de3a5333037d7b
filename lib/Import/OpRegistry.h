//===- OpRegistry.h - Versioned ONNX op handlers ----------------*- C++ -*-===//
//
// Part of fp8-opt. The importer's table from ONNX op types to handlers, and
// its extension point for node-group recognizers. Not a public header.
//
// As in onnx-mlir's versioned builder table, every handler is registered
// with the ONNX since-versions of its op that it implements. The graph walk
// resolves a node's version from the model's opset import for the node's
// domain -- the newest since-version of the op that is not newer than that
// opset, from ONNX's own version history (onnxSinceVersions, OpVersions.cpp)
// -- and calls the handler registered for exactly that version. A version
// without a handler is refused at the node, naming the versions the
// importer implements and the opsets they cover.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_IMPORT_OPREGISTRY_H
#define FP8_LIB_IMPORT_OPREGISTRY_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <functional>
#include <string>
#include <vector>

namespace mlir::fp8::onnx_import {

class NodeContext;

/// The newest default-domain opset the importer accepts.
inline constexpr int kNewestOpset = 21;

/// Imports one node: reads `nc.inputs` and attributes, fills `nc.results`
/// (one value per ONNX output it produces), or emits an error at the node.
using Handler = std::function<LogicalResult(NodeContext &)>;

/// The since-versions ONNX defines for the default-domain (ai.onnx) op
/// `opType` up to opset kNewestOpset, ascending; empty for an op the table
/// does not list (OpVersions.cpp lists every op that has a handler).
ArrayRef<int> onnxSinceVersions(StringRef opType);

/// The version of an op with since-versions `since` (ascending) that a model
/// importing `opset` of its domain uses: the newest one not newer than
/// `opset`; 0 when the op is newer than the opset.
int resolveVersion(ArrayRef<int> since, int64_t opset);

/// "" for the default domain (spelled "" or "ai.onnx"), else `domain`.
StringRef canonicalDomain(StringRef domain);

//===----------------------------------------------------------------------===//
// Node-group recognizers
//===----------------------------------------------------------------------===//

/// What a node-group recognizer sees of the graph besides its node: who
/// produces a value, how often it is read, and the values imported so far.
class GraphView {
public:
  GraphView(const onnx::GraphProto &graph,
            const llvm::StringMap<Value> &values);

  const onnx::GraphProto &graph() const { return graphProto; }
  /// The node whose output `value` is, or null for graph inputs,
  /// initializers and names nothing defines.
  const onnx::NodeProto *producer(StringRef value) const;
  /// How many node inputs and graph outputs read `value`.
  unsigned numUses(StringRef value) const;
  /// The imported value named `value` (a graph input, an initializer or an
  /// output of an earlier node), or null.
  Value lookup(StringRef value) const { return values.lookup(value); }

private:
  const onnx::GraphProto &graphProto;
  const llvm::StringMap<Value> &values;
  llvm::StringMap<const onnx::NodeProto *> producers;
  llvm::StringMap<unsigned> uses;
};

/// A node-group recognizer imports a group of nodes as one op. The graph
/// walk calls every registered recognizer for every node, in graph order,
/// after the node's inputs are looked up and before its handler runs (the
/// node's op type and version must have a handler). A recognizer looks at
/// `nc.node` and, through `graph`, at the nodes producing its inputs (all
/// imported already); when they form its pattern it builds the group's op
/// from values defined before the group, pushes one result per output of
/// `nc.node` onto `nc.results` and returns true. Returning false leaves the
/// node to its handler; failure() stops the import (after an error at the
/// node, nc.error()). The ops the earlier nodes of the group were imported
/// as stay until the end of the graph walk, which erases every op left
/// without uses; a recognizer must therefore check with `graph.numUses`
/// that the group's inner values are read only inside the group.
using NodeGroupRecognizer =
    std::function<FailureOr<bool>(NodeContext &nc, const GraphView &graph)>;

//===----------------------------------------------------------------------===//
// The handler table
//===----------------------------------------------------------------------===//

/// Whether a handler takes inputs with dynamic dimensions (sizes known as
/// symbols, lib/Import/SymbolicShapes.h). The graph walk refuses a node
/// with a dynamic input whose handler is StaticOnly, naming the op.
enum class ShapeSupport { StaticOnly, Dynamic };

class OpRegistry {
public:
  /// One registered handler and the since-versions it implements.
  struct Entry {
    SmallVector<int, 4> versions;
    Handler handler;
    ShapeSupport shapes = ShapeSupport::StaticOnly;
  };
  /// An op type of a domain: its since-versions and its handlers.
  struct Op {
    std::string domain, type;
    /// Every since-version of the op up to kNewestOpset: ONNX's for the
    /// default domain, the registered ones for other domains.
    SmallVector<int, 8> since;
    SmallVector<Entry, 1> entries;

    /// The handler registered for `version`, or null.
    const Handler *handlerFor(int version) const;
    /// The entry registered for `version`, or null.
    const Entry *entryFor(int version) const;
    /// "Split-13 (opsets 13 to 17), Split-18 (opsets 18 to 21)": what the
    /// handlers implement, for diagnostics.
    std::string describeSupported() const;
  };

  /// Registers `handler` for the default-domain op `opType` at `versions`,
  /// each a since-version ONNX defines for it (onnxSinceVersions). An op or
  /// version the ONNX table does not know, or a version registered twice, is
  /// a programming error (reported as a fatal error when the table is
  /// built, so any import test catches it).
  void add(StringRef opType, ArrayRef<int> versions, Handler handler,
           ShapeSupport shapes = ShapeSupport::StaticOnly);
  /// The same for an op of another domain; its since-versions are the
  /// registered ones.
  void add(StringRef domain, StringRef opType, ArrayRef<int> versions,
           Handler handler, ShapeSupport shapes = ShapeSupport::StaticOnly);
  void addRecognizer(NodeGroupRecognizer recognizer);

  /// The op `opType` of `domain` (spelled as in a NodeProto), or null.
  const Op *find(StringRef domain, StringRef opType) const;
  ArrayRef<NodeGroupRecognizer> recognizers() const { return recognizerList; }
  /// Every op, sorted by domain, then type.
  std::vector<const Op *> ops() const;

  /// The importer's table: the handlers of every op family (lib/Import/Ops)
  /// and the recognizers, built once.
  static const OpRegistry &standard();

private:
  llvm::StringMap<Op> table; // key: canonical domain, '\0', op type
  std::vector<NodeGroupRecognizer> recognizerList;
};

/// Fills `registry` with every op family's handlers and the recognizers.
void registerHandlers(OpRegistry &registry);

} // namespace mlir::fp8::onnx_import

#endif // FP8_LIB_IMPORT_OPREGISTRY_H
