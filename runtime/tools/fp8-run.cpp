//===- fp8-run.cpp - Run a compiled model on ONNX test data ---------------===//
//
// Part of fp8-opt. Loads a model library produced by fp8-compile through
// its C ABI (fp8rt.h), feeds it inputs (an ONNX test folder's input_N.pb,
// .npy files, or seeded random data in the signature's shapes), and, where
// reference outputs exist (output_N.pb, <name>.npy), reports per output the
// max abs error, relative L2 error and cosine similarity; exits 1 beyond
// tolerance. Needs neither MLIR nor protobuf. `fp8-run --help` describes
// every option (kHelp below).
//
// Nothing it reads is trusted: tensor files (TensorProto.cpp), the library's
// signature (counts, dtypes, ranks and dimensions are checked, and sizes are
// computed without overflow before anything is allocated), and the paths it
// is given (it never reads a non-regular file, never writes over a file it
// reads, and never replaces a device or FIFO).
//
//===----------------------------------------------------------------------===//

#include "CommandLine.h"
#include "Npy.h"
#include "RandomInputs.h"
#include "TensorProto.h"

#include "fp8/Support/VersionInfo.inc"
#include "fp8rt/fp8rt.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <set>
#include <new>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace fp8rt;

namespace {
constexpr long kMaxRepeat = 1000000;

const char kUsage[] =
    "usage: fp8-run MODEL.so [--data DIR] [--input NAME=FILE]... [--random] "
    "[--seed N] [--rtol R] [--atol A] [--repeat N] [--save OUTDIR] "
    "[--save-format=pb|npy] [--top1] [--load-state FILE] [--save-state FILE] "
    "[--weights FILE] [--device=cpu|cuda]\n";

const char kHelp[] =
    "usage: fp8-run MODEL.so --data DIR [options]\n"
    "       fp8-run MODEL.so --input NAME=FILE... | --random [options]\n"
    "\n"
    "Runs a model library compiled by fp8-compile (its C ABI:\n"
    "docs/RuntimeABI.md) on ONNX test data, .npy files or random inputs, and\n"
    "compares its outputs with the reference outputs where there are some.\n"
    "\n"
    "  MODEL.so           the model library (fp8-compile MODEL.onnx -o "
    "MODEL.so)\n"
    "  --data DIR         an ONNX test folder: DIR/input_N.pb (TensorProto "
    "files),\n"
    "                     one per model input, N = 0, 1, ...; DIR/output_N.pb,"
    "\n"
    "                     where present, are the reference outputs. Or a "
    "folder\n"
    "                     of .npy files named after the tensors: "
    "DIR/<input>.npy,\n"
    "                     DIR/<output>.npy (input_N.npy / output_N.npy for "
    "names\n"
    "                     that are not plain file names). Default: none\n"
    "  --input NAME=FILE  input NAME from FILE, a .npy or TensorProto file "
    "(told\n"
    "                     apart by content); repeatable; wins over --data\n"
    "  --random           every input not given otherwise: seeded random "
    "data in\n"
    "                     the library's shapes and dtypes. Floats N(0, 1); "
    "integer\n"
    "                     inputs the library bounds-checks (token ids, Gather"
    "\n"
    "                     indices) uniform in the range the checks accept, "
    "other\n"
    "                     integers 1, bools true. --save writes them too\n"
    "  --seed N           the seed of --random (0 to 2^64-1); an input's "
    "values\n"
    "                     depend only on N and its index. Default: 0\n"
    "  --device=cpu|cuda  optional: the library says where it runs\n"
    "                     (fp8rt_model_device()); a different value is an "
    "error.\n"
    "                     Default: the library's\n"
    "  --rtol R           relative L2 error an output may have. Default: "
    "1e-5\n"
    "  --atol A           max abs error an output may have (for outputs whose\n"
    "                     reference is 0). Default: 0\n"
    "  --repeat N         run N times (1 to 1000000), report the best and the\n"
    "                     median time.\n"
    "                     Default: 1\n"
    "  --save OUTDIR      write the outputs as OUTDIR/output_N.pb (OUTDIR is\n"
    "                     created; it may not be the --data folder), and the\n"
    "                     --random inputs as input_N.pb: OUTDIR is then a "
    "test\n"
    "                     folder for --data. Default: none\n"
    "  --save-format=pb|npy  what --save writes: TensorProto files, or .npy "
    "files\n"
    "                     named as --data reads them (bfloat16 as uint16, FP8 "
    "as\n"
    "                     uint8 encodings). Default: pb\n"
    "  --top1             also report per output how many rows agree on the "
    "arg\n"
    "                     max of the last axis (a language model's next "
    "token).\n"
    "                     Default: off\n"
    "  --load-state FILE  restore the model's persistent state (delayed "
    "scaling's\n"
    "                     amax histories) from FILE before the runs. Default: "
    "none\n"
    "  --save-state FILE  write the model's persistent state to FILE after "
    "the\n"
    "                     runs. Default: none\n"
    "  --weights FILE     the weights file of a library compiled with "
    "external\n"
    "                     weights (docs/Weights.md). Default: $FP8RT_WEIGHTS,\n"
    "                     else the file fp8-compile wrote beside the library\n"
    "  -h, --help         print this help and exit 0\n"
    "  --version          print fp8-opt's version and git revision\n"
    "\n"
    "Options taking a value accept both --opt VALUE and --opt=VALUE; R and A\n"
    "are finite numbers >= 0.\n"
    "\n"
    "An output passes when its relative L2 error is <= R or its max abs error\n"
    "is <= A, both measured where reference and output are finite, and every\n"
    "NaN, +Inf and -Inf of the reference is the same in the output, which has\n"
    "none where the reference is finite. A bit-identical output always "
    "passes;\n"
    "FP8 outputs must be. Outputs without a reference file are not "
    "compared.\n"
    "\n"
    "Every input is checked against the library's signature (name, dtype,\n"
    "shape) before anything runs; .npy files must hold the model's dtype\n"
    "(uint16 for bfloat16, uint8 for FP8 inputs), in C order.\n"
    "\n"
    "--save replaces a regular output_N.pb atomically, follows a symbolic "
    "link\n"
    "(its target is written, the link stays), writes into a character device\n"
    "or FIFO, and never writes over a file fp8-run reads (inputs, references,\n"
    "the library, --load-state).\n"
    "\n"
    "Exit status: 0 every compared output passed (or none was compared);\n"
    "1 an output failed, or an error (a file that cannot be read or written,\n"
    "a malformed tensor, a model that does not load or run); 2 a usage error\n"
    "(unknown option, missing or malformed value).\n";

struct Options {
  std::string model, data, save, device, loadState, saveState, weights;
  std::string saveFormat = "pb";
  /// --input NAME=FILE, in the order given.
  std::vector<std::pair<std::string, std::string>> inputs;
  bool top1 = false, random = false;
  uint64_t seed = 0;
  double rtol = 1e-5, atol = 0.0;
  long repeat = 1;
};

[[noreturn]] void usageError(const std::string &msg) {
  std::fprintf(stderr,
               "fp8-run: %s\n%s(fp8-run --help describes every option)\n",
               msg.c_str(), kUsage);
  std::exit(2);
}

/// A finite number >= 0, the whole string.
bool parseTolerance(const std::string &v, double &out) {
  if (v.empty() || std::isspace(static_cast<unsigned char>(v[0])))
    return false;
  char *end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (*end || !std::isfinite(d) || d < 0)
    return false;
  out = d;
  return true;
}

/// A whole number from 0 to 2^64 - 1, digits only.
bool parseSeed(const std::string &v, uint64_t &out) {
  if (v.empty() || v.size() > 20)
    return false;
  uint64_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9' || __builtin_mul_overflow(n, uint64_t(10), &n) ||
        __builtin_add_overflow(n, uint64_t(c - '0'), &n))
      return false;
  }
  out = n;
  return true;
}

/// A whole number from 1 to kMaxRepeat, digits only.
bool parseRepeat(const std::string &v, long &out) {
  if (v.empty() || v.size() > 7)
    return false;
  for (char c : v)
    if (c < '0' || c > '9')
      return false;
  const long n = std::strtol(v.c_str(), nullptr, 10);
  if (n < 1 || n > kMaxRepeat)
    return false;
  out = n;
  return true;
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) {
      return fp8rt::optionValue(a, flag, i, argc, argv, usageError);
    };
    auto is = [&](const char *flag) { return fp8rt::isOption(a, flag); };
    if (is("--data"))
      o.data = value("--data");
    else if (is("--save-state"))
      o.saveState = value("--save-state");
    else if (is("--load-state"))
      o.loadState = value("--load-state");
    else if (is("--save"))
      o.save = value("--save");
    else if (is("--weights"))
      o.weights = value("--weights");
    else if (is("--device"))
      o.device = value("--device");
    else if (is("--save-format")) {
      o.saveFormat = value("--save-format");
      if (o.saveFormat != "pb" && o.saveFormat != "npy")
        usageError("--save-format=" + o.saveFormat + ": expected pb or npy");
    } else if (is("--input")) {
      const std::string v = value("--input");
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        usageError("--input takes NAME=FILE (the model input's name, a .npy "
                   "or TensorProto file), not '" + v + "'");
      const std::string name = v.substr(0, eq);
      for (const auto &given : o.inputs)
        if (given.first == name)
          usageError("--input " + name + " given twice ('" + given.second +
                     "' and '" + v.substr(eq + 1) + "')");
      o.inputs.emplace_back(name, v.substr(eq + 1));
    } else if (is("--seed")) {
      std::string v = value("--seed");
      if (!parseSeed(v, o.seed))
        usageError("--seed takes a whole number from 0 to 2^64-1, not '" + v +
                   "'");
    } else if (a == "--random")
      o.random = true;
    else if (is("--rtol")) {
      std::string v = value("--rtol");
      if (!parseTolerance(v, o.rtol))
        usageError("--rtol takes a finite number >= 0, not '" + v + "'");
    } else if (is("--atol")) {
      std::string v = value("--atol");
      if (!parseTolerance(v, o.atol))
        usageError("--atol takes a finite number >= 0, not '" + v + "'");
    } else if (is("--repeat")) {
      std::string v = value("--repeat");
      if (!parseRepeat(v, o.repeat))
        usageError("--repeat takes a whole number from 1 to " +
                   std::to_string(kMaxRepeat) + ", not '" + v + "'");
    } else if (a == "--top1")
      o.top1 = true;
    else if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      std::exit(std::fflush(stdout) == 0 ? 0 : 1);
    } else if (a == "--version") {
      std::printf("fp8-run (fp8-opt) %s, git %s\n", FP8_VERSION,
                  FP8_GIT_REVISION);
      std::exit(std::fflush(stdout) == 0 ? 0 : 1);
    } else if (!a.empty() && a[0] == '-')
      usageError("unknown option " + a);
    else if (o.model.empty())
      o.model = a;
    else
      usageError("more than one model given ('" + o.model + "' and '" + a +
                 "')");
  }
  if (o.model.empty())
    usageError("no model library given");
  if (o.data.empty() && o.inputs.empty() && !o.random)
    usageError("no inputs given: --data DIR, --input NAME=FILE or --random");
  if (!o.device.empty() && o.device != "cpu" && o.device != "cuda")
    usageError("--device=" + o.device + ": expected cpu or cuda");
  return o;
}

template <typename F> F symbol(void *lib, const char *name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

void fail(const std::string &msg) {
  std::fprintf(stderr, "fp8-run: %s\n", msg.c_str());
}

void warn(const std::string &msg) {
  std::fprintf(stderr, "fp8-run: warning: %s\n", msg.c_str());
}

std::string errnoText() { return std::strerror(errno); }

bool lexists(const std::string &path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

bool endsWith(const std::string &s, const char *suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

/// Whether a tensor name can be a file name as it is (<name>.npy): 1 to 200
/// of [A-Za-z0-9._:+@-], not starting with '.' or '-'.
bool isPlainFileName(const std::string &name) {
  if (name.empty() || name.size() > 200 || name[0] == '.' || name[0] == '-')
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) &&
        !std::strchr("._:+@-", c))
      return false;
  return true;
}

/// Where a path leads, for "is this the same file": the file's device and
/// inode when it exists (symbolic links followed), else its folder's and its
/// name. Paths that differ as strings (relative, `..`, links) compare equal
/// when they name one file.
struct Location {
  bool valid = false, exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;
  bool operator==(const Location &o) const {
    return valid && o.valid && exists == o.exists && dev == o.dev &&
           ino == o.ino && name == o.name;
  }
};

Location locate(const std::string &path) {
  Location l;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    l.valid = l.exists = true;
    l.dev = st.st_dev;
    l.ino = st.st_ino;
    return l;
  }
  // A folder named with a trailing slash ("out/") that does not exist yet:
  // its name is the part before the slashes.
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/')
    trimmed.pop_back();
  std::string dir = ".", base = trimmed;
  const size_t slash = trimmed.find_last_of('/');
  if (slash != std::string::npos) {
    dir = slash ? trimmed.substr(0, slash) : "/";
    base = trimmed.substr(slash + 1);
  }
  if (base.empty() || ::stat(dir.c_str(), &st) != 0)
    return l;
  l.valid = true;
  l.dev = st.st_dev;
  l.ino = st.st_ino;
  l.name = base;
  return l;
}

/// Files fp8-run reads (or has written) and must not write over.
struct Guard {
  struct Entry {
    Location where;
    std::string path, what;
  };
  std::vector<Entry> entries;
  void add(const std::string &path, const std::string &what) {
    Location l = locate(path);
    if (l.valid)
      entries.push_back({l, path, what});
  }
  /// False (with `error`) when writing `path` would write over one of them;
  /// `except` is a path that may be written over (--load-state for
  /// --save-state: updating a state file in place).
  bool check(const std::string &path, const std::string &flag,
             std::string &error, const std::string &except = "") const {
    const Location l = locate(path);
    for (const Entry &e : entries) {
      if (!(e.where == l) || (!except.empty() && e.path == except))
        continue;
      error = flag + " " + path + " is " +
              (e.path == path ? std::string("") : e.path + ", ") + e.what +
              ": refusing to write over it";
      return false;
    }
    return true;
  }
};

/// Bytes of memory of this machine, 0 if unknown.
uint64_t physicalMemory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  uint64_t bytes;
  if (pages <= 0 || page <= 0 ||
      __builtin_mul_overflow(uint64_t(pages), uint64_t(page), &bytes))
    return 0;
  return bytes;
}

const char *orUnknown(const char *name) { return name ? name : "?"; }

/// What the library says about tensor `index` (an input or an output), checked:
/// a known dtype, a rank >= 0 with a shape, non-negative dimensions whose
/// byte count fits.
bool signatureOf(const char *kind, int index, const char *name, int32_t dtype,
                 int32_t rank, const int64_t *shape, HostTensor &t,
                 size_t &bytes, std::string &error) {
  const std::string who = std::string(kind) + " " + std::to_string(index) +
                          " ('" + orUnknown(name) + "')";
  const std::string bad = who + ": the model's signature is invalid: ";
  const size_t elemSize = fp8rt_dtype_size_inline(dtype);
  if (!elemSize) {
    error = bad + "unknown dtype " + std::to_string(dtype);
    return false;
  }
  if (rank < 0 || (rank > 0 && !shape)) {
    error = bad + "rank " + std::to_string(rank) +
            (shape ? "" : " without a shape");
    return false;
  }
  int64_t elements;
  std::string why;
  if (!checkedElementCount(shape, size_t(rank), elements, why)) {
    error = bad + why;
    return false;
  }
  if (!checkedByteCount(elements, elemSize, bytes)) {
    error = bad + "shape " + shapeString(shape, size_t(rank)) + " of " +
            dtypeName(dtype) + " needs more than 2^64 bytes";
    return false;
  }
  t.name = orUnknown(name);
  t.dtype = dtype;
  t.shape.assign(shape, shape + rank);
  return true;
}

/// Class of a value for the comparison: 0 finite, 1 NaN, 2 +Inf, 3 -Inf.
int valueClass(double v) {
  if (std::isnan(v))
    return 1;
  if (std::isinf(v))
    return v > 0 ? 2 : 3;
  return 0;
}

struct Comparison {
  double maxAbs = 0, rel = 0, cosine = 1;
  size_t refNonFinite = 0, matched = 0, extraNonFinite = 0;
  bool haveMismatch = false;
  size_t firstMismatch = 0;
};

/// Metrics over the positions finite in both; non-finite ones compared by
/// class (NaN, +Inf, -Inf).
Comparison compare(const std::vector<double> &got,
                   const std::vector<double> &want) {
  Comparison c;
  double scale = 0;
  auto mismatch = [&](size_t k) {
    if (!c.haveMismatch) {
      c.haveMismatch = true;
      c.firstMismatch = k;
    }
  };
  for (size_t k = 0; k < got.size(); ++k) {
    const int cw = valueClass(want[k]), cg = valueClass(got[k]);
    if (cw) {
      ++c.refNonFinite;
      if (cw == cg)
        ++c.matched;
      else
        mismatch(k);
    } else if (cg) {
      ++c.extraNonFinite;
      mismatch(k);
    } else {
      scale = std::max({scale, std::fabs(want[k]), std::fabs(got[k])});
      c.maxAbs = std::max(c.maxAbs, std::fabs(got[k] - want[k]));
    }
  }
  // Sums of squares of values scaled to at most 1: no overflow for float64.
  const double inv = scale > 0 ? 1 / scale : 1;
  double diff2 = 0, ref2 = 0, got2 = 0, dot = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    if (valueClass(want[k]) || valueClass(got[k]))
      continue;
    const double g = got[k] * inv, w = want[k] * inv, d = g - w;
    diff2 += d * d;
    ref2 += w * w;
    got2 += g * g;
    dot += g * w;
  }
  c.rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2) * scale;
  c.cosine = (ref2 > 0 && got2 > 0) ? dot / std::sqrt(ref2 * got2) : 1.0;
  return c;
}

std::string valueText(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

int run(int argc, char **argv) {
  Options o = parse(argc, argv);
  std::string error;
  Guard guard; // files read: never written over

  // --data: a directory.
  if (!o.data.empty()) {
    struct stat st;
    if (::stat(o.data.c_str(), &st) != 0) {
      fail("--data " + o.data + ": " + errnoText());
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      fail("--data " + o.data + " is " + fileKind(st.st_mode) +
           ", not a directory");
      return 1;
    }
  }
  // --save: a directory or nothing yet, and never the --data folder.
  if (!o.save.empty()) {
    struct stat st;
    if (::stat(o.save.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        fail("--save " + o.save + " is " + fileKind(st.st_mode) +
             ", not a directory");
        return 1;
      }
      if (!o.data.empty() && locate(o.save) == locate(o.data)) {
        fail("--save " + o.save + " is the --data folder " + o.data +
             ": the outputs would overwrite its reference outputs (save them "
             "to another folder)");
        return 1;
      }
    } else if (lexists(o.save)) {
      fail("--save " + o.save + " is a symbolic link to nothing (" +
           errnoText() + ")");
      return 1;
    } else if (errno != ENOENT || !locate(o.save).valid) {
      fail("--save " + o.save + ": " +
           (errno == ENOENT ? std::string("its parent folder does not exist")
                            : errnoText()));
      return 1;
    }
  }
  // --load-state: a regular file (the library would wait forever on a FIFO);
  // a missing one is the library's error.
  if (!o.loadState.empty()) {
    struct stat st;
    if (::stat(o.loadState.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      fail("--load-state " + o.loadState + " is " + fileKind(st.st_mode) +
           ", not a state file");
      return 1;
    }
    guard.add(o.loadState, "the --load-state file");
  }
  // --save-state: the library writes a temporary file and renames it over
  // the path, so that must be a regular file or nothing. A symbolic link is
  // followed (the link stays).
  std::string saveStatePath = o.saveState;
  if (!o.saveState.empty()) {
    struct stat st;
    if (::lstat(o.saveState.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) {
        char *real = ::realpath(o.saveState.c_str(), nullptr);
        if (!real) {
          fail("--save-state " + o.saveState +
               " is a symbolic link whose target cannot be resolved (" +
               errnoText() + ")");
          return 1;
        }
        saveStatePath = real;
        std::free(real);
        ::stat(saveStatePath.c_str(), &st);
      }
      if (!S_ISREG(st.st_mode)) {
        fail("--save-state " + o.saveState + " is " + fileKind(st.st_mode) +
             ", not a regular file (the state is written to a temporary file "
             "renamed over it)");
        return 1;
      }
    }
  }

  // The library: a regular file (dlopen would block on a FIFO).
  std::string libPath = o.model;
  if (libPath.find('/') == std::string::npos)
    libPath = "./" + libPath;
  {
    struct stat st;
    if (::stat(libPath.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      fail("cannot load " + o.model + ": it is " + fileKind(st.st_mode) +
           ", not a shared library");
      return 1;
    }
  }
  void *lib = dlopen(libPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fail("cannot load " + o.model + ": " + dlerror());
    return 1;
  }
  guard.add(libPath, "the model library");
#define FP8RT_SYM(name) auto name = symbol<decltype(&::name)>(lib, #name)
  FP8RT_SYM(fp8rt_abi_version);
  FP8RT_SYM(fp8rt_model_create);
  FP8RT_SYM(fp8rt_model_destroy);
  FP8RT_SYM(fp8rt_model_num_inputs);
  FP8RT_SYM(fp8rt_model_num_outputs);
  FP8RT_SYM(fp8rt_model_input_name);
  FP8RT_SYM(fp8rt_model_output_name);
  FP8RT_SYM(fp8rt_model_input_dtype);
  FP8RT_SYM(fp8rt_model_output_dtype);
  FP8RT_SYM(fp8rt_model_input_rank);
  FP8RT_SYM(fp8rt_model_output_rank);
  FP8RT_SYM(fp8rt_model_input_shape);
  FP8RT_SYM(fp8rt_model_output_shape);
  FP8RT_SYM(fp8rt_model_run);
  FP8RT_SYM(fp8rt_model_last_error);
  FP8RT_SYM(fp8rt_model_save_state);
  FP8RT_SYM(fp8rt_model_load_state);
  FP8RT_SYM(fp8rt_model_num_state_tensors);
  FP8RT_SYM(fp8rt_model_device);
  FP8RT_SYM(fp8rt_model_create_with_weights);
  FP8RT_SYM(fp8rt_model_input_bounds);     // ABI 3
  FP8RT_SYM(fp8rt_model_output_shape_for); // ABI 3
#undef FP8RT_SYM
  // Libraries from before fp8rt_model_device existed are CPU libraries.
  const char *builtFor = fp8rt_model_device ? fp8rt_model_device() : "cpu";
  std::string built = builtFor ? builtFor : "?";
  if (!o.device.empty() && built != o.device) {
    fail(o.model + " was compiled for " + built +
         " (fp8-compile --target=" + (built == "cuda" ? "sm_90a" : "cpu") +
         "); run it with --device=" + built);
    return 1;
  }
  if (!fp8rt_abi_version || !fp8rt_model_create || !fp8rt_model_destroy ||
      !fp8rt_model_num_inputs || !fp8rt_model_num_outputs ||
      !fp8rt_model_input_name || !fp8rt_model_output_name ||
      !fp8rt_model_input_dtype || !fp8rt_model_output_dtype ||
      !fp8rt_model_input_rank || !fp8rt_model_output_rank ||
      !fp8rt_model_input_shape || !fp8rt_model_output_shape ||
      !fp8rt_model_run || !fp8rt_model_last_error || !fp8rt_model_save_state ||
      !fp8rt_model_load_state || !fp8rt_model_num_state_tensors) {
    fail(o.model + " is not an fp8-compile model library");
    return 1;
  }
  // fp8-run calls version-1 functions, which every later version keeps,
  // and for dynamic dimensions (-1 in a shape) the version-3 ones.
  if (int32_t v = fp8rt_abi_version(); v < 1 || v > FP8RT_ABI_VERSION) {
    fail(o.model + " has ABI version " + std::to_string(v) +
         ", expected 1 to " + std::to_string(FP8RT_ABI_VERSION));
    return 1;
  }
  const char *createError = nullptr;
  if (!o.weights.empty() && !fp8rt_model_create_with_weights) {
    fail(o.model + " predates external weights: it takes no --weights");
    return 1;
  }
  fp8rt_model *m =
      o.weights.empty()
          ? fp8rt_model_create(&createError)
          : fp8rt_model_create_with_weights(o.weights.c_str(), &createError);
  if (!m) {
    fail(createError ? createError : "creating the model failed");
    return 1;
  }
  // Destroyed on every return, the error paths included (LeakSanitizer:
  // scripts/sanitize.sh); the library stays loaded until exit.
  std::unique_ptr<fp8rt_model, decltype(fp8rt_model_destroy)> modelGuard(
      m, fp8rt_model_destroy);
  auto lastError = [&]() {
    const char *e = fp8rt_model_last_error(m);
    return std::string(e && *e ? e : "the model failed without a message");
  };

  const int nin = fp8rt_model_num_inputs(m), nout = fp8rt_model_num_outputs(m);
  const uint64_t memory = physicalMemory();
  if (nin < 0 || nout < 0) {
    fail(o.model + ": the model's signature is invalid: " +
         std::to_string(nin) + " inputs, " + std::to_string(nout) + " outputs");
    return 1;
  }
  auto dataFile = [&](const char *kind, int i) {
    return o.data + "/" + kind + "_" + std::to_string(i) + ".pb";
  };
  // .npy files of --data and --save: <name>.npy for names that are plain
  // file names, else input_N.npy / output_N.npy.
  auto npyFile = [&](const std::string &dir, const char *kind, int i,
                     const std::string &name) {
    return dir + "/" +
           (isPlainFileName(name) ? name
                                  : std::string(kind) + "_" + std::to_string(i)) +
           ".npy";
  };
  std::vector<std::string> inputNames;
  for (int i = 0; i < nin; ++i)
    inputNames.push_back(orUnknown(fp8rt_model_input_name(m, i)));
  auto nameList = [](const std::vector<std::string> &names) {
    std::string list;
    for (const std::string &n : names)
      list += (list.empty() ? "'" : ", '") + n + "'";
    return list.empty() ? std::string("none") : list;
  };
  // --input names must be the model's.
  for (const auto &[name, file] : o.inputs)
    if (std::find(inputNames.begin(), inputNames.end(), name) ==
        inputNames.end()) {
      fail("--input " + name + "=" + file + ": the model has no input '" +
           name + "' (its inputs: " + nameList(inputNames) + ")");
      return 1;
    }
  // --random: the ranges the library's index checks accept, from its
  // signature text (docs/RuntimeABI.md); without it, indices are 1.
  std::map<std::string, int64_t> bounds;
  if (o.random) {
    bool parsed = false;
    bounds = indexBounds(symbol<const char *>(lib, "__fp8_model_signature"),
                         parsed);
    if (!parsed)
      warn(o.model + ": its signature text cannot be read, so --random does "
                     "not know which integer inputs index memory (they are 1)");
  }

  // Inputs: every file read and checked against the signature before any
  // output is allocated.
  std::vector<HostTensor> inputs;
  std::vector<fp8rt_tensor> inDesc;
  std::vector<bool> generated(static_cast<size_t>(nin), false);
  std::set<std::string> usedNpy; // --data's .npy files that were read
  for (int i = 0; i < nin; ++i) {
    const std::string &name = inputNames[i];
    std::string who = "input " + std::to_string(i) + " ('" + name + "')";
    HostTensor t, want;
    size_t bytes;
    // Dynamic dimensions (-1, ABI 3): a given tensor brings its sizes (the
    // library checks them against the bounds); --random takes the smallest
    // nonzero size within the bounds.
    const int32_t rank = fp8rt_model_input_rank(m, i);
    const int64_t *compiled = fp8rt_model_input_shape(m, i);
    std::vector<int64_t> shape, lo, hi;
    std::vector<bool> dynamicDim;
    if (rank > 0 && compiled) {
      shape.assign(compiled, compiled + rank);
      lo.resize(size_t(rank));
      hi.resize(size_t(rank));
      const bool bounded =
          fp8rt_model_input_bounds &&
          fp8rt_model_input_bounds(m, i, lo.data(), hi.data()) == FP8RT_OK;
      // (Without bounds a negative dimension is an invalid signature,
      // which signatureOf reports.)
      for (int32_t d = 0; d < rank; ++d) {
        dynamicDim.push_back(bounded && shape[d] == -1);
        if (dynamicDim.back())
          shape[d] = std::min(hi[d], std::max<int64_t>(lo[d], 1));
      }
    }
    if (!signatureOf("input", i, name.c_str(), fp8rt_model_input_dtype(m, i),
                     rank, rank > 0 && compiled ? shape.data() : compiled,
                     want, bytes, error)) {
      fail(error);
      return 1;
    }
    // Where it comes from: --input, then --data (input_N.pb, <name>.npy,
    // input_N.npy), then --random.
    std::string path;
    for (const auto &given : o.inputs)
      if (given.first == name)
        path = given.second;
    const bool fromFlag = !path.empty();
    if (!fromFlag && !o.data.empty()) {
      for (const std::string &candidate :
           {dataFile("input", i), npyFile(o.data, "input", i, name),
            o.data + "/input_" + std::to_string(i) + ".npy"})
        if (lexists(candidate)) {
          path = candidate;
          break;
        }
    }
    if (path.empty() && o.random) {
      if ((memory && bytes > memory) || bytes > t.bytes.max_size()) {
        fail(who + ": shape " +
             shapeString(want.shape.data(), want.shape.size()) + " of " +
             dtypeName(want.dtype) + " needs " + std::to_string(bytes) +
             " bytes, more than this machine's memory");
        return 1;
      }
      t = want;
      t.bytes.assign(bytes, 0);
      auto b = bounds.find(name);
      if (b == bounds.end())
        b = bounds.find("#" + std::to_string(i));
      RandomFill f = fillRandom(t, o.seed, i, b == bounds.end() ? 0 : b->second);
      std::printf("random %s, %s %s: %s (seed %llu)\n", who.c_str(),
                  dtypeName(t.dtype).c_str(),
                  shapeString(t.shape.data(), t.shape.size()).c_str(),
                  f.what.c_str(), (unsigned long long)o.seed);
      generated[i] = true;
      inputs.push_back(std::move(t));
      continue;
    }
    if (path.empty()) {
      if (!o.data.empty())
        fail(who + ": " + dataFile("input", i) + " does not exist (the model has " +
             std::to_string(nin) + " inputs: input_0.pb to input_" +
             std::to_string(nin - 1) + ".pb), nor does " +
             npyFile(o.data, "input", i, name) + " (or give it with --input " +
             name + "=FILE, or --random)");
      else
        fail(who + " is not given: --input " + name +
             "=FILE, or --random (the model's inputs: " +
             nameList(inputNames) + ")");
      return 1;
    }
    // A .npy or a TensorProto file, by content.
    std::vector<uint8_t> file;
    if (!readRegularFile(path, file, error)) {
      fail(who + ": " + error);
      return 1;
    }
    const bool npy = hasNpyMagic(file) || endsWith(path, ".npy");
    if (npy ? !parseNpy(path, file, t, error)
            : !readTensorProto(path, t, error)) {
      fail(who + ": " + error);
      return 1;
    }
    file.clear();
    if (npy && !fromFlag)
      usedNpy.insert(path);
    if (fromFlag || npy)
      who += " from " + path;
    // The library checks this too; checking here reports it before the
    // outputs are allocated.
    if (npy && t.dtype != want.dtype) {
      // numpy has no bfloat16 or FP8: their encodings as uint16 / uint8.
      const bool encodings =
          (want.dtype == FP8RT_BFLOAT16 && t.dtype == FP8RT_UINT16) ||
          ((want.dtype == FP8RT_FLOAT8E4M3FN || want.dtype == FP8RT_FLOAT8E5M2 ||
            want.dtype == FP8RT_FLOAT8E8M0) &&
           t.dtype == FP8RT_UINT8);
      if (!encodings) {
        fail(who + ": the array is " + npyTypeName(t.dtype) +
             ", the model takes " + dtypeName(want.dtype) + " (save it as " +
             npyTypeName(want.dtype) + ")");
        return 1;
      }
      t.dtype = want.dtype;
    }
    if (t.dtype != want.dtype) {
      fail(who + ": dtype " + std::to_string(t.dtype) +
           " given, the model takes " + std::to_string(want.dtype));
      return 1;
    }
    if (t.shape.size() != want.shape.size()) {
      fail(who + ": rank " + std::to_string(t.shape.size()) +
           " given, the model takes " + std::to_string(want.shape.size()) +
           " (shape " + shapeString(want.shape.data(), want.shape.size()) + ")");
      return 1;
    }
    for (size_t d = 0; d < t.shape.size(); ++d) {
      if (d < dynamicDim.size() && dynamicDim[d]) {
        if (t.shape[d] < lo[d] || t.shape[d] > hi[d]) {
          fail(who + ": dimension " + std::to_string(d) + " is " +
               std::to_string(t.shape[d]) + ", outside the bounds " +
               std::to_string(lo[d]) + ".." + std::to_string(hi[d]) +
               " the model was compiled for");
          return 1;
        }
        continue;
      }
      if (t.shape[d] != want.shape[d]) {
        fail(who + ": dimension " + std::to_string(d) + " is " +
             std::to_string(t.shape[d]) + ", the model was compiled for " +
             std::to_string(want.shape[d]) +
             " (recompile with --input-shape to change it)");
        return 1;
      }
    }
    guard.add(path, "input " + std::to_string(i) + "'s file");
    inputs.push_back(std::move(t));
  }
  if (!o.data.empty() && lexists(dataFile("input", nin)))
    warn(dataFile("input", nin) + " ignored: the model has " +
         std::to_string(nin) + " inputs");
  for (HostTensor &t : inputs)
    inDesc.push_back(
        {t.bytes.data(), t.dtype, int32_t(t.shape.size()), t.shape.data()});

  // Outputs: sizes from the library's signature, checked.
  std::vector<HostTensor> outputs(static_cast<size_t>(nout));
  std::vector<fp8rt_tensor> outDesc(static_cast<size_t>(nout));
  for (int i = 0; i < nout; ++i) {
    HostTensor &t = outputs[i];
    size_t bytes;
    // Dynamic dimensions: the sizes these inputs give them.
    const int32_t rank = fp8rt_model_output_rank(m, i);
    const int64_t *shape = fp8rt_model_output_shape(m, i);
    std::vector<int64_t> resolved;
    if (fp8rt_model_output_shape_for && rank > 0 && shape &&
        std::any_of(shape, shape + rank, [](int64_t d) { return d == -1; })) {
      resolved.resize(size_t(rank));
      if (fp8rt_model_output_shape_for(m, inDesc.data(), nin, i,
                                       resolved.data()) != FP8RT_OK) {
        fail(std::string("output ") + std::to_string(i) + ": " +
             fp8rt_model_last_error(m));
        return 1;
      }
      shape = resolved.data();
    }
    if (!signatureOf("output", i, fp8rt_model_output_name(m, i),
                     fp8rt_model_output_dtype(m, i), rank, shape, t, bytes,
                     error)) {
      fail(error);
      return 1;
    }
    const std::string who =
        "output " + std::to_string(i) + " ('" + t.name + "'): shape " +
        shapeString(t.shape.data(), t.shape.size()) + " of " +
        dtypeName(t.dtype) + " needs " + std::to_string(bytes) + " bytes";
    if ((memory && bytes > memory) || bytes > t.bytes.max_size()) {
      fail(who + ", more than this machine's memory (" +
           std::to_string(memory) + " bytes)");
      return 1;
    }
    try {
      t.bytes.assign(bytes, 0);
    } catch (const std::bad_alloc &) {
      fail(who + ": cannot allocate them (out of memory)");
      return 1;
    }
    outDesc[i] = {t.bytes.data(), t.dtype, int32_t(t.shape.size()),
                  t.shape.data()};
  }

  // References: read (and checked) before the run; a malformed one is an
  // error now, not after a long run.
  std::vector<HostTensor> refs(static_cast<size_t>(nout));
  std::vector<bool> haveRef(static_cast<size_t>(nout), false);
  for (int i = 0; o.data.size() && i < nout; ++i) {
    // output_N.pb, else <name>.npy or output_N.npy.
    std::string path;
    for (const std::string &candidate :
         {dataFile("output", i), npyFile(o.data, "output", i, outputs[i].name),
          o.data + "/output_" + std::to_string(i) + ".npy"})
      if (lexists(candidate)) {
        path = candidate;
        break;
      }
    if (path.empty())
      continue;
    const std::string who = "reference output " + std::to_string(i) + " ('" +
                            outputs[i].name + "'): ";
    std::vector<uint8_t> file;
    if (!readRegularFile(path, file, error)) {
      fail(who + error);
      return 1;
    }
    const bool npy = hasNpyMagic(file) || endsWith(path, ".npy");
    if (npy ? !parseNpy(path, file, refs[i], error)
            : !readTensorProto(path, refs[i], error)) {
      fail(who + error);
      return 1;
    }
    if (npy) {
      usedNpy.insert(path);
      // bfloat16 and FP8 references hold their encodings.
      const int32_t od = outputs[i].dtype, rd = refs[i].dtype;
      if ((od == FP8RT_BFLOAT16 && rd == FP8RT_UINT16) ||
          ((od == FP8RT_FLOAT8E4M3FN || od == FP8RT_FLOAT8E5M2 ||
            od == FP8RT_FLOAT8E8M0) &&
           rd == FP8RT_UINT8))
        refs[i].dtype = od;
    }
    haveRef[i] = true;
    guard.add(path, "reference output " + std::to_string(i));
  }
  if (!o.data.empty() && lexists(dataFile("output", nout)))
    warn(dataFile("output", nout) + " ignored: the model has " +
         std::to_string(nout) + " outputs");
  // A .npy file in --data that names no tensor is most likely a typo.
  if (!o.data.empty()) {
    if (DIR *dir = ::opendir(o.data.c_str())) {
      std::vector<std::string> unused;
      while (struct dirent *e = ::readdir(dir)) {
        const std::string f = e->d_name;
        if (endsWith(f, ".npy") && !usedNpy.count(o.data + "/" + f))
          unused.push_back(f);
      }
      ::closedir(dir);
      std::sort(unused.begin(), unused.end());
      std::vector<std::string> outputNames;
      for (const HostTensor &t : outputs)
        outputNames.push_back(t.name);
      for (const std::string &f : unused)
        warn(o.data + "/" + f + " ignored: it names no input or output of the "
             "model (inputs: " + nameList(inputNames) + "; outputs: " +
             nameList(outputNames) + ")");
    }
  }

  // What --save writes: the outputs, and the inputs --random made.
  struct SaveFile {
    std::string path, what;
    const HostTensor *tensor;
  };
  std::vector<SaveFile> saveFiles;
  if (!o.save.empty()) {
    const bool asNpy = o.saveFormat == "npy";
    auto savePath = [&](const char *kind, int i, const std::string &name) {
      return asNpy ? npyFile(o.save, kind, i, name)
                   : o.save + "/" + kind + "_" + std::to_string(i) + ".pb";
    };
    for (int i = 0; i < nout; ++i)
      saveFiles.push_back({savePath("output", i, outputs[i].name),
                           "output " + std::to_string(i) + "'s file",
                           &outputs[i]});
    for (int i = 0; i < nin; ++i)
      if (generated[i])
        saveFiles.push_back({savePath("input", i, inputNames[i]),
                             "random input " + std::to_string(i) + "'s file",
                             &inputs[i]});
  }

  // Nothing written over what is read, nor one written file over another.
  if (!o.saveState.empty() &&
      !guard.check(o.saveState, "--save-state", error, o.loadState)) {
    fail(error);
    return 1;
  }
  Guard written = guard;
  if (!o.saveState.empty())
    written.add(o.saveState, "the --save-state file");
  {
    Guard planned = written;
    for (const SaveFile &f : saveFiles) {
      if (!planned.check(f.path, "--save", error)) {
        fail(error);
        return 1;
      }
      planned.add(f.path, f.what);
    }
  }

  if (!o.loadState.empty()) {
    if (fp8rt_model_load_state(m, o.loadState.c_str()) != FP8RT_OK) {
      fail(lastError());
      return 1;
    }
    std::printf("loaded %d state tensors from %s\n",
                fp8rt_model_num_state_tensors(m), o.loadState.c_str());
  }

  std::vector<double> times;
  for (long r = 0; r < o.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (fp8rt_model_run(m, inDesc.data(), nin, outDesc.data(), nout) !=
        FP8RT_OK) {
      fail(lastError());
      return 1;
    }
    times.push_back(std::chrono::duration<double, std::milli>(
                        std::chrono::steady_clock::now() - start)
                        .count());
  }
  // Host wall time per run, the copies in and out included; the median
  // is what benchmarks compare (bench/gpu_bench.py).
  std::sort(times.begin(), times.end());
  std::printf("%s: %d inputs, %d outputs, run %.3f ms (best of %ld; median "
              "%.3f ms)\n",
              o.model.c_str(), nin, nout, times.front(), o.repeat,
              times[times.size() / 2]);

  if (!o.saveState.empty()) {
    if (!guard.check(saveStatePath, "--save-state", error, o.loadState)) {
      fail(error);
      return 1;
    }
    if (fp8rt_model_save_state(m, saveStatePath.c_str()) != FP8RT_OK) {
      fail(lastError());
      return 1;
    }
    std::printf("saved %d state tensors to %s\n",
                fp8rt_model_num_state_tensors(m), o.saveState.c_str());
  }

  if (!o.save.empty()) {
    if (::mkdir(o.save.c_str(), 0755) != 0 && errno != EEXIST) {
      fail("--save " + o.save + ": cannot create it: " + errnoText());
      return 1;
    }
    struct stat st;
    if (::stat(o.save.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      fail("--save " + o.save + " is not a directory");
      return 1;
    }
    for (const SaveFile &f : saveFiles) {
      if (!written.check(f.path, "--save", error) ||
          !(o.saveFormat == "npy" ? writeNpy(f.path, *f.tensor, error)
                                  : writeTensorProto(f.path, *f.tensor, error))) {
        fail(error);
        return 1;
      }
      written.add(f.path, f.what);
    }
    const size_t randomSaved = saveFiles.size() - size_t(nout);
    std::printf("saved %d outputs%s to %s\n", nout,
                randomSaved ? (" and " + std::to_string(randomSaved) +
                               " random inputs")
                                  .c_str()
                            : "",
                o.save.c_str());
  }

  bool failed = false, compared = false;
  std::printf("  %-24s %-14s %13s %13s %12s\n", "output", "shape",
              "max abs err", "rel L2 err", "cosine");
  for (int i = 0; i < nout; ++i) {
    if (!haveRef[i])
      continue;
    compared = true;
    const HostTensor &ref = refs[i], &out = outputs[i];
    const std::string &name = out.name;
    const std::string shape = shapeString(out.shape.data(), out.shape.size());
    if (ref.shape != out.shape) {
      std::printf("  %-24s %-14s reference shape %s differs  FAIL\n",
                  name.c_str(), shape.c_str(),
                  shapeString(ref.shape.data(), ref.shape.size()).c_str());
      failed = true;
      continue;
    }
    const bool identical = ref.dtype == out.dtype && ref.bytes == out.bytes;
    std::vector<double> got, want;
    if (!toDoubles(out, got) || !toDoubles(ref, want)) {
      if (ref.dtype != out.dtype)
        std::printf("  %-24s %-14s reference dtype %s differs from %s  FAIL\n",
                    name.c_str(), shape.c_str(), dtypeName(ref.dtype).c_str(),
                    dtypeName(out.dtype).c_str());
      else
        std::printf("  %-24s %-14s %s\n", name.c_str(), shape.c_str(),
                    identical ? "bit-identical  ok" : "bytes differ  FAIL");
      failed |= !identical;
      continue;
    }
    const Comparison c = compare(got, want);
    const bool ok = identical || (!c.haveMismatch &&
                                  (c.rel <= o.rtol || c.maxAbs <= o.atol));
    failed |= !ok;
    std::printf("  %-24s %-14s %13.3e %13.3e %12.8f  %s", name.c_str(),
                shape.c_str(), c.maxAbs, c.rel, c.cosine, ok ? "ok" : "FAIL");
    if (o.top1 && !ref.shape.empty()) {
      // Agreement of the arg max over the last axis (next-token choice of
      // a language model's logits).
      const size_t row = size_t(ref.shape.back());
      size_t rows = row ? got.size() / row : 0, agree = 0;
      for (size_t r = 0; r < rows; ++r) {
        size_t ga = 0, wa = 0;
        for (size_t k = 1; k < row; ++k) {
          if (got[r * row + k] > got[r * row + ga])
            ga = k;
          if (want[r * row + k] > want[r * row + wa])
            wa = k;
        }
        agree += ga == wa;
      }
      std::printf("  top1 %zu/%zu", agree, rows);
    }
    if (c.refNonFinite || c.extraNonFinite) {
      std::printf("  non-finite: %zu/%zu match", c.matched, c.refNonFinite);
      if (c.extraNonFinite)
        std::printf(", %zu where the reference is finite", c.extraNonFinite);
      if (c.haveMismatch)
        std::printf("; first mismatch at %zu: reference %s, output %s",
                    c.firstMismatch, valueText(want[c.firstMismatch]).c_str(),
                    valueText(got[c.firstMismatch]).c_str());
    }
    std::printf("\n");
  }
  if (!compared && !o.data.empty())
    std::printf("  (no output_N.pb in %s: nothing compared)\n", o.data.c_str());
  else if (!compared)
    std::printf("  (no reference outputs without --data: nothing compared)\n");
  modelGuard.reset();
  dlclose(lib);
  if (std::fflush(stdout) != 0) {
    fail("cannot write the report to stdout: " + errnoText());
    return 1;
  }
  return failed ? 1 : 0;
}
} // namespace

int main(int argc, char **argv) {
  // Whatever goes wrong is a message and exit 1, never an uncaught
  // exception (an abort).
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    fail("out of memory");
  } catch (const std::exception &e) {
    fail(std::string("internal error: ") + e.what());
  }
  return 1;
}
