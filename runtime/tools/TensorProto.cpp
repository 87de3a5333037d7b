//===- TensorProto.cpp - ONNX TensorProto files without protobuf ----------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "TensorProto.h"

#include "fp8rt/fp8rt.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace fp8rt {
namespace {
bool readVarint(const std::vector<uint8_t> &b, size_t &i, uint64_t &v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (i >= b.size())
      return false;
    uint8_t byte = b[i++];
    v |= uint64_t(byte & 0x7F) << shift;
    if (!(byte & 0x80))
      return true;
  }
  return false;
}

void writeVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(char(v | 0x80));
    v >>= 7;
  }
  out.push_back(char(v));
}

template <typename T> void appendLE(std::vector<uint8_t> &bytes, T v) {
  uint8_t raw[sizeof(T)];
  std::memcpy(raw, &v, sizeof(T));
  bytes.insert(bytes.end(), raw, raw + sizeof(T));
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
} // namespace

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

bool readTensorProto(const std::string &path, HostTensor &out,
                     std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open " + path;
    return false;
  }
  std::vector<uint8_t> b((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  out = HostTensor();
  out.dtype = FP8RT_FLOAT;
  std::vector<uint8_t> raw;
  bool haveRaw = false;
  std::vector<float> floats;
  std::vector<double> doubles;
  std::vector<int64_t> ints; // int32_data (5) and int64_data (7)
  int intField = 0;
  size_t i = 0;
  auto fail = [&](const char *what) {
    error = path + ": malformed TensorProto (" + what + ")";
    return false;
  };
  while (i < b.size()) {
    uint64_t key;
    if (!readVarint(b, i, key))
      return fail("key");
    const uint64_t field = key >> 3, wire = key & 7;
    if (wire == 0) {
      uint64_t v;
      if (!readVarint(b, i, v))
        return fail("varint");
      if (field == 1)
        out.shape.push_back(int64_t(v));
      else if (field == 2)
        out.dtype = int32_t(v);
      else if (field == 5 || field == 7) {
        ints.push_back(int64_t(v));
        intField = int(field);
      }
    } else if (wire == 2) {
      uint64_t n;
      if (!readVarint(b, i, n) || n > b.size() - i)
        return fail("length");
      std::vector<uint8_t> chunk(b.begin() + i, b.begin() + i + n);
      i += n;
      if (field == 1 || field == 5 || field == 7) {
        size_t j = 0;
        while (j < chunk.size()) {
          uint64_t v;
          if (!readVarint(chunk, j, v))
            return fail("packed varint");
          if (field == 1)
            out.shape.push_back(int64_t(v));
          else {
            ints.push_back(int64_t(v));
            intField = int(field);
          }
        }
      } else if (field == 4) {
        for (size_t j = 0; j + 4 <= chunk.size(); j += 4) {
          float f;
          std::memcpy(&f, &chunk[j], 4);
          floats.push_back(f);
        }
      } else if (field == 10) {
        for (size_t j = 0; j + 8 <= chunk.size(); j += 8) {
          double d;
          std::memcpy(&d, &chunk[j], 8);
          doubles.push_back(d);
        }
      } else if (field == 8) {
        out.name.assign(chunk.begin(), chunk.end());
      } else if (field == 9) {
        raw = std::move(chunk);
        haveRaw = true;
      }
    } else if (wire == 5) {
      if (b.size() - i < 4)
        return fail("fixed32");
      if (field == 4) {
        float f;
        std::memcpy(&f, &b[i], 4);
        floats.push_back(f);
      }
      i += 4;
    } else if (wire == 1) {
      if (b.size() - i < 8)
        return fail("fixed64");
      if (field == 10) {
        double d;
        std::memcpy(&d, &b[i], 8);
        doubles.push_back(d);
      }
      i += 8;
    } else {
      return fail("unsupported wire type");
    }
  }
  const size_t elemSize = fp8rt_dtype_size_inline(out.dtype);
  if (!elemSize) {
    error = path + ": unsupported data type " + std::to_string(out.dtype);
    return false;
  }
  if (haveRaw) {
    out.bytes = std::move(raw);
  } else if (out.dtype == FP8RT_FLOAT) {
    for (float f : floats)
      appendLE(out.bytes, f);
  } else if (out.dtype == FP8RT_DOUBLE) {
    for (double d : doubles)
      appendLE(out.bytes, d);
  } else {
    (void)intField;
    for (int64_t v : ints) {
      switch (elemSize) {
      case 8:
        appendLE(out.bytes, v);
        break;
      case 4:
        appendLE(out.bytes, int32_t(v));
        break;
      case 2:
        appendLE(out.bytes, uint16_t(v));
        break;
      default:
        appendLE(out.bytes, uint8_t(v));
      }
    }
  }
  if (int64_t(out.bytes.size()) != out.numElements() * int64_t(elemSize)) {
    error = path + ": holds " + std::to_string(out.bytes.size()) +
            " bytes for " + std::to_string(out.numElements()) + " elements";
    return false;
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
  writeVarint(msg, uint64_t(t.dtype));
  if (!t.name.empty()) {
    writeVarint(msg, (8 << 3) | 2);
    writeVarint(msg, t.name.size());
    msg += t.name;
  }
  writeVarint(msg, (9 << 3) | 2);
  writeVarint(msg, t.bytes.size());
  msg.append(reinterpret_cast<const char *>(t.bytes.data()), t.bytes.size());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f || !f.write(msg.data(), std::streamsize(msg.size()))) {
      error = "cannot write " + tmp;
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot rename " + tmp + " to " + path;
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

bool toDoubles(const HostTensor &t, std::vector<double> &out) {
  const int64_t n = t.numElements();
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
    default:
      return false;
    }
  }
  return true;
}

} // namespace fp8rt
