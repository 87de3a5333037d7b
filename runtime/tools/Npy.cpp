//===- Npy.cpp - numpy .npy files for fp8-run -----------------------------===//
//
// Part of fp8-opt. The format: numpy/lib/format.py ("NEP 1"): 6 magic
// bytes, major and minor version, a little-endian header length (2 bytes in
// 1.0, 4 in 2.0 and 3.0), the header (ASCII in 1.0/2.0, UTF-8 in 3.0),
// padded with spaces to a multiple of 64 bytes and ended by '\n', then the
// raw data.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "fp8rt/fp8rt.h"

#include <cstring>

namespace fp8rt {
namespace {
const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct DtypeCode {
  const char *descr; // without the byte-order character
  int32_t dtype;
  const char *name;
};
// The numpy types an fp8rt model takes, by descr ('f4', ...).
const DtypeCode kDtypes[] = {
    {"f4", FP8RT_FLOAT, "float32"},   {"f8", FP8RT_DOUBLE, "float64"},
    {"f2", FP8RT_FLOAT16, "float16"}, {"i1", FP8RT_INT8, "int8"},
    {"u1", FP8RT_UINT8, "uint8"},     {"i2", FP8RT_INT16, "int16"},
    {"u2", FP8RT_UINT16, "uint16"},   {"i4", FP8RT_INT32, "int32"},
    {"u4", FP8RT_UINT32, "uint32"},   {"i8", FP8RT_INT64, "int64"},
    {"u8", FP8RT_UINT64, "uint64"},   {"b1", FP8RT_BOOL, "bool"},
};

/// The header dict, parsed: a Python literal of strings, True/False, and
/// tuples of integers, nothing else.
struct Header {
  std::string descr;
  bool haveDescr = false, haveOrder = false, haveShape = false;
  bool fortran = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
public:
  HeaderParser(const std::string &text) : s(text) {}

  /// Parses the dict into `h`; false with `why`.
  bool parse(Header &h, std::string &why) {
    skip();
    if (!eat('{'))
      return fail("it does not start with '{'", why);
    for (;;) {
      skip();
      if (eat('}'))
        break;
      std::string key;
      if (!string(key))
        return fail("expected a quoted key", why);
      skip();
      if (!eat(':'))
        return fail("expected ':' after '" + key + "'", why);
      skip();
      if (key == "descr") {
        if (!string(h.descr))
          return fail("'descr' is not a string (a structured dtype? save a "
                      "plain array)",
                      why);
        h.haveDescr = true;
      } else if (key == "fortran_order") {
        if (word("True"))
          h.fortran = true;
        else if (!word("False"))
          return fail("'fortran_order' is neither True nor False", why);
        h.haveOrder = true;
      } else if (key == "shape") {
        if (!tuple(h.shape, why))
          return false;
        h.haveShape = true;
      } else {
        return fail("unknown key '" + key + "'", why);
      }
      skip();
      if (eat(','))
        continue;
      skip();
      if (eat('}'))
        break;
      return fail("expected ',' or '}' after '" + key + "'", why);
    }
    skip();
    if (i != s.size())
      return fail("text after the closing '}'", why);
    if (!h.haveDescr || !h.haveOrder || !h.haveShape)
      return fail("it lacks 'descr', 'fortran_order' or 'shape'", why);
    return true;
  }

private:
  const std::string &s;
  size_t i = 0;

  bool fail(const std::string &what, std::string &why) {
    why = what + " (at byte " + std::to_string(i) + " of the header)";
    return false;
  }
  void skip() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
                            s[i] == '\r'))
      ++i;
  }
  bool eat(char c) {
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  bool word(const char *w) {
    const size_t n = std::strlen(w);
    if (s.compare(i, n, w) != 0)
      return false;
    i += n;
    return true;
  }
  /// A '...' or "..." string without escapes (numpy writes none here).
  bool string(std::string &out) {
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      return false;
    const char q = s[i];
    const size_t end = s.find(q, i + 1);
    if (end == std::string::npos ||
        s.find('\\', i + 1) < end) // escapes: not a descr numpy writes
      return false;
    out = s.substr(i + 1, end - i - 1);
    i = end + 1;
    return true;
  }
  /// (), (n,) or (a, b, ...): non-negative decimal integers.
  bool tuple(std::vector<int64_t> &out, std::string &why) {
    if (!eat('('))
      return fail("'shape' is not a tuple", why);
    for (;;) {
      skip();
      if (eat(')'))
        return true;
      if (i >= s.size() || s[i] < '0' || s[i] > '9')
        return fail("'shape' holds something other than non-negative "
                    "integers",
                    why);
      int64_t v = 0;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        if (__builtin_mul_overflow(v, int64_t(10), &v) ||
            __builtin_add_overflow(v, int64_t(s[i] - '0'), &v))
          return fail("a dimension of 'shape' exceeds 2^63", why);
        ++i;
      }
      out.push_back(v);
      skip();
      if (eat(','))
        continue;
      skip();
      if (eat(')'))
        return true;
      return fail("expected ',' or ')' in 'shape'", why);
    }
  }
};

const char *descrName(const std::string &descr) {
  for (const DtypeCode &d : kDtypes)
    if (descr.size() == 3 && descr.compare(1, 2, d.descr) == 0)
      return d.name;
  return nullptr;
}
} // namespace

bool hasNpyMagic(const std::vector<uint8_t> &bytes) {
  return bytes.size() >= kMagicSize &&
         std::memcmp(bytes.data(), kMagic, kMagicSize) == 0;
}

std::string npyTypeName(int32_t dtype) {
  switch (dtype) {
  case FP8RT_BFLOAT16:
    return "uint16 (bfloat16 encodings)";
  case FP8RT_FLOAT8E4M3FN:
  case FP8RT_FLOAT8E5M2:
  case FP8RT_FLOAT8E8M0:
    return "uint8 (" + dtypeName(dtype) + " encodings)";
  default:
    for (const DtypeCode &d : kDtypes)
      if (d.dtype == dtype)
        return d.name;
    return dtypeName(dtype);
  }
}

bool parseNpy(const std::string &path, const std::vector<uint8_t> &file,
              HostTensor &out, std::string &error) {
  out = HostTensor();
  auto bad = [&](const std::string &what) {
    error = path + ": " + what;
    return false;
  };
  if (!hasNpyMagic(file))
    return bad(file.empty() ? "is empty: not a .npy file"
                            : "not a .npy file (no \\x93NUMPY magic)");
  if (file.size() < kMagicSize + 4)
    return bad("truncated .npy file: " + std::to_string(file.size()) +
               " bytes, too short for its version and header length");
  const unsigned major = file[6], minor = file[7];
  size_t headerSize, headerStart;
  if (major == 1) {
    headerSize = size_t(file[8]) | size_t(file[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12)
      return bad("truncated .npy file: " + std::to_string(file.size()) +
                 " bytes, too short for its header length");
    headerSize = size_t(file[8]) | size_t(file[9]) << 8 |
                 size_t(file[10]) << 16 | size_t(file[11]) << 24;
    headerStart = 12;
  } else {
    return bad(".npy format version " + std::to_string(major) + "." +
               std::to_string(minor) + " (fp8-run reads 1.0, 2.0 and 3.0)");
  }
  if (headerSize > file.size() - headerStart)
    return bad("truncated .npy file: its header claims " +
               std::to_string(headerSize) + " bytes, the file has " +
               std::to_string(file.size() - headerStart) + " after the magic");
  const std::string text(reinterpret_cast<const char *>(file.data()) +
                             headerStart,
                         headerSize);
  if (text.find('\0') != std::string::npos)
    return bad("malformed .npy header: it contains a NUL byte");
  Header h;
  std::string why;
  if (!HeaderParser(text).parse(h, why))
    return bad("malformed .npy header: " + why);

  // descr: a byte order ('<' little, '|' not applicable, '=' native, which
  // is little on every machine fp8-run runs on) and a type code.
  const char *name = descrName(h.descr);
  if (!name)
    return bad("numpy dtype '" + h.descr +
               "' is not one a model takes (float32/64/16, int8/16/32/64, "
               "uint8/16/32/64, bool; bfloat16 and FP8 inputs as uint16 / "
               "uint8 encodings)");
  for (const DtypeCode &d : kDtypes)
    if (std::strcmp(d.name, name) == 0)
      out.dtype = d.dtype;
  const size_t elemSize = fp8rt_dtype_size_inline(out.dtype);
  const char order = h.descr[0];
  if (order == '>' && elemSize > 1)
    return bad("big-endian " + std::string(name) +
               " data: save it little-endian (a.astype(a.dtype.newbyteorder"
               "('<')))");
  if (order != '<' && order != '|' && order != '=' && order != '>')
    return bad("numpy dtype '" + h.descr + "' has no byte order it reads");
  if (h.fortran && h.shape.size() > 1)
    return bad("the array is in Fortran order: save it in C order "
               "(np.save(path, np.ascontiguousarray(a)))");

  int64_t elements;
  if (!checkedElementCount(h.shape.data(), h.shape.size(), elements, why))
    return bad(why);
  size_t bytes;
  if (!checkedByteCount(elements, elemSize, bytes))
    return bad("shape " + shapeString(h.shape.data(), h.shape.size()) +
               " of " + name + " needs more than 2^64 bytes");
  const size_t dataStart = headerStart + headerSize;
  const size_t have = file.size() - dataStart;
  if (have != bytes)
    return bad(std::string(have < bytes ? "truncated: " : "") + "holds " +
               std::to_string(have) + " bytes of data; shape " +
               shapeString(h.shape.data(), h.shape.size()) + " of " + name +
               " needs " + std::to_string(bytes));
  out.shape = h.shape;
  out.bytes.assign(file.begin() + dataStart, file.end());
  if (out.dtype == FP8RT_BOOL)
    for (size_t k = 0; k < out.bytes.size(); ++k)
      if (out.bytes[k] > 1)
        return bad("bool element " + std::to_string(k) + " is " +
                   std::to_string(out.bytes[k]) + ", not 0 or 1");
  return true;
}

bool readNpy(const std::string &path, HostTensor &out, std::string &error) {
  std::vector<uint8_t> file;
  if (!readRegularFile(path, file, error))
    return false;
  return parseNpy(path, file, out, error);
}

bool writeNpy(const std::string &path, const HostTensor &t,
              std::string &error) {
  std::string descr;
  switch (t.dtype) {
  case FP8RT_BFLOAT16:
    descr = "<u2";
    break;
  case FP8RT_FLOAT8E4M3FN:
  case FP8RT_FLOAT8E5M2:
  case FP8RT_FLOAT8E8M0:
    descr = "|u1";
    break;
  default:
    for (const DtypeCode &d : kDtypes)
      if (d.dtype == t.dtype)
        descr = (fp8rt_dtype_size_inline(t.dtype) == 1 ? "|" : "<") +
                std::string(d.descr);
  }
  if (descr.empty()) {
    error = "cannot write " + path + ": " + dtypeName(t.dtype) +
            " has no .npy form";
    return false;
  }
  std::string shape = "(";
  for (size_t d = 0; d < t.shape.size(); ++d)
    shape += (d ? ", " : "") + std::to_string(t.shape[d]);
  shape += t.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Padded with spaces so that the data starts at a multiple of 64.
  const size_t unpadded = kMagicSize + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 65535) {
    error = "cannot write " + path + ": the shape's .npy header is too long";
    return false;
  }
  std::string file(kMagic, kMagicSize);
  file += '\x01';
  file += '\x00';
  file += char(header.size() & 0xFF);
  file += char(header.size() >> 8);
  file += header;
  file.append(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  return writeOutputFile(path, file, error);
}

} // namespace fp8rt
