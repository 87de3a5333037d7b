//===- TorchMetadata.cpp - torch.onnx's node metadata ---------------------===//
//
// Part of fp8-opt. NodeProto.metadata_props (field 9, a repeated
// StringStringEntryProto) is newer than the ONNX 1.12 that Debian ships, so
// its generated NodeProto keeps the field among its unknown fields; it is
// read from there.
//
// What the exporter writes (torch 2.11, test/models/*/model.onnx):
//   pkg.torch.onnx.name_scopes      "['', 'model', 'model.model', ...,
//                                     'model.model.layers.0.self_attn.q_proj',
//                                     'linear']"
//   pkg.torch.onnx.class_hierarchy  "['__main__.CachedLM', ...,
//                                     'torch.nn.modules.linear.Linear',
//                                     'aten.linear.default']"
// The last entry of each is the FX node (the op), the one before it the
// innermost module: its path and class are what the importer keeps.
//
//===----------------------------------------------------------------------===//

#include "TorchMetadata.h"

#include "fp8/Dialect/FP8/IR/TorchModule.h"

#include "google/protobuf/unknown_field_set.h"

using namespace mlir;

namespace {
constexpr int kMetadataPropsField = 9;
} // namespace

std::vector<std::string> fp8::parsePythonStringList(llvm::StringRef text,
                                                    bool &ok) {
  ok = false;
  std::vector<std::string> out;
  text = text.trim();
  if (!text.consume_front("[") || !text.consume_back("]"))
    return {};
  size_t i = 0;
  auto skip = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n'))
      ++i;
  };
  skip();
  while (i < text.size()) {
    const char q = text[i];
    if (q != '\'' && q != '"')
      return {};
    std::string s;
    for (++i;; ++i) {
      if (i >= text.size())
        return {};
      char c = text[i];
      if (c == q)
        break;
      if (c == '\\') {
        if (++i >= text.size())
          return {};
        c = text[i];
        // repr() escapes the quote, the backslash and control characters;
        // the latter never occur in module paths and stay as written.
        if (c != '\\' && c != '\'' && c != '"')
          s.push_back('\\');
      }
      s.push_back(c);
    }
    ++i;
    out.push_back(std::move(s));
    skip();
    if (i < text.size()) {
      if (text[i] != ',')
        return {};
      ++i;
      skip();
    }
  }
  ok = true;
  return out;
}

Location fp8::withTorchModuleOf(const onnx::NodeProto &node, Location loc) {
  const google::protobuf::UnknownFieldSet &unknown = node.unknown_fields();
  std::string scopes, classes;
  for (int i = 0; i < unknown.field_count(); ++i) {
    const google::protobuf::UnknownField &field = unknown.field(i);
    if (field.number() != kMetadataPropsField ||
        field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (!entry.ParseFromString(field.length_delimited()))
      continue;
    if (entry.key() == "pkg.torch.onnx.name_scopes")
      scopes = entry.value();
    else if (entry.key() == "pkg.torch.onnx.class_hierarchy")
      classes = entry.value();
  }
  if (scopes.empty())
    return loc;
  bool ok;
  std::vector<std::string> path = parsePythonStringList(scopes, ok);
  if (!ok || path.size() < 2 || path[path.size() - 2].empty())
    return loc;
  std::vector<std::string> types = parsePythonStringList(classes, ok);
  std::string moduleClass =
      ok && types.size() == path.size() ? types[types.size() - 2] : "";
  return withTorchModule(loc, path[path.size() - 2], moduleClass);
}
