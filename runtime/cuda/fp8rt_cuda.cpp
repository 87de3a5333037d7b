//===- fp8rt_cuda.cpp - fp8rt's CUDA runtime over the driver API ----------===//
//
// Part of fp8-opt. The mgpu* functions that MLIR 22's gpu-to-llvm host code
// calls, plus fp8rt_cuda_* for errors. See include/fp8rt/fp8rt_cuda.h for the
// error policy. Driver API only; never exits, aborts or throws.
//
//===----------------------------------------------------------------------===//

#include "fp8rt/fp8rt_cuda.h"

#include <cuda.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#define FP8RT_CUDA_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

//===----------------------------------------------------------------------===//
// Error state
//===----------------------------------------------------------------------===//

struct ThreadErrors {
  int32_t code = 0;    // last failure
  int32_t pending = 0; // first failure not yet returned by a status call
  std::string message;
  std::string lastKernel; // last kernel launched from this thread
};
thread_local ThreadErrors tls;

// A model run in progress on this thread (fp8rt_cuda_run_begin/end): the
// generated host code's per-launch stream create/synchronize/destroy become
// uses of one persistent stream, with no synchronization until the end of
// the run, and the run may be captured into a CUDA graph.
struct KernelTiming {
  std::string kernel;
  CUevent start = nullptr, end = nullptr;
};
struct RunState {
  bool active = false;
  bool capturing = false;
  CUstream stream = nullptr; // this thread's model stream (never destroyed)
  std::vector<KernelTiming> timings; // FP8RT_CUDA_PROFILE=1
  // Events around a non-captured run, on its stream (created once per
  // thread): the GPU time of the last run (fp8rt_cuda_last_run_ms).
  CUevent begin = nullptr, end = nullptr;
  // fp8rt_cuda_run_after's event (created once per thread).
  CUevent join = nullptr;
  bool timed = false;
  float lastMs = -1;
};
thread_local RunState run;


bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

// Names and strings for the codes we expect to see, for when the driver
// cannot say (the stub library answers CUDA_ERROR_STUB_LIBRARY to
// everything, cuGetErrorName included).
struct KnownError {
  int code;
  const char *name;
  const char *text;
};
const KnownError kKnownErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {34, "CUDA_ERROR_STUB_LIBRARY",
     "CUDA driver is a stub library (no NVIDIA driver installed)"},
    {35, "CUDA_ERROR_INSUFFICIENT_DRIVER",
     "CUDA driver version is insufficient for CUDA runtime version"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain"},
    {300, "CUDA_ERROR_INVALID_SOURCE", "device kernel image is invalid"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

std::string describe(CUresult r) {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
    name = nullptr;
  if (cuGetErrorString(r, &text) != CUDA_SUCCESS)
    text = nullptr;
  for (const KnownError &k : kKnownErrors)
    if (k.code == static_cast<int>(r)) {
      if (!name)
        name = k.name;
      if (!text)
        text = k.text;
    }
  std::string s = name ? name : "CUDA error " + std::to_string((int)r);
  if (text)
    s += std::string(" (") + text + ")";
  return s;
}

std::string vformat(const char *fmt, va_list ap) {
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  return buf;
}

void record(CUresult r, std::string message) {
  tls.code = static_cast<int32_t>(r);
  if (!tls.pending)
    tls.pending = static_cast<int32_t>(r);
  tls.message = std::move(message);
  if (envFlag("FP8RT_CUDA_LOG"))
    std::fprintf(stderr, "fp8rt_cuda: %s\n", tls.message.c_str());
}

// A failed driver call: "<what>: <NAME> (<string>)".
__attribute__((format(printf, 2, 3))) void fail(CUresult r, const char *fmt,
                                                ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string what = vformat(fmt, ap);
  va_end(ap);
  record(r, what + ": " + describe(r));
}

// One of our own checks failed: the message is complete as given.
__attribute__((format(printf, 2, 3))) void failMsg(CUresult r,
                                                   const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string what = vformat(fmt, ap);
  va_end(ap);
  record(r, what);
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

constexpr int kMaxDevices = 64;
struct DeviceState {
  bool tried = false;
  CUresult result = CUDA_SUCCESS;
  std::string error;
  CUcontext context = nullptr;
  CUdevice device = 0;
  bool memoryPools = false;
  int optinSmem = 0; // max shared memory per block, opt-in
  int ccMajor = 0, ccMinor = 0;
};

struct FunctionInfo {
  std::string name;
  std::string module;
  CUmodule handle = nullptr;
  int dynamicSmemSet = 48 * 1024; // what cuFuncSetAttribute allowed so far
  // The module's kernels wait for their stream predecessor themselves
  // (griddepcontrol.wait, fp8-gpu-grid-dependency's __fp8_grid_dependency
  // marker): they may launch with programmatic stream serialization.
  bool gridDependency = false;
};
enum class AllocKind { Sync, Async, Managed };
using TensorMapKey =
    std::pair<CUcontext, std::array<unsigned char, sizeof(CUtensorMap)>>;

// Process-wide state. Built on first use and never destroyed: MLIR's
// module-load constructors (priority 123) run before this file's dynamic
// initializers, and its unload destructors after static destructors.
struct Globals {
  std::mutex mutex; // guards everything here
  std::string moduleLoadError; // first module-load failure
  bool initTried = false;
  CUresult initResult = CUDA_SUCCESS;
  std::string initError;
  DeviceState devices[kMaxDevices];
  int defaultDevice = -2; // -2: not chosen yet; -1: invalid
  std::string deviceError; // why defaultDevice is -1
  std::unordered_map<CUmodule, std::string> modules; // names
  std::unordered_map<CUfunction, FunctionInfo> functions;
  std::unordered_map<void *, AllocKind> allocations;
  // Tensor maps in device memory, shared by identical requests.
  std::map<TensorMapKey, CUdeviceptr> tensorMaps;
};
Globals &G() {
  static Globals *g = new Globals;
  return *g;
}

int defaultDeviceLocked() {
  if (G().defaultDevice == -2) {
    G().defaultDevice = 0;
    if (const char *env = std::getenv("FP8RT_CUDA_DEVICE")) {
      char *end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (!*env || *end || v < 0 || v >= kMaxDevices) {
        G().defaultDevice = -1;
        G().deviceError = std::string("FP8RT_CUDA_DEVICE='") + env +
                       "' is not a device ordinal (0.." +
                       std::to_string(kMaxDevices - 1) + ")";
      } else {
        G().defaultDevice = static_cast<int>(v);
      }
    }
  }
  return G().defaultDevice;
}

// The state of the default device, initialized on first use; nullptr (and
// an error recorded, mentioning `op`) on failure.
DeviceState *currentDevice(const char *op) {
  std::lock_guard<std::mutex> lock(G().mutex);
  if (!G().initTried) {
    G().initTried = true;
    G().initResult = cuInit(0);
    if (G().initResult != CUDA_SUCCESS)
      G().initError = "cuInit: " + describe(G().initResult);
  }
  if (G().initResult != CUDA_SUCCESS) {
    failMsg(G().initResult, "%s: CUDA is not available: %s", op,
            G().initError.c_str());
    return nullptr;
  }
  int ordinal = defaultDeviceLocked();
  if (ordinal < 0) {
    failMsg(CUDA_ERROR_INVALID_DEVICE, "%s: %s", op, G().deviceError.c_str());
    return nullptr;
  }
  DeviceState &d = G().devices[ordinal];
  if (!d.tried) {
    d.tried = true;
    int count = 0;
    cuDeviceGetCount(&count);
    CUresult r = cuDeviceGet(&d.device, ordinal);
    if (r != CUDA_SUCCESS) {
      d.result = r;
      d.error = "cuDeviceGet(" + std::to_string(ordinal) + ") with " +
                std::to_string(count) + " device(s) visible: " + describe(r);
    } else if ((r = cuDevicePrimaryCtxRetain(&d.context, d.device)) !=
               CUDA_SUCCESS) {
      d.result = r;
      d.error = "cuDevicePrimaryCtxRetain(device " + std::to_string(ordinal) +
                "): " + describe(r);
    } else {
      int pools = 0;
      cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED,
                           d.device);
      d.memoryPools = pools != 0;
      cuDeviceGetAttribute(&d.optinSmem,
                           CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                           d.device);
      cuDeviceGetAttribute(&d.ccMajor,
                           CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                           d.device);
      cuDeviceGetAttribute(&d.ccMinor,
                           CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                           d.device);
    }
  }
  if (d.result != CUDA_SUCCESS) {
    failMsg(d.result, "%s: %s", op, d.error.c_str());
    return nullptr;
  }
  return &d;
}

// Makes the default device's primary context current for the scope; pushes
// only when the thread's current context differs, and pops what it pushed.
class ScopedContext {
public:
  explicit ScopedContext(const char *op) {
    dev = currentDevice(op);
    if (!dev)
      return;
    CUcontext current = nullptr;
    if (cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != dev->context) {
      CUresult r = cuCtxPushCurrent(dev->context);
      if (r != CUDA_SUCCESS) {
        fail(r, "%s: cuCtxPushCurrent", op);
        dev = nullptr;
        return;
      }
      pushed = true;
    }
  }
  ~ScopedContext() {
    if (pushed) {
      CUcontext ignored;
      cuCtxPopCurrent(&ignored);
    }
  }
  bool ok() const { return dev != nullptr; }
  DeviceState *dev = nullptr;

private:
  bool pushed = false;
};

//===----------------------------------------------------------------------===//
// Modules and functions
//===----------------------------------------------------------------------===//


std::string kernelName(CUfunction f) {
  std::lock_guard<std::mutex> lock(G().mutex);
  auto it = G().functions.find(f);
  return it == G().functions.end() ? std::string("<unknown kernel>")
                                : "'" + it->second.name + "' (" +
                                      it->second.module + ")";
}

enum class ImageKind { Cubin, Fatbin, Ptx, Unknown };

ImageKind classify(const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  if ((size == 0 || size >= 4) && p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' &&
      p[3] == 'F')
    return ImageKind::Cubin;
  uint32_t magic;
  std::memcpy(&magic, p, 4);
  if (magic == 0xBA55ED50u)
    return ImageKind::Fatbin;
  // PTX is text: look for its directives near the start.
  size_t n = size ? size : 4096;
  size_t limit = n < 4096 ? n : 4096;
  std::string head(reinterpret_cast<const char *>(p),
                   strnlen(reinterpret_cast<const char *>(p), limit));
  if (head.find(".version") != std::string::npos ||
      head.find(".target") != std::string::npos)
    return ImageKind::Ptx;
  return ImageKind::Unknown;
}

const char *kindName(ImageKind k) {
  switch (k) {
  case ImageKind::Cubin:
    return "cubin";
  case ImageKind::Fatbin:
    return "fatbin";
  case ImageKind::Ptx:
    return "PTX";
  default:
    return "unrecognized image";
  }
}

std::string trimLog(const char *log) {
  std::string s(log);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == 0))
    s.pop_back();
  if (s.size() > 600)
    s = s.substr(0, 600) + "...";
  return s;
}

bool archMismatch(CUresult r) {
  return r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE ||
         r == CUDA_ERROR_INVALID_SOURCE || r == CUDA_ERROR_INVALID_PTX ||
         r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
}

// Loads one image inside a current context; on failure records an error
// naming `name` and the device, and returns nullptr with *result set.
CUmodule loadImage(const void *data, ImageKind kind, const std::string &name,
                   int optLevel, DeviceState *dev, CUresult *result) {
  char errorLog[4096] = {0};
  CUjit_option options[3] = {CU_JIT_ERROR_LOG_BUFFER,
                             CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                             CU_JIT_OPTIMIZATION_LEVEL};
  void *values[3] = {errorLog, reinterpret_cast<void *>(sizeof errorLog - 1),
                     reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  unsigned numOptions = (kind == ImageKind::Ptx && optLevel >= 0) ? 3 : 2;
  CUmodule module = nullptr;
  CUresult r = cuModuleLoadDataEx(&module, data, numOptions, options, values);
  *result = r;
  if (r != CUDA_SUCCESS) {
    std::string log = trimLog(errorLog);
    fail(r, "loading module %s (%s) on device sm_%d%d%s%s", name.c_str(),
         kindName(kind), dev->ccMajor, dev->ccMinor,
         log.empty() ? "" : "; JIT log: ", log.c_str());
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(G().mutex);
  G().modules[module] = name;
  return module;
}

void noteModuleLoadFailure() {
  std::lock_guard<std::mutex> lock(G().mutex);
  if (G().moduleLoadError.empty())
    G().moduleLoadError = tls.message;
}

std::string moduleLoadFailure() {
  std::lock_guard<std::mutex> lock(G().mutex);
  return G().moduleLoadError.empty() ? std::string("no module failed to load")
                                  : "earlier failure: " + G().moduleLoadError;
}

//===----------------------------------------------------------------------===//
// Memory bookkeeping
//===----------------------------------------------------------------------===//

constexpr size_t kMaxTensorMaps = 4096;

size_t tensorMapElementBytes(int64_t dataType) {
  switch (dataType) {
  case CU_TENSOR_MAP_DATA_TYPE_UINT8:
    return 1;
  case CU_TENSOR_MAP_DATA_TYPE_UINT16:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
  case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    return 2;
  case CU_TENSOR_MAP_DATA_TYPE_UINT32:
  case CU_TENSOR_MAP_DATA_TYPE_INT32:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
  case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
  case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ:
    return 4;
  case CU_TENSOR_MAP_DATA_TYPE_UINT64:
  case CU_TENSOR_MAP_DATA_TYPE_INT64:
  case CU_TENSOR_MAP_DATA_TYPE_FLOAT64:
    return 8;
  default:
    return 0;
  }
}

// A ranked memref descriptor, as MLIR lays it out.
struct MemRefView {
  char *aligned;
  int64_t offset;
  const int64_t *sizes;
  const int64_t *strides;
};
MemRefView viewMemRef(int64_t rank, void *descriptor) {
  auto *words = static_cast<int64_t *>(descriptor);
  MemRefView v;
  std::memcpy(&v.aligned, &words[1], sizeof(void *));
  v.offset = words[2];
  v.sizes = &words[3];
  v.strides = &words[3 + rank];
  return v;
}

// Bytes spanned by a memref (0 if empty, -1 if a stride is negative).
int64_t memRefSpan(int64_t rank, const MemRefView &v, int64_t elementSize) {
  int64_t last = 0;
  for (int64_t i = 0; i < rank; ++i) {
    if (v.sizes[i] == 0)
      return 0;
    if (v.strides[i] < 0)
      return -1;
    last += (v.sizes[i] - 1) * v.strides[i];
  }
  return (last + 1) * elementSize;
}

bool fitsUnsigned(intptr_t v) { return v > 0 && v <= (intptr_t)UINT_MAX; }

// Raises a kernel's dynamic shared memory limit when a launch needs more
// than the default 48 KB. False (error recorded) when it cannot.
bool ensureDynamicSmem(CUfunction f, int32_t smem, DeviceState *dev,
                       const std::string &kernel) {
  if (smem <= 48 * 1024)
    return true;
  {
    std::lock_guard<std::mutex> lock(G().mutex);
    auto it = G().functions.find(f);
    if (it != G().functions.end() && it->second.dynamicSmemSet >= smem)
      return true;
  }
  int staticSmem = 0;
  cuFuncGetAttribute(&staticSmem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
  if (dev->optinSmem > 0 && smem + staticSmem > dev->optinSmem) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "launching kernel %s: %d bytes of dynamic shared memory plus %d "
            "static exceed the device's %d bytes per block (opt-in)",
            kernel.c_str(), smem, staticSmem, dev->optinSmem);
    return false;
  }
  CUresult r = cuFuncSetAttribute(
      f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem);
  if (r != CUDA_SUCCESS) {
    fail(r,
         "launching kernel %s: cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES"
         ", %d)",
         kernel.c_str(), smem);
    return false;
  }
  std::lock_guard<std::mutex> lock(G().mutex);
  auto it = G().functions.find(f);
  if (it != G().functions.end())
    it->second.dynamicSmemSet = smem;
  return true;
}

// FP8RT_CUDA_PROFILE=1: per-kernel GPU time of model runs (events around
// each launch of a non-captured run), summed per kernel and printed to
// stderr when the process exits.
struct KernelTotal {
  double ms = 0;
  long launches = 0;
};
struct Profile {
  std::mutex mutex;
  std::map<std::string, KernelTotal> kernels;
  long runs = 0;
};
Profile &Prof() {
  static Profile *p = new Profile;
  return *p;
}

void printProfile() {
  std::lock_guard<std::mutex> lock(Prof().mutex);
  std::vector<std::pair<std::string, KernelTotal>> rows(Prof().kernels.begin(),
                                                        Prof().kernels.end());
  std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
    return a.second.ms > b.second.ms;
  });
  double total = 0;
  for (auto &r : rows)
    total += r.second.ms;
  std::fprintf(stderr,
               "fp8rt profile: %ld model runs, %.3f ms of kernels per run "
               "(%zu kernels)\n  %8s %6s %9s  %s\n",
               Prof().runs, Prof().runs ? total / Prof().runs : 0.0,
               rows.size(), "ms/run", "share", "launches", "kernel");
  // FP8RT_CUDA_PROFILE_TOP=N prints N kernels (default 25, 0: all).
  size_t top = 25;
  if (const char *env = std::getenv("FP8RT_CUDA_PROFILE_TOP")) {
    char *end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v >= 0)
      top = v == 0 ? rows.size() : static_cast<size_t>(v);
  }
  for (size_t i = 0; i < rows.size() && i < top; ++i)
    std::fprintf(stderr, "  %8.4f %5.1f%% %9ld  %s\n",
                 rows[i].second.ms / std::max(1L, Prof().runs),
                 total > 0 ? 100.0 * rows[i].second.ms / total : 0.0,
                 rows[i].second.launches, rows[i].first.c_str());
}

// Programmatic dependent launch for the kernels that allow it
// (FunctionInfo::gridDependency); FP8RT_PDL=0 turns it off.
bool pdlEnabled() {
  static const bool on = [] {
    const char *v = std::getenv("FP8RT_PDL");
    return !v || std::strcmp(v, "0") != 0;
  }();
  return on;
}

// cuLaunchKernelEx's configuration (sizes checked by the caller).
CUlaunchConfig launchConfig(intptr_t gridX, intptr_t gridY, intptr_t gridZ,
                            intptr_t blockX, intptr_t blockY, intptr_t blockZ,
                            int32_t smem, CUstream stream,
                            CUlaunchAttribute *attrs, unsigned numAttrs) {
  CUlaunchConfig config;
  std::memset(&config, 0, sizeof config);
  config.gridDimX = static_cast<unsigned>(gridX);
  config.gridDimY = static_cast<unsigned>(gridY);
  config.gridDimZ = static_cast<unsigned>(gridZ);
  config.blockDimX = static_cast<unsigned>(blockX);
  config.blockDimY = static_cast<unsigned>(blockY);
  config.blockDimZ = static_cast<unsigned>(blockZ);
  config.sharedMemBytes = static_cast<unsigned>(smem);
  config.hStream = stream;
  config.attrs = attrs;
  config.numAttrs = numAttrs;
  return config;
}

// Fills `attribute` with programmatic stream serialization when `f` may
// launch that way (pdlEnabled, FunctionInfo::gridDependency).
bool gridDependencyAttribute(CUfunction f, CUlaunchAttribute &attribute) {
  if (!pdlEnabled())
    return false;
  {
    std::lock_guard<std::mutex> lock(G().mutex);
    auto it = G().functions.find(f);
    if (it == G().functions.end() || !it->second.gridDependency)
      return false;
  }
  std::memset(&attribute, 0, sizeof attribute);
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  return true;
}

bool profiling() {
  static const bool on = [] {
    bool enabled = envFlag("FP8RT_CUDA_PROFILE");
    if (enabled)
      std::atexit(printProfile);
    return enabled;
  }();
  return on;
}

// After a run's synchronize: add its kernels' times to the profile.
void collectTimings() {
  if (run.timings.empty())
    return;
  std::lock_guard<std::mutex> lock(Prof().mutex);
  ++Prof().runs;
  for (KernelTiming &t : run.timings) {
    float ms = 0;
    if (cuEventElapsedTime(&ms, t.start, t.end) == CUDA_SUCCESS) {
      KernelTotal &k = Prof().kernels[t.kernel];
      k.ms += ms;
      ++k.launches;
    }
    cuEventDestroy(t.start);
    cuEventDestroy(t.end);
  }
  run.timings.clear();
}

void syncAfterLaunch(CUstream stream, const std::string &kernel) {
  // Synchronizing a stream being captured would invalidate the capture.
  if (!envFlag("FP8RT_CUDA_SYNC") || run.capturing)
    return;
  CUresult r = cuStreamSynchronize(stream);
  if (r != CUDA_SUCCESS)
    fail(r, "kernel %s failed while running (FP8RT_CUDA_SYNC=1)",
         kernel.c_str());
}

/// Instantiated CUDA graphs alive (the buffer pool's count, below).
int liveGraphCount();
} // namespace

//===----------------------------------------------------------------------===//
// fp8rt's own entry points
//===----------------------------------------------------------------------===//

FP8RT_CUDA_EXPORT const char *fp8rt_cuda_last_error(void) {
  return tls.message.c_str();
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_last_error_code(void) { return tls.code; }

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_status(void) {
  int32_t s = tls.pending;
  tls.pending = 0;
  return s;
}

FP8RT_CUDA_EXPORT void fp8rt_cuda_clear_error(void) {
  tls.pending = 0;
  tls.code = 0;
  tls.message.clear();
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_init(void) {
  ScopedContext ctx("fp8rt_cuda_init");
  return fp8rt_cuda_status();
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_synchronize(void) {
  ScopedContext ctx("fp8rt_cuda_synchronize");
  if (ctx.ok()) {
    CUresult r = cuCtxSynchronize();
    if (r != CUDA_SUCCESS)
      fail(r, "cuCtxSynchronize%s%s",
           tls.lastKernel.empty() ? "" : "; last kernel launched from this "
                                         "thread: ",
           tls.lastKernel.c_str());
  }
  return fp8rt_cuda_status();
}

FP8RT_CUDA_EXPORT const char *fp8rt_cuda_module_load_error(void) {
  std::lock_guard<std::mutex> lock(G().mutex);
  return G().moduleLoadError.c_str();
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_device(void) {
  std::lock_guard<std::mutex> lock(G().mutex);
  return defaultDeviceLocked();
}

FP8RT_CUDA_EXPORT fp8rt_cu_module fp8rt_cuda_module_load(
    const void *image, size_t size, const char *ptxFallback,
    const char *name) {
  if (!image) {
    failMsg(CUDA_ERROR_INVALID_VALUE, "loading module %s: image is NULL",
            name ? name : "<unnamed>");
    noteModuleLoadFailure();
    return nullptr;
  }
  ImageKind kind = classify(image, size);
  char fallbackName[96];
  std::snprintf(fallbackName, sizeof fallbackName, "at %p (%zu bytes)", image,
                size);
  std::string moduleName = name ? std::string("'") + name + "'" : fallbackName;
  ScopedContext ctx("loading module");
  if (!ctx.ok()) {
    noteModuleLoadFailure();
    return nullptr;
  }
  // What the thread had before, restored if the PTX fallback succeeds.
  ThreadErrors before = tls;
  CUresult r;
  CUmodule m = loadImage(image, kind, moduleName, -1, ctx.dev, &r);
  if (m || !ptxFallback || !archMismatch(r)) {
    if (!m)
      noteModuleLoadFailure();
    return m;
  }
  // The binary does not suit this device: JIT the PTX instead.
  std::string first = tls.message;
  m = loadImage(ptxFallback, ImageKind::Ptx, moduleName + " (PTX fallback)",
                -1, ctx.dev, &r);
  if (m) {
    before.lastKernel = tls.lastKernel;
    tls = before;
    return m;
  }
  tls.message = first + "; then " + tls.message;
  noteModuleLoadFailure();
  return nullptr;
}

FP8RT_CUDA_EXPORT void *fp8rt_cuda_tensor_map_encode_tiled(
    void *global, int32_t rank, const int64_t *dims,
    const int64_t *stridesElems, const int64_t *box, int32_t elemBytes,
    int32_t dataType, int32_t interleave, int32_t swizzle, int32_t l2Promotion,
    int32_t oobFill) {
  if (rank < 1 || rank > 5 || !dims || !stridesElems || !box || !global ||
      !(elemBytes == 1 || elemBytes == 2 || elemBytes == 4 || elemBytes == 8)) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "tensor map: bad arguments (rank %d, element bytes %d, global %p); "
            "need rank 1..5, 1/2/4/8-byte elements, non-NULL arrays",
            rank, elemBytes, global);
    return nullptr;
  }
  if (stridesElems[rank - 1] != 1) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "tensor map: the innermost stride is %lld elements; TMA needs a "
            "contiguous innermost dimension",
            (long long)stridesElems[rank - 1]);
    return nullptr;
  }
  // CUDA counts dimensions innermost first; MLIR outermost first.
  cuuint64_t globalDim[5], globalStrides[4];
  cuuint32_t boxDim[5], elementStrides[5];
  for (int i = 0; i < rank; ++i) {
    int j = rank - 1 - i;
    if (dims[j] <= 0 || box[j] <= 0 || box[j] > 256) {
      failMsg(CUDA_ERROR_INVALID_VALUE,
              "tensor map: dimension %d has size %lld and box %lld (box must "
              "be 1..256, size positive)",
              j, (long long)dims[j], (long long)box[j]);
      return nullptr;
    }
    globalDim[i] = static_cast<cuuint64_t>(dims[j]);
    boxDim[i] = static_cast<cuuint32_t>(box[j]);
    elementStrides[i] = 1;
    if (i > 0)
      globalStrides[i - 1] =
          static_cast<cuuint64_t>(stridesElems[j]) * elemBytes;
  }
  ScopedContext ctx("tensor map");
  if (!ctx.ok())
    return nullptr;
  CUtensorMap map;
  std::memset(&map, 0, sizeof map);
  CUresult r = cuTensorMapEncodeTiled(
      &map, static_cast<CUtensorMapDataType>(dataType),
      static_cast<cuuint32_t>(rank), global, globalDim, globalStrides, boxDim,
      elementStrides, static_cast<CUtensorMapInterleave>(interleave),
      static_cast<CUtensorMapSwizzle>(swizzle),
      static_cast<CUtensorMapL2promotion>(l2Promotion),
      static_cast<CUtensorMapFloatOOBfill>(oobFill));
  if (r != CUDA_SUCCESS) {
    std::string shape, boxes;
    for (int j = 0; j < rank; ++j) {
      shape += (j ? "x" : "") + std::to_string(dims[j]);
      boxes += (j ? "x" : "") + std::to_string(box[j]);
    }
    fail(r,
         "cuTensorMapEncodeTiled (tensor %s at %p, box %s, data type %d, "
         "swizzle %d, interleave %d)",
         shape.c_str(), global, boxes.c_str(), dataType, swizzle, interleave);
    return nullptr;
  }
  std::array<unsigned char, sizeof(CUtensorMap)> key;
  std::memcpy(key.data(), &map, sizeof map);
  CUcontext context = ctx.dev->context;
  std::lock_guard<std::mutex> lock(G().mutex);
  auto it = G().tensorMaps.find({context, key});
  if (it != G().tensorMaps.end())
    return reinterpret_cast<void *>(it->second);
  if (G().tensorMaps.size() >= kMaxTensorMaps && !run.capturing &&
      liveGraphCount() == 0) {
    // Bounded cache: wait until no kernel can still read one, free them all
    // -- unless a captured graph (which holds their addresses) lives or one
    // is being captured (a synchronize would end the capture): then the
    // cache grows (a dynamic model's tensor maps differ per shape).
    cuCtxSynchronize();
    for (auto &entry : G().tensorMaps)
      cuMemFree(entry.second);
    G().tensorMaps.clear();
  }
  CUdeviceptr device = 0;
  if ((r = cuMemAlloc(&device, sizeof map)) != CUDA_SUCCESS) {
    fail(r, "tensor map: cuMemAlloc(%zu)", sizeof map);
    return nullptr;
  }
  if ((r = cuMemcpyHtoD(device, &map, sizeof map)) != CUDA_SUCCESS) {
    fail(r, "tensor map: cuMemcpyHtoD");
    cuMemFree(device);
    return nullptr;
  }
  G().tensorMaps[{context, key}] = device;
  return reinterpret_cast<void *>(device);
}

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

FP8RT_CUDA_EXPORT fp8rt_cu_module mgpuModuleLoad(void *data, int64_t size) {
  return fp8rt_cuda_module_load(data, static_cast<size_t>(size < 0 ? 0 : size),
                                nullptr, nullptr);
}

FP8RT_CUDA_EXPORT fp8rt_cu_module mgpuModuleLoadJIT(void *ptx,
                                                    int32_t optLevel) {
  if (!ptx) {
    failMsg(CUDA_ERROR_INVALID_VALUE, "loading PTX module: image is NULL");
    noteModuleLoadFailure();
    return nullptr;
  }
  char name[64];
  std::snprintf(name, sizeof name, "at %p", ptx);
  ScopedContext ctx("loading PTX module");
  if (!ctx.ok()) {
    noteModuleLoadFailure();
    return nullptr;
  }
  CUresult r;
  CUmodule m = loadImage(ptx, ImageKind::Ptx, name,
                         optLevel < 0 ? 0 : (optLevel > 4 ? 4 : optLevel),
                         ctx.dev, &r);
  if (!m)
    noteModuleLoadFailure();
  return m;
}

FP8RT_CUDA_EXPORT void mgpuModuleUnload(fp8rt_cu_module module) {
  if (!module)
    return; // its load failed; that was reported then
  std::string name;
  {
    std::lock_guard<std::mutex> lock(G().mutex);
    name = G().modules[module];
    G().modules.erase(module);
    for (auto it = G().functions.begin(); it != G().functions.end();)
      it = it->second.handle == module ? G().functions.erase(it) : std::next(it);
  }
  CUresult r = cuModuleUnload(module);
  // At process exit the driver may already be gone: nothing to report then.
  if (r != CUDA_SUCCESS && r != CUDA_ERROR_DEINITIALIZED)
    fail(r, "unloading module %s", name.c_str());
}

FP8RT_CUDA_EXPORT fp8rt_cu_function mgpuModuleGetFunction(
    fp8rt_cu_module module, const char *name) {
  const char *kernel = name ? name : "<NULL>";
  if (!module) {
    failMsg(CUDA_ERROR_INVALID_HANDLE,
            "looking up kernel '%s': its module is not loaded (%s)", kernel,
            moduleLoadFailure().c_str());
    return nullptr;
  }
  if (!name) {
    failMsg(CUDA_ERROR_INVALID_VALUE, "looking up a kernel: name is NULL");
    return nullptr;
  }
  std::string moduleName;
  {
    std::lock_guard<std::mutex> lock(G().mutex);
    auto it = G().modules.find(module);
    moduleName = it == G().modules.end() ? "<unknown module>" : it->second;
  }
  CUfunction f = nullptr;
  CUresult r = cuModuleGetFunction(&f, module, name);
  if (r != CUDA_SUCCESS) {
    fail(r, "looking up kernel '%s' in module %s", kernel, moduleName.c_str());
    return nullptr;
  }
  // The marker's lookup fails (CUDA_ERROR_NOT_FOUND, nothing to report)
  // for modules built without fp8-gpu-grid-dependency.
  bool gridDependency = false;
  {
    std::lock_guard<std::mutex> lock(G().mutex);
    gridDependency = G().functions.count(f) == 0;
  }
  if (gridDependency) {
    CUdeviceptr marker = 0;
    size_t markerBytes = 0;
    gridDependency = cuModuleGetGlobal(&marker, &markerBytes, module,
                                       "__fp8_grid_dependency") == CUDA_SUCCESS;
  }
  std::lock_guard<std::mutex> lock(G().mutex);
  auto it = G().functions.find(f);
  if (it == G().functions.end()) {
    FunctionInfo info;
    info.name = name;
    info.module = moduleName;
    info.handle = module;
    info.gridDependency = gridDependency;
    G().functions.emplace(f, std::move(info));
  }
  return f;
}

FP8RT_CUDA_EXPORT void
mgpuLaunchKernel(fp8rt_cu_function function, intptr_t gridX, intptr_t gridY,
                 intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                 intptr_t blockZ, int32_t smem, fp8rt_cu_stream stream,
                 void **params, void **extra, size_t /*numParams*/) {
  if (!function) {
    failMsg(CUDA_ERROR_INVALID_HANDLE,
            "launching a kernel: its handle is NULL (module load or lookup "
            "failed earlier; %s)",
            tls.message.empty() ? moduleLoadFailure().c_str()
                                : tls.message.c_str());
    return;
  }
  // After a failure inside a model run, launching more kernels (with NULL
  // buffers, say) could only fault and poison the context.
  if (run.active && tls.pending)
    return;
  std::string kernel = kernelName(function);
  if (!fitsUnsigned(gridX) || !fitsUnsigned(gridY) || !fitsUnsigned(gridZ) ||
      !fitsUnsigned(blockX) || !fitsUnsigned(blockY) || !fitsUnsigned(blockZ) ||
      smem < 0) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "launching kernel %s: grid (%ld,%ld,%ld), block (%ld,%ld,%ld), "
            "dynamic shared memory %d: each size must be 1..2^32-1",
            kernel.c_str(), (long)gridX, (long)gridY, (long)gridZ,
            (long)blockX, (long)blockY, (long)blockZ, smem);
    return;
  }
  ScopedContext ctx("launching a kernel");
  if (!ctx.ok())
    return;
  if (!ensureDynamicSmem(function, smem, ctx.dev, kernel))
    return;
  tls.lastKernel = kernel;
  KernelTiming timing;
  if (run.active && !run.capturing && stream == run.stream && profiling() &&
      cuEventCreate(&timing.start, CU_EVENT_DEFAULT) == CUDA_SUCCESS) {
    if (cuEventCreate(&timing.end, CU_EVENT_DEFAULT) == CUDA_SUCCESS) {
      cuEventRecord(timing.start, stream);
    } else {
      cuEventDestroy(timing.start);
      timing.start = nullptr;
    }
  }
  CUresult r;
  CUlaunchAttribute attribute;
  if (gridDependencyAttribute(function, attribute)) {
    CUlaunchConfig config = launchConfig(gridX, gridY, gridZ, blockX, blockY,
                                         blockZ, smem, stream, &attribute, 1);
    r = cuLaunchKernelEx(&config, function, params, extra);
  } else {
    r = cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ,
                       smem, stream, params, extra);
  }
  if (timing.end) {
    cuEventRecord(timing.end, stream);
    // The kernel's own name: kernelName() adds the module for messages.
    timing.kernel = kernel.substr(0, kernel.find(" (at "));
    if (timing.kernel.size() > 1 && timing.kernel.front() == '\'' &&
        timing.kernel.back() == '\'')
      timing.kernel = timing.kernel.substr(1, timing.kernel.size() - 2);
    run.timings.push_back(timing);
  }
  if (r != CUDA_SUCCESS) {
    fail(r,
         "launching kernel %s, grid (%ld,%ld,%ld), block (%ld,%ld,%ld), %d "
         "bytes of dynamic shared memory",
         kernel.c_str(), (long)gridX, (long)gridY, (long)gridZ, (long)blockX,
         (long)blockY, (long)blockZ, smem);
    return;
  }
  syncAfterLaunch(stream, kernel);
}

FP8RT_CUDA_EXPORT void mgpuLaunchClusterKernel(
    fp8rt_cu_function function, intptr_t clusterX, intptr_t clusterY,
    intptr_t clusterZ, intptr_t gridX, intptr_t gridY, intptr_t gridZ,
    intptr_t blockX, intptr_t blockY, intptr_t blockZ, int32_t smem,
    fp8rt_cu_stream stream, void **params, void **extra) {
  if (!function) {
    failMsg(CUDA_ERROR_INVALID_HANDLE,
            "launching a cluster kernel: its handle is NULL (module load or "
            "lookup failed earlier; %s)",
            tls.message.empty() ? moduleLoadFailure().c_str()
                                : tls.message.c_str());
    return;
  }
  std::string kernel = kernelName(function);
  if (!fitsUnsigned(clusterX) || !fitsUnsigned(clusterY) ||
      !fitsUnsigned(clusterZ) || !fitsUnsigned(gridX) || !fitsUnsigned(gridY) ||
      !fitsUnsigned(gridZ) || !fitsUnsigned(blockX) || !fitsUnsigned(blockY) ||
      !fitsUnsigned(blockZ) || smem < 0 || gridX % clusterX ||
      gridY % clusterY || gridZ % clusterZ) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "launching kernel %s: cluster (%ld,%ld,%ld), grid (%ld,%ld,%ld), "
            "block (%ld,%ld,%ld): sizes must be positive and the grid a "
            "multiple of the cluster",
            kernel.c_str(), (long)clusterX, (long)clusterY, (long)clusterZ,
            (long)gridX, (long)gridY, (long)gridZ, (long)blockX, (long)blockY,
            (long)blockZ);
    return;
  }
  ScopedContext ctx("launching a cluster kernel");
  if (!ctx.ok())
    return;
  if (!ensureDynamicSmem(function, smem, ctx.dev, kernel))
    return;
  if (clusterX * clusterY * clusterZ > 8) {
    CUresult r = cuFuncSetAttribute(
        function, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1);
    if (r != CUDA_SUCCESS) {
      fail(r, "launching kernel %s: allowing a non-portable cluster size",
           kernel.c_str());
      return;
    }
  }
  CUlaunchAttribute attributes[2];
  std::memset(attributes, 0, sizeof attributes);
  attributes[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attributes[0].value.clusterDim.x = static_cast<unsigned>(clusterX);
  attributes[0].value.clusterDim.y = static_cast<unsigned>(clusterY);
  attributes[0].value.clusterDim.z = static_cast<unsigned>(clusterZ);
  const unsigned numAttributes =
      gridDependencyAttribute(function, attributes[1]) ? 2 : 1;
  CUlaunchConfig config =
      launchConfig(gridX, gridY, gridZ, blockX, blockY, blockZ, smem, stream,
                   attributes, numAttributes);
  tls.lastKernel = kernel;
  CUresult r = cuLaunchKernelEx(&config, function, params, extra);
  if (r != CUDA_SUCCESS) {
    fail(r,
         "launching kernel %s, cluster (%ld,%ld,%ld), grid (%ld,%ld,%ld), "
         "block (%ld,%ld,%ld), %d bytes of dynamic shared memory",
         kernel.c_str(), (long)clusterX, (long)clusterY, (long)clusterZ,
         (long)gridX, (long)gridY, (long)gridZ, (long)blockX, (long)blockY,
         (long)blockZ, smem);
    return;
  }
  syncAfterLaunch(stream, kernel);
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

FP8RT_CUDA_EXPORT fp8rt_cu_stream mgpuStreamCreate(void) {
  if (run.active)
    return run.stream;
  ScopedContext ctx("cuStreamCreate");
  if (!ctx.ok())
    return nullptr;
  CUstream stream = nullptr;
  CUresult r = cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    fail(r, "cuStreamCreate");
    return nullptr;
  }
  return stream;
}

FP8RT_CUDA_EXPORT void mgpuStreamDestroy(fp8rt_cu_stream stream) {
  if (!stream || stream == run.stream)
    return;
  ScopedContext ctx("cuStreamDestroy");
  if (!ctx.ok())
    return;
  CUresult r = cuStreamDestroy(stream);
  if (r != CUDA_SUCCESS)
    fail(r, "cuStreamDestroy");
}

FP8RT_CUDA_EXPORT void mgpuStreamSynchronize(fp8rt_cu_stream stream) {
  // Inside a model run the one stream orders everything and nothing on the
  // host reads device memory: synchronize once, in fp8rt_cuda_run_end.
  if (run.active && stream == run.stream)
    return;
  ScopedContext ctx("cuStreamSynchronize");
  if (!ctx.ok())
    return;
  CUresult r = cuStreamSynchronize(stream);
  if (r != CUDA_SUCCESS)
    fail(r, "cuStreamSynchronize%s%s",
         tls.lastKernel.empty() ? ""
                                : "; last kernel launched from this thread: ",
         tls.lastKernel.c_str());
}

FP8RT_CUDA_EXPORT void mgpuStreamWaitEvent(fp8rt_cu_stream stream,
                                           fp8rt_cu_event event) {
  if (!event) {
    failMsg(CUDA_ERROR_INVALID_HANDLE,
            "cuStreamWaitEvent: event is NULL (its creation failed earlier)");
    return;
  }
  ScopedContext ctx("cuStreamWaitEvent");
  if (!ctx.ok())
    return;
  CUresult r = cuStreamWaitEvent(stream, event, 0);
  if (r != CUDA_SUCCESS)
    fail(r, "cuStreamWaitEvent");
}

FP8RT_CUDA_EXPORT fp8rt_cu_event mgpuEventCreate(void) {
  ScopedContext ctx("cuEventCreate");
  if (!ctx.ok())
    return nullptr;
  CUevent event = nullptr;
  CUresult r = cuEventCreate(&event, CU_EVENT_DISABLE_TIMING);
  if (r != CUDA_SUCCESS) {
    fail(r, "cuEventCreate");
    return nullptr;
  }
  return event;
}

FP8RT_CUDA_EXPORT void mgpuEventDestroy(fp8rt_cu_event event) {
  if (!event)
    return;
  ScopedContext ctx("cuEventDestroy");
  if (!ctx.ok())
    return;
  CUresult r = cuEventDestroy(event);
  if (r != CUDA_SUCCESS)
    fail(r, "cuEventDestroy");
}

FP8RT_CUDA_EXPORT void mgpuEventSynchronize(fp8rt_cu_event event) {
  if (!event) {
    failMsg(CUDA_ERROR_INVALID_HANDLE, "cuEventSynchronize: event is NULL");
    return;
  }
  ScopedContext ctx("cuEventSynchronize");
  if (!ctx.ok())
    return;
  CUresult r = cuEventSynchronize(event);
  if (r != CUDA_SUCCESS)
    fail(r, "cuEventSynchronize%s%s",
         tls.lastKernel.empty() ? ""
                                : "; last kernel launched from this thread: ",
         tls.lastKernel.c_str());
}

FP8RT_CUDA_EXPORT void mgpuEventRecord(fp8rt_cu_event event,
                                       fp8rt_cu_stream stream) {
  if (!event) {
    failMsg(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord: event is NULL");
    return;
  }
  ScopedContext ctx("cuEventRecord");
  if (!ctx.ok())
    return;
  CUresult r = cuEventRecord(event, stream);
  if (r != CUDA_SUCCESS)
    fail(r, "cuEventRecord");
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

FP8RT_CUDA_EXPORT void *mgpuMemAlloc(uint64_t size, fp8rt_cu_stream stream,
                                     int8_t isHostShared) {
  if (size == 0)
    return nullptr; // an empty memref: nothing to allocate, nothing to free
  ScopedContext ctx("allocating device memory");
  if (!ctx.ok())
    return nullptr;
  CUdeviceptr ptr = 0;
  CUresult r;
  AllocKind kind;
  if (isHostShared) {
    kind = AllocKind::Managed;
    r = cuMemAllocManaged(&ptr, size, CU_MEM_ATTACH_GLOBAL);
  } else if (stream && ctx.dev->memoryPools) {
    kind = AllocKind::Async;
    r = cuMemAllocAsync(&ptr, size, stream);
  } else {
    kind = AllocKind::Sync;
    r = cuMemAlloc(&ptr, size);
  }
  if (r != CUDA_SUCCESS) {
    fail(r, "%s(%llu bytes)",
         kind == AllocKind::Managed ? "cuMemAllocManaged"
         : kind == AllocKind::Async ? "cuMemAllocAsync"
                                    : "cuMemAlloc",
         (unsigned long long)size);
    return nullptr;
  }
  void *p = reinterpret_cast<void *>(ptr);
  std::lock_guard<std::mutex> lock(G().mutex);
  G().allocations[p] = kind;
  return p;
}

FP8RT_CUDA_EXPORT void mgpuMemFree(void *ptr, fp8rt_cu_stream stream) {
  if (!ptr)
    return;
  AllocKind kind = AllocKind::Sync;
  {
    std::lock_guard<std::mutex> lock(G().mutex);
    auto it = G().allocations.find(ptr);
    if (it != G().allocations.end()) {
      kind = it->second;
      G().allocations.erase(it);
    }
  }
  ScopedContext ctx("freeing device memory");
  if (!ctx.ok())
    return;
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(ptr);
  CUresult r;
  if (kind == AllocKind::Async && stream) {
    r = cuMemFreeAsync(p, stream);
  } else {
    // Synchronous frees must not pull memory from under queued work.
    if (stream && (r = cuStreamSynchronize(stream)) != CUDA_SUCCESS) {
      fail(r, "freeing %p: cuStreamSynchronize", ptr);
      return;
    }
    r = cuMemFree(p);
  }
  if (r != CUDA_SUCCESS)
    fail(r, "freeing device memory at %p", ptr);
}

FP8RT_CUDA_EXPORT void mgpuMemcpy(void *dst, void *src, size_t size,
                                  fp8rt_cu_stream stream) {
  if (size == 0)
    return;
  ScopedContext ctx("cuMemcpyAsync");
  if (!ctx.ok())
    return;
  CUresult r = cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                             reinterpret_cast<CUdeviceptr>(src), size, stream);
  if (r != CUDA_SUCCESS)
    fail(r, "cuMemcpyAsync(%p <- %p, %zu bytes)", dst, src, size);
}

FP8RT_CUDA_EXPORT void mgpuMemset32(void *dst, uint32_t value, size_t count,
                                    fp8rt_cu_stream stream) {
  if (count == 0)
    return;
  ScopedContext ctx("cuMemsetD32Async");
  if (!ctx.ok())
    return;
  CUresult r = cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, stream);
  if (r != CUDA_SUCCESS)
    fail(r, "cuMemsetD32Async(%p, 0x%08x, %zu words)", dst, value, count);
}

FP8RT_CUDA_EXPORT void mgpuMemset16(void *dst, uint16_t value, size_t count,
                                    fp8rt_cu_stream stream) {
  if (count == 0)
    return;
  ScopedContext ctx("cuMemsetD16Async");
  if (!ctx.ok())
    return;
  CUresult r = cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                count, stream);
  if (r != CUDA_SUCCESS)
    fail(r, "cuMemsetD16Async(%p, 0x%04x, %zu halfwords)", dst,
         (unsigned)value, count);
}

FP8RT_CUDA_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t size) {
  if (!ptr || size == 0)
    return;
  ScopedContext ctx("cuMemHostRegister");
  if (!ctx.ok())
    return;
  CUresult r = cuMemHostRegister(ptr, size, CU_MEMHOSTREGISTER_PORTABLE);
  if (r != CUDA_SUCCESS)
    fail(r, "cuMemHostRegister(%p, %llu bytes)", ptr,
         (unsigned long long)size);
}

FP8RT_CUDA_EXPORT void mgpuMemHostUnregister(void *ptr) {
  if (!ptr)
    return;
  ScopedContext ctx("cuMemHostUnregister");
  if (!ctx.ok())
    return;
  CUresult r = cuMemHostUnregister(ptr);
  if (r != CUDA_SUCCESS)
    fail(r, "cuMemHostUnregister(%p)", ptr);
}

FP8RT_CUDA_EXPORT void mgpuMemHostRegisterMemRef(int64_t rank,
                                                 void *descriptor,
                                                 int64_t elementSize) {
  if (!descriptor || rank < 0 || elementSize <= 0) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "registering a memref: bad descriptor (rank %lld, element size "
            "%lld)",
            (long long)rank, (long long)elementSize);
    return;
  }
  MemRefView v = viewMemRef(rank, descriptor);
  int64_t span = memRefSpan(rank, v, elementSize);
  if (span < 0) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "registering a memref: negative strides are not supported");
    return;
  }
  mgpuMemHostRegister(v.aligned + v.offset * elementSize,
                      static_cast<uint64_t>(span));
}

FP8RT_CUDA_EXPORT void mgpuMemHostUnregisterMemRef(int64_t rank,
                                                   void *descriptor,
                                                   int64_t elementSize) {
  if (!descriptor || rank < 0 || elementSize <= 0) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "unregistering a memref: bad descriptor (rank %lld)",
            (long long)rank);
    return;
  }
  MemRefView v = viewMemRef(rank, descriptor);
  if (memRefSpan(rank, v, elementSize) <= 0)
    return; // nothing was registered
  mgpuMemHostUnregister(v.aligned + v.offset * elementSize);
}

FP8RT_CUDA_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  std::lock_guard<std::mutex> lock(G().mutex);
  if (device < 0 || device >= kMaxDevices) {
    G().defaultDevice = -1;
    G().deviceError = "mgpuSetDefaultDevice(" + std::to_string(device) +
                   "): not a device ordinal";
    return;
  }
  G().defaultDevice = device;
}

FP8RT_CUDA_EXPORT void *mgpuTensorMapEncodeTiledMemref(
    int64_t rank, void *descriptor, int64_t dataType, int64_t interleave,
    int64_t swizzle, int64_t l2Promotion, int64_t oobFill, int64_t *box) {
  size_t elementBytes = tensorMapElementBytes(dataType);
  if (!descriptor || !box || rank < 1 || rank > 5 || !elementBytes) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "mgpuTensorMapEncodeTiledMemref: unsupported request (rank %lld, "
            "data type %lld)",
            (long long)rank, (long long)dataType);
    return nullptr;
  }
  MemRefView v = viewMemRef(rank, descriptor);
  return fp8rt_cuda_tensor_map_encode_tiled(
      v.aligned + v.offset * static_cast<int64_t>(elementBytes),
      static_cast<int32_t>(rank), v.sizes, v.strides, box,
      static_cast<int32_t>(elementBytes), static_cast<int32_t>(dataType),
      static_cast<int32_t>(interleave), static_cast<int32_t>(swizzle),
      static_cast<int32_t>(l2Promotion), static_cast<int32_t>(oobFill));
}

//===----------------------------------------------------------------------===//
// Model runs: device memory pool, runs, graphs, copies
//===----------------------------------------------------------------------===//

namespace {
// Caching pool behind _mlir_memref_to_llvm_alloc/free (the host code of the
// GPU pipeline allocates every buffer through them). Blocks go back to the
// pool when freed and are handed out again in stream order: every kernel of
// a run is on the run's one stream, so a block freed by the host after
// queuing its last reader can be reused by any later launch. Memory returns
// to the driver only when an allocation fails (after a synchronize).
struct Pool {
  std::mutex mutex;
  // Instantiated graphs hold addresses of blocks in the free lists: while
  // one exists, no block may go back to the driver.
  int liveGraphs = 0;
  std::multimap<size_t, void *> free;        // size -> block
  std::unordered_map<void *, size_t> live;   // block -> size
  size_t cached = 0, inUse = 0, peak = 0;
};
Pool &P() {
  static Pool *p = new Pool;
  return *p;
}
constexpr size_t kPoolGranule = 512;

int liveGraphCount() {
  std::lock_guard<std::mutex> lock(P().mutex);
  return P().liveGraphs;
}

void trimPoolLocked() {
  for (auto &[size, block] : P().free) {
    cuMemFree(reinterpret_cast<CUdeviceptr>(block));
    P().cached -= size;
  }
  P().free.clear();
}
} // namespace

FP8RT_CUDA_EXPORT void *_mlir_memref_to_llvm_alloc(size_t size) {
  size_t rounded = (std::max<size_t>(size, 1) + kPoolGranule - 1) /
                   kPoolGranule * kPoolGranule;
  {
    std::lock_guard<std::mutex> lock(P().mutex);
    auto it = P().free.lower_bound(rounded);
    if (it != P().free.end() && it->first <= 2 * rounded) {
      void *block = it->second;
      size_t blockSize = it->first;
      P().free.erase(it);
      P().live[block] = blockSize;
      P().inUse += blockSize;
      P().peak = std::max(P().peak, P().inUse);
      return block;
    }
  }
  ScopedContext ctx("allocating a buffer of the model");
  if (!ctx.ok())
    return nullptr;
  CUdeviceptr ptr = 0;
  CUresult r = cuMemAlloc(&ptr, rounded);
  if (r == CUDA_ERROR_OUT_OF_MEMORY && !run.capturing) {
    // Return cached blocks to the driver and retry -- unless a captured
    // graph may still use them (or this run is being captured: its nodes
    // may refer to freed blocks).
    if (run.stream)
      cuStreamSynchronize(run.stream);
    std::lock_guard<std::mutex> lock(P().mutex);
    if (P().liveGraphs == 0) {
      trimPoolLocked();
      r = cuMemAlloc(&ptr, rounded);
    }
  }
  if (r != CUDA_SUCCESS) {
    fail(r, "cuMemAlloc(%llu bytes) for a buffer of the model (%llu bytes "
            "in use by the pool)",
         (unsigned long long)rounded, (unsigned long long)P().inUse);
    return nullptr;
  }
  void *block = reinterpret_cast<void *>(ptr);
  std::lock_guard<std::mutex> lock(P().mutex);
  P().live[block] = rounded;
  P().cached += rounded;
  P().inUse += rounded;
  P().peak = std::max(P().peak, P().inUse);
  return block;
}

FP8RT_CUDA_EXPORT void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                           size_t size) {
  // Driver allocations are 512-byte aligned at least.
  if (alignment > kPoolGranule) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "a buffer asks for %llu-byte alignment; the pool gives %llu",
            (unsigned long long)alignment, (unsigned long long)kPoolGranule);
    return nullptr;
  }
  return _mlir_memref_to_llvm_alloc(size);
}

FP8RT_CUDA_EXPORT void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  std::lock_guard<std::mutex> lock(P().mutex);
  auto it = P().live.find(ptr);
  if (it == P().live.end()) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "freeing %p, which the buffer pool did not allocate", ptr);
    return;
  }
  P().inUse -= it->second;
  P().free.emplace(it->second, ptr);
  P().live.erase(it);
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_live_graphs(void) {
  return liveGraphCount();
}

FP8RT_CUDA_EXPORT void fp8rt_cuda_pool_stats(uint64_t *cached,
                                             uint64_t *in_use,
                                             uint64_t *peak) {
  std::lock_guard<std::mutex> lock(P().mutex);
  if (cached)
    *cached = P().cached;
  if (in_use)
    *in_use = P().inUse;
  if (peak)
    *peak = P().peak;
}

namespace {
// This thread's model stream, created on first use (needs the context
// current). Graphs captured on one thread replay on any thread's stream.
bool ensureRunStream() {
  if (run.stream)
    return true;
  CUresult r = cuStreamCreate(&run.stream, CU_STREAM_NON_BLOCKING);
  if (r != CUDA_SUCCESS) {
    run.stream = nullptr;
    fail(r, "cuStreamCreate (the model stream)");
    return false;
  }
  return true;
}

void dropTimings() {
  for (KernelTiming &t : run.timings) {
    cuEventDestroy(t.start);
    cuEventDestroy(t.end);
  }
  run.timings.clear();
}
} // namespace

namespace {
// The run's timing events (created once per thread), the first recorded on
// the run's stream now; false when they are not usable (the run untimed).
bool startRunTiming() {
  if (!run.begin && cuEventCreate(&run.begin, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    run.begin = nullptr;
  if (!run.end && cuEventCreate(&run.end, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
    run.end = nullptr;
  return run.begin && run.end &&
         cuEventRecord(run.begin, run.stream) == CUDA_SUCCESS;
}

// The end of a run on the run's stream: its end event recorded (when
// `timed`: startRunTiming), the stream synchronized, and run.lastMs set
// from the two events when the run succeeded.
CUresult finishRunTiming(bool timed) {
  timed = timed && cuEventRecord(run.end, run.stream) == CUDA_SUCCESS;
  CUresult r = cuStreamSynchronize(run.stream);
  float ms = 0;
  if (r == CUDA_SUCCESS && !tls.pending && timed &&
      cuEventElapsedTime(&ms, run.begin, run.end) == CUDA_SUCCESS)
    run.lastMs = ms;
  return r;
}
} // namespace

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_run_begin(int32_t capture) {
  if (run.active) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "fp8rt_cuda_run_begin: a run is already in progress on this "
            "thread");
    return fp8rt_cuda_status();
  }
  fp8rt_cuda_clear_error();
  ScopedContext ctx("starting a model run");
  if (!ctx.ok())
    return fp8rt_cuda_status();
  if (!ensureRunStream())
    return fp8rt_cuda_status();
  if (capture) {
    CUresult r =
        cuStreamBeginCapture(run.stream, CU_STREAM_CAPTURE_MODE_RELAXED);
    if (r != CUDA_SUCCESS) {
      fail(r, "cuStreamBeginCapture");
      return fp8rt_cuda_status();
    }
    run.capturing = true;
  }
  run.active = true;
  run.lastMs = -1;
  run.timed = false;
  if (!capture)
    run.timed = startRunTiming();
  return 0;
}

FP8RT_CUDA_EXPORT float fp8rt_cuda_last_run_ms(void) { return run.lastMs; }

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_run_end(void **graph_exec) {
  if (graph_exec)
    *graph_exec = nullptr;
  if (!run.active) {
    failMsg(CUDA_ERROR_INVALID_VALUE,
            "fp8rt_cuda_run_end: no run in progress on this thread");
    return fp8rt_cuda_status();
  }
  run.active = false;
  ScopedContext ctx("finishing a model run");
  if (!ctx.ok()) {
    if (run.capturing) { // leave the stream usable
      CUgraph graph = nullptr;
      if (cuStreamEndCapture(run.stream, &graph) == CUDA_SUCCESS && graph)
        cuGraphDestroy(graph);
      run.capturing = false;
    }
    dropTimings();
    return fp8rt_cuda_status();
  }
  if (run.capturing) {
    run.capturing = false;
    CUgraph graph = nullptr;
    CUresult r = cuStreamEndCapture(run.stream, &graph);
    if (r != CUDA_SUCCESS) {
      fail(r, "cuStreamEndCapture");
      return fp8rt_cuda_status();
    }
    if (tls.pending) { // a launch failed while capturing
      cuGraphDestroy(graph);
      return fp8rt_cuda_status();
    }
    CUgraphExec exec = nullptr;
    r = cuGraphInstantiate(&exec, graph, 0);
    cuGraphDestroy(graph);
    if (r != CUDA_SUCCESS) {
      fail(r, "cuGraphInstantiate");
      return fp8rt_cuda_status();
    }
    if (graph_exec) {
      *graph_exec = exec;
      std::lock_guard<std::mutex> lock(P().mutex);
      ++P().liveGraphs;
    } else {
      cuGraphExecDestroy(exec);
    }
    return fp8rt_cuda_status();
  }
  CUresult r = finishRunTiming(run.timed);
  if (r == CUDA_SUCCESS && !tls.pending)
    collectTimings();
  else
    dropTimings();
  if (r != CUDA_SUCCESS)
    fail(r, "running the model%s%s",
         tls.lastKernel.empty() ? "" : " (last kernel launched: ",
         tls.lastKernel.empty() ? "" : (tls.lastKernel + ")").c_str());
  return fp8rt_cuda_status();
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_graph_launch(void *graph_exec) {
  fp8rt_cuda_clear_error();
  if (!graph_exec) {
    failMsg(CUDA_ERROR_INVALID_VALUE, "fp8rt_cuda_graph_launch: no graph");
    return fp8rt_cuda_status();
  }
  ScopedContext ctx("replaying the model's CUDA graph");
  if (!ctx.ok() || !ensureRunStream())
    return fp8rt_cuda_status();
  // Timed like a plain run (fp8rt_cuda_last_run_ms): events on the run's
  // stream around the replay.
  run.lastMs = -1;
  const bool timed = startRunTiming();
  CUresult r = cuGraphLaunch(static_cast<CUgraphExec>(graph_exec), run.stream);
  if (r == CUDA_SUCCESS)
    r = finishRunTiming(timed);
  if (r != CUDA_SUCCESS)
    fail(r, "replaying the model's CUDA graph");
  return fp8rt_cuda_status();
}

FP8RT_CUDA_EXPORT void fp8rt_cuda_graph_destroy(void *graph_exec) {
  if (!graph_exec)
    return;
  ScopedContext ctx("destroying a CUDA graph");
  if (ctx.ok())
    cuGraphExecDestroy(static_cast<CUgraphExec>(graph_exec));
  std::lock_guard<std::mutex> lock(P().mutex);
  --P().liveGraphs;
}

FP8RT_CUDA_EXPORT void *fp8rt_cuda_alloc(size_t bytes) {
  ScopedContext ctx("allocating device memory");
  if (!ctx.ok())
    return nullptr;
  CUdeviceptr ptr = 0;
  CUresult r = cuMemAlloc(&ptr, std::max<size_t>(bytes, 1));
  if (r != CUDA_SUCCESS) {
    fail(r, "cuMemAlloc(%llu bytes)", (unsigned long long)bytes);
    return nullptr;
  }
  return reinterpret_cast<void *>(ptr);
}

FP8RT_CUDA_EXPORT void fp8rt_cuda_free(void *ptr) {
  if (!ptr)
    return;
  ScopedContext ctx("freeing device memory");
  if (!ctx.ok())
    return;
  CUresult r = cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
  if (r != CUDA_SUCCESS)
    fail(r, "cuMemFree(%p)", ptr);
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_copy_many(void *const *dst,
                                               const void *const *src,
                                               const size_t *bytes, int32_t n,
                                               int32_t *failed) {
  ScopedContext ctx("copying memory");
  if (!ctx.ok())
    return fp8rt_cuda_status();
  for (int32_t i = 0; i < n; ++i) {
    if (bytes[i] == 0)
      continue;
    CUresult r = cuMemcpy(reinterpret_cast<CUdeviceptr>(dst[i]),
                          reinterpret_cast<CUdeviceptr>(src[i]), bytes[i]);
    if (r != CUDA_SUCCESS) {
      if (failed)
        *failed = i;
      fail(r, "cuMemcpy(%p <- %p, %llu bytes)", dst[i], src[i],
           (unsigned long long)bytes[i]);
      return fp8rt_cuda_status();
    }
  }
  // A copy from pageable memory may return before its DMA has landed, and
  // the model stream does not wait for the legacy stream: wait here (once
  // for all of them), so that the next run (or graph replay) reads the new
  // bytes.
  CUresult r = cuStreamSynchronize(CU_STREAM_LEGACY);
  if (r != CUDA_SUCCESS) {
    if (failed)
      *failed = n;
    fail(r, "cuStreamSynchronize after %d copies", n);
  }
  return fp8rt_cuda_status();
}

namespace {
/// Pinned staging for weight uploads: two buffers, so that copying the next
/// chunk out of the (pageable, mapped) weights file overlaps the DMA of the
/// previous one. Released when the upload ends.
struct PinnedStaging {
  static constexpr size_t kChunk = size_t(64) << 20;
  void *buffer[2] = {nullptr, nullptr};
  CUevent done[2] = {nullptr, nullptr};
  bool pending[2] = {false, false};
  CUstream stream = nullptr;

  CUresult create() {
    CUresult r = cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING);
    for (int k = 0; k < 2 && r == CUDA_SUCCESS; ++k) {
      r = cuMemHostAlloc(&buffer[k], kChunk, 0);
      if (r == CUDA_SUCCESS)
        r = cuEventCreate(&done[k], CU_EVENT_DISABLE_TIMING);
    }
    return r;
  }
  ~PinnedStaging() {
    if (stream)
      cuStreamSynchronize(stream);
    for (int k = 0; k < 2; ++k) {
      if (done[k])
        cuEventDestroy(done[k]);
      if (buffer[k])
        cuMemFreeHost(buffer[k]);
    }
    if (stream)
      cuStreamDestroy(stream);
  }
};
} // namespace

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_upload(void *const *dst,
                                            const void *const *src,
                                            const size_t *bytes, int32_t n,
                                            int32_t *failed) {
  ScopedContext ctx("uploading weights");
  if (!ctx.ok())
    return fp8rt_cuda_status();
  PinnedStaging staging;
  if (CUresult r = staging.create(); r != CUDA_SUCCESS) {
    // No pinned memory to spare: plain copies from pageable memory.
    std::fprintf(stderr, "fp8rt: no pinned staging memory (%d): weights "
                         "upload from pageable memory\n", int(r));
    return fp8rt_cuda_copy_many(dst, src, bytes, n, failed);
  }
  int slot = 0;
  for (int32_t i = 0; i < n; ++i) {
    for (size_t off = 0; off < bytes[i]; off += PinnedStaging::kChunk) {
      size_t len = std::min(PinnedStaging::kChunk, bytes[i] - off);
      CUresult r = CUDA_SUCCESS;
      if (staging.pending[slot])
        r = cuEventSynchronize(staging.done[slot]);
      if (r == CUDA_SUCCESS) {
        std::memcpy(staging.buffer[slot],
                    static_cast<const char *>(src[i]) + off, len);
        r = cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst[i]) + off,
                              staging.buffer[slot], len, staging.stream);
      }
      if (r == CUDA_SUCCESS)
        r = cuEventRecord(staging.done[slot], staging.stream);
      if (r != CUDA_SUCCESS) {
        if (failed)
          *failed = i;
        fail(r, "uploading %llu bytes to %p", (unsigned long long)len,
             dst[i]);
        return fp8rt_cuda_status();
      }
      staging.pending[slot] = true;
      slot ^= 1;
    }
  }
  if (CUresult r = cuStreamSynchronize(staging.stream); r != CUDA_SUCCESS) {
    if (failed)
      *failed = n;
    fail(r, "cuStreamSynchronize after the weights upload");
  }
  return fp8rt_cuda_status();
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_copy(void *dst, const void *src,
                                          size_t bytes) {
  if (bytes == 0)
    return 0;
  return fp8rt_cuda_copy_many(&dst, &src, &bytes, 1, nullptr);
}

//===----------------------------------------------------------------------===//
// Device-resident tensors (fp8rt_model_run_ex)
//===----------------------------------------------------------------------===//

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_check_device_tensor(const void *ptr,
                                                         size_t bytes,
                                                         char *why,
                                                         size_t why_size) {
  auto refuse = [&](const std::string &message) {
    if (why && why_size)
      std::snprintf(why, why_size, "%s", message.c_str());
    return int32_t(1);
  };
  ScopedContext ctx("checking a device tensor");
  if (!ctx.ok())
    return refuse(fp8rt_cuda_last_error());
  CUdeviceptr p = reinterpret_cast<CUdeviceptr>(ptr);
  // Zero-filled 8-byte slots: every attribute below is at most 8 bytes.
  auto get = [&](CUpointer_attribute a, unsigned long long &v) {
    v = 0;
    return cuPointerGetAttribute(&v, a, p);
  };
  unsigned long long type = 0, managed = 0, ordinal = 0, start = 0, size = 0;
  if (get(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, type) != CUDA_SUCCESS)
    return refuse("it is not CUDA memory (a host pointer CUDA does not "
                  "know: pass it as host memory)");
  get(CU_POINTER_ATTRIBUTE_IS_MANAGED, managed);
  if (type == CU_MEMORYTYPE_HOST && !managed)
    return refuse("it is pinned host memory, not device memory (pass it "
                  "as host memory)");
  if (!managed) {
    if (get(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ordinal) == CUDA_SUCCESS &&
        static_cast<CUdevice>(ordinal) != ctx.dev->device)
      return refuse("it is memory of CUDA device " + std::to_string(ordinal) +
                    "; the model runs on device " +
                    std::to_string(ctx.dev->device));
  }
  if (get(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, start) == CUDA_SUCCESS &&
      get(CU_POINTER_ATTRIBUTE_RANGE_SIZE, size) == CUDA_SUCCESS && size) {
    unsigned long long end = start + size, need = p + bytes;
    if (need < p || need > end)
      return refuse("it needs " + std::to_string(bytes) +
                    " bytes but its allocation ends " +
                    std::to_string(end - p) + " bytes after its start");
  }
  return 0;
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_run_after(void *stream) {
  fp8rt_cuda_clear_error();
  ScopedContext ctx("ordering a run after the caller's stream");
  if (!ctx.ok() || !ensureRunStream())
    return fp8rt_cuda_status();
  CUstream s = static_cast<CUstream>(stream);
  if (s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD && s != nullptr) {
    CUcontext owner = nullptr;
    CUresult r = cuStreamGetCtx(s, &owner);
    if (r != CUDA_SUCCESS) {
      fail(r, "the given stream %p is not a usable CUDA stream", stream);
      return fp8rt_cuda_status();
    }
    if (owner != ctx.dev->context) {
      failMsg(CUDA_ERROR_INVALID_CONTEXT,
              "the given stream %p belongs to another CUDA context than the "
              "model's (the primary context of device %d)",
              stream, int(ctx.dev->device));
      return fp8rt_cuda_status();
    }
  }
  if (!run.join) {
    CUresult r = cuEventCreate(&run.join, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) {
      run.join = nullptr;
      fail(r, "cuEventCreate (joining the caller's stream)");
      return fp8rt_cuda_status();
    }
  }
  CUresult r = cuEventRecord(run.join, s);
  if (r == CUDA_SUCCESS)
    r = cuStreamWaitEvent(run.stream, run.join, 0);
  if (r != CUDA_SUCCESS)
    fail(r, "making the model stream wait for the given stream %p", stream);
  return fp8rt_cuda_status();
}

FP8RT_CUDA_EXPORT int32_t fp8rt_cuda_copy_on_run_stream(void *const *dst,
                                                        const void *const *src,
                                                        const size_t *bytes,
                                                        int32_t n,
                                                        int32_t *failed) {
  ScopedContext ctx("copying memory on the model stream");
  if (!ctx.ok() || !ensureRunStream())
    return fp8rt_cuda_status();
  for (int32_t i = 0; i < n; ++i) {
    if (bytes[i] == 0)
      continue;
    CUresult r = cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst[i]),
                               reinterpret_cast<CUdeviceptr>(src[i]), bytes[i],
                               run.stream);
    if (r != CUDA_SUCCESS) {
      if (failed)
        *failed = i;
      fail(r, "cuMemcpyAsync(%p <- %p, %llu bytes)", dst[i], src[i],
           (unsigned long long)bytes[i]);
      return fp8rt_cuda_status();
    }
  }
  return fp8rt_cuda_status();
}
