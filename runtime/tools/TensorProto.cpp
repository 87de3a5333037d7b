//===- TensorProto.cpp - ONNX TensorProto files without protobuf ----------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "TensorProto.h"

#include "fp8rt/fp8rt.h"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <signal.h>
#include <unistd.h>

namespace fp8rt {
namespace {
/// One varint at b[i..n); false (with `why`) when it runs past the end or
/// does not fit 64 bits.
bool readVarint(const uint8_t *b, size_t n, size_t &i, uint64_t &v,
                const char *&why) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (i >= n) {
      why = "a varint runs past the end";
      return false;
    }
    const uint8_t byte = b[i++];
    if (shift == 63 && (byte & 0x7E)) {
      why = "a varint does not fit 64 bits";
      return false;
    }
    v |= uint64_t(byte & 0x7F) << shift;
    if (!(byte & 0x80))
      return true;
  }
  why = "a varint is longer than 10 bytes";
  return false;
}

void writeVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(v | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}

template <typename T> void putLE(uint8_t *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

float halfToFloat(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
  float v;
  if (exp == 0)
    v = std::ldexp(float(man), -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = std::ldexp(float(man | 0x400), exp - 25);
  return sign ? -v : v;
}

const char *fieldName(uint64_t field) {
  switch (field) {
  case 1:
    return "dims";
  case 2:
    return "data_type";
  case 4:
    return "float_data";
  case 5:
    return "int32_data";
  case 7:
    return "int64_data";
  case 8:
    return "name";
  case 9:
    return "raw_data";
  case 10:
    return "double_data";
  case 11:
    return "uint64_data";
  case 13:
    return "external_data";
  case 14:
    return "data_location";
  default:
    return nullptr;
  }
}

/// Whether `wire` is a wire type protobuf allows for a field we decode
/// (repeated numeric fields may be packed, wire type 2).
bool wireAllowed(uint64_t field, uint64_t wire) {
  switch (field) {
  case 1:
  case 5:
  case 7:
  case 11:
    return wire == 0 || wire == 2;
  case 2:
  case 14:
    return wire == 0;
  case 4:
    return wire == 5 || wire == 2;
  case 10:
    return wire == 1 || wire == 2;
  case 8:
  case 9:
  case 13:
    return wire == 2;
  default:
    return true;
  }
}

std::string errnoText() { return std::strerror(errno); }

bool writeAll(int fd, const std::string &data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = ::write(fd, data.data() + done, data.size() - done);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    if (w == 0) {
      errno = EIO;
      return false;
    }
    done += size_t(w);
  }
  return true;
}

/// Writes into an existing character device or FIFO (`dest`, named by the
/// user as `shown`), never replacing it.
bool writeInto(const std::string &dest, const std::string &shown,
               const std::string &msg, std::string &error) {
  // O_NONBLOCK: opening a FIFO that nobody reads fails (ENXIO) instead of
  // waiting for a reader forever.
  int fd = ::open(dest.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENXIO)
      error = "cannot write " + shown +
              ": it is a FIFO that no process is "
              "reading";
    else
      error = "cannot write " + shown + ": " + errnoText();
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
    ::close(fd);
    error = "cannot write " + shown + ": it changed while being opened";
    return false;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  // A reader that goes away must be an error (EPIPE), not a SIGPIPE.
  struct sigaction ignore, old;
  std::memset(&ignore, 0, sizeof(ignore));
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, &old);
  const bool ok = writeAll(fd, msg);
  const int writeErrno = errno;
  ::sigaction(SIGPIPE, &old, nullptr);
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed) {
    errno = ok ? errno : writeErrno;
    error = "cannot write " + shown + ": " + errnoText();
    return false;
  }
  return true;
}

/// Replaces (or creates) the regular file `dest` atomically.
bool replaceAtomically(const std::string &dest, const std::string &shown,
                       const std::string &msg, std::string &error) {
  std::string tmpl = dest + ".tmp.XXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data()); // O_EXCL: never an existing file or link
  if (fd < 0) {
    error = "cannot write " + shown + ": cannot create a temporary file " +
            tmpl + ": " + errnoText();
    return false;
  }
  const std::string tmp = name.data();
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  const bool ok = writeAll(fd, msg);
  const int writeErrno = errno;
  const bool closed = ::close(fd) == 0;
  if (!ok || !closed) {
    errno = ok ? errno : writeErrno;
    error = "cannot write " + tmp + ": " + errnoText();
    ::unlink(tmp.c_str());
    return false;
  }
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    error = "cannot rename " + tmp + " to " + dest + ": " + errnoText();
    ::unlink(tmp.c_str());
    return false;
  }
  return true;
}
} // namespace

bool checkedElementCount(const int64_t *shape, size_t rank, int64_t &elements,
                         std::string &error) {
  elements = 1;
  bool overflow = false;
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] < 0) {
      error = "dimension " + std::to_string(d) + " is negative (" +
              std::to_string(shape[d]) + ")";
      return false;
    }
  }
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] == 0) { // an empty tensor, however large the other dims
      elements = 0;
      return true;
    }
  }
  for (size_t d = 0; d < rank && !overflow; ++d)
    overflow = __builtin_mul_overflow(elements, shape[d], &elements);
  if (overflow) {
    error =
        "shape " + shapeString(shape, rank) + " has more than 2^63 elements";
    return false;
  }
  return true;
}

bool checkedByteCount(int64_t elements, size_t elementSize, size_t &bytes) {
  return elements >= 0 &&
         !__builtin_mul_overflow(uint64_t(elements), uint64_t(elementSize),
                                 &bytes);
}

int64_t HostTensor::numElements() const {
  int64_t n;
  std::string ignored;
  return checkedElementCount(shape.data(), shape.size(), n, ignored) ? n : -1;
}

std::string shapeString(const int64_t *shape, size_t rank) {
  std::string s;
  for (size_t d = 0; d < rank; ++d)
    s += (d ? "x" : "") + std::to_string(shape[d]);
  return rank ? s : "scalar";
}

std::string dtypeName(int32_t dtype) {
  switch (dtype) {
  case FP8RT_FLOAT:
    return "float32";
  case FP8RT_UINT8:
    return "uint8";
  case FP8RT_INT8:
    return "int8";
  case FP8RT_INT16:
    return "int16";
  case FP8RT_INT32:
    return "int32";
  case FP8RT_INT64:
    return "int64";
  case FP8RT_BOOL:
    return "bool";
  case FP8RT_FLOAT16:
    return "float16";
  case FP8RT_DOUBLE:
    return "float64";
  case FP8RT_BFLOAT16:
    return "bfloat16";
  case FP8RT_FLOAT8E4M3FN:
    return "float8e4m3fn";
  case FP8RT_FLOAT8E5M2:
    return "float8e5m2";
  case FP8RT_FLOAT8E8M0:
    return "float8e8m0";
  case FP8RT_UINT16:
    return "uint16";
  case FP8RT_UINT32:
    return "uint32";
  case FP8RT_UINT64:
    return "uint64";
  default:
    return "dtype " + std::to_string(dtype);
  }
}

const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISLNK(mode))
    return "a symbolic link";
  if (S_ISREG(mode))
    return "a regular file";
  return "not a regular file";
}

bool readRegularFile(const std::string &path, std::vector<uint8_t> &out,
                     std::string &error) {
  out.clear();
  // stat first: a device is never even opened (opening some has effects).
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = "cannot open " + path + ": " + errnoText();
    return false;
  }
  auto refuse = [&](mode_t mode) {
    error = S_ISDIR(mode)
                ? path + " is a directory, not a file"
                : path + " is " + fileKind(mode) + ", not a regular file";
    return false;
  };
  if (!S_ISREG(st.st_mode))
    return refuse(st.st_mode);
  // O_NONBLOCK: should the path have become a FIFO since, opening it does
  // not wait for a writer; fstat below refuses it.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    error = "cannot open " + path + ": " + errnoText();
    return false;
  }
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return refuse(st.st_mode);
  }
  const uint64_t size = uint64_t(st.st_size);
  try {
    if (size > out.max_size())
      throw std::bad_alloc();
    out.resize(size_t(size));
  } catch (const std::bad_alloc &) {
    ::close(fd);
    out.clear();
    error = "cannot read " + path + ": its " + std::to_string(size) +
            " bytes do not fit in memory";
    return false;
  }
  size_t got = 0;
  while (got < out.size()) { // never more than the size it had when opened
    ssize_t r = ::read(fd, out.data() + got, out.size() - got);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      error = "cannot read " + path + ": " + errnoText();
      ::close(fd);
      out.clear();
      return false;
    }
    if (r == 0)
      break;
    got += size_t(r);
  }
  ::close(fd);
  out.resize(got);
  return true;
}

bool readTensorProto(const std::string &path, HostTensor &out,
                     std::string &error) {
  out = HostTensor();
  std::vector<uint8_t> file;
  if (!readRegularFile(path, file, error))
    return false;
  if (file.empty()) {
    error = path + " is empty: not a TensorProto";
    return false;
  }
  const uint8_t *b = file.data();
  const size_t n = file.size();
  uint64_t dtype = FP8RT_FLOAT; // what onnx_tensor.py assumes without a type
  std::vector<uint64_t> dims;
  const uint8_t *raw = nullptr;
  size_t rawSize = 0;
  bool haveRaw = false, external = false;
  std::vector<float> floats;
  std::vector<double> doubles;
  std::vector<uint64_t> int32s, int64s;
  uint64_t valueFields = 0; // bit f: field f held values (or was present)
  size_t i = 0, at = 0;
  const char *why = nullptr;
  auto fail = [&](const std::string &what) {
    error = path + ": malformed TensorProto at byte " + std::to_string(at) +
            " of " + std::to_string(n) + ": " + what;
    return false;
  };
  while (i < n) {
    at = i;
    uint64_t key;
    if (!readVarint(b, n, i, key, why))
      return fail(std::string(why) + " in a field key");
    const uint64_t field = key >> 3, wire = key & 7;
    if (field == 0)
      return fail("field number 0");
    const char *fname = fieldName(field);
    if (!wireAllowed(field, wire))
      return fail(std::string("field ") + fname + " has wire type " +
                  std::to_string(wire));
    if (wire == 0) {
      uint64_t v;
      if (!readVarint(b, n, i, v, why))
        return fail(std::string(why) +
                    (fname ? std::string(" in ") + fname : std::string()));
      if (field == 1)
        dims.push_back(v);
      else if (field == 2)
        dtype = v;
      else if (field == 5)
        int32s.push_back(v);
      else if (field == 7)
        int64s.push_back(v);
      else if (field == 14 && v == 1)
        external = true;
      if (field == 5 || field == 7 || field == 11)
        valueFields |= uint64_t(1) << field;
    } else if (wire == 2) {
      uint64_t len;
      if (!readVarint(b, n, i, len, why))
        return fail(std::string(why) + " in a length");
      if (len > n - i)
        return fail(std::string(fname ? fname : "a field") + "'s length " +
                    std::to_string(len) + " runs past the end (" +
                    std::to_string(n - i) + " bytes left)");
      const uint8_t *chunk = b + i;
      const size_t size = size_t(len);
      i += size;
      if (field == 1 || field == 5 || field == 7 || field == 11) {
        if (field != 1)
          valueFields |= uint64_t(1) << field;
        size_t j = 0;
        while (j < size) {
          uint64_t v;
          if (!readVarint(chunk, size, j, v, why))
            return fail(std::string(why) + " in packed " + fname);
          if (field == 1)
            dims.push_back(v);
          else if (field == 5)
            int32s.push_back(v);
          else if (field == 7)
            int64s.push_back(v);
        }
      } else if (field == 4) {
        valueFields |= uint64_t(1) << field;
        if (size % 4)
          return fail("packed float_data of " + std::to_string(size) +
                      " bytes (not a multiple of 4)");
        for (size_t j = 0; j < size; j += 4) {
          float f;
          std::memcpy(&f, chunk + j, 4);
          floats.push_back(f);
        }
      } else if (field == 10) {
        valueFields |= uint64_t(1) << field;
        if (size % 8)
          return fail("packed double_data of " + std::to_string(size) +
                      " bytes (not a multiple of 8)");
        for (size_t j = 0; j < size; j += 8) {
          double d;
          std::memcpy(&d, chunk + j, 8);
          doubles.push_back(d);
        }
      } else if (field == 8) {
        out.name.assign(reinterpret_cast<const char *>(chunk), size);
      } else if (field == 9) {
        raw = chunk;
        rawSize = size;
        haveRaw = true;
      } else if (field == 13) {
        external = true;
      }
    } else if (wire == 5) {
      if (n - i < 4)
        return fail("a 4-byte field runs past the end");
      if (field == 4) {
        valueFields |= uint64_t(1) << field;
        float f;
        std::memcpy(&f, b + i, 4);
        floats.push_back(f);
      }
      i += 4;
    } else if (wire == 1) {
      if (n - i < 8)
        return fail("an 8-byte field runs past the end");
      if (field == 10) {
        valueFields |= uint64_t(1) << field;
        double d;
        std::memcpy(&d, b + i, 8);
        doubles.push_back(d);
      }
      i += 8;
    } else {
      return fail("unsupported wire type " + std::to_string(wire));
    }
  }

  if (external) {
    error = path + ": its data is stored in an external file "
                   "(data_location EXTERNAL), which fp8-run does not read";
    return false;
  }
  const size_t elemSize = dtype <= uint64_t(INT32_MAX)
                              ? fp8rt_dtype_size_inline(int32_t(dtype))
                              : 0;
  if (!elemSize) {
    error = path + ": unsupported data type " + std::to_string(dtype) +
            " (fp8-run reads 1 float32, 2 uint8, 3 int8, 4 uint16, 5 int16, "
            "6 int32, 7 int64, 9 bool, 10 float16, 11 float64, 12 uint32, "
            "13 uint64, 16 bfloat16, 17 float8e4m3fn, 19 float8e5m2)";
    return false;
  }
  out.dtype = int32_t(dtype);
  out.shape.reserve(dims.size());
  for (uint64_t d : dims)
    out.shape.push_back(int64_t(d)); // a negative int64 is a 10-byte varint
  int64_t elements;
  std::string why2;
  if (!checkedElementCount(out.shape.data(), out.shape.size(), elements,
                           why2)) {
    error = path + ": " + why2;
    return false;
  }
  const std::string what = "shape " +
                           shapeString(out.shape.data(), out.shape.size()) +
                           " of " + dtypeName(out.dtype);
  size_t bytes;
  if (!checkedByteCount(elements, elemSize, bytes)) {
    error = path + ": " + what + " needs more than 2^64 bytes";
    return false;
  }
  if (haveRaw) {
    if (rawSize != bytes) {
      error = path + ": raw_data holds " + std::to_string(rawSize) +
              " bytes; " + what + " needs " + std::to_string(bytes);
      return false;
    }
    out.bytes.assign(raw, raw + rawSize);
    return true;
  }
  // No raw_data: the values are in the typed field of the data type.
  const uint64_t expected = out.dtype == FP8RT_FLOAT    ? 4
                            : out.dtype == FP8RT_DOUBLE ? 10
                            : out.dtype == FP8RT_INT64  ? 7
                                                        : 5;
  for (uint64_t f : {4, 5, 7, 10, 11}) {
    if ((valueFields >> f & 1) && f != expected) {
      error = path + ": data_type is " + std::to_string(out.dtype) + " (" +
              dtypeName(out.dtype) + ") but its values are in " + fieldName(f) +
              " (expected raw_data or " + fieldName(expected) + ")";
      return false;
    }
  }
  const size_t count = expected == 4    ? floats.size()
                       : expected == 10 ? doubles.size()
                       : expected == 7  ? int64s.size()
                                        : int32s.size();
  if (uint64_t(count) != uint64_t(elements)) {
    if (!valueFields)
      error = path + ": holds no data (neither raw_data nor " +
              fieldName(expected) + "); " + what + " needs " +
              std::to_string(elements) + " values";
    else
      error = path + ": " + fieldName(expected) + " holds " +
              std::to_string(count) + " values; " + what + " needs " +
              std::to_string(elements);
    return false;
  }
  out.bytes.assign(bytes, 0); // bytes = count * elemSize: bounded by the file
  uint8_t *p = out.bytes.data();
  for (size_t k = 0; k < count; ++k) {
    if (expected == 4)
      putLE(p + 4 * k, floats[k]);
    else if (expected == 10)
      putLE(p + 8 * k, doubles[k]);
    else if (expected == 7)
      putLE(p + 8 * k, int64s[k]);
    else if (elemSize == 4)
      putLE(p + 4 * k, uint32_t(int32s[k]));
    else if (elemSize == 2)
      putLE(p + 2 * k, uint16_t(int32s[k]));
    else
      p[k] = uint8_t(int32s[k]);
  }
  return true;
}

bool writeTensorProto(const std::string &path, const HostTensor &t,
                      std::string &error) {
  std::string msg;
  for (int64_t d : t.shape) {
    writeVarint(msg, (1 << 3) | 0);
    writeVarint(msg, uint64_t(d));
  }
  writeVarint(msg, (2 << 3) | 0);
  writeVarint(msg, uint64_t(uint32_t(t.dtype)));
  if (!t.name.empty()) {
    writeVarint(msg, (8 << 3) | 2);
    writeVarint(msg, t.name.size());
    msg += t.name;
  }
  writeVarint(msg, (9 << 3) | 2);
  writeVarint(msg, t.bytes.size());
  msg.append(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  return writeOutputFile(path, msg, error);
}

bool writeOutputFile(const std::string &path, const std::string &msg,
                     std::string &error) {
  std::string dest = path;
  struct stat st;
  bool exists = ::lstat(path.c_str(), &st) == 0;
  if (!exists && errno != ENOENT) {
    error = "cannot write " + path + ": " + errnoText();
    return false;
  }
  if (exists && S_ISLNK(st.st_mode)) {
    // Follow the link: its target is what the user named; the link stays.
    char *real = ::realpath(path.c_str(), nullptr);
    if (!real) {
      error = "cannot write " + path +
              ": it is a symbolic link whose target cannot be resolved (" +
              errnoText() + ")";
      return false;
    }
    dest = real;
    std::free(real);
    if (::lstat(dest.c_str(), &st) != 0) {
      error = "cannot write " + path + " (" + dest + "): " + errnoText();
      return false;
    }
  }
  const std::string shown = dest == path ? path : path + " (-> " + dest + ")";
  if (exists) {
    if (S_ISDIR(st.st_mode)) {
      error = "cannot write " + shown + ": it is a directory";
      return false;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))
      return writeInto(dest, shown, msg, error);
    if (!S_ISREG(st.st_mode)) {
      error = "cannot write " + shown + ": it is " + fileKind(st.st_mode) +
              " (fp8-run replaces only regular files, and writes into "
              "character devices and FIFOs)";
      return false;
    }
  }
  return replaceAtomically(dest, shown, msg, error);
}

bool toDoubles(const HostTensor &t, std::vector<double> &out) {
  const int64_t n = t.numElements();
  const size_t size = fp8rt_dtype_size_inline(t.dtype);
  size_t bytes;
  if (n < 0 || !checkedByteCount(n, size, bytes) || bytes != t.bytes.size())
    return false;
  switch (t.dtype) {
  case FP8RT_FLOAT:
  case FP8RT_DOUBLE:
  case FP8RT_INT64:
  case FP8RT_INT32:
  case FP8RT_INT16:
  case FP8RT_INT8:
  case FP8RT_UINT8:
  case FP8RT_BOOL:
  case FP8RT_FLOAT16:
  case FP8RT_BFLOAT16:
    break;
  default:
    return false;
  }
  out.resize(size_t(n));
  const uint8_t *p = t.bytes.data();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype) {
    case FP8RT_FLOAT: {
      float f;
      std::memcpy(&f, p + 4 * i, 4);
      out[i] = f;
      break;
    }
    case FP8RT_DOUBLE: {
      double d;
      std::memcpy(&d, p + 8 * i, 8);
      out[i] = d;
      break;
    }
    case FP8RT_INT64: {
      int64_t v;
      std::memcpy(&v, p + 8 * i, 8);
      out[i] = double(v);
      break;
    }
    case FP8RT_INT32: {
      int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      out[i] = v;
      break;
    }
    case FP8RT_INT16: {
      int16_t v;
      std::memcpy(&v, p + 2 * i, 2);
      out[i] = v;
      break;
    }
    case FP8RT_INT8:
      out[i] = int8_t(p[i]);
      break;
    case FP8RT_UINT8:
    case FP8RT_BOOL:
      out[i] = p[i];
      break;
    case FP8RT_FLOAT16: {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = halfToFloat(h);
      break;
    }
    case FP8RT_BFLOAT16: {
      uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      uint32_t u = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &u, 4);
      out[i] = f;
      break;
    }
    }
  }
  return true;
}

} // namespace fp8rt
