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
    out = onnx::version_conversion::ConvertVersion(in, target);
    // And back.
    onnx::GraphProto *converted = out.mutable_graph();
    auto *outInputs = converted->mutable_input();
    for (int i = outInputs->size() - 1; i >= 0; --i)
      if (added.count(outInputs->Get(i).name()))
        outInputs->DeleteSubrange(i, 1);
    for (auto it = external.rbegin(); it != external.rend(); ++it)
      *converted->add_initializer() = *it;
  } catch (const std::exception &e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
  return {};
}
