//===- ONNXProtoIO.cpp - Exception-safe ONNX parsing ----------------------===//
//
// Part of fp8-opt. Built with -fexceptions (see CMakeLists.txt): every call
// into libonnx or protobuf happens inside a try block here, and whatever it
// throws becomes an error string.
//
//===----------------------------------------------------------------------===//

#include "ONNXProtoIO.h"

#include "onnx/defs/parser.h"
#include "onnx/version_converter/convert.h"

#include <exception>
#include <limits>
#include <set>

using namespace mlir::fp8;
using mlir::fp8::detail::kUnconvertedDomain;

std::string detail::parseBinaryModel(llvm::StringRef bytes,
                                     onnx::ModelProto &model) {
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    return "model file larger than 2 GiB (protobuf limit); store weights as "
           "external data";
  try {
    if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return "not a valid ONNX ModelProto (malformed or truncated protobuf)";
  } catch (const std::exception &e) {
    return std::string("protobuf parser failed: ") + e.what();
  } catch (...) {
    return "protobuf parser failed with an unknown exception";
  }
  return {};
}

std::string detail::parseTextModel(llvm::StringRef text,
                                   onnx::ModelProto &model) {
  // The parser reads a NUL-terminated string.
  std::string buffer = text.str();
  try {
    onnx::OnnxParser parser(buffer.c_str());
    onnx::Status status = parser.Parse(model);
    if (!status.IsOK())
      return "ONNX text parser: " + status.ErrorMessage();
  } catch (const std::exception &e) {
    return std::string("ONNX text parser failed: ") + e.what();
  } catch (...) {
    return "ONNX text parser failed with an unknown exception";
  }
  return {};
}

/// What ONNX's IR (which the converter builds from the proto without
/// checking it: a graph output that no node defines is a null pointer
/// there) needs of `graph`: every node input (but "") defined before its
/// use by a graph input, an initializer or an earlier node, every name
/// defined once, every graph output defined, no subgraph. Returns why not,
/// or an empty string. Drops value_info entries of undefined names.
static std::string checkForConverter(onnx::GraphProto &graph) {
  std::set<std::string> defined;
  auto define = [&](const std::string &name) { return defined.insert(name).second; };
  for (const onnx::ValueInfoProto &vi : graph.input()) {
    if (!vi.has_type() || !vi.type().has_tensor_type())
      return "graph input '" + vi.name() + "' is not a typed tensor";
    defined.insert(vi.name());
  }
  for (const onnx::TensorProto &t : graph.initializer())
    defined.insert(t.name());
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &in : node.input())
      if (!in.empty() && !defined.count(in))
        return "node '" + node.name() + "' (" + node.op_type() +
               ") reads '" + in + "', which nothing before it defines";
    for (const onnx::AttributeProto &a : node.attribute())
      if (a.type() == onnx::AttributeProto::GRAPH ||
          a.type() == onnx::AttributeProto::GRAPHS || a.has_g() || a.graphs_size())
        return "node '" + node.name() + "' (" + node.op_type() +
               ") has a subgraph";
    for (const std::string &o : node.output())
      if (!o.empty() && !define(o))
        return "'" + o + "' is defined twice";
  }
  for (const onnx::ValueInfoProto &vi : graph.output())
    if (!defined.count(vi.name()))
      return "graph output '" + vi.name() + "' is not defined by any node";
  auto *infos = graph.mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i)
    if (!defined.count(infos->Get(i).name()))
      infos->DeleteSubrange(i, 1);
  return {};
}

/// Whether the version converter leaves `node` to the importer (see
/// kUnconvertedDomain).
static bool keptFromConverter(const onnx::NodeProto &node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") &&
         (node.op_type() == "Softmax" || node.op_type() == "LogSoftmax" ||
          node.op_type() == "Hardmax");
}

/// The element type `graph` declares for `name` (graph inputs, outputs,
/// value_info, initializers), else FLOAT.
static int declaredElemType(const onnx::GraphProto &graph,
                            const std::string &name) {
  for (const auto *infos : {&graph.input(), &graph.output(), &graph.value_info()})
    for (const onnx::ValueInfoProto &vi : *infos)
      if (vi.name() == name && vi.type().tensor_type().elem_type() != 0)
        return vi.type().tensor_type().elem_type();
  for (const onnx::TensorProto &t : graph.initializer())
    if (t.name() == name)
      return t.data_type();
  return onnx::TensorProto::FLOAT;
}

/// A node cut out of the graph for the conversion, and an output of the
/// first node after it that stays (its place in the converted graph), or
/// "" when it came after the last one.
struct KeptNode {
  onnx::NodeProto node;
  std::string anchor;
};

/// Puts the nodes cut out before the conversion back into `nodes`, in
/// kUnconvertedDomain and in their original order, each where it was:
/// before its anchor, and before anything that the converter put there
/// and reads its output; after the node that defines its input. Returns why
/// that is impossible, or "".
static std::string reinsertKept(std::vector<onnx::NodeProto> &nodes,
                                const std::vector<KeptNode> &kept) {
  for (const KeptNode &k : kept) {
    onnx::NodeProto node = k.node;
    node.set_domain(kUnconvertedDomain);
    size_t lo = 0, hi = nodes.size();
    for (size_t i = 0; i < nodes.size(); ++i) {
      for (const std::string &o : nodes[i].output())
        if (!o.empty() && (o == node.input(0)))
          lo = i + 1;
      for (const std::string &o : nodes[i].output())
        if (!k.anchor.empty() && o == k.anchor)
          hi = std::min(hi, i);
      for (const std::string &in : nodes[i].input())
        if (in == node.output(0))
          hi = std::min(hi, i);
    }
    if (lo > hi)
      return "the converted graph reads '" + node.output(0) +
             "' before node '" + node.name() + "' (" + node.op_type() +
             ") can define it";
    nodes.insert(nodes.begin() + hi, std::move(node));
  }
  return {};
}

std::string detail::upgradeOpset(const onnx::ModelProto &model, int target,
                                 onnx::ModelProto &out) {
  try {
    onnx::ModelProto in = model;
    onnx::GraphProto *graph = in.mutable_graph();
    if (std::string why = checkForConverter(*graph); !why.empty())
      return why;
    std::set<std::string> inputs;
    for (const onnx::ValueInfoProto &vi : graph->input())
      inputs.insert(vi.name());
    // External initializers out; graph inputs of their type in their place.
    std::vector<onnx::TensorProto> external;
    std::set<std::string> added;
    auto *inits = graph->mutable_initializer();
    for (int i = inits->size() - 1; i >= 0; --i) {
      const onnx::TensorProto &t = inits->Get(i);
      if (t.data_location() != onnx::TensorProto::EXTERNAL)
        continue;
      external.push_back(t);
      if (!inputs.count(t.name())) {
        onnx::ValueInfoProto *vi = graph->add_input();
        vi->set_name(t.name());
        auto *tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(t.data_type());
        auto *shape = tt->mutable_shape();
        for (int64_t d : t.dims())
          shape->add_dim()->set_dim_value(d);
        added.insert(t.name());
      }
      inits->DeleteSubrange(i, 1);
    }
    // Softmax, LogSoftmax and Hardmax are cut out of the graph while the
    // converter runs (kUnconvertedDomain): each one's output is a graph
    // input then, and its input a graph output (kept alive).
    for (const onnx::OperatorSetIdProto &os : in.opset_import())
      if (os.domain() == kUnconvertedDomain)
        return std::string("the model imports the importer's own domain '") +
               kUnconvertedDomain + "'";
    std::vector<KeptNode> kept;
    std::set<std::string> outputs, cutOutputs;
    for (const onnx::ValueInfoProto &vi : graph->output())
      outputs.insert(vi.name());
    auto *nodes = graph->mutable_node();
    for (int i = 0; i < nodes->size(); ++i) {
      const onnx::NodeProto &node = nodes->Get(i);
      if (!keptFromConverter(node))
        continue;
      if (node.input_size() != 1 || node.input(0).empty() ||
          node.output_size() != 1 || node.output(0).empty())
        return "node '" + node.name() + "' (" + node.op_type() +
               ") does not have one input and one output";
      KeptNode k{node, ""};
      for (int j = i + 1; j < nodes->size() && k.anchor.empty(); ++j)
        if (!keptFromConverter(nodes->Get(j)))
          for (const std::string &o : nodes->Get(j).output())
            if (!o.empty() && k.anchor.empty())
              k.anchor = o;
      kept.push_back(std::move(k));
    }
    for (int i = nodes->size() - 1; i >= 0; --i)
      if (keptFromConverter(nodes->Get(i)))
        nodes->DeleteSubrange(i, 1);
    for (const KeptNode &k : kept) {
      const onnx::NodeProto &node = k.node;
      onnx::ValueInfoProto *vi = graph->add_input();
      vi->set_name(node.output(0));
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(
          declaredElemType(*graph, node.input(0)));
      added.insert(node.output(0));
      if (outputs.insert(node.input(0)).second) {
        graph->add_output()->set_name(node.input(0));
        cutOutputs.insert(node.input(0));
      }
    }
    out = onnx::version_conversion::ConvertVersion(in, target);
    // And back.
    onnx::GraphProto *converted = out.mutable_graph();
    auto *outInputs = converted->mutable_input();
    for (int i = outInputs->size() - 1; i >= 0; --i)
      if (added.count(outInputs->Get(i).name()))
        outInputs->DeleteSubrange(i, 1);
    auto *outOutputs = converted->mutable_output();
    for (int i = outOutputs->size() - 1; i >= 0; --i)
      if (cutOutputs.count(outOutputs->Get(i).name()))
        outOutputs->DeleteSubrange(i, 1);
    for (auto it = external.rbegin(); it != external.rend(); ++it)
      *converted->add_initializer() = *it;
    if (!kept.empty()) {
      std::vector<onnx::NodeProto> all(converted->node().begin(),
                                       converted->node().end());
      if (std::string why = reinsertKept(all, kept); !why.empty())
        return why;
      converted->clear_node();
      for (onnx::NodeProto &node : all)
        *converted->add_node() = std::move(node);
      int64_t opset = 0;
      for (const onnx::OperatorSetIdProto &os : model.opset_import())
        if (os.domain().empty() || os.domain() == "ai.onnx")
          opset = os.version();
      onnx::OperatorSetIdProto *os = out.add_opset_import();
      os->set_domain(kUnconvertedDomain);
      os->set_version(opset);
    }
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
  return {};
}
