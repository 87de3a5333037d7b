//===- gpu_runtime_test.cpp - fp8rt_cuda checks, with and without a GPU ---===//
//
// Part of fp8-opt. Linked with kernels.o (test/GPU/kernels.mlir lowered by
// MLIR 22 to host code + an sm_90a cubin) and libfp8rt_cuda.a, so the kernels
// run through exactly the mgpu* calls MLIR generates.
//
//   gpu_runtime_test DIR              on a GPU: every check (scripts/gpu-check)
//   gpu_runtime_test --no-driver DIR  no usable driver (the ctest, with the
//                                     toolkit's stub libcuda): clean errors
//   gpu_runtime_test --bad-device DIR FP8RT_CUDA_DEVICE names a missing GPU
//
// DIR holds the build's artifacts (fp8_kernels.cubin, fallback.sm90.ptx,
// fallback.sm100a.cubin). Prints one "PASS|FAIL <check> <detail>" line per
// check; exits 0 iff all pass.
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Numerics.h"
#include "fp8rt/fp8rt_cuda.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace numerics = mlir::fp8::numerics;

template <typename T, int N> struct MemRef {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};
template <typename T> MemRef<T, 1> view(std::vector<T> &v) {
  return {v.data(), v.data(), 0, {(int64_t)v.size()}, {1}};
}

// Host functions of kernels.mlir (llvm.emit_c_interface).
extern "C" {
void _mlir_ciface_run_cvt(MemRef<float, 1> *in, MemRef<int16_t, 1> *out,
                          MemRef<uint16_t, 1> *back);
void _mlir_ciface_run_axpy(float alpha, MemRef<float, 1> *x,
                           MemRef<float, 1> *y, MemRef<float, 1> *out,
                           float fill, MemRef<float, 1> *filled);
void _mlir_ciface_run_reverse(MemRef<float, 1> *in, MemRef<float, 1> *out);
}

namespace {

int failures = 0;

void report(bool ok, const char *name, const std::string &detail) {
  std::printf("%s %s %s\n", ok ? "PASS" : "FAIL", name, detail.c_str());
  std::fflush(stdout);
  if (!ok)
    ++failures;
}

bool contains(const std::string &s, const char *needle) {
  return s.find(needle) != std::string::npos;
}

std::string lastError() { return fp8rt_cuda_last_error(); }

std::string readFile(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

float halfToFloat(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp((float)mant, -24);
  else if (exp == 31)
    v = mant ? std::numeric_limits<float>::quiet_NaN()
             : std::numeric_limits<float>::infinity();
  else
    v = std::ldexp((float)(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

std::string hex(unsigned v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%02x", v);
  return b;
}

// Deterministic inputs for the conversion: specials, exact ties, every
// E4M3 value and its neighbours, and a log-uniform sweep, both signs.
std::vector<float> conversionInputs(size_t n) {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          448.0f,
                          -448.0f,
                          464.0f, // tie between 448 and 480: satfinite -> 448
                          480.0f,
                          500.0f,
                          1e6f,
                          -1e6f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          std::ldexp(1.0f, -9),  // smallest subnormal
                          std::ldexp(1.0f, -10), // tie to zero
                          std::ldexp(3.0f, -11), // tie, rounds up
                          std::ldexp(1.0f, -6),  // smallest normal
                          std::numeric_limits<float>::denorm_min(),
                          1.0625f, // tie between 1 and 1.125 -> 1
                          1.1875f, // tie between 1.125 and 1.25 -> 1.25
                          std::nextafter(1.0625f, 2.0f)};
  for (int bits = 0; bits < 256 && v.size() + 3 <= n; ++bits) {
    float x = numerics::fp8ToFloat((uint8_t)bits, numerics::Fmt::E4M3);
    if (std::isnan(x))
      continue;
    v.push_back(x);
    v.push_back(std::nextafter(x, INFINITY));
    v.push_back(std::nextafter(x, -INFINITY));
  }
  uint64_t state = 0x9E3779B97F4A7C15ull;
  while (v.size() < n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(state >> 11) / 9007199254740992.0; // [0,1)
    float mag = (float)std::exp2(-14.0 + 25.0 * u);        // 2^-14 .. 2^11
    v.push_back((state >> 7) & 1 ? -mag : mag);
  }
  v.resize(n);
  return v;
}

void checkConversion() {
  std::vector<float> in = conversionInputs(4096);
  std::vector<int16_t> out(2048, 0);
  std::vector<uint16_t> back(4096, 0);
  auto mi = view(in);
  auto mo = view(out);
  auto mb = view(back);
  fp8rt_cuda_clear_error();
  _mlir_ciface_run_cvt(&mi, &mo, &mb);
  if (int32_t s = fp8rt_cuda_status()) {
    report(false, "cvt_e4m3", "runtime error " + std::to_string(s) + ": " +
                                  lastError());
    return;
  }
  int bad = 0, badBack = 0;
  std::string first;
  for (size_t p = 0; p < 2048; ++p) {
    uint16_t q = (uint16_t)out[p];
    uint8_t got[2] = {(uint8_t)(q >> 8), (uint8_t)(q & 0xff)};
    for (int k = 0; k < 2; ++k) {
      float x = in[2 * p + k];
      uint8_t want = numerics::castToFP8(x, numerics::Fmt::E4M3);
      if (got[k] != want) {
        if (bad++ < 4) {
          char b[128];
          std::snprintf(b, sizeof b, " [%a: gpu %s cpu %s]", x,
                        hex(got[k]).c_str(), hex(want).c_str());
          first += b;
        }
      }
      float dec = halfToFloat(back[2 * p + k]);
      float ref = numerics::fp8ToFloat(got[k], numerics::Fmt::E4M3);
      bool same = (std::isnan(dec) && std::isnan(ref)) ||
                  (dec == ref && std::signbit(dec) == std::signbit(ref));
      if (!same && badBack++ < 2) {
        char b[128];
        std::snprintf(b, sizeof b, " [decode %s: gpu %g cpu %g]",
                      hex(got[k]).c_str(), dec, ref);
        first += b;
      }
    }
  }
  report(bad == 0 && badBack == 0, "cvt_e4m3",
         "4096 values vs numerics::castToFP8: " + std::to_string(bad) +
             " mismatches; f16x2 decode vs fp8ToFloat: " +
             std::to_string(badBack) + " mismatches" + first);
}

void checkAxpy() {
  std::vector<float> x(4096), y(4096), out(4096, -1.0f), filled(4096, 0.0f);
  for (int i = 0; i < 4096; ++i) {
    x[i] = 0.25f * (float)(i % 97) - 7.0f;
    y[i] = std::sin((float)i);
  }
  float alpha = 1.7f, fill = 3.5f;
  auto mx = view(x), my = view(y), mo = view(out), mf = view(filled);
  fp8rt_cuda_clear_error();
  _mlir_ciface_run_axpy(alpha, &mx, &my, &mo, fill, &mf);
  if (int32_t s = fp8rt_cuda_status()) {
    report(false, "axpy_f32", "runtime error " + std::to_string(s) + ": " +
                                  lastError());
    return;
  }
  int bad = 0, badFill = 0;
  for (int i = 0; i < 4096; ++i) {
    float mulAdd = alpha * x[i] + y[i];
    volatile float prod = alpha * x[i];
    float separate = prod + y[i];
    float fused = std::fma(alpha, x[i], y[i]);
    if (out[i] != mulAdd && out[i] != separate && out[i] != fused)
      ++bad;
    if (filled[i] != fill)
      ++badFill;
  }
  report(bad == 0, "axpy_f32",
         "4096 values (fused or unfused): " + std::to_string(bad) +
             " mismatches; host_register/unregister of x ok");
  report(badFill == 0, "memset32",
         "gpu.memset of 4096 f32 to 3.5: " + std::to_string(badFill) +
             " wrong");
}

void checkReverse() {
  std::vector<float> in(32768), out(32768, 0.0f);
  for (int i = 0; i < 32768; ++i)
    in[i] = (float)i * 0.5f;
  auto mi = view(in), mo = view(out);
  fp8rt_cuda_clear_error();
  _mlir_ciface_run_reverse(&mi, &mo);
  if (int32_t s = fp8rt_cuda_status()) {
    report(false, "dyn_smem_128k",
           "runtime error " + std::to_string(s) + ": " + lastError());
    return;
  }
  int bad = 0;
  for (int i = 0; i < 32768; ++i)
    bad += out[i] != in[32767 - i];
  report(bad == 0, "dyn_smem_128k",
         "1 block x 1024 threads, 131072 B dynamic shared memory: " +
             std::to_string(bad) + " wrong");
}

// iota_plus(out, value): out[i] = value + i for 256 threads.
bool runIota(fp8rt_cu_function f, const char *name, bool cluster) {
  fp8rt_cuda_clear_error();
  fp8rt_cu_stream s = mgpuStreamCreate();
  void *d = mgpuMemAlloc(256 * sizeof(float), s, 0);
  // The kernel takes a memref<256xf32> (5 words) and an f32.
  void *alloc = d, *aligned = d;
  int64_t offset = 0, size = 256, stride = 1;
  float value = 10.0f;
  void *params[] = {&alloc, &aligned, &offset, &size, &stride, &value};
  if (cluster)
    mgpuLaunchClusterKernel(f, 2, 1, 1, 2, 1, 1, 256, 1, 1, 0, s, params,
                            nullptr);
  else
    mgpuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, s, params, nullptr, 6);
  std::vector<float> host(256, -1.0f);
  mgpuMemcpy(host.data(), d, 256 * sizeof(float), s);
  mgpuMemFree(d, s);
  mgpuStreamSynchronize(s);
  mgpuStreamDestroy(s);
  int32_t st = fp8rt_cuda_status();
  int bad = 0;
  for (int i = 0; i < 256; ++i)
    bad += host[i] != 10.0f + (float)i;
  std::string detail = st ? "runtime error: " + lastError()
                          : std::to_string(bad) + " of 256 wrong";
  report(st == 0 && bad == 0, name, detail);
  return st == 0 && bad == 0;
}

void checkModules(const std::string &dir) {
  std::string cubin = readFile(dir + "/fp8_kernels.cubin");
  std::string ptx = readFile(dir + "/fallback.sm90.ptx");
  std::string sm100 = readFile(dir + "/fallback.sm100a.cubin");
  if (cubin.empty() || ptx.empty() || sm100.empty()) {
    report(false, "artifacts", "missing files in " + dir);
    return;
  }

  // The same cubin as the constructor loaded, through mgpuModuleLoad.
  fp8rt_cuda_clear_error();
  fp8rt_cu_module m = mgpuModuleLoad(cubin.data(), (int64_t)cubin.size());
  fp8rt_cu_function rev = m ? mgpuModuleGetFunction(m, "reverse_smem") : nullptr;
  report(m && rev && fp8rt_cuda_status() == 0, "module_load_cubin",
         m && rev ? "fp8_kernels.cubin loaded, reverse_smem found"
                  : lastError());
  if (rev) {
    // 300000 bytes exceed the H200's 227 KiB opt-in: a clean error naming
    // the kernel, no launch.
    fp8rt_cuda_clear_error();
    mgpuLaunchKernel(rev, 1, 1, 1, 1024, 1, 1, 300000, nullptr, nullptr,
                     nullptr, 0);
    int32_t s = fp8rt_cuda_status();
    std::string msg = lastError();
    report(s != 0 && contains(msg, "reverse_smem") && contains(msg, "300000"),
           "smem_too_large_error", "status " + std::to_string(s) + ": " + msg);
  }
  if (m) {
    fp8rt_cuda_clear_error();
    fp8rt_cu_function none = mgpuModuleGetFunction(m, "no_such_kernel");
    int32_t s = fp8rt_cuda_status();
    std::string msg = lastError();
    report(!none && s != 0 && contains(msg, "no_such_kernel") &&
               contains(msg, "CUDA_ERROR_NOT_FOUND"),
           "missing_kernel_error", msg);
    fp8rt_cuda_clear_error();
    mgpuModuleUnload(m);
    int32_t us = fp8rt_cuda_status();
    report(us == 0, "module_unload", us ? lastError() : "ok");
  }

  // PTX through the JIT.
  fp8rt_cuda_clear_error();
  fp8rt_cu_module jm = mgpuModuleLoadJIT(&ptx[0], 2);
  fp8rt_cu_function jf = jm ? mgpuModuleGetFunction(jm, "iota_plus") : nullptr;
  if (!jf)
    report(false, "ptx_jit", lastError());
  else
    runIota(jf, "ptx_jit", false);
  if (jf)
    runIota(jf, "cluster_launch", true);

  // A cubin for another architecture: a clean error naming the device.
  fp8rt_cuda_clear_error();
  fp8rt_cu_module wm = mgpuModuleLoad(sm100.data(), (int64_t)sm100.size());
  int32_t ws = fp8rt_cuda_status();
  std::string wmsg = lastError();
  report(!wm && ws != 0 && contains(wmsg, "sm_9"), "wrong_arch_error",
         "status " + std::to_string(ws) + ": " + wmsg);
  if (wm)
    mgpuModuleUnload(wm);

  // ... and the same cubin with its PTX fallback.
  fp8rt_cuda_clear_error();
  fp8rt_cu_module fm = fp8rt_cuda_module_load(sm100.data(), sm100.size(),
                                              ptx.c_str(), "fallback");
  int32_t fs = fp8rt_cuda_status();
  fp8rt_cu_function ff = fm ? mgpuModuleGetFunction(fm, "iota_plus") : nullptr;
  if (!fm || fs != 0 || !ff)
    report(false, "ptx_fallback", "status " + std::to_string(fs) + ": " +
                                      lastError());
  else
    runIota(ff, "ptx_fallback", false);
}

/// fp8rt_cuda_copy_many: three host->device copies (one empty), back, one
/// synchronize each way. (A failing copy cannot be provoked safely here:
/// with unified addressing a bad pointer is taken for host memory; the
/// error path is checked without a driver, copy_many_error.)
void checkCopyMany() {
  fp8rt_cuda_clear_error();
  std::vector<float> a(1000), b(37), back(1000), back2(37);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(i) * 0.5f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = -float(i);
  void *da = fp8rt_cuda_alloc(a.size() * 4), *db = fp8rt_cuda_alloc(b.size() * 4);
  void *dst[3] = {da, nullptr, db};
  const void *src[3] = {a.data(), nullptr, b.data()};
  size_t bytes[3] = {a.size() * 4, 0, b.size() * 4};
  int32_t failed = -1;
  int32_t s1 = fp8rt_cuda_copy_many(dst, src, bytes, 3, &failed);
  void *hdst[3] = {back.data(), nullptr, back2.data()};
  const void *hsrc[3] = {da, nullptr, db};
  int32_t s2 = fp8rt_cuda_copy_many(hdst, hsrc, bytes, 3, &failed);
  bool same = back == a && back2 == b;
  report(s1 == 0 && s2 == 0 && same, "copy_many",
         s1 || s2 ? lastError() : "3 copies (one empty) there and back, same bytes");
  fp8rt_cuda_clear_error();
  fp8rt_cuda_free(da);
  fp8rt_cuda_free(db);
}

void checkEventsAndTma() {
  fp8rt_cuda_clear_error();
  fp8rt_cu_stream a = mgpuStreamCreate(), b = mgpuStreamCreate();
  fp8rt_cu_event e = mgpuEventCreate();
  mgpuEventRecord(e, a);
  mgpuStreamWaitEvent(b, e);
  mgpuEventSynchronize(e);
  mgpuEventDestroy(e);
  mgpuStreamSynchronize(b);
  void *managed = mgpuMemAlloc(4096, a, 1);
  if (managed)
    std::memset(managed, 0x5a, 4096); // host-accessible
  mgpuMemset16(managed, 0x1234, 2048, a);
  mgpuStreamSynchronize(a);
  bool managedOk = managed && ((uint16_t *)managed)[2047] == 0x1234;
  mgpuMemFree(managed, a);
  mgpuStreamDestroy(a);
  mgpuStreamDestroy(b);
  int32_t s = fp8rt_cuda_status();
  report(s == 0 && managedOk, "events_streams_managed",
         s ? lastError() : "events, 2 streams, managed alloc + memset16 ok");

  // TMA descriptors for a 256x128 byte (fp8) tensor.
  fp8rt_cuda_clear_error();
  void *d = mgpuMemAlloc(256 * 128, nullptr, 0);
  MemRef<uint8_t, 2> desc = {(uint8_t *)d, (uint8_t *)d, 0, {256, 128},
                             {128, 1}};
  int64_t box[2] = {64, 64};
  // 0 = CU_TENSOR_MAP_DATA_TYPE_UINT8, no interleave, 128B swizzle, no L2
  // promotion, zero fill.
  void *t1 = mgpuTensorMapEncodeTiledMemref(2, &desc, 0, 0, 3, 0, 0, box);
  void *t2 = mgpuTensorMapEncodeTiledMemref(2, &desc, 0, 0, 3, 0, 0, box);
  int32_t ts = fp8rt_cuda_status();
  report(t1 && t1 == t2 && ts == 0, "tma_encode",
         ts ? lastError() : "device tensor map, shared by identical requests");
  int64_t badBox[2] = {64, 512};
  void *t3 = mgpuTensorMapEncodeTiledMemref(2, &desc, 0, 0, 3, 0, 0, badBox);
  int32_t bs = fp8rt_cuda_status();
  std::string bmsg = lastError();
  report(!t3 && bs != 0 && contains(bmsg, "box"), "tma_bad_box_error", bmsg);
  mgpuMemFree(d, nullptr);
  fp8rt_cuda_clear_error();
}

// No driver (the stub library) or no such device: everything fails cleanly.
void checkUnavailable(const char *mode, const char *expect) {
  std::string loadErr = fp8rt_cuda_module_load_error();
  report(!loadErr.empty() && contains(loadErr, expect), "ctor_module_load_error",
         loadErr.empty() ? "(no module-load error recorded)" : loadErr);
  // The constructor ran on this thread: its failure is pending here.
  int32_t s0 = fp8rt_cuda_status();
  int32_t s1 = fp8rt_cuda_status();
  report(s0 != 0 && s1 == 0, "status_is_sticky_then_clears",
         "first " + std::to_string(s0) + ", then " + std::to_string(s1));

  int32_t si = fp8rt_cuda_init();
  report(si != 0 && contains(lastError(), expect), "init_error",
         std::string(mode) + ": " + lastError());

  std::vector<float> x(4096, 1.0f), y(4096, 2.0f), out(4096, 0.0f),
      filled(4096, 0.0f);
  auto mx = view(x), my = view(y), mo = view(out), mf = view(filled);
  _mlir_ciface_run_axpy(2.0f, &mx, &my, &mo, 1.0f, &mf);
  int32_t sr = fp8rt_cuda_status();
  report(sr != 0 && out[0] == 0.0f, "mlir_host_code_fails_cleanly",
         "status " + std::to_string(sr) + ": " + lastError());

  fp8rt_cuda_clear_error();
  mgpuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  std::string lm = lastError();
  report(fp8rt_cuda_status() == 400 && contains(lm, "NULL") &&
             contains(lm, expect),
         "launch_null_kernel_error", lm);

  fp8rt_cuda_clear_error();
  mgpuModuleGetFunction(nullptr, "axpy");
  std::string gm = lastError();
  report(fp8rt_cuda_status() != 0 && contains(gm, "'axpy'") &&
             contains(gm, "not loaded"),
         "lookup_in_failed_module_error", gm);

  fp8rt_cuda_clear_error();
  int64_t box[2] = {64, 64};
  MemRef<uint8_t, 2> desc = {nullptr, nullptr, 0, {256, 128}, {128, 1}};
  void *t = mgpuTensorMapEncodeTiledMemref(2, &desc, 99, 0, 0, 0, 0, box);
  report(!t && fp8rt_cuda_status() == 1 && contains(lastError(), "data type 99"),
         "tma_bad_type_error", lastError());
  int64_t dims[2] = {256, 128}, strides[2] = {128, 2};
  char buf[16];
  t = fp8rt_cuda_tensor_map_encode_tiled(buf, 2, dims, strides, box, 1, 0, 0,
                                         0, 0, 0);
  report(!t && fp8rt_cuda_status() == 1 && contains(lastError(), "innermost"),
         "tma_strided_error", lastError());

  fp8rt_cuda_clear_error();
  {
    float h = 1.0f;
    void *dst[1] = {&h};
    const void *src[1] = {&h};
    size_t bytes[1] = {4};
    int32_t sc = fp8rt_cuda_copy_many(dst, src, bytes, 1, nullptr);
    report(sc != 0 && contains(lastError(), expect), "copy_many_error",
           lastError());
  }

  fp8rt_cuda_clear_error();
  mgpuMemFree(nullptr, nullptr);
  mgpuStreamDestroy(nullptr);
  mgpuModuleUnload(nullptr);
  mgpuEventDestroy(nullptr);
  report(fp8rt_cuda_status() == 0, "null_handles_are_noops", "ok");

  // Errors are per thread.
  int32_t other = 0;
  std::string otherMsg;
  std::thread th([&] {
    mgpuStreamCreate();
    other = fp8rt_cuda_status();
    otherMsg = fp8rt_cuda_last_error();
  });
  th.join();
  report(other != 0 && fp8rt_cuda_status() == 0 &&
             std::string(fp8rt_cuda_last_error()).empty(),
         "errors_are_thread_local", "other thread: " + otherMsg);

  int32_t ss = fp8rt_cuda_synchronize();
  report(ss != 0, "synchronize_reports", lastError());

  // A run that could not start has no GPU time.
  fp8rt_cuda_clear_error();
  int32_t rb = fp8rt_cuda_run_begin(0);
  report(rb != 0 && fp8rt_cuda_last_run_ms() < 0, "run_without_gpu_untimed",
         "run_begin status " + std::to_string(rb) + ", last_run_ms " +
             std::to_string(fp8rt_cuda_last_run_ms()));
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 2 ? argv[1] : "";
  std::string dir = argc > 2 ? argv[2] : (argc > 1 ? argv[1] : ".");
  if (mode == "--no-driver") {
    // The toolkit's stub answers CUDA_ERROR_STUB_LIBRARY; a machine with a
    // driver and no GPU, CUDA_ERROR_NO_DEVICE: either way, "not available".
    checkUnavailable("no driver", "CUDA is not available");
  } else if (mode == "--bad-device") {
    checkUnavailable("FP8RT_CUDA_DEVICE beyond the device count",
                     "CUDA_ERROR_INVALID_DEVICE");
  } else if (mode.empty()) {
    int32_t s = fp8rt_cuda_init();
    std::string loadErr = fp8rt_cuda_module_load_error();
    report(s == 0 && loadErr.empty(), "init",
           s ? lastError()
             : "device " + std::to_string(fp8rt_cuda_device()) +
                   (loadErr.empty() ? ", kernels module loaded"
                                    : ", module load failed: " + loadErr));
    if (s == 0 && loadErr.empty()) {
      fp8rt_cuda_clear_error();
      checkConversion();
      checkAxpy();
      checkReverse();
      checkModules(dir);
      checkEventsAndTma();
      checkCopyMany();
      int32_t fs = fp8rt_cuda_synchronize();
      report(fs == 0, "final_synchronize", fs ? lastError() : "ok");
    }
  } else {
    std::fprintf(stderr,
                 "usage: %s [--no-driver|--bad-device] ARTIFACT_DIR\n",
                 argv[0]);
    return 2;
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
