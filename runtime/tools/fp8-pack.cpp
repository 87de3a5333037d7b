//===- fp8-pack.cpp - Pack a weights file from a manifest -----------------===//
//
// Part of fp8-opt. Writes the weights file of a library compiled with
// external weights from its manifest (`model.fp8w.json`) and the model's
// external data, with the packer fp8-compile uses (fp8rt/pack.h): on the
// machine where the weights are, so that real-size weights never travel,
// and for new weights of the same graph (refit). docs/Weights.md;
// `fp8-pack --help` describes every option (kHelp below).
//
// C++17 and the C library only, linked statically where the toolchain
// allows: the binary is copied to the GPU machine alone. The output is
// written to a temporary file beside it and renamed into place (removed on
// an error, SIGINT or SIGTERM); it is never one of the files read (the
// manifest, the base file, a source), compared by device and inode; an
// existing output that is not a regular file (/dev/null) is written into.
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"
#include "fp8/Support/VersionInfo.inc"
#include "fp8rt/fp8w.h"
#include "fp8rt/pack.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

namespace pack = fp8rt::pack;

const char kUsage[] =
    "usage: fp8-pack MANIFEST --data-dir DIR [-o OUT] [--base FILE] "
    "[--chunk-bytes N] [--threads N] [--quiet] [--verbose]\n";

const char kHelp[] =
    "usage: fp8-pack MANIFEST --data-dir DIR [options]\n"
    "\n"
    "Writes the weights file of a model library compiled with external\n"
    "weights (fp8-compile --weights=external) from the library's manifest and\n"
    "the model's external data: the same file, byte for byte, that\n"
    "fp8-compile writes, for the same or new weights of the same graph.\n"
    "\n"
    "  MANIFEST           the manifest fp8-compile wrote beside the library\n"
    "                     (model.fp8w.json)\n"
    "  --data-dir DIR     required: the ONNX model's directory, where its\n"
    "                     external data files are (no source may leave it)\n"
    "  -o OUT             the weights file to write. Default: the file the\n"
    "                     manifest names, in the manifest's directory\n"
    "  --base FILE        the weights file fp8-compile wrote: the source of\n"
    "                     the constants the compiler computed (literals),\n"
    "                     matched by name and hash. Needed when the manifest\n"
    "                     has literal tensors\n"
    "  --chunk-bytes N    bytes of source read at once (N may end in K, M or\n"
    "                     G). Default: 64M\n"
    "  --threads N        threads quantizing, up to 4096 (reading and writing\n"
    "                     stay on one); the file is the same for any N.\n"
    "                     Default: 0, one per core\n"
    "  --quiet            no summary line\n"
    "  -v, --verbose      one line per tensor on stderr\n"
    "  -h, --help         print this help and exit 0\n"
    "  --version          print fp8-opt's version and git revision\n"
    "\n"
    "Options taking a value accept both --opt VALUE and --opt=VALUE.\n"
    "\n"
    "OUT is written to a temporary file beside it and renamed into place; a\n"
    "symbolic link is followed, an existing OUT that is not a regular file\n"
    "(a device) is written into, and OUT may not be the manifest, the base\n"
    "file or a source.\n"
    "\n"
    "Exit status: 0 on success, 1 on any error (usage included).\n";

struct Options {
  std::string manifest, dataDir, out, base;
  uint64_t chunkBytes = pack::PackOptions().chunkBytes;
  unsigned threads = pack::PackOptions().threads; // 0: one per core
  bool quiet = false, verbose = false;
};

[[noreturn]] void fail(const std::string &msg) {
  std::fprintf(stderr, "fp8-pack: error: %s\n", msg.c_str());
  std::exit(1);
}

[[noreturn]] void usageError(const std::string &msg) {
  std::fprintf(stderr,
               "fp8-pack: error: %s\n%s(fp8-pack --help describes every "
               "option)\n",
               msg.c_str(), kUsage);
  std::exit(1);
}

[[noreturn]] void printAndExit(const char *text) {
  std::fputs(text, stdout);
  std::exit(std::fflush(stdout) == 0 ? 0 : 1);
}

std::string errnoText() { return std::strerror(errno); }

/// A byte count: digits, optionally followed by K, M or G (binary), >= 1.
bool parseBytes(const std::string &v, uint64_t &out) {
  size_t digits = 0;
  uint64_t n = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') {
    if (__builtin_mul_overflow(n, 10, &n) ||
        __builtin_add_overflow(n, uint64_t(v[digits] - '0'), &n))
      return false;
    ++digits;
  }
  const std::string suffix = v.substr(digits);
  int shift = 0;
  if (suffix == "K" || suffix == "k")
    shift = 10;
  else if (suffix == "M" || suffix == "m")
    shift = 20;
  else if (suffix == "G" || suffix == "g")
    shift = 30;
  else if (!suffix.empty())
    return false;
  if (digits == 0 || n == 0 || n > (UINT64_MAX >> shift))
    return false;
  out = n << shift;
  return true;
}

/// A thread count: digits, 0 (one per core) to 4096.
bool parseThreads(const std::string &v, unsigned &out) {
  if (v.empty() || v.size() > 4 ||
      v.find_first_not_of("0123456789") != std::string::npos)
    return false;
  const unsigned n = unsigned(std::stoul(v));
  if (n > 4096)
    return false;
  out = n;
  return true;
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto is = [&](const char *flag) { return fp8rt::isOption(a, flag); };
    auto value = [&](const char *flag) {
      return fp8rt::optionValue(a, flag, i, argc, argv, usageError);
    };
    if (is("--data-dir"))
      o.dataDir = value("--data-dir");
    else if (is("-o"))
      o.out = value("-o");
    else if (is("--base"))
      o.base = value("--base");
    else if (is("--chunk-bytes")) {
      const std::string v = value("--chunk-bytes");
      if (!parseBytes(v, o.chunkBytes))
        usageError("--chunk-bytes takes a byte count >= 1 (digits, then "
                   "K, M or G), not '" +
                   v + "'");
    } else if (is("--threads")) {
      const std::string v = value("--threads");
      if (!parseThreads(v, o.threads))
        usageError("--threads takes a number of threads from 0 (one per "
                   "core) to 4096, not '" +
                   v + "'");
    } else if (a == "--quiet")
      o.quiet = true;
    else if (a == "-v" || a == "--verbose")
      o.verbose = true;
    else if (a == "-h" || a == "--help")
      printAndExit(kHelp);
    else if (a == "--version") {
      std::printf("fp8-pack (fp8-opt) %s, git %s\n", FP8_VERSION,
                  FP8_GIT_REVISION);
      std::exit(std::fflush(stdout) == 0 ? 0 : 1);
    } else if (!a.empty() && a[0] == '-')
      usageError("unknown option " + a);
    else if (o.manifest.empty())
      o.manifest = a;
    else
      usageError("more than one manifest given ('" + o.manifest + "' and '" +
                 a + "')");
  }
  if (o.manifest.empty())
    usageError("no manifest given");
  if (o.dataDir.empty())
    usageError("--data-dir DIR is required");
  return o;
}

/// The manifest's text; only a regular file is read (a FIFO could block).
std::string readManifest(const std::string &path) {
  constexpr off_t kMaxBytes = off_t(1) << 30;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    fail("cannot open the manifest " + path + ": " + errnoText());
  struct stat st;
  std::string text;
  std::string error;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    error = "the manifest " + path + " is not a regular file";
  else if (st.st_size > kMaxBytes)
    error = "the manifest " + path + " is too large (" +
            std::to_string(st.st_size) + " bytes)";
  text.resize(error.empty() ? size_t(st.st_size) : 0);
  for (size_t done = 0; error.empty() && done < text.size();) {
    const ssize_t n = ::read(fd, &text[done], text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      error = "cannot read the manifest " + path + ": " +
              (n == 0 ? std::string("it ends early") : errnoText());
    else
      done += size_t(n);
  }
  ::close(fd);
  if (!error.empty())
    fail(error);
  return text;
}

std::string directoryOf(const std::string &path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Refuses an output that is one of the files read.
class InputFiles {
public:
  void add(const std::string &path, const std::string &what) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0)
      files.push_back({st.st_dev, st.st_ino, path, what});
  }
  void checkOutput(const std::string &out) const {
    struct stat st;
    if (::stat(out.c_str(), &st) != 0)
      return; // a new file is none of them
    for (const File &f : files)
      if (f.dev == st.st_dev && f.ino == st.st_ino)
        fail("the output " + out + " is " +
             (f.path == out ? "" : f.path + ", ") + f.what +
             ": refusing to write over it");
  }

private:
  struct File {
    dev_t dev;
    ino_t ino;
    std::string path, what;
  };
  std::vector<File> files;
};

/// The temporary output, removed unless committed (also on SIGINT and
/// SIGTERM: the path is kept where the handler can read it).
char gTemporary[4096];

extern "C" void removeTemporaryAndDie(int sig) {
  if (gTemporary[0])
    ::unlink(gTemporary);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

std::string createTemporary(const std::string &dest) {
  std::string name = dest + ".tmp-XXXXXX";
  if (name.size() >= sizeof(gTemporary))
    fail("the output path " + dest + " is too long");
  const int fd = ::mkostemp(&name[0], O_CLOEXEC);
  if (fd < 0)
    fail("cannot create a temporary file beside " + dest + ": " + errnoText());
  ::close(fd);
  std::memcpy(gTemporary, name.c_str(), name.size() + 1);
  struct sigaction action = {};
  action.sa_handler = removeTemporaryAndDie;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  return name;
}

void removeTemporary() {
  if (gTemporary[0])
    ::unlink(gTemporary);
  gTemporary[0] = 0;
}

/// Where OUT's bytes go: a symbolic link's target; `direct` for an existing
/// file that is not regular (a device), which is written into.
std::string destinationOf(const std::string &out, bool &direct) {
  struct stat st;
  direct = ::stat(out.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (direct || ::lstat(out.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
    return out;
  char *target = ::realpath(out.c_str(), nullptr);
  if (!target)
    return out; // a dangling link: replaced
  const std::string resolved = target;
  std::free(target);
  return resolved;
}

/// "3.21 GB" (decimal units).
std::string formatBytes(double bytes) {
  const char *units[] = {"B", "kB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

void printSummary(const pack::PackStats &s, const std::string &out) {
  std::string rate;
  if (s.seconds > 0)
    rate = " (" + formatBytes(double(s.bytesRead) / s.seconds) + "/s)";
  std::printf("fp8-pack: %llu tensors, %s read, %s written in %.1f s%s -> %s\n",
              static_cast<unsigned long long>(s.tensors),
              formatBytes(double(s.bytesRead)).c_str(),
              formatBytes(double(s.bytesWritten)).c_str(), s.seconds,
              rate.c_str(), out.c_str());
  std::fflush(stdout);
}

/// Packs into `dest`, through a temporary file unless `direct`.
void packInto(const pack::Manifest &manifest, const pack::PackOptions &po,
              const std::string &dest, bool direct, pack::PackStats &stats) {
  if (direct) {
    if (std::string e = pack::packWeights(manifest, po, dest, &stats);
        !e.empty())
      fail(e);
    return;
  }
  const std::string temporary = createTemporary(dest);
  std::string error = pack::packWeights(manifest, po, temporary, &stats);
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (error.empty() && ::chmod(temporary.c_str(), 0644 & ~mask) != 0)
    error = "cannot set the mode of " + temporary + ": " + errnoText();
  if (error.empty() && ::rename(temporary.c_str(), dest.c_str()) != 0)
    error = "cannot rename " + temporary + " to " + dest + ": " + errnoText();
  if (!error.empty()) {
    removeTemporary();
    fail(error);
  }
  gTemporary[0] = 0;
}

} // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  pack::Manifest manifest;
  if (std::string e =
          pack::parseManifest(readManifest(o.manifest), manifest, o.manifest);
      !e.empty())
    fail(e);

  InputFiles inputs;
  inputs.add(o.manifest, "the manifest");
  pack::PackOptions po;
  po.dataDir = o.dataDir;
  po.chunkBytes = o.chunkBytes;
  po.threads = o.threads;
  po.verbose = o.verbose;
  fp8w_file *base = nullptr;
  if (!o.base.empty()) {
    char error[1024];
    base = fp8w_open(o.base.c_str(), 0, 0, error, sizeof(error));
    if (!base)
      fail(error);
    po.base = base;
    inputs.add(o.base, "the base weights file");
  }
  for (const pack::Tensor &t : manifest.tensors) {
    if (t.kind != pack::Tensor::Kind::Literal &&
        t.kind != pack::Tensor::Kind::Concat)
      inputs.add(o.dataDir + "/" + t.source.location,
                 "the source of '" + t.name + "'");
    for (const pack::Tensor &part : t.parts)
      inputs.add(o.dataDir + "/" + part.source.location,
                 "the source of '" + t.name + "'");
  }

  const std::string out =
      !o.out.empty() ? o.out
                     : directoryOf(o.manifest) + "/" + manifest.weightsFile;
  bool direct = false;
  const std::string dest = destinationOf(out, direct);
  inputs.checkOutput(dest);

  pack::PackStats stats;
  packInto(manifest, po, dest, direct, stats);
  fp8w_close(base);
  if (!o.quiet)
    printSummary(stats, out);
  return 0;
}
