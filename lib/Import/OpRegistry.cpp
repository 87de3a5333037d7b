//===- OpRegistry.cpp - Versioned ONNX op handlers ------------------------===//
//
// Part of fp8-opt. The handler table (OpRegistry.h), its checks against
// ONNX's version history, the view of the graph that node-group recognizers
// get, and the standard table: every op family's handlers.
//
//===----------------------------------------------------------------------===//

#include "OpRegistry.h"
#include "Ops/Ops.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

int onnx_import::resolveVersion(ArrayRef<int> since, int64_t opset) {
  int version = 0;
  for (int v : since)
    if (v <= opset)
      version = v;
  return version;
}

StringRef onnx_import::canonicalDomain(StringRef domain) {
  return domain == "ai.onnx" ? StringRef() : domain;
}

static std::string tableKey(StringRef domain, StringRef opType) {
  return (canonicalDomain(domain) + Twine('\0') + opType).str();
}

//===----------------------------------------------------------------------===//
// OpRegistry
//===----------------------------------------------------------------------===//

const OpRegistry::Entry *OpRegistry::Op::entryFor(int version) const {
  for (const Entry &e : entries)
    if (llvm::is_contained(e.versions, version))
      return &e;
  return nullptr;
}

const Handler *OpRegistry::Op::handlerFor(int version) const {
  const Entry *e = entryFor(version);
  return e ? &e->handler : nullptr;
}

std::string OpRegistry::Op::describeSupported() const {
  SmallVector<int> versions;
  for (const Entry &e : entries)
    llvm::append_range(versions, e.versions);
  llvm::sort(versions);
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(versions, os, [&](int v) {
    const int *next = llvm::upper_bound(since, v);
    int last = next == since.end() ? kNewestOpset : *next - 1;
    os << type << "-" << v;
    if (last == v)
      os << " (opset " << v << ")";
    else
      os << " (opsets " << v << " to " << last << ")";
  });
  return out;
}

void OpRegistry::add(StringRef opType, ArrayRef<int> versions,
                     Handler handler, ShapeSupport shapes) {
  add("", opType, versions, std::move(handler), shapes);
}

void OpRegistry::add(StringRef domain, StringRef opType,
                     ArrayRef<int> versions, Handler handler,
                     ShapeSupport shapes) {
  auto fatal = [&](const Twine &why) {
    llvm::report_fatal_error("ONNX op registry: '" + opType + "' (domain '" +
                             domain + "'): " + why);
  };
  StringRef dom = canonicalDomain(domain);
  auto [it, inserted] = table.try_emplace(tableKey(dom, opType));
  Op &op = it->second;
  if (inserted) {
    op.domain = dom.str();
    op.type = opType.str();
    if (dom.empty()) {
      ArrayRef<int> onnx = onnxSinceVersions(opType);
      if (onnx.empty())
        fatal("not in ONNX's since-version table (OpVersions.cpp)");
      op.since.assign(onnx.begin(), onnx.end());
    }
  }
  if (versions.empty())
    fatal("registered without versions");
  for (int v : versions) {
    if (op.handlerFor(v))
      fatal("version " + Twine(v) + " registered twice");
    if (dom.empty() && !llvm::is_contained(op.since, v))
      fatal("version " + Twine(v) + " is not a since-version ONNX defines");
    if (!dom.empty() && !llvm::is_contained(op.since, v)) {
      op.since.push_back(v);
      llvm::sort(op.since);
    }
  }
  Entry entry;
  entry.versions.assign(versions.begin(), versions.end());
  llvm::sort(entry.versions);
  entry.handler = std::move(handler);
  entry.shapes = shapes;
  op.entries.push_back(std::move(entry));
}

void OpRegistry::addRecognizer(NodeGroupRecognizer recognizer) {
  recognizerList.push_back(std::move(recognizer));
}

const OpRegistry::Op *OpRegistry::find(StringRef domain,
                                       StringRef opType) const {
  auto it = table.find(tableKey(domain, opType));
  return it == table.end() ? nullptr : &it->second;
}

std::vector<const OpRegistry::Op *> OpRegistry::ops() const {
  std::vector<const Op *> out;
  for (const auto &entry : table)
    out.push_back(&entry.second);
  llvm::sort(out, [](const Op *a, const Op *b) {
    return std::tie(a->domain, a->type) < std::tie(b->domain, b->type);
  });
  return out;
}

const OpRegistry &OpRegistry::standard() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerHandlers(r);
    return r;
  }();
  return registry;
}

void onnx_import::registerHandlers(OpRegistry &r) {
  registerElementwiseOps(r);
  registerActivationOps(r);
  registerGeneratorOps(r);
  registerShapeOps(r);
  registerIndexingOps(r);
  registerReductionOps(r);
  registerNormalizationOps(r);
  registerMatMulOps(r);
  registerConvOps(r);
  registerQuantizeOps(r);
  registerLossOps(r);
  // Node-group recognizers (OpRegistry::addRecognizer) go here.
}

//===----------------------------------------------------------------------===//
// GraphView
//===----------------------------------------------------------------------===//

GraphView::GraphView(const onnx::GraphProto &graph,
                     const llvm::StringMap<Value> &values)
    : graphProto(graph), values(values) {
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &in : node.input())
      if (!in.empty())
        ++uses[in];
    for (const std::string &out : node.output())
      if (!out.empty())
        producers.try_emplace(out, &node);
  }
  for (const onnx::ValueInfoProto &vi : graph.output())
    ++uses[vi.name()];
}

const onnx::NodeProto *GraphView::producer(StringRef value) const {
  return producers.lookup(value);
}

unsigned GraphView::numUses(StringRef value) const {
  return uses.lookup(value);
}
