//===- fp8-run.cpp - Run a compiled model on ONNX test data ---------------===//
//
// Part of fp8-opt. Loads a model library produced by fp8-compile through
// its C ABI (fp8rt.h), feeds it DIR/input_N.pb, and, where DIR/output_N.pb
// exist, reports per output the max abs error, relative L2 error and cosine
// similarity; exits 1 beyond tolerance. Needs neither MLIR nor protobuf.
//
//   fp8-run model.so --data DIR [--device=cpu|cuda] [--rtol R] [--atol A]
//                    [--save OUTDIR] [--repeat N] [--top1]
//                    [--load-state FILE] [--save-state FILE]
//
// --load-state restores a model's persistent state (delayed scaling's amax
// histories) before the runs, --save-state writes it after them.
//
// --top1 adds, per output, how many rows agree on the arg max of the last
// axis (a language model's next-token choice).
//
// An output passes when its relative L2 error is <= rtol (default 1e-5) or
// its max abs error is <= atol (default 0; for outputs whose reference is 0).
//
//===----------------------------------------------------------------------===//

#include "TensorProto.h"

#include "fp8rt/fp8rt.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace fp8rt;

namespace {
struct Options {
  std::string model, data, save, device = "cpu", loadState, saveState;
  bool top1 = false;
  double rtol = 1e-5, atol = 0.0;
  int repeat = 1;
};

[[noreturn]] void usage(const char *msg) {
  if (msg)
    std::fprintf(stderr, "fp8-run: %s\n", msg);
  std::fprintf(stderr,
               "usage: fp8-run model.so --data DIR [--device=cpu|cuda] [--rtol R] "
               "[--atol A] [--save OUTDIR] [--repeat N] [--top1] [--load-state F] "
               "[--save-state F]\n");
  std::exit(2);
}

bool exists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> std::string {
      std::string f = flag;
      if (a.rfind(f + "=", 0) == 0)
        return a.substr(f.size() + 1);
      if (a == f) {
        if (i + 1 >= argc)
          usage((f + " needs a value").c_str());
        return argv[++i];
      }
      return std::string();
    };
    auto is = [&](const char *flag) {
      return a == flag || a.rfind(std::string(flag) + "=", 0) == 0;
    };
    char *end = nullptr;
    if (is("--data"))
      o.data = value("--data");
    else if (is("--save-state"))
      o.saveState = value("--save-state");
    else if (is("--load-state"))
      o.loadState = value("--load-state");
    else if (is("--save"))
      o.save = value("--save");
    else if (is("--device"))
      o.device = value("--device");
    else if (is("--rtol")) {
      std::string v = value("--rtol");
      o.rtol = std::strtod(v.c_str(), &end);
      if (*end)
        usage("--rtol takes a number");
    } else if (is("--atol")) {
      std::string v = value("--atol");
      o.atol = std::strtod(v.c_str(), &end);
      if (*end)
        usage("--atol takes a number");
    } else if (is("--repeat")) {
      std::string v = value("--repeat");
      o.repeat = int(std::strtol(v.c_str(), &end, 10));
      if (*end || o.repeat < 1)
        usage("--repeat takes a positive integer");
    } else if (a == "--top1")
      o.top1 = true;
    else if (a == "-h" || a == "--help")
      usage(nullptr);
    else if (!a.empty() && a[0] == '-')
      usage(("unknown option " + a).c_str());
    else if (o.model.empty())
      o.model = a;
    else
      usage("more than one model given");
  }
  if (o.model.empty())
    usage("no model library given");
  if (o.data.empty())
    usage("--data DIR is required");
  if (o.device != "cpu" && o.device != "cuda")
    usage(("--device=" + o.device + ": expected cpu or cuda").c_str());
  return o;
}

template <typename F> F symbol(void *lib, const char *name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

std::string shapeStr(const int64_t *shape, int rank) {
  std::string s;
  for (int d = 0; d < rank; ++d)
    s += (d ? "x" : "") + std::to_string(shape[d]);
  return rank ? s : "scalar";
}
} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  std::string libPath = o.model;
  if (libPath.find('/') == std::string::npos)
    libPath = "./" + libPath;
  void *lib = dlopen(libPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "fp8-run: cannot load %s: %s\n", o.model.c_str(),
                 dlerror());
    return 1;
  }
#define FP8RT_SYM(name) auto name = symbol<decltype(&::name)>(lib, #name)
  FP8RT_SYM(fp8rt_abi_version);
  FP8RT_SYM(fp8rt_model_create);
  FP8RT_SYM(fp8rt_model_destroy);
  FP8RT_SYM(fp8rt_model_num_inputs);
  FP8RT_SYM(fp8rt_model_num_outputs);
  FP8RT_SYM(fp8rt_model_input_name);
  FP8RT_SYM(fp8rt_model_output_name);
  FP8RT_SYM(fp8rt_model_output_dtype);
  FP8RT_SYM(fp8rt_model_output_rank);
  FP8RT_SYM(fp8rt_model_output_shape);
  FP8RT_SYM(fp8rt_model_run);
  FP8RT_SYM(fp8rt_model_last_error);
  FP8RT_SYM(fp8rt_dtype_size);
  FP8RT_SYM(fp8rt_model_save_state);
  FP8RT_SYM(fp8rt_model_load_state);
  FP8RT_SYM(fp8rt_model_num_state_tensors);
  FP8RT_SYM(fp8rt_model_device);
#undef FP8RT_SYM
  // Libraries from before fp8rt_model_device existed are CPU libraries.
  std::string built = fp8rt_model_device ? fp8rt_model_device() : "cpu";
  if (built != o.device) {
    std::fprintf(stderr,
                 "fp8-run: %s was compiled for %s (fp8-compile --target=%s); "
                 "run it with --device=%s\n",
                 o.model.c_str(), built.c_str(),
                 built == "cuda" ? "sm_90a" : "cpu", built.c_str());
    return 1;
  }
  if (!fp8rt_abi_version || !fp8rt_model_create || !fp8rt_model_run ||
      !fp8rt_model_output_shape || !fp8rt_dtype_size ||
      !fp8rt_model_last_error || !fp8rt_model_save_state ||
      !fp8rt_model_load_state || !fp8rt_model_num_state_tensors) {
    std::fprintf(stderr, "fp8-run: %s is not an fp8-compile model library\n",
                 o.model.c_str());
    return 1;
  }
  if (fp8rt_abi_version() != FP8RT_ABI_VERSION) {
    std::fprintf(stderr, "fp8-run: %s has ABI version %d, expected %d\n",
                 o.model.c_str(), fp8rt_abi_version(), FP8RT_ABI_VERSION);
    return 1;
  }
  const char *createError = nullptr;
  fp8rt_model *m = fp8rt_model_create(&createError);
  if (!m) {
    std::fprintf(stderr, "fp8-run: %s\n", createError ? createError : "?");
    return 1;
  }

  const int nin = fp8rt_model_num_inputs(m), nout = fp8rt_model_num_outputs(m);
  std::vector<HostTensor> inputs(nin), outputs(nout);
  std::vector<fp8rt_tensor> inDesc(nin), outDesc(nout);
  std::string error;
  for (int i = 0; i < nin; ++i) {
    std::string path = o.data + "/input_" + std::to_string(i) + ".pb";
    if (!readTensorProto(path, inputs[i], error)) {
      std::fprintf(stderr, "fp8-run: input %d ('%s'): %s\n", i,
                   fp8rt_model_input_name(m, i), error.c_str());
      return 1;
    }
    inDesc[i] = {inputs[i].bytes.data(), inputs[i].dtype,
                 int32_t(inputs[i].shape.size()), inputs[i].shape.data()};
  }
  for (int i = 0; i < nout; ++i) {
    HostTensor &t = outputs[i];
    t.name = fp8rt_model_output_name(m, i);
    t.dtype = fp8rt_model_output_dtype(m, i);
    const int rank = fp8rt_model_output_rank(m, i);
    const int64_t *shape = fp8rt_model_output_shape(m, i);
    t.shape.assign(shape, shape + rank);
    t.bytes.assign(size_t(t.numElements()) * fp8rt_dtype_size(t.dtype), 0);
    outDesc[i] = {t.bytes.data(), t.dtype, rank, t.shape.data()};
  }

  if (!o.loadState.empty()) {
    if (fp8rt_model_load_state(m, o.loadState.c_str()) != FP8RT_OK) {
      std::fprintf(stderr, "fp8-run: %s\n", fp8rt_model_last_error(m));
      return 1;
    }
    std::printf("loaded %d state tensors from %s\n",
                fp8rt_model_num_state_tensors(m), o.loadState.c_str());
  }

  double best = 1e300;
  for (int r = 0; r < o.repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (fp8rt_model_run(m, inDesc.data(), nin, outDesc.data(), nout) !=
        FP8RT_OK) {
      std::fprintf(stderr, "fp8-run: %s\n", fp8rt_model_last_error(m));
      return 1;
    }
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();
    best = std::min(best, ms);
  }
  std::printf("%s: %d inputs, %d outputs, run %.3f ms (best of %d)\n",
              o.model.c_str(), nin, nout, best, o.repeat);

  if (!o.saveState.empty()) {
    if (fp8rt_model_save_state(m, o.saveState.c_str()) != FP8RT_OK) {
      std::fprintf(stderr, "fp8-run: %s\n", fp8rt_model_last_error(m));
      return 1;
    }
    std::printf("saved %d state tensors to %s\n",
                fp8rt_model_num_state_tensors(m), o.saveState.c_str());
  }

  if (!o.save.empty()) {
    ::mkdir(o.save.c_str(), 0755);
    for (int i = 0; i < nout; ++i) {
      std::string path = o.save + "/output_" + std::to_string(i) + ".pb";
      if (!writeTensorProto(path, outputs[i], error)) {
        std::fprintf(stderr, "fp8-run: %s\n", error.c_str());
        return 1;
      }
    }
    std::printf("saved %d outputs to %s\n", nout, o.save.c_str());
  }

  bool failed = false, compared = false;
  std::printf("  %-24s %-14s %13s %13s %12s\n", "output", "shape",
              "max abs err", "rel L2 err", "cosine");
  for (int i = 0; i < nout; ++i) {
    std::string path = o.data + "/output_" + std::to_string(i) + ".pb";
    if (!exists(path))
      continue;
    compared = true;
    HostTensor ref;
    if (!readTensorProto(path, ref, error)) {
      std::fprintf(stderr, "fp8-run: %s\n", error.c_str());
      return 1;
    }
    const std::string name = outputs[i].name;
    const std::string shape =
        shapeStr(outputs[i].shape.data(), int(outputs[i].shape.size()));
    if (ref.shape != outputs[i].shape) {
      std::printf("  %-24s %-14s reference shape %s differs  FAIL\n",
                  name.c_str(), shape.c_str(),
                  shapeStr(ref.shape.data(), int(ref.shape.size())).c_str());
      failed = true;
      continue;
    }
    std::vector<double> got, want;
    if (!toDoubles(outputs[i], got) || !toDoubles(ref, want)) {
      bool same = outputs[i].bytes == ref.bytes;
      std::printf("  %-24s %-14s %s\n", name.c_str(), shape.c_str(),
                  same ? "bit-identical  ok" : "bytes differ  FAIL");
      failed |= !same;
      continue;
    }
    double maxAbs = 0, diff2 = 0, ref2 = 0, got2 = 0, dot = 0;
    bool finite = true;
    for (size_t k = 0; k < got.size(); ++k) {
      const double d = got[k] - want[k];
      if (std::isnan(d) && !(std::isnan(got[k]) && std::isnan(want[k])))
        finite = false;
      if (!std::isnan(d)) {
        maxAbs = std::max(maxAbs, std::fabs(d));
        diff2 += d * d;
      }
      ref2 += want[k] * want[k];
      got2 += got[k] * got[k];
      dot += got[k] * want[k];
    }
    const double rel = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
    const double cosine =
        (ref2 > 0 && got2 > 0) ? dot / std::sqrt(ref2 * got2) : 1.0;
    const bool ok = finite && (rel <= o.rtol || maxAbs <= o.atol);
    failed |= !ok;
    std::printf("  %-24s %-14s %13.3e %13.3e %12.8f  %s", name.c_str(),
                shape.c_str(), maxAbs, rel, cosine, ok ? "ok" : "FAIL");
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
    std::printf("\n");
  }
  if (!compared)
    std::printf("  (no output_N.pb in %s: nothing compared)\n", o.data.c_str());
  fp8rt_model_destroy(m);
  dlclose(lib);
  return failed ? 1 : 0;
}
