//===- Manifest.cpp - The weights manifest: JSON and its checks -----------===//
//
// Part of fp8-opt. toJSON and parseManifest (fp8rt/pack.h): the manifest's
// JSON form (docs/Weights.md), read and written with nlohmann/json, and the
// checks every manifest passes before anything is packed from it, whether
// parsed or built in memory (packWeights runs them too). Nothing here
// throws: nlohmann's exceptions and this file's own are caught and returned
// as messages naming the manifest and the tensor.
//
//===----------------------------------------------------------------------===//

#include "PackInternal.h"

#include "fp8rt/fp8w.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unordered_map>

namespace fp8rt::pack {

using detail::formatShape;

std::vector<int64_t>
Quantization::scaleShape(const std::vector<int64_t> &sourceShape) const {
  const size_t rank = sourceShape.size();
  std::vector<int64_t> grid(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t b = d < block.size() && block[d] > 0 ? block[d] : 1;
    grid[d] = sourceShape[d] <= 0 ? 0 : (sourceShape[d] - 1) / b + 1;
  }
  if (permutation.empty() || !detail::isPermutation(permutation, rank))
    return grid;
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i)
    out[i] = grid[permutation[i]];
  return out;
}

namespace detail {

bool tensorBytes(int32_t dtype, const std::vector<int64_t> &shape,
                 uint64_t &bytes) {
  bytes = fp8w_dtype_size(dtype);
  if (bytes == 0 || shape.size() > FP8W_MAX_RANK)
    return false;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(bytes, uint64_t(d), &bytes) ||
        bytes > (uint64_t(1) << 62))
      return false;
  return true;
}

bool isPermutation(const std::vector<int64_t> &permutation, size_t rank) {
  if (permutation.empty())
    return true;
  if (permutation.size() != rank)
    return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : permutation) {
    if (p < 0 || uint64_t(p) >= rank || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

std::string dtypeName(int32_t dtype) {
  switch (dtype) {
  case kFloat:
    return "f32";
  case kFloat16:
    return "f16";
  case kBFloat16:
    return "bf16";
  case kFloat8E4M3FN:
    return "e4m3";
  case kFloat8E5M2:
    return "e5m2";
  case kFloat8E8M0:
    return "e8m0";
  default:
    return "dtype " + std::to_string(dtype);
  }
}

namespace {

bool isQuantizable(int32_t dtype) {
  return dtype == kFloat || dtype == kFloat16 || dtype == kBFloat16;
}

/// A location stays inside the data directory: relative, no "..".
std::string checkLocation(const std::string &location) {
  if (location.empty())
    return "the source's location is empty";
  if (location.find('\0') != std::string::npos)
    return "the source's location contains a NUL character";
  if (location[0] == '/')
    return "the source's location '" + location +
           "' is absolute (locations are relative to the data directory)";
  size_t begin = 0;
  while (begin <= location.size()) {
    size_t end = location.find('/', begin);
    if (end == std::string::npos)
      end = location.size();
    if (location.compare(begin, end - begin, "..") == 0)
      return "the source's location '" + location +
             "' has a '..' component (it must stay in the data directory)";
    begin = end + 1;
  }
  return "";
}

std::string checkSource(const Source &s, bool quantized) {
  if (std::string e = checkLocation(s.location); !e.empty())
    return e;
  const std::string what = "the source '" + s.name + "'";
  if (quantized && !isQuantizable(s.dtype))
    return what + " has " + dtypeName(s.dtype) +
           ": only f32, f16 and bf16 sources are quantized";
  uint64_t bytes;
  if (!tensorBytes(s.dtype, s.shape, bytes))
    return what + " has an unsupported dtype (" + std::to_string(s.dtype) +
           ") or shape (" + formatShape(s.shape) +
           ": negative, too many dimensions, or too many bytes)";
  if (s.length != bytes)
    return what + " has length " + std::to_string(s.length) + ", but " +
           formatShape(s.shape) + " " + dtypeName(s.dtype) + " is " +
           std::to_string(bytes) + " bytes";
  uint64_t end;
  if (__builtin_add_overflow(s.offset, s.length, &end) ||
      end > uint64_t(INT64_MAX))
    return what + ": offset + length overflows";
  return "";
}

std::string checkQuantization(const Quantization &q,
                              const std::vector<int64_t> &sourceShape) {
  if (q.format != kFloat8E4M3FN && q.format != kFloat8E5M2)
    return "the quantization's format is " + dtypeName(q.format) +
           ", not e4m3 or e5m2";
  const size_t rank = sourceShape.size();
  if (q.block.size() != rank)
    return "the block has " + std::to_string(q.block.size()) +
           " entries for a source of rank " + std::to_string(rank);
  for (int64_t b : q.block)
    if (b < 1)
      return "block entry " + std::to_string(b) + " is below 1";
  if (!isPermutation(q.permutation, rank))
    return "the permutation is not one of 0.." + std::to_string(rank) + " - 1";
  if (q.scaling == Quantization::Scaling::Current &&
      (!std::isfinite(q.eps) || q.eps < 0))
    return "eps must be finite and non-negative";
  uint64_t bytes;
  if (q.dataShape.size() != rank || !tensorBytes(q.format, q.dataShape, bytes))
    return "data_shape " + formatShape(q.dataShape) +
           " is not a valid shape of rank " + std::to_string(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t src =
        sourceShape[q.permutation.empty() ? i : q.permutation[i]];
    if (q.dataShape[i] < src)
      return "data_shape " + formatShape(q.dataShape) +
             " is smaller than the (permuted) source shape at dimension " +
             std::to_string(i) + " (" + std::to_string(q.dataShape[i]) + " < " +
             std::to_string(src) + ")";
  }
  return "";
}

/// A data or scale tensor is what its quantization makes.
std::string checkQuantizedTensor(const Tensor &t) {
  const Quantization &q = t.quant;
  if (t.kind == Tensor::Kind::Data) {
    if (t.dtype != q.format)
      return "a data tensor of " + dtypeName(t.dtype) +
             ", but the quantization makes " + dtypeName(q.format);
    if (t.shape != q.dataShape)
      return "a data tensor of shape " + formatShape(t.shape) +
             ", but data_shape is " + formatShape(q.dataShape);
    return "";
  }
  if (t.dtype != q.scaleDtype())
    return "a scale tensor of " + dtypeName(t.dtype) +
           ", but the quantization makes " + dtypeName(q.scaleDtype());
  const std::vector<int64_t> want = q.scaleShape(t.source.shape);
  // One scale (per-tensor scaling) may also be a scalar, as fp8 IR has it.
  bool one = true;
  for (int64_t d : want)
    one = one && d == 1;
  if (t.shape != want && !(one && t.shape.empty()))
    return "a scale tensor of shape " + formatShape(t.shape) +
           ", but the quantization's scales are " + formatShape(want);
  return "";
}

std::string checkTensor(const Tensor &t);

/// A concatenation's parts: packed data or scales of its dtype and shape
/// but in dimension 0, where they add up to it.
std::string checkParts(const Tensor &t) {
  if (t.parts.empty() || t.shape.empty())
    return "a concatenation needs parts and a rank >= 1";
  int64_t rows = 0;
  for (size_t i = 0; i < t.parts.size(); ++i) {
    const Tensor &p = t.parts[i];
    const std::string where = "part " + std::to_string(i) + ": ";
    if (p.kind != Tensor::Kind::Data && p.kind != Tensor::Kind::Scale)
      return where + "not packed data or scales";
    if (std::string e = checkTensor(p); !e.empty())
      return where + e;
    if (p.dtype != t.dtype || p.shape.size() != t.shape.size() ||
        !std::equal(p.shape.begin() + 1, p.shape.end(), t.shape.begin() + 1))
      return where + formatShape(p.shape) + " " + dtypeName(p.dtype) +
             " does not concatenate along dimension 0 into " +
             formatShape(t.shape) + " " + dtypeName(t.dtype);
    rows += p.shape[0];
  }
  if (rows != t.shape[0])
    return "the parts have " + std::to_string(rows) + " rows, the tensor " +
           std::to_string(t.shape[0]);
  return "";
}

std::string checkTensor(const Tensor &t) {
  uint64_t bytes;
  if (t.name.empty())
    return "an empty name";
  if (!t.parts.empty() && t.kind != Tensor::Kind::Concat)
    return "parts, but not a concatenation";
  if (!tensorBytes(t.dtype, t.shape, bytes))
    return "an unsupported dtype (" + std::to_string(t.dtype) + ") or shape (" +
           formatShape(t.shape) +
           ": negative, more than 8 dimensions, or too many bytes)";
  switch (t.kind) {
  case Tensor::Kind::Literal:
    return "";
  case Tensor::Kind::Copy:
    if (std::string e = checkSource(t.source, false); !e.empty())
      return e;
    if (t.dtype != t.source.dtype || t.shape != t.source.shape)
      return "a copy of " + formatShape(t.source.shape) + " " +
             dtypeName(t.source.dtype) + " cannot be " + formatShape(t.shape) +
             " " + dtypeName(t.dtype);
    return "";
  case Tensor::Kind::Data:
  case Tensor::Kind::Scale:
    if (std::string e = checkSource(t.source, true); !e.empty())
      return e;
    if (std::string e = checkQuantization(t.quant, t.source.shape); !e.empty())
      return e;
    return checkQuantizedTensor(t);
  case Tensor::Kind::Concat:
    return checkParts(t);
  case Tensor::Kind::Round: {
    if (std::string e = checkSource(t.source, true); !e.empty())
      return e;
    const size_t rank = t.source.shape.size();
    if (!isPermutation(t.permutation, rank))
      return "the permutation is not one of 0.." + std::to_string(rank) +
             " - 1";
    std::vector<int64_t> shape = t.source.shape;
    for (size_t i = 0; i < t.permutation.size(); ++i)
      shape[i] = t.source.shape[t.permutation[i]];
    if (t.dtype != kBFloat16 || t.shape != shape)
      return "a rounding of " + formatShape(t.source.shape) + " " +
             dtypeName(t.source.dtype) + " is " + formatShape(shape) +
             " bf16, not " + formatShape(t.shape) + " " + dtypeName(t.dtype);
    return "";
  }
  }
  return "an unknown kind";
}

/// A weights file name: what the library looks for beside itself.
bool isPlainFileName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

} // namespace

std::string validateManifest(const Manifest &m, const std::string &what) {
  if (m.fingerprint == 0)
    return what + ": the fingerprint is 0 (a library's never is)";
  if (!isPlainFileName(m.weightsFile))
    return what + ": \"file\" must be a file name (no directory), not '" +
           m.weightsFile + "'";
  if (m.tensors.size() > FP8W_MAX_TENSORS)
    return what + ": " + std::to_string(m.tensors.size()) +
           " tensors, more than a weights file holds";
  std::unordered_map<std::string, size_t> seen;
  for (size_t i = 0; i < m.tensors.size(); ++i) {
    const Tensor &t = m.tensors[i];
    const std::string where =
        what + ": tensor " + std::to_string(i) + " ('" + t.name + "'): ";
    if (std::string e = checkTensor(t); !e.empty())
      return where + e;
    auto [it, inserted] = seen.emplace(t.name, i);
    if (!inserted)
      return where + "the name is also tensor " + std::to_string(it->second) +
             "'s (names must be distinct)";
  }
  for (size_t i = 0; i < m.compiledIn.size(); ++i) {
    const CompiledIn &c = m.compiledIn[i];
    const std::string where = what + ": compiled_in " + std::to_string(i) +
                              " ('" + c.name + "'): ";
    if (std::string e = checkLocation(c.location); !e.empty())
      return where + e;
    if (c.offset + c.length < c.offset)
      return where + "offset + length overflows";
  }
  return "";
}

} // namespace detail

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

constexpr const char *kFormat = "fp8-opt weights manifest";

const char *kindName(Tensor::Kind kind) {
  switch (kind) {
  case Tensor::Kind::Copy:
    return "copy";
  case Tensor::Kind::Data:
    return "data";
  case Tensor::Kind::Scale:
    return "scale";
  case Tensor::Kind::Literal:
    return "literal";
  case Tensor::Kind::Concat:
    return "concat";
  case Tensor::Kind::Round:
    return "round";
  }
  return "?";
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

/// The shortest decimal (at most 9 digits, always enough for a float)
/// whose double, which is what JSON prints and reads back, rounds to
/// exactly `v`: "1e-12" rather than the double of 1e-12f.
double shortestDecimal(float v) {
  char buf[32];
  double d = v;
  for (int digits = 1; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(v));
    d = std::strtod(buf, nullptr);
    if (static_cast<float>(d) == v)
      break;
  }
  return d;
}

ordered_json sourceJSON(const Source &s) {
  ordered_json j;
  j["name"] = s.name;
  j["location"] = s.location;
  j["offset"] = s.offset;
  j["length"] = s.length;
  j["dtype"] = s.dtype;
  j["shape"] = s.shape;
  return j;
}

ordered_json quantizationJSON(const Quantization &q) {
  ordered_json j;
  if (q.format == kFloat8E4M3FN || q.format == kFloat8E5M2)
    j["format"] = q.format == kFloat8E4M3FN ? "e4m3" : "e5m2";
  else
    j["format"] = q.format; // invalid: parseManifest refuses it
  j["block"] = q.block;
  j["scaling"] = q.scaling == Quantization::Scaling::MX ? "mx" : "current";
  j["eps"] = shortestDecimal(q.eps);
  j["pow2"] = q.pow2;
  j["rounding"] = q.rceil ? "rceil" : "floor";
  j["permutation"] = q.permutation;
  j["data_shape"] = q.dataShape;
  return j;
}

ordered_json compiledInJSON(const CompiledIn &c) {
  ordered_json j;
  j["name"] = c.name;
  j["location"] = c.location;
  j["offset"] = c.offset;
  j["length"] = c.length;
  j["hash"] = hex16(c.hash);
  return j;
}

ordered_json tensorJSON(const Tensor &t) {
  ordered_json j;
  j["name"] = t.name;
  j["dtype"] = t.dtype;
  j["shape"] = t.shape;
  j["kind"] = kindName(t.kind);
  if (t.kind == Tensor::Kind::Literal) {
    j["hash"] = hex16(t.hash);
    return j;
  }
  if (t.kind == Tensor::Kind::Concat) {
    ordered_json parts = ordered_json::array();
    for (const Tensor &p : t.parts)
      parts.push_back(tensorJSON(p));
    j["parts"] = std::move(parts);
    return j;
  }
  j["source"] = sourceJSON(t.source);
  if (t.kind == Tensor::Kind::Round)
    j["permutation"] = t.permutation;
  else if (t.kind != Tensor::Kind::Copy)
    j["quantization"] = quantizationJSON(t.quant);
  return j;
}

/// What the reader below throws; parseManifest catches it.
struct BadManifest {
  std::string message;
};

[[noreturn]] void bad(std::string message) {
  throw BadManifest{std::move(message)};
}

/// Typed access to the fields of one JSON object; errors name the field
/// by its path from the tensor ("quantization.block").
class Fields {
public:
  Fields(const json &object, std::string path) : path(std::move(path)) {
    if (!object.is_object())
      bad(where() + "must be an object, not " + object.type_name());
    this->object = &object;
  }

  const json &at(const char *key) const {
    auto it = object->find(key);
    if (it == object->end())
      bad(name(key) + " is missing");
    return *it;
  }
  std::string string(const char *key) const {
    const json &v = at(key);
    if (!v.is_string())
      bad(mistyped(key, "a string", v));
    return v.get<std::string>();
  }
  bool boolean(const char *key) const {
    const json &v = at(key);
    if (!v.is_boolean())
      bad(mistyped(key, "true or false", v));
    return v.get<bool>();
  }
  double number(const char *key) const {
    const json &v = at(key);
    if (!v.is_number())
      bad(mistyped(key, "a number", v));
    return v.get<double>();
  }
  int64_t integer(const char *key, int64_t min, int64_t max) const {
    return integer(at(key), name(key), min, max);
  }
  uint64_t unsignedInteger(const char *key) const {
    const json &v = at(key);
    if (!v.is_number_unsigned())
      bad(mistyped(key, "an integer >= 0", v));
    return v.get<uint64_t>();
  }
  std::vector<int64_t> integers(const char *key, int64_t min) const {
    const json &v = at(key);
    if (!v.is_array())
      bad(mistyped(key, "an array of integers", v));
    if (v.size() > FP8W_MAX_RANK)
      bad(name(key) + " has " + std::to_string(v.size()) +
          " entries (at most " + std::to_string(FP8W_MAX_RANK) + ")");
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i)
      out.push_back(integer(v[i], name(key) + "[" + std::to_string(i) + "]",
                            min, INT64_MAX));
    return out;
  }
  uint64_t hex(const char *key) const {
    const std::string s = string(key);
    uint64_t v = 0;
    bool ok = s.size() == 16;
    for (char c : s) {
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                               : -1;
      ok = ok && digit >= 0;
      v = v << 4 | uint64_t(digit & 15);
    }
    if (!ok)
      bad(name(key) + " must be 16 lowercase hex digits, not \"" + s + "\"");
    return v;
  }
  std::string name(const char *key) const { return where() + key; }

private:
  std::string where() const { return path.empty() ? "" : path + "."; }
  std::string mistyped(const char *key, const char *want, const json &v) const {
    return name(key) + " must be " + want + ", not " +
           (v.is_number_float() ? "a fractional number" : v.type_name());
  }
  static int64_t integer(const json &v, const std::string &name, int64_t min,
                         int64_t max) {
    if (!v.is_number_integer())
      bad(name + " must be an integer, not " +
          (v.is_number_float() ? "a fractional number" : v.type_name()));
    if (v.is_number_unsigned()
            ? v.get<uint64_t>() > uint64_t(max)
            : v.get<int64_t>() < min || v.get<int64_t>() > max)
      bad(name + " is " + v.dump() + ", outside [" + std::to_string(min) +
          ", " + std::to_string(max) + "]");
    return v.get<int64_t>();
  }

  const json *object = nullptr;
  std::string path;
};

Source parseSource(const json &j) {
  Fields f(j, "source");
  Source s;
  s.name = f.string("name");
  s.location = f.string("location");
  s.offset = f.unsignedInteger("offset");
  s.length = f.unsignedInteger("length");
  s.dtype = static_cast<int32_t>(f.integer("dtype", INT32_MIN, INT32_MAX));
  s.shape = f.integers("shape", INT64_MIN);
  return s;
}

Quantization parseQuantization(const json &j) {
  Fields f(j, "quantization");
  Quantization q;
  const std::string format = f.string("format");
  if (format != "e4m3" && format != "e5m2")
    bad(f.name("format") + " must be \"e4m3\" or \"e5m2\", not \"" + format +
        "\"");
  q.format = format == "e4m3" ? kFloat8E4M3FN : kFloat8E5M2;
  q.block = f.integers("block", INT64_MIN);
  const std::string scaling = f.string("scaling");
  if (scaling != "current" && scaling != "mx")
    bad(f.name("scaling") + " must be \"current\" or \"mx\", not \"" + scaling +
        "\"");
  q.scaling = scaling == "mx" ? Quantization::Scaling::MX
                              : Quantization::Scaling::Current;
  const double eps = f.number("eps");
  q.eps = static_cast<float>(eps);
  if (!std::isfinite(eps) || !std::isfinite(q.eps) || eps < 0)
    bad(f.name("eps") + " must be a finite float >= 0");
  q.pow2 = f.boolean("pow2");
  const std::string rounding = f.string("rounding");
  if (rounding != "rceil" && rounding != "floor")
    bad(f.name("rounding") + " must be \"rceil\" or \"floor\", not \"" +
        rounding + "\"");
  q.rceil = rounding == "rceil";
  q.permutation = f.integers("permutation", INT64_MIN);
  q.dataShape = f.integers("data_shape", INT64_MIN);
  return q;
}

Tensor::Kind parseKind(const Fields &f) {
  const std::string kind = f.string("kind");
  for (Tensor::Kind k :
       {Tensor::Kind::Copy, Tensor::Kind::Data, Tensor::Kind::Scale,
        Tensor::Kind::Literal, Tensor::Kind::Concat, Tensor::Kind::Round})
    if (kind == kindName(k))
      return k;
  bad("kind \"" + kind +
      "\" is not copy, data, scale, literal, concat or round");
}

void parseTensor(const json &j, Tensor &t, bool part = false) {
  Fields f(j, "");
  t.name = f.string("name");
  t.dtype = static_cast<int32_t>(f.integer("dtype", INT32_MIN, INT32_MAX));
  t.shape = f.integers("shape", INT64_MIN);
  t.kind = parseKind(f);
  if (t.kind == Tensor::Kind::Concat) {
    if (part)
      bad("a part of a concatenation cannot be one");
    const json &parts = f.at("parts");
    if (!parts.is_array())
      bad(std::string("parts must be an array, not ") + parts.type_name());
    t.parts.resize(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      try {
        parseTensor(parts[i], t.parts[i], /*part=*/true);
      } catch (BadManifest &e) {
        bad("part " + std::to_string(i) + ": " + e.message);
      }
    }
    return;
  }
  if (t.kind == Tensor::Kind::Literal)
    t.hash = f.hex("hash");
  else
    t.source = parseSource(f.at("source"));
  if (t.kind == Tensor::Kind::Data || t.kind == Tensor::Kind::Scale)
    t.quant = parseQuantization(f.at("quantization"));
  if (t.kind == Tensor::Kind::Round)
    t.permutation = f.integers("permutation", INT64_MIN);
}

CompiledIn parseCompiledIn(const json &j) {
  Fields f(j, "");
  CompiledIn c;
  c.name = f.string("name");
  c.location = f.string("location");
  c.offset = f.unsignedInteger("offset");
  c.length = f.unsignedInteger("length");
  c.hash = f.hex("hash");
  return c;
}

void parseTop(const json &j, Manifest &m) {
  Fields f(j, "");
  const std::string format = f.string("format");
  if (format != kFormat)
    bad("not an fp8-opt weights manifest (\"format\" is \"" + format + "\")");
  const json &version = f.at("version");
  if (!version.is_number_integer() || version != Manifest::kVersion)
    bad("manifest version " + version.dump() + "; this packer reads version " +
        std::to_string(Manifest::kVersion));
  m.fingerprint = f.hex("fingerprint");
  m.weightsFile = f.string("file");
  const json &tensors = f.at("tensors");
  if (!tensors.is_array())
    bad(std::string("tensors must be an array, not ") + tensors.type_name());
  m.tensors.resize(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    try {
      parseTensor(tensors[i], m.tensors[i]);
    } catch (BadManifest &e) {
      std::string who = "tensor " + std::to_string(i);
      if (!m.tensors[i].name.empty())
        who += " ('" + m.tensors[i].name + "')";
      bad(who + ": " + e.message);
    }
  }
  // Optional: a manifest of a library that read no external data may omit it.
  if (j.is_object() && j.contains("compiled_in")) {
    const json &read = j.at("compiled_in");
    if (!read.is_array())
      bad(std::string("compiled_in must be an array, not ") + read.type_name());
    for (size_t i = 0; i < read.size(); ++i) {
      try {
        m.compiledIn.push_back(parseCompiledIn(read[i]));
      } catch (BadManifest &e) {
        bad("compiled_in " + std::to_string(i) + ": " + e.message);
      }
    }
  }
}

/// nlohmann's messages start with "[json.exception.parse_error.101] ".
std::string jsonMessage(const std::exception &e) {
  std::string s = e.what();
  if (s.rfind("[json.exception.", 0) == 0 && s.find("] ") != std::string::npos)
    s = s.substr(s.find("] ") + 2);
  return s;
}

} // namespace

std::string toJSON(const Manifest &manifest) {
  // One line per tensor: readable, and greppable for a model's hundreds.
  // Names that are not UTF-8 (ONNX does not enforce it) print with U+FFFD
  // rather than throwing; parseManifest then sees other names.
  auto dump = [](const ordered_json &j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
  };
  try {
    std::string text =
        "{\n  \"format\": " + dump(kFormat) +
        ",\n  \"version\": " + dump(Manifest::kVersion) +
        ",\n  \"fingerprint\": " + dump(hex16(manifest.fingerprint)) +
        ",\n  \"file\": " + dump(manifest.weightsFile) + ",\n  \"tensors\": [";
    for (size_t i = 0; i < manifest.tensors.size(); ++i)
      text +=
          (i ? ",\n    " : "\n    ") + dump(tensorJSON(manifest.tensors[i]));
    text += manifest.tensors.empty() ? "]" : "\n  ]";
    text += ",\n  \"compiled_in\": [";
    for (size_t i = 0; i < manifest.compiledIn.size(); ++i)
      text += (i ? ",\n    " : "\n    ") +
              dump(compiledInJSON(manifest.compiledIn[i]));
    return text + (manifest.compiledIn.empty() ? "]\n}\n" : "\n  ]\n}\n");
  } catch (const std::exception &) {
    return ""; // out of memory: not a manifest, parseManifest refuses it
  }
}

std::string parseManifest(std::string_view text, Manifest &out,
                          const std::string &what) {
  try {
    json j;
    try {
      j = json::parse(text.begin(), text.end());
    } catch (const json::parse_error &e) {
      return what + ": not valid JSON: " + jsonMessage(e);
    }
    Manifest m;
    parseTop(j, m);
    if (std::string e = detail::validateManifest(m, what); !e.empty())
      return e;
    out = std::move(m);
    return "";
  } catch (const BadManifest &e) {
    return what + ": " + e.message;
  } catch (const std::bad_alloc &) {
    return what + ": out of memory";
  } catch (const std::exception &e) {
    return what + ": " + jsonMessage(e);
  }
}

} // namespace fp8rt::pack
