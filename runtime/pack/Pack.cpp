//===- Pack.cpp - packWeights: a manifest's weights file ------------------===//
//
// Part of fp8-opt. Writes the weights file of a manifest (fp8rt/pack.h),
// tensor by tensor in the manifest's order, through the streaming writer of
// fp8rt/fp8w.h: copies read in pieces of chunkBytes, quantizations computed
// by Quantize.cpp (both outputs at once, on PackOptions::threads threads;
// the one a later entry needs, in practice the scales after their data, is
// kept until then), literals from the caller or from a base weights file.
// Reading and writing stay on the calling thread.
//
// Before the output is created every source is checked: its file must be
// inside the data directory after symbolic links are resolved (a location
// is relative and has no ".."; parseManifest checked that), a regular file
// (never a FIFO or device, which could block), and long enough for its
// bytes. Every literal is checked to be available, so that a missing one
// fails at once rather than after hours of packing.
//
//===----------------------------------------------------------------------===//

#include "PackInternal.h"

#include "fp8rt/fp8w.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <new>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace fp8rt::pack {
namespace {

using detail::dtypeName;
using detail::formatShape;
using Clock = std::chrono::steady_clock;

std::string errnoText() { return std::strerror(errno); }

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// PackOptions::threads resolved: 0 is one per core (1 where the number of
/// cores is unknown).
unsigned threadsToUse(unsigned requested) {
  if (requested)
    return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

/// A file descriptor closed on every path.
class FileDescriptor {
public:
  FileDescriptor() = default;
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor() { reset(); }
  void reset(int newFd = -1) {
    if (fd >= 0)
      ::close(fd);
    fd = newFd;
  }
  int get() const { return fd; }
  int release() {
    const int old = fd;
    fd = -1;
    return old;
  }

private:
  int fd = -1;
};

/// Reads exactly `bytes` at `offset` of `fd`; a file that ends first (it
/// was shortened after the checks) is an error.
std::string readAt(int fd, uint64_t offset, uint64_t bytes, uint8_t *out,
                   const std::string &path) {
  while (bytes) {
    const size_t want = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    const ssize_t n = ::pread(fd, out, want, off_t(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return "cannot read " + path + ": " + errnoText();
    if (n == 0)
      return path + " ends early (it was shortened while being read)";
    out += n;
    offset += uint64_t(n);
    bytes -= uint64_t(n);
  }
  return "";
}

/// The model's directory: sources are read only from files inside it.
class DataDir {
public:
  explicit DataDir(std::string dir) : dir(std::move(dir)) {}

  /// Opens the file of `s`: inside the directory once symbolic links are
  /// resolved, a regular file, at least offset + length bytes long. `path`
  /// is set to the name errors use.
  std::string open(const Source &s, FileDescriptor &fd, std::string &path);
  /// The name errors use for the file of `s`.
  std::string pathOf(const Source &s) const {
    if (dir.empty() || dir.back() == '/')
      return dir + s.location;
    return dir + "/" + s.location;
  }

private:
  std::string resolve();

  std::string dir, real; // as given, and its realpath()
};

std::string DataDir::resolve() {
  if (!real.empty())
    return "";
  if (dir.empty())
    return "no data directory was given (the directory of the model's "
           "external data)";
  char *resolved = ::realpath(dir.c_str(), nullptr);
  if (!resolved)
    return "the data directory " + dir + ": " + errnoText();
  real = resolved;
  std::free(resolved);
  return "";
}

std::string DataDir::open(const Source &s, FileDescriptor &fd,
                          std::string &path) {
  if (std::string e = resolve(); !e.empty())
    return e;
  path = pathOf(s);
  const std::string who = path + " (initializer '" + s.name + "')";
  char *resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved)
    return "cannot open " + who + ": " + errnoText();
  const std::string target = resolved;
  std::free(resolved);
  const std::string root = real == "/" ? real : real + "/";
  if (target.compare(0, root.size(), root) != 0)
    return who + " leads out of the data directory " + dir + " (to " + target +
           "): refusing to read it";
  struct stat st;
  if (::stat(target.c_str(), &st) != 0)
    return "cannot open " + who + ": " + errnoText();
  if (S_ISREG(st.st_mode))
    fd.reset(
        ::open(target.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (S_ISREG(st.st_mode) && (fd.get() < 0 || ::fstat(fd.get(), &st) != 0))
    return "cannot open " + who + ": " + errnoText();
  if (!S_ISREG(st.st_mode))
    return who + " is not a regular file";
  if (s.offset + s.length > uint64_t(st.st_size))
    return who + " ends early: the initializer is bytes [" +
           std::to_string(s.offset) + ", " +
           std::to_string(s.offset + s.length) + ") of a " +
           std::to_string(st.st_size) + "-byte file";
  return "";
}

/// Identifies a quantization: same source bytes, same recipe.
std::string quantizationKey(const Tensor &t) {
  const Source &s = t.source;
  const Quantization &q = t.quant;
  std::string key = s.location;
  auto add = [&](int64_t v) { key += '\0' + std::to_string(v); };
  auto addAll = [&](const std::vector<int64_t> &v) {
    add(int64_t(v.size()));
    for (int64_t x : v)
      add(x);
  };
  uint32_t epsBits;
  std::memcpy(&epsBits, &q.eps, sizeof(epsBits));
  for (int64_t v : {int64_t(s.offset), int64_t(s.length), int64_t(s.dtype),
                    int64_t(q.format), int64_t(q.scaling), int64_t(epsBits),
                    int64_t(q.pow2), int64_t(q.rceil)})
    add(v);
  for (const auto *v : {&s.shape, &q.block, &q.permutation, &q.dataShape})
    addAll(*v);
  return key;
}

/// One line per tensor for PackOptions::verbose.
std::string describe(const Tensor &t) {
  const Source &s = t.source;
  const std::string of = "'" + s.name + "' (" + formatShape(s.shape) + " " +
                         dtypeName(s.dtype) + ")";
  const Quantization &q = t.quant;
  const std::string recipe =
      (q.scaling == Quantization::Scaling::MX ? "mx, " : "current, ") +
      formatShape(q.block) + " blocks";
  switch (t.kind) {
  case Tensor::Kind::Copy:
    return "copy of " + of;
  case Tensor::Kind::Data:
    return dtypeName(t.dtype) + " data of " + of + ", " + recipe;
  case Tensor::Kind::Scale:
    return dtypeName(t.dtype) + " scales of " + of + ", " + recipe;
  case Tensor::Kind::Literal:
    return "literal, " + formatShape(t.shape) + " " + dtypeName(t.dtype);
  case Tensor::Kind::Round:
    return "bf16 rounding of " + of +
           (t.permutation.empty() ? ""
                                  : ", permuted " + formatShape(t.permutation));
  case Tensor::Kind::Concat: {
    std::string parts;
    for (const Tensor &p : t.parts)
      parts += (parts.empty() ? "" : "; ") + describe(p);
    return "concatenation of " + parts;
  }
  }
  return "";
}

/// One packWeights call.
class Packer {
public:
  Packer(const Manifest &manifest, const PackOptions &options,
         const std::string &outPath, PackStats &stats)
      : manifest(manifest), options(options), outPath(outPath), stats(stats),
        dataDir(options.dataDir),
        chunkBytes(std::max<uint64_t>(1, options.chunkBytes)),
        threads(threadsToUse(options.threads)) {}
  ~Packer() { fp8w_writer_abort(writer); }

  std::string run();

private:
  std::string checkLiterals() const;
  std::string findInBase(const Tensor &t, int64_t &index) const;
  std::string checkSources();
  std::string checkCompiledIn();
  std::string createWriter();
  void countUses();
  std::string writeTensor(const Tensor &t);
  std::string readSource(
      const Source &s,
      const std::function<std::string(const uint8_t *, uint64_t)> &sink);
  std::string writeCopy(const Tensor &t);
  std::string writeQuantized(const Tensor &t);
  std::string writeRounded(const Tensor &t);
  std::string openSource(const Source &s, FileDescriptor &fd, std::string &path,
                         detail::ReadSource &read);
  std::string writeFromBase(const Tensor &t);
  std::string write(const void *data, uint64_t bytes);
  std::string finish();

  /// The outputs of a quantization that later entries still need.
  struct Pending {
    detail::Quantized outputs;
    size_t dataUses = 0, scaleUses = 0;
    bool computed = false;
  };

  const Manifest &manifest;
  const PackOptions &options;
  const std::string &outPath;
  PackStats &stats;
  DataDir dataDir;
  const uint64_t chunkBytes;
  const unsigned threads;
  FileDescriptor out;
  fp8w_writer *writer = nullptr;
  std::unordered_map<std::string, Pending> pending;
};

std::string Packer::run() {
  if (std::string e = detail::validateManifest(manifest, "the manifest");
      !e.empty())
    return e;
  if (std::string e = checkLiterals(); !e.empty())
    return e;
  if (std::string e = checkSources(); !e.empty())
    return e;
  if (std::string e = checkCompiledIn(); !e.empty())
    return e;
  if (std::string e = createWriter(); !e.empty())
    return e;
  countUses();
  const size_t n = manifest.tensors.size();
  for (size_t i = 0; i < n; ++i) {
    const Tensor &t = manifest.tensors[i];
    const Clock::time_point start = Clock::now();
    if (std::string e = writeTensor(t); !e.empty())
      return "tensor '" + t.name + "': " + e;
    ++stats.tensors;
    if (options.verbose)
      std::fprintf(stderr, "weights: [%zu/%zu] %s: %s, %.2f s\n", i + 1, n,
                   t.name.c_str(), describe(t).c_str(), secondsSince(start));
  }
  return finish();
}

std::string Packer::checkLiterals() const {
  size_t count = 0;
  const Tensor *first = nullptr;
  for (const Tensor &t : manifest.tensors)
    if (t.kind == Tensor::Kind::Literal && !count++)
      first = &t;
  if (!count || options.writeLiteral)
    return "";
  if (!options.base)
    return "the manifest has " + std::to_string(count) +
           " literal tensor(s) (the first: '" + first->name +
           "'): constants the compiler computed, which only the weights "
           "file it wrote holds; give that file as the base (fp8-pack "
           "--base FILE)";
  for (const Tensor &t : manifest.tensors) {
    int64_t index;
    if (t.kind != Tensor::Kind::Literal)
      continue;
    if (std::string e = findInBase(t, index); !e.empty())
      return "tensor '" + t.name + "': " + e;
  }
  return "";
}

/// The literal `t` in the base file, with the manifest's dtype, shape and
/// hash.
std::string Packer::findInBase(const Tensor &t, int64_t &index) const {
  const std::string base = fp8w_path(options.base);
  index = fp8w_find(options.base, t.name.data(), t.name.size());
  if (index < 0)
    return "a literal that the base weights file " + base + " does not hold";
  const fp8w_entry *e = fp8w_entry_at(options.base, uint64_t(index));
  const std::vector<int64_t> shape(e->dims, e->dims + e->rank);
  if (e->dtype != t.dtype || shape != t.shape)
    return "the literal is " + formatShape(t.shape) + " " + dtypeName(t.dtype) +
           ", but the base weights file " + base + " has " +
           formatShape(shape) + " " + dtypeName(e->dtype);
  if (e->hash != t.hash) {
    char hashes[64];
    std::snprintf(hashes, sizeof(hashes), "%016" PRIx64 ", not %016" PRIx64,
                  e->hash, t.hash);
    return "the base weights file " + base +
           " holds other bytes for this literal (hash " + hashes +
           "): it is from another build";
  }
  return "";
}

std::string Packer::checkSources() {
  for (const Tensor &t : manifest.tensors) {
    if (t.kind == Tensor::Kind::Literal)
      continue;
    auto check = [&](const Source &source) {
      FileDescriptor fd;
      std::string path;
      std::string e = dataDir.open(source, fd, path);
      return e.empty() ? e : "tensor '" + t.name + "': " + e;
    };
    if (t.kind != Tensor::Kind::Concat) {
      if (std::string e = check(t.source); !e.empty())
        return e;
    }
    for (const Tensor &part : t.parts)
      if (std::string e = check(part.source); !e.empty())
        return e;
  }
  return "";
}

/// The initializers the compiler read are part of the library: the data
/// must hold the same bytes, or the library would compute with other
/// values than the weights file's (a refit that changed them needs a new
/// library).
std::string Packer::checkCompiledIn() {
  for (const CompiledIn &c : manifest.compiledIn) {
    Source s;
    s.name = c.name;
    s.location = c.location;
    s.offset = c.offset;
    s.length = c.length;
    fp8w_hash h;
    fp8w_hash_init(&h);
    if (std::string e = readSource(s,
                                   [&](const uint8_t *data, uint64_t n) {
                                     fp8w_hash_update(&h, data, size_t(n));
                                     return std::string();
                                   });
        !e.empty())
      return "initializer '" + c.name + "', compiled into the library: " + e;
    if (fp8w_hash_digest(&h) != c.hash)
      return "initializer '" + c.name + "' (" + dataDir.pathOf(s) +
             ", bytes [" +
             std::to_string(c.offset) + ", " +
             std::to_string(c.offset + c.length) +
             ")) holds other values than the library was compiled with: the "
             "compiler read it (it is smaller than fp8-compile "
             "--weights-read-limit), so it is part of the library. Compile "
             "the library from this data, or with a --weights-read-limit "
             "below its size (then the packer writes it)";
  }
  return "";
}

/// Opens the output: created or truncated; an existing device is written
/// into. Never blocks: a FIFO (or socket) is refused, as the writer writes
/// at offsets (the header last).
std::string openOutput(const std::string &path, FileDescriptor &fd) {
  fd.reset(::open(path.c_str(),
                  O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0644));
  struct stat st;
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0)
    return "cannot create " + path + ": " + errnoText();
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
    return path + " is a FIFO or socket: a weights file is written at "
                  "offsets, into a regular file or a device";
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0)
    return "cannot write " + path + ": " + errnoText();
  return "";
}

std::string Packer::createWriter() {
  if (std::string e = openOutput(outPath, out); !e.empty())
    return e;
  std::vector<fp8w_tensor_desc> descs;
  for (const Tensor &t : manifest.tensors)
    descs.push_back({t.name.data(), t.name.size(), t.dtype,
                     uint32_t(t.shape.size()), t.shape.data()});
  char error[512];
  writer = fp8w_writer_create(out.get(), manifest.fingerprint, descs.data(),
                              descs.size(), error, sizeof(error));
  if (!writer)
    return outPath + ": " + error;
  return "";
}

void Packer::countUses() {
  std::function<void(const Tensor &)> count = [&](const Tensor &t) {
    if (t.kind == Tensor::Kind::Data || t.kind == Tensor::Kind::Scale) {
      Pending &p = pending[quantizationKey(t)];
      ++(t.kind == Tensor::Kind::Data ? p.dataUses : p.scaleUses);
    }
    for (const Tensor &part : t.parts)
      count(part);
  };
  for (const Tensor &t : manifest.tensors)
    count(t);
}

std::string Packer::writeTensor(const Tensor &t) {
  switch (t.kind) {
  case Tensor::Kind::Copy:
    return writeCopy(t);
  case Tensor::Kind::Data:
  case Tensor::Kind::Scale:
    return writeQuantized(t);
  case Tensor::Kind::Literal:
    if (options.writeLiteral)
      return options.writeLiteral(t, writer);
    return writeFromBase(t);
  case Tensor::Kind::Round:
    return writeRounded(t);
  case Tensor::Kind::Concat:
    // Row-major along dimension 0: each part's bytes after the last's.
    for (size_t i = 0; i < t.parts.size(); ++i)
      if (std::string e = writeTensor(t.parts[i]); !e.empty())
        return "part " + std::to_string(i) + ": " + e;
    return "";
  }
  return "an unknown kind";
}

/// Reads the bytes of `s` in pieces of at most chunkBytes, handing each to
/// `sink` (which returns an error or "").
std::string Packer::readSource(
    const Source &s,
    const std::function<std::string(const uint8_t *, uint64_t)> &sink) {
  FileDescriptor fd;
  std::string path;
  if (std::string e = dataDir.open(s, fd, path); !e.empty())
    return e;
  std::vector<uint8_t> buffer(size_t(std::min(chunkBytes, s.length)));
  for (uint64_t done = 0; done < s.length;) {
    const uint64_t n = std::min<uint64_t>(buffer.size(), s.length - done);
    if (std::string e =
            readAt(fd.get(), s.offset + done, n, buffer.data(), path);
        !e.empty())
      return e;
    stats.bytesRead += n;
    if (std::string e = sink(buffer.data(), n); !e.empty())
      return e;
    done += n;
  }
  return "";
}

std::string Packer::writeCopy(const Tensor &t) {
  return readSource(t.source, [&](const uint8_t *data, uint64_t n) {
    return write(data, n);
  });
}

std::string Packer::writeQuantized(const Tensor &t) {
  const std::string key = quantizationKey(t);
  Pending &p = pending[key];
  const bool isData = t.kind == Tensor::Kind::Data;
  --(isData ? p.dataUses : p.scaleUses);
  if (!p.computed || (isData && p.outputs.data.empty())) {
    FileDescriptor fd;
    std::string path;
    detail::ReadSource read;
    if (std::string e = openSource(t.source, fd, path, read); !e.empty())
      return e;
    // The data only where this entry or a later one needs it.
    const bool needData = isData || p.dataUses > 0;
    if (std::string e = detail::quantize(t.source, t.quant, chunkBytes, threads,
                                         needData, read, p.outputs);
        !e.empty())
      return e;
    p.computed = true;
  }
  const std::vector<uint8_t> &bytes =
      isData ? p.outputs.data : p.outputs.scales;
  if (std::string e = write(bytes.data(), bytes.size()); !e.empty())
    return e;
  if (p.dataUses == 0)
    p.outputs.data = {};
  if (p.dataUses == 0 && p.scaleUses == 0)
    pending.erase(key);
  return "";
}

/// Opens the file of `s` (into `fd`; `path` names it in errors) and makes
/// `read` read its bytes at offsets relative to the source, counting them.
std::string Packer::openSource(const Source &s, FileDescriptor &fd,
                               std::string &path, detail::ReadSource &read) {
  if (std::string e = dataDir.open(s, fd, path); !e.empty())
    return e;
  const uint64_t base = s.offset;
  read = [this, &fd, &path, base](uint64_t offset, uint64_t bytes,
                                  uint8_t *to) {
    stats.bytesRead += bytes;
    return readAt(fd.get(), base + offset, bytes, to, path);
  };
  return "";
}

std::string Packer::writeRounded(const Tensor &t) {
  FileDescriptor fd;
  std::string path;
  detail::ReadSource read;
  if (std::string e = openSource(t.source, fd, path, read); !e.empty())
    return e;
  std::vector<uint8_t> bytes;
  if (std::string e = detail::roundToBF16(t.source, t.permutation, chunkBytes,
                                          threads, read, bytes);
      !e.empty())
    return e;
  return write(bytes.data(), bytes.size());
}

std::string Packer::writeFromBase(const Tensor &t) {
  int64_t index;
  if (std::string e = findInBase(t, index); !e.empty())
    return e;
  const fp8w_entry *e = fp8w_entry_at(options.base, uint64_t(index));
  const void *data = fp8w_data(options.base, uint64_t(index));
  // The table's hash was checked against the manifest; these are the bytes.
  if (fp8w_hash_bytes(data, e->bytes) != t.hash)
    return std::string("the data of this literal in the base weights file ") +
           fp8w_path(options.base) + " is corrupt (its hash does not match)";
  return write(data, e->bytes);
}

std::string Packer::write(const void *data, uint64_t bytes) {
  if (fp8w_writer_write(writer, data, size_t(bytes)) == 0)
    return "";
  return finish(); // the writer's message says why
}

std::string Packer::finish() {
  // The file ends with the last tensor (a device has no size to ask).
  uint64_t end = 0;
  if (const size_t n = manifest.tensors.size()) {
    detail::tensorBytes(manifest.tensors[n - 1].dtype,
                        manifest.tensors[n - 1].shape, end);
    end += fp8w_writer_offset(writer, n - 1);
  }
  char error[512];
  const int status = fp8w_writer_finish(writer, error, sizeof(error));
  writer = nullptr;
  if (status != 0)
    return outPath + ": " + error;
  struct stat st;
  const bool regular = ::fstat(out.get(), &st) == 0 && S_ISREG(st.st_mode);
  stats.bytesWritten = regular ? uint64_t(st.st_size) : end;
  if (::close(out.release()) != 0)
    return "cannot write " + outPath + ": " + errnoText();
  return "";
}

} // namespace

std::string packWeights(const Manifest &manifest, const PackOptions &options,
                        const std::string &outPath, PackStats *stats) {
  PackStats local;
  PackStats &s = stats ? *stats : local;
  s = PackStats();
  const Clock::time_point start = Clock::now();
  std::string error;
  try {
    error = Packer(manifest, options, outPath, s).run();
  } catch (const std::bad_alloc &) {
    error = "out of memory packing " + outPath;
  } catch (const std::exception &e) {
    error = "packing " + outPath + ": " + e.what();
  }
  s.seconds = secondsSince(start);
  return error;
}

} // namespace fp8rt::pack
