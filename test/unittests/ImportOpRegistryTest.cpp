//===- ImportOpRegistryTest.cpp - The importer's versioned op table -------===//
//
// Part of fp8-opt. The importer's handler table (lib/Import/OpRegistry.h):
//  - the since-version history it resolves node versions against
//    (OpVersions.cpp) is ONNX's own: for every handled op and every opset
//    that ONNX 1.12 knows (1 to 17), the version the importer selects is the
//    one libonnx's schema registry selects;
//  - every version of a handled op that opsets 13 to 21 select has a
//    handler;
//  - the dispatcher refuses a version without a handler at the node, naming
//    the op, the version and what the importer implements;
//  - node-group recognizers run before the handlers, see the graph, and a
//    group they import leaves no trace of its inner nodes.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"
#include "ONNXProtoIO.h"
#include "OpRegistry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "onnx/defs/schema.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fp8;
using namespace mlir::fp8::onnx_import;

namespace {

TEST(ImportOpRegistry, SinceVersionsAreONNXs) {
  int checked = 0;
  for (const OpRegistry::Op *op : OpRegistry::standard().ops()) {
    ASSERT_TRUE(op->domain.empty()) << op->domain;
    for (int opset = 1; opset <= 17; ++opset) {
      const onnx::OpSchema *schema =
          onnx::OpSchemaRegistry::Schema(op->type, opset, onnx::ONNX_DOMAIN);
      int expected = schema ? schema->SinceVersion() : 0;
      EXPECT_EQ(resolveVersion(op->since, opset), expected)
          << op->type << " at opset " << opset;
      ++checked;
    }
  }
  EXPECT_GT(checked, 100 * 17);
}

TEST(ImportOpRegistry, EveryVersionOfOpsets13To21HasAHandler) {
  for (const OpRegistry::Op *op : OpRegistry::standard().ops()) {
    for (int opset = 13; opset <= kNewestOpset; ++opset) {
      int v = resolveVersion(op->since, opset);
      if (v != 0) {
        EXPECT_NE(op->handlerFor(v), nullptr)
            << op->type << "-" << v << " (opset " << opset << ")";
      }
    }
  }
}

TEST(ImportOpRegistry, ResolveVersion) {
  const int since[] = {1, 11, 13, 18};
  EXPECT_EQ(resolveVersion(since, 10), 1);
  EXPECT_EQ(resolveVersion(since, 13), 13);
  EXPECT_EQ(resolveVersion(since, 17), 13);
  EXPECT_EQ(resolveVersion(since, 21), 18);
  const int gelu[] = {20};
  EXPECT_EQ(resolveVersion(gelu, 19), 0);
  EXPECT_EQ(onnxSinceVersions("ReduceMean"), ArrayRef<int>(since));
  EXPECT_TRUE(onnxSinceVersions("NoSuchOp").empty());
}

/// Imports the ONNX text model `text` with `registry`; the module, or null
/// with the diagnostics in `diags`.
OwningOpRef<ModuleOp> importText(MLIRContext &ctx, const OpRegistry &registry,
                                 StringRef text, std::string &diags) {
  DialectRegistry dialects;
  registerONNXImportDialects(dialects);
  ctx.appendDialectRegistry(dialects);
  ctx.loadAllAvailableDialects();
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    diags += d.str() + "\n";
    return success();
  });
  onnx::ModelProto model;
  std::string err = fp8::detail::parseTextModel(text, model);
  EXPECT_EQ(err, "");
  ImportOptions opts;
  Importer importer(ctx, opts, "test.onnxtext", registry);
  FailureOr<OwningOpRef<ModuleOp>> module = importer.importModel(model);
  if (failed(module))
    return {};
  return std::move(*module);
}

/// The standard handler of `op`, registered at `versions` only.
void addStandard(OpRegistry &r, StringRef op, ArrayRef<int> versions) {
  const OpRegistry::Op *standard = OpRegistry::standard().find("", op);
  ASSERT_NE(standard, nullptr);
  r.add(op, versions, *standard->handlerFor(versions.front()));
}

constexpr const char *kSplit = R"(
<ir_version: 8, opset_import: ["" : 19]>
g (float[4] X) => (float[2] A, float[2] B) {
  A, B = Split <num_outputs = 2> (X)
}
)";

TEST(ImportOpRegistry, VersionWithoutHandlerIsRefusedAtTheNode) {
  MLIRContext ctx;
  OpRegistry r;
  addStandard(r, "Split", {13});
  std::string diags;
  EXPECT_FALSE(importText(ctx, r, kSplit, diags));
  EXPECT_NE(diags.find("'Split' node \"Split#0\": Split-18 (the version of "
                       "ai.onnx opset 19) is not supported; the importer "
                       "implements Split-13 (opsets 13 to 17); re-export the "
                       "model with one of those opsets"),
            std::string::npos)
      << diags;
  // With the version registered, the same model imports.
  MLIRContext ctx2;
  OpRegistry r2;
  addStandard(r2, "Split", {13, 18});
  diags.clear();
  EXPECT_TRUE(importText(ctx2, r2, kSplit, diags)) << diags;
}

TEST(ImportOpRegistry, OtherDomains) {
  // A handler in another domain resolves against that domain's opset
  // import, and is refused when the model does not import the domain.
  auto model = [](StringRef imports) {
    return ("<ir_version: 8, opset_import: [\"\" : 17" + imports +
            "]>\ng (float[2] X) => (float[2] Y) {\n"
            "  Y = test.domain.Twice (X)\n}\n")
        .str();
  };
  OpRegistry r;
  r.add("test.domain", "Twice", {1, 3}, [](NodeContext &nc) {
    FailureOr<Value> v =
        nc.imp.elementwise(nc, EwKind::Add, {nc.in(0), nc.in(0)});
    if (failed(v))
      return failure();
    nc.results.push_back(*v);
    return success();
  });
  std::string diags;
  MLIRContext c1, c2, c3;
  EXPECT_TRUE(importText(c1, r, model(", \"test.domain\" : 2"), diags))
      << diags;
  EXPECT_FALSE(importText(c2, r, model(""), diags));
  EXPECT_NE(diags.find("the model's opset_import has no entry for domain "
                       "'test.domain'"),
            std::string::npos)
      << diags;
  diags.clear();
  OpRegistry r3;
  r3.add("test.domain", "Twice", {3},
         *r.find("test.domain", "Twice")->handlerFor(1));
  EXPECT_FALSE(importText(c3, r3, model(", \"test.domain\" : 2"), diags));
  EXPECT_NE(diags.find("Twice is defined from opset 3, the model has opset 2"),
            std::string::npos)
      << diags;
}

/// Z = Neg(Neg(X)), and the inner Neg's Y an output too if `yIsOutput`.
std::string negNegModel(bool yIsOutput) {
  return std::string("<ir_version: 8, opset_import: [\"\" : 17]>\n"
                     "g (float[4] X) => (float[4] Z") +
         (yIsOutput ? ", float[4] Y" : "") +
         ") {\n  Y = Neg (X)\n  Z = Neg (Y)\n}\n";
}

/// Recognizes Neg(Neg(x)) at the outer Neg and imports it as x, when the
/// inner Neg's result is read only there.
struct NegNegRecognizer {
  std::vector<std::string> *seen;
  FailureOr<bool> operator()(NodeContext &nc, const GraphView &graph) const {
    seen->push_back(nc.node.op_type() + ":" + nc.name);
    if (nc.opType() != "Neg")
      return false;
    const onnx::NodeProto *inner = graph.producer(nc.node.input(0));
    if (!inner || inner->op_type() != "Neg" ||
        graph.numUses(nc.node.input(0)) != 1)
      return false;
    Value x = graph.lookup(inner->input(0));
    if (!x)
      return false;
    nc.results.push_back(x);
    return true;
  }
};

unsigned countGenerics(ModuleOp module) {
  unsigned n = 0;
  module.walk([&](linalg::GenericOp) { ++n; });
  return n;
}

TEST(ImportOpRegistry, RecognizerImportsAGroupBeforeDispatch) {
  std::vector<std::string> seen;
  OpRegistry r;
  registerHandlers(r);
  r.addRecognizer(NegNegRecognizer{&seen});
  MLIRContext ctx;
  std::string diags;
  OwningOpRef<ModuleOp> m = importText(ctx, r, negNegModel(false), diags);
  ASSERT_TRUE(m) << diags;
  // Called for both nodes, in order, before their handlers.
  EXPECT_EQ(seen, (std::vector<std::string>{"Neg:Neg#0", "Neg:Neg#1"}));
  // Z is X; the inner Neg's ops were erased with the other unused ones.
  EXPECT_EQ(countGenerics(*m), 0u);
  auto main = m->lookupSymbol<func::FuncOp>("main");
  auto ret = cast<func::ReturnOp>(main.getBody().front().getTerminator());
  EXPECT_EQ(ret.getOperand(0), main.getArgument(0));

  // Y is also a graph output: the recognizer leaves both Negs to their
  // handlers.
  MLIRContext ctx2;
  OwningOpRef<ModuleOp> m2 = importText(ctx2, r, negNegModel(true), diags);
  ASSERT_TRUE(m2) << diags;
  EXPECT_EQ(countGenerics(*m2), 2u);
}

TEST(ImportOpRegistry, RecognizerFailureStopsTheImport) {
  OpRegistry r;
  registerHandlers(r);
  r.addRecognizer([](NodeContext &nc, const GraphView &) -> FailureOr<bool> {
    if (nc.opType() == "Neg" && nc.name == "Neg#1")
      return nc.error() << "recognized but malformed";
    return false;
  });
  MLIRContext ctx;
  std::string diags;
  EXPECT_FALSE(importText(ctx, r, negNegModel(false), diags));
  EXPECT_NE(diags.find("'Neg' node \"Neg#1\": recognized but malformed"),
            std::string::npos)
      << diags;
}

} // namespace
