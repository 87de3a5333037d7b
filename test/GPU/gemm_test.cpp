//===- gemm_test.cpp - FP8 GEMM kernels against a CPU FP32 reference ------===//
//
// Part of fp8-opt. Linked with gemm.o (test/GPU/gemm.mlir lowered through
// convert-fp8-gemm-to-gpu and gpu-lower-to-nvvm-pipeline: host code + sm_90a
// cubins) and libfp8rt_cuda.a. Every product runs on managed memory from
// mgpuMemAlloc and is compared with a CPU reference that dequantizes the FP8
// operands with fp8::numerics (f32(q) * s), sums in double, adds the bias,
// applies the epilogue and compares in FP32.
//
//   gemm_test            on a GPU (scripts/gpu-check suite `gemm`)
//   gemm_test --no-run   only prints what it would run (no driver needed)
//   gemm_test --no-perf  every product but the timed 4096^3 one
//   gemm_test --only T   the products whose name contains T
//
// Built with GEMM_BENCH (gemm_bench) it runs bench/gemm/make_gemm_bench.py's
// products instead: Llama-3-8B-shaped timed products, checked on samples
// (bench/gemm/gemm_table.sh runs it next to cuBLAS).
//
// Prints one "PASS|FAIL <check> <detail>" line per product (relative L2
// error, max abs error, tolerance) and a "PASS perf_* <time>" line for the
// timed 4096^3 block-scaled product (checked on sampled outputs).
//
//===----------------------------------------------------------------------===//

#include "fp8/Numerics/Numerics.h"
#include "fp8rt/fp8rt_cuda.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace numerics = mlir::fp8::numerics;

namespace {

// MLIR's memref descriptor (identity layout).
template <int N> struct MemRef {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};
template <> struct MemRef<0> {
  void *allocated;
  void *aligned;
  int64_t offset;
};

int failures = 0;

void report(bool ok, const std::string &name, const std::string &detail) {
  std::printf("%s %s %s\n", ok ? "PASS" : "FAIL", name.c_str(),
              detail.c_str());
  std::fflush(stdout);
  if (!ok)
    ++failures;
}

enum class Ty { E4M3, E5M2, E8M0, F32, F16, BF16 };
size_t bytesOf(Ty t) {
  switch (t) {
  case Ty::E4M3:
  case Ty::E5M2:
  case Ty::E8M0:
    return 1;
  case Ty::F16:
  case Ty::BF16:
    return 2;
  case Ty::F32:
    return 4;
  }
  return 4;
}

float halfToFloat(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(mant | 0x400), exp - 25);
  return sign ? -v : v;
}
uint16_t floatToHalfExact(float f) { // |f| normal half, exactly representable
  if (f == 0.0f)
    return std::signbit(f) ? 0x8000 : 0;
  uint32_t b;
  std::memcpy(&b, &f, 4);
  uint32_t sign = b >> 31;
  int exp = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
  uint32_t mant = (b >> 13) & 0x3ff;
  return static_cast<uint16_t>((sign << 15) | (exp << 10) | mant);
}
float bf16ToFloat(uint16_t h) {
  uint32_t b = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

/// A managed buffer with its logical element type and shape.
struct Buf {
  Ty ty;
  std::vector<int64_t> shape;
  void *ptr = nullptr;
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t bytes() const { return numel() * bytesOf(ty); }
  uint8_t *u8() const { return static_cast<uint8_t *>(ptr); }
  float *f32() const { return static_cast<float *>(ptr); }
  uint16_t *u16() const { return static_cast<uint16_t *>(ptr); }
  float get(int64_t i) const {
    switch (ty) {
    case Ty::E4M3:
      return numerics::fp8ToFloat(u8()[i], numerics::Fmt::E4M3);
    case Ty::E5M2:
      return numerics::fp8ToFloat(u8()[i], numerics::Fmt::E5M2);
    case Ty::E8M0:
      return numerics::e8m0ToFloat(u8()[i]);
    case Ty::F32:
      return f32()[i];
    case Ty::F16:
      return halfToFloat(u16()[i]);
    case Ty::BF16:
      return bf16ToFloat(u16()[i]);
    }
    return NAN;
  }
};

bool alloc(Buf &b) {
  b.ptr = mgpuMemAlloc(b.bytes(), nullptr, 1);
  if (!b.ptr)
    return false;
  std::memset(b.ptr, 0, b.bytes());
  return true;
}

template <int N> MemRef<N> desc(const Buf &b) {
  MemRef<N> d;
  d.allocated = d.aligned = b.ptr;
  d.offset = 0;
  if constexpr (N > 0) {
    int64_t stride = 1;
    for (int i = N - 1; i >= 0; --i) {
      d.sizes[i] = b.shape[i];
      d.strides[i] = stride;
      stride *= b.shape[i];
    }
  }
  return d;
}

std::mt19937 rng(1234);

/// Random FP8 (or BF16) data: values of about unit magnitude, rounded to
/// the type (RNE; saturating for FP8). Each element takes 16 random bits
/// through a table of the type's encodings of 2^16 evenly spaced values in
/// the range (the bench's operands hold up to 176 M elements: per-element
/// float sampling and casting took minutes), filled by several threads,
/// each from its own deterministic stream.
void fillFP8(Buf &b, float range, bool positive = false) {
  const float lo = positive ? 0.0f : -range, width = range - lo;
  const bool bf16 = b.ty == Ty::BF16;
  auto fmt = b.ty == Ty::E4M3 ? numerics::Fmt::E4M3 : numerics::Fmt::E5M2;
  std::vector<uint16_t> table(1 << 16);
  for (int i = 0; i < (1 << 16); ++i) {
    float v = lo + width * (static_cast<float>(i) + 0.5f) / 65536.0f;
    if (bf16) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      bits += 0x7FFFu + ((bits >> 16) & 1u);
      table[i] = static_cast<uint16_t>(bits >> 16);
    } else {
      table[i] = numerics::castToFP8(v, fmt);
    }
  }
  const uint64_t seed = rng();
  const int64_t n = b.numel();
  const int threads =
      static_cast<int>(std::clamp<int64_t>(n >> 20, 1, 16));
  auto work = [&](int t) {
    // splitmix64: four 16-bit draws per step.
    uint64_t state = seed ^ (0x9E3779B97F4A7C15ull * (t + 1));
    for (int64_t i = n * t / threads, end = n * (t + 1) / threads; i < end;) {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      for (int j = 0; j < 4 && i < end; ++j, ++i, z >>= 16) {
        uint16_t code = table[z & 0xFFFF];
        if (bf16)
          b.u16()[i] = code;
        else
          b.u8()[i] = static_cast<uint8_t>(code);
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back(work, t);
  work(0);
  for (std::thread &th : pool)
    th.join();
}
/// Scales: powers of two in [2^-3, 2^2] times a random mantissa for f32,
/// E8M0 bytes in [124, 130].
void fillScale(Buf &b) {
  std::uniform_int_distribution<int> e(-3, 2);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  for (int64_t i = 0; i < b.numel(); ++i) {
    if (b.ty == Ty::E8M0)
      b.u8()[i] = static_cast<uint8_t>(127 + e(rng));
    else
      b.f32()[i] = std::ldexp(mant(rng), e(rng));
  }
}
/// Bias values k/64 in [-1, 1]: exact in every high-precision type.
void fillBias(Buf &b) {
  std::uniform_int_distribution<int> k(-64, 64);
  for (int64_t i = 0; i < b.numel(); ++i) {
    float v = k(rng) / 64.0f;
    if (b.ty == Ty::F32)
      b.f32()[i] = v;
    else if (b.ty == Ty::F16)
      b.u16()[i] = floatToHalfExact(v);
    else {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      b.u16()[i] = static_cast<uint16_t>(bits >> 16);
    }
  }
}

enum class Epi { None, Relu, GeluTanh };
double applyEpi(double x, Epi e) {
  switch (e) {
  case Epi::None:
    return x;
  case Epi::Relu:
    return x > 0 ? x : 0;
  case Epi::GeluTanh:
    return 0.5 * x *
           (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  }
  return x;
}

/// `x` rounded to the nearest `t` (f16 / bf16: to nearest even, f16
/// overflowing to infinity; f32 unchanged).
double roundTo(Ty t, double x) {
  if (t != Ty::F16 && t != Ty::BF16)
    return static_cast<float>(x);
  if (x == 0 || !std::isfinite(x))
    return x;
  const int mant = t == Ty::F16 ? 10 : 7, minExp = t == Ty::F16 ? -14 : -126;
  int e =
      std::max(static_cast<int>(std::floor(std::log2(std::fabs(x)))), minExp);
  double q = std::ldexp(1.0, e - mant);
  double r = std::nearbyint(x / q) * q;
  if (t == Ty::F16 && std::fabs(r) > 65504)
    return std::copysign(INFINITY, r);
  return r;
}

/// The fused consumer (Product::fused) of the rounded product `p` and the
/// input `e`, in double.
double applyFused(int fused, double p, double e) {
  if (fused == 1)
    return p / (1 + std::exp(-p)) * e;
  return p + e;
}

/// A scale layout over data [batch, R, K]: blocks rowBlock x kBlock, or
/// per-tensor (rowBlock = kBlock = 0).
struct Layout {
  int64_t rowBlock = 0, kBlock = 0;
  bool perTensor() const { return rowBlock == 0; }
};
Layout tensorL() { return {}; }
Layout blockL(int64_t r, int64_t k) { return {r, k}; }

struct Product {
  std::string name;
  int64_t batch, m, n, k; // lhs [batch, m, k]
  bool rhsBatched;
  Ty lhsTy, rhsTy, scaleTy, outTy;
  Layout lhsL, rhsL;
  int biasKind; // 0 none, 1 [N], 2 full
  Ty biasTy;
  Epi epi;
  bool positive = false;
  int64_t samples = 0; // 0: check every output; else that many samples
  int timedRuns = 0;
  int64_t lhsMMajor = 0; // M-major lhs scales padded to this (0: canonical)
  // A fused consumer (gemm.mlir's fused_*): the product rounded to outTy,
  // then 1: SiLU(product) * e, 2: product + e, where e is an [batch, M, N]
  // input of biasTy passed in the bias slot (biasKind 0).
  int fused = 0;
};

int64_t alignUp(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

/// The scale of element (batchIdx, r, kk); `mMajor` > 0: the scales are
/// stored [batch, Kb, align(Mb, mMajor)] (scaled_matmul m_major).
float scaleOf(const Buf &s, const Layout &l, int64_t batchIdx, int64_t rows,
              int64_t k, int64_t r, int64_t kk, int64_t mMajor = 0) {
  if (l.perTensor())
    return s.get(0);
  int64_t nrb = (rows + l.rowBlock - 1) / l.rowBlock;
  int64_t nkb = (k + l.kBlock - 1) / l.kBlock;
  if (mMajor)
    return s.get((batchIdx * nkb + kk / l.kBlock) * alignUp(nrb, mMajor) +
                 r / l.rowBlock);
  return s.get((batchIdx * nrb + r / l.rowBlock) * nkb + kk / l.kBlock);
}

using RunFn = void (*)(const Product &, Buf &, Buf &, Buf &, Buf &, Buf *,
                       Buf &);

void check(const Product &p, RunFn run) {
  std::vector<int64_t> lhsShape = {p.m, p.k}, rhsShape = {p.n, p.k},
                       outShape = {p.m, p.n};
  if (p.batch > 1) {
    lhsShape.insert(lhsShape.begin(), p.batch);
    outShape.insert(outShape.begin(), p.batch);
    if (p.rhsBatched)
      rhsShape.insert(rhsShape.begin(), p.batch);
  }
  auto scaleShape = [&](const Layout &l, int64_t rows, bool batched,
                        int64_t mMajor) {
    std::vector<int64_t> s;
    if (l.perTensor())
      return s;
    if (batched && p.batch > 1)
      s.push_back(p.batch);
    int64_t nrb = (rows + l.rowBlock - 1) / l.rowBlock;
    int64_t nkb = (p.k + l.kBlock - 1) / l.kBlock;
    if (mMajor) {
      // The padding holds random scales too: reading it would show.
      s.push_back(nkb);
      s.push_back(alignUp(nrb, mMajor));
    } else {
      s.push_back(nrb);
      s.push_back(nkb);
    }
    return s;
  };
  Buf a{p.lhsTy, lhsShape}, b{p.rhsTy, rhsShape}, out{p.outTy, outShape};
  Buf sa{p.scaleTy, scaleShape(p.lhsL, p.m, true, p.lhsMMajor)};
  Buf sb{p.scaleTy, scaleShape(p.rhsL, p.n, p.rhsBatched, 0)};
  Buf bias{p.biasTy, p.biasKind == 1 ? std::vector<int64_t>{p.n} : outShape};
  const bool extra = p.biasKind || p.fused;
  if (!alloc(a) || !alloc(b) || !alloc(out) || !alloc(sa) || !alloc(sb) ||
      (extra && !alloc(bias))) {
    report(false, p.name, std::string("mgpuMemAlloc: ") +
                              fp8rt_cuda_last_error());
    return;
  }
  fillFP8(a, p.positive ? 2.0f : 4.0f, p.positive);
  fillFP8(b, p.positive ? 2.0f : 4.0f, p.positive);
  fillScale(sa);
  fillScale(sb);
  if (extra)
    fillBias(bias);
  // Poison the output: a kernel that skips elements fails.
  std::memset(out.ptr, 0xFF, out.bytes());

  fp8rt_cuda_clear_error();
  run(p, a, sa, b, sb, extra ? &bias : nullptr, out);
  int32_t st = fp8rt_cuda_synchronize();
  if (st != 0) {
    report(false, p.name, std::string("launch: ") + fp8rt_cuda_last_error());
    return;
  }
  std::string timing;
  if (p.timedRuns) {
    // Two timings after a warm-up call: each call as its own fp8rt run
    // (CUDA events on the run's stream around the launch, as torch's
    // benchmarks time cuBLAS: median of `timedRuns` calls), and calls back
    // to back in one run (one stream, one synchronize per batch of kBatch
    // calls, as model libraries run them; host clock, median of
    // `timedRuns` batches). Sustained back-to-back calls may clock lower.
    constexpr int kBatch = 10;
    const double flops = 2.0 * p.batch * p.m * p.n * p.k;
    auto runOnce = [&] { run(p, a, sa, b, sb, extra ? &bias : nullptr, out); };
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::vector<double> single, batches;
    for (int i = 0; i <= p.timedRuns; ++i) {
      fp8rt_cuda_run_begin(0);
      runOnce();
      fp8rt_cuda_run_end(nullptr);
      if (i > 0) // the first is the warm-up
        single.push_back(fp8rt_cuda_last_run_ms() * 1e-3);
    }
    for (int i = 0; i <= p.timedRuns; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      fp8rt_cuda_run_begin(0);
      for (int j = 0; j < kBatch; ++j)
        runOnce();
      fp8rt_cuda_run_end(nullptr);
      if (i > 0)
        batches.push_back(std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count() /
                          kBatch);
    }
    double event = median(single), pipelined = median(batches);
    if (*std::min_element(single.begin(), single.end()) <= 0)
      report(false, p.name + "_timing",
             std::string("fp8rt_cuda_last_run_ms gave no GPU time: ") +
                 fp8rt_cuda_last_error());
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  " time %.3f ms (%.1f TFLOP/s, CUDA events, median of %d "
                  "calls) back-to-back %.3f ms (%.1f TFLOP/s, median of %d "
                  "x %d calls)",
                  event * 1e3, flops / event / 1e12, p.timedRuns,
                  pipelined * 1e3, flops / pipelined / 1e12, p.timedRuns,
                  kBatch);
    timing = buf;
  }

  // CPU reference on every output or on samples.
  std::vector<float> deqB(p.rhsBatched ? p.batch * p.n * p.k : p.n * p.k);
  for (int64_t bb = 0; bb < (p.rhsBatched ? p.batch : 1); ++bb)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t kk = 0; kk < p.k; ++kk) {
        int64_t i = (bb * p.n + j) * p.k + kk;
        deqB[i] = b.get(i) * scaleOf(sb, p.rhsL, bb, p.n, p.k, j, kk);
      }
  std::vector<int64_t> idx;
  const int64_t total = p.batch * p.m * p.n;
  if (p.samples) {
    std::uniform_int_distribution<int64_t> d(0, total - 1);
    for (int64_t i = 0; i < p.samples; ++i)
      idx.push_back(d(rng));
  } else {
    for (int64_t i = 0; i < total; ++i)
      idx.push_back(i);
  }
  double errSq = 0, refSq = 0, maxErr = 0;
  std::string mismatches;
  double maxAccErr = 0;
  int64_t bad = 0, nan = 0;
  // Per-element tolerance for the output's rounding (f32: summation order).
  // A fused consumer rounds each of its operations (SiLU * e: five) to
  // the 16-bit type, and its product's error reaches the output scaled by
  // the consumer's derivative (at most 1.1 for SiLU, times |e| <= 1).
  const double fusedSlack = p.fused ? 4 : 1;
  const double rtol = fusedSlack * (p.outTy == Ty::BF16  ? 1.0 / 128
                                    : p.outTy == Ty::F16 ? 1.0 / 1024
                                                         : 1e-5);
  // absSums[t] = sum_k |deq(a) deq(b)|: the scale of the tensor cores'
  // accumulation error (Hopper's FP8 wgmma adds products with ~14 mantissa
  // bits; FP32 promotion every K-block bounds the growth).
  std::vector<double> refs(idx.size()), gots(idx.size()), absSums(idx.size());
  double refRms = 0;
  std::vector<float> rowA(p.k);
  for (size_t t = 0; t < idx.size(); ++t) {
    int64_t o = idx[t];
    int64_t bb = o / (p.m * p.n), i = (o / p.n) % p.m, j = o % p.n;
    for (int64_t kk = 0; kk < p.k; ++kk) {
      int64_t ai = (bb * p.m + i) * p.k + kk;
      rowA[kk] = a.get(ai) * scaleOf(sa, p.lhsL, bb, p.m, p.k, i, kk, p.lhsMMajor);
    }
    const float *bj = &deqB[((p.rhsBatched ? bb : 0) * p.n + j) * p.k];
    double acc = 0, absSum = 0;
    for (int64_t kk = 0; kk < p.k; ++kk) {
      double prod = static_cast<double>(rowA[kk]) * bj[kk];
      acc += prod;
      absSum += std::fabs(prod);
    }
    absSums[t] = absSum;
    if (p.biasKind == 1)
      acc += bias.get(j);
    else if (p.biasKind == 2)
      acc += bias.get(o);
    refs[t] = applyEpi(static_cast<float>(acc), p.epi);
    if (p.fused)
      refs[t] = applyFused(p.fused, roundTo(p.outTy, refs[t]), bias.get(o));
    gots[t] = out.get(o);
    refRms += refs[t] * refs[t];
  }
  refRms = std::sqrt(refRms / idx.size());
  for (size_t t = 0; t < idx.size(); ++t) {
    double e = std::fabs(gots[t] - refs[t]);
    if (std::isnan(gots[t])) {
      ++nan;
      continue;
    }
    errSq += e * e;
    refSq += refs[t] * refs[t];
    maxErr = std::max(maxErr, e);
    maxAccErr = std::max(maxAccErr, e / std::max(absSums[t], 1e-30));
    // The output's rounding plus 2^-10 of the products' magnitude. Measured
    // on the H200 (promotion every 128 K): up to 1.2e-4 on random-sign data
    // and 6.1e-4 on all-positive data with K = 4096, where the tensor
    // cores' truncating adds all err the same way.
    if (e >
        rtol * std::fabs(refs[t]) + (p.fused ? 1.1 : 1.0) * absSums[t] / 1024) {
      // The first few mismatches, for diagnosis: (batch,row,col) got/ref.
      if (bad < 4) {
        int64_t o = idx[t];
        char m[96];
        std::snprintf(m, sizeof m, " [%lld,%lld,%lld] %.6g/%.6g",
                      (long long)(o / (p.m * p.n)),
                      (long long)((o / p.n) % p.m), (long long)(o % p.n),
                      gots[t], refs[t]);
        mismatches += m;
      }
      ++bad;
    }
  }
  double relL2 = std::sqrt(errSq / std::max(refSq, 1e-30));
  const double tol = fusedSlack * (p.outTy == Ty::BF16 ? 4e-3 : 1e-3);
  bool ok = !nan && !bad && relL2 <= tol;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%lldx%lldx%lldx%lld rel_l2=%.3g (tol %.0e) max_abs=%.3g "
                "ref_rms=%.3g max_err/sum|ab|=%.2g bad=%lld nan=%lld "
                "checked=%zu",
                (long long)p.batch, (long long)p.m, (long long)p.n,
                (long long)p.k, relL2, tol, maxErr, refRms, maxAccErr,
                (long long)bad,
                (long long)nan, idx.size());
  report(ok, p.name, buf + timing + mismatches);
  for (Buf *x : {&a, &b, &out, &sa, &sb})
    mgpuMemFree(x->ptr, nullptr);
  if (extra)
    mgpuMemFree(bias.ptr, nullptr);
}

} // namespace

// Host functions of gemm.mlir (llvm.emit_c_interface).
#define DECL5(NAME, RA, RSA, RB, RSB, RO)                                      \
  extern "C" void _mlir_ciface_run_##NAME(MemRef<RA> *, MemRef<RSA> *,         \
                                          MemRef<RB> *, MemRef<RSB> *,         \
                                          MemRef<RO> *);                       \
  static void run_##NAME(const Product &, Buf &a, Buf &sa, Buf &b, Buf &sb,    \
                         Buf *, Buf &o) {                                      \
    auto da = desc<RA>(a);                                                     \
    auto dsa = desc<RSA>(sa);                                                  \
    auto db = desc<RB>(b);                                                     \
    auto dsb = desc<RSB>(sb);                                                  \
    auto dout = desc<RO>(o);                                                   \
    _mlir_ciface_run_##NAME(&da, &dsa, &db, &dsb, &dout);                      \
  }
#define DECL6(NAME, RA, RSA, RB, RSB, RBIAS, RO)                               \
  extern "C" void _mlir_ciface_run_##NAME(MemRef<RA> *, MemRef<RSA> *,         \
                                          MemRef<RB> *, MemRef<RSB> *,         \
                                          MemRef<RBIAS> *, MemRef<RO> *);      \
  static void run_##NAME(const Product &, Buf &a, Buf &sa, Buf &b, Buf &sb,    \
                         Buf *bias, Buf &o) {                                  \
    auto da = desc<RA>(a);                                                     \
    auto dsa = desc<RSA>(sa);                                                  \
    auto db = desc<RB>(b);                                                     \
    auto dsb = desc<RSB>(sb);                                                  \
    auto dbias = desc<RBIAS>(*bias);                                           \
    auto dout = desc<RO>(o);                                                   \
    _mlir_ciface_run_##NAME(&da, &dsa, &db, &dsb, &dbias, &dout);              \
  }

#ifdef GEMM_BENCH
#include "gemm_bench.inc"
#else
DECL5(pt_e4m3, 2, 0, 2, 0, 2)
DECL5(pt_e5m2, 2, 0, 2, 0, 2)
DECL5(block, 2, 2, 2, 2, 2)
DECL5(block_oddm, 2, 2, 2, 2, 2)
DECL5(mx, 2, 2, 2, 2, 2)
DECL5(mx_oddk, 2, 2, 2, 2, 2)
DECL6(odd_bias_gelu, 2, 2, 2, 2, 1, 2)
DECL6(batched_rhs, 3, 0, 3, 0, 3, 3)
DECL5(batched_fold, 3, 3, 2, 2, 3)
DECL5(long_k, 2, 0, 2, 0, 2)
DECL5(perf_block_4k, 2, 2, 2, 2, 2)
DECL5(decode_block, 2, 2, 2, 2, 2)
DECL6(decode_row_bias, 2, 2, 2, 2, 1, 2)
DECL5(decode_tensor_k1152, 2, 0, 2, 0, 2)
DECL5(block_mmajor, 2, 2, 2, 2, 2)
DECL5(mx_mmajor, 2, 2, 2, 2, 2)
DECL5(batched_mmajor, 3, 3, 2, 2, 3)
DECL5(ws_block_mmajor, 2, 2, 2, 2, 2)
DECL5(ws_batched_rhs, 3, 0, 3, 0, 3)
DECL5(ws_walk, 3, 3, 3, 3, 3)
DECL5(odd_n, 2, 0, 2, 0, 2)
DECL6(fused_silu_mul, 2, 0, 2, 0, 2, 2)
DECL6(fused_residual, 2, 2, 2, 2, 2, 2)
DECL5(ws_long_k_positive, 2, 0, 2, 0, 2)
DECL5(bf16_ws, 2, 0, 2, 0, 2)
DECL5(bf16_small, 2, 0, 2, 0, 2)
DECL5(bf16_batched_rhs, 3, 0, 3, 0, 3)
DECL5(bf16_long_k_positive, 2, 0, 2, 0, 2)
DECL5(bf16_perf_4k, 2, 0, 2, 0, 2)
DECL6(dyn_pt_bias_relu, 2, 0, 2, 0, 1, 2)
DECL5(dyn_bf16, 2, 0, 2, 0, 2)
DECL5(dyn_fold_e5m2, 3, 0, 2, 0, 3)
DECL5(dyn_row, 2, 2, 2, 2, 2)
DECL5(dyn_block_mmajor, 2, 2, 2, 2, 2)
DECL5(perf_pt_4k, 2, 0, 2, 0, 2)
DECL5(perf_dyn_pt_4k, 2, 0, 2, 0, 2)
#endif

int main(int argc, char **argv) {
  // `row`: one scale per row (unused by the GEMM_BENCH build).
  [[maybe_unused]] const Layout row = blockL(1, 1 << 30);
  // Keep in sync with gemm.mlir.
  struct Entry {
    Product p;
    RunFn fn;
  };
  std::vector<Entry> all = {
#ifdef GEMM_BENCH
      GEMM_BENCH_PRODUCTS
#else
      {{"pt_e4m3", 1, 128, 256, 256, false, Ty::E4M3, Ty::E4M3, Ty::F32,
        Ty::F32, tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_pt_e4m3},
      {{"pt_e5m2", 1, 96, 128, 192, false, Ty::E5M2, Ty::E5M2, Ty::F32, Ty::F32,
        tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_pt_e5m2},
      {{"block_1x128_128x128", 1, 256, 384, 512, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F32, blockL(1, 128), blockL(128, 128), 0, Ty::F32,
        Epi::None},
       run_block},
      {{"block_odd_m200_bf16", 1, 200, 256, 384, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::BF16, blockL(1, 128), blockL(128, 128), 0, Ty::F32,
        Epi::None},
       run_block_oddm},
      {{"mxfp8_1x32_e8m0_bf16", 1, 128, 256, 256, false, Ty::E4M3, Ty::E4M3,
        Ty::E8M0, Ty::BF16, blockL(1, 32), blockL(1, 32), 0, Ty::F32,
        Epi::None},
       run_mx},
      {{"mxfp8_k96", 1, 64, 64, 96, false, Ty::E4M3, Ty::E4M3, Ty::E8M0,
        Ty::F32, blockL(1, 32), blockL(1, 32), 0, Ty::F32, Epi::None},
       run_mx_oddk},
      {{"odd_200x72x160_row_bias_gelu_bf16", 1, 200, 72, 160, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::BF16, row, row, 1, Ty::BF16, Epi::GeluTanh},
       run_odd_bias_gelu},
      {{"batched_rhs_e4m3xe5m2_fullbias_relu_f16", 4, 64, 96, 128, true,
        Ty::E4M3, Ty::E5M2, Ty::F32, Ty::F16, tensorL(), tensorL(), 2, Ty::F16,
        Epi::Relu},
       run_batched_rhs},
      {{"batched_lhs_folded_block", 3, 40, 128, 256, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F32, blockL(1, 128), blockL(128, 128), 0, Ty::F32,
        Epi::None},
       run_batched_fold},
      {{"long_k4096_positive", 1, 64, 128, 4096, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F32, tensorL(), tensorL(), 0, Ty::F32, Epi::None, true},
       run_long_k},
      {{"perf_block_4096x4096x4096_bf16", 1, 4096, 4096, 4096, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::BF16, blockL(1, 128), blockL(128, 128), 0,
        Ty::F32, Epi::None, false, 2048, 20},
       run_perf_block_4k},
      // Decode products: the warp-specialized kernel with one consumer
      // (a 64-row tile of which M rows are real), tiles narrowed to cover
      // the SMs once: 125 tiles 32 wide with K-varying block scales, f32
      // through the TMA-store epilogue; 129 tiles 32 wide (the last one
      // 8 columns) with row scales, bias and ReLU, register stores.
      {{"decode_m1_block_4000x4096_f32", 1, 1, 4000, 4096, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::F32, blockL(1, 128), blockL(128, 128), 0,
        Ty::F32, Epi::None},
       run_decode_block},
      {{"decode_m16_row_bias_relu_4104x1024_f16", 1, 16, 4104, 1024, false,
        Ty::E4M3, Ty::E4M3, Ty::F32, Ty::F16, row, row, 1, Ty::F16, Epi::Relu},
       run_decode_row_bias},
      // Per-tensor scales over 9 K tiles at M = 1 (128 tiles 32 wide).
      {{"decode_m1_tensor_k1152_f32", 1, 1, 4096, 1152, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::F32, tensorL(), tensorL(), 0, Ty::F32,
        Epi::None},
       run_decode_tensor_k1152},
      // M-major lhs scales (fp8-block-layout scale-storage=tma).
      {{"block_mmajor_m198_bf16", 1, 198, 256, 384, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::BF16, blockL(1, 128), blockL(128, 128), 0, Ty::F32,
        Epi::None, false, 0, 0, 4},
       run_block_mmajor},
      {{"mxfp8_mmajor_m72", 1, 72, 128, 256, false, Ty::E4M3, Ty::E4M3,
        Ty::E8M0, Ty::F32, blockL(1, 32), blockL(1, 32), 0, Ty::F32, Epi::None,
        false, 0, 0, 16},
       run_mx_mmajor},
      {{"batched_lhs_block_mmajor_m38", 3, 38, 128, 256, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::F32, blockL(1, 128), blockL(128, 128), 0,
        Ty::F32, Epi::None, false, 0, 0, 4},
       run_batched_mmajor},
      // The warp-specialized kernel (TMA, M >= 128) through 16 K tiles:
      // every stage is reused, so the producer waits on empty mbarriers.
      {{"ws_block_mmajor_m264_k2048_bf16", 1, 264, 384, 2048, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::BF16, blockL(1, 128), blockL(128, 128), 0,
        Ty::F32, Epi::None, false, 0, 0, 4},
       run_ws_block_mmajor},
      {{"ws_batched_rhs_m136_k2048_f16", 2, 136, 96, 2048, true, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::F16, tensorL(), tensorL(), 0, Ty::F32,
        Epi::None},
       run_ws_batched_rhs},
      // Persistent CTAs walking 150 tiles (132 CTAs).
      {{"ws_walk_batched_block_3x1160x520x256_bf16", 3, 1160, 520, 256, true,
        Ty::E4M3, Ty::E4M3, Ty::F32, Ty::BF16, blockL(1, 128), blockL(128, 128),
        0, Ty::F32, Epi::None},
       run_ws_walk},
      // Fused consumers with an [M, N] input (staged by TMA in the
      // TMA-store epilogue), more tiles than the 132 persistent CTAs, M and
      // N not multiples of the tile (boxes partly or wholly past M and N):
      // SiLU(product) * up in f16, per-tensor scales (128 x 192 tiles, or
      // 128 x 256 in two column chunks with fast accumulation); product +
      // residual in bf16, block scales (128 x 128, or 256 x 128 tiles with
      // two bands per consumer).
      {{"fused_silu_mul_f16_2056x2056x512",
        1,
        2056,
        2056,
        512,
        false,
        Ty::E4M3,
        Ty::E4M3,
        Ty::F32,
        Ty::F16,
        tensorL(),
        tensorL(),
        0,
        Ty::F16,
        Epi::None,
        false,
        0,
        0,
        0,
        1},
       run_fused_silu_mul},
      {{"fused_residual_block_bf16_4200x1408x1024",
        1,
        4200,
        1408,
        1024,
        false,
        Ty::E4M3,
        Ty::E4M3,
        Ty::F32,
        Ty::BF16,
        blockL(1, 128),
        blockL(128, 128),
        0,
        Ty::BF16,
        Epi::None,
        false,
        0,
        0,
        0,
        2},
       run_fused_residual},
      // N odd: scalar stores (even N stores column pairs).
      {{"odd_n33_f16", 1, 136, 33, 64, false, Ty::E4M3, Ty::E4M3, Ty::F32,
        Ty::F16, tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_odd_n},
      // Per-tensor scales through K = 4096 on all-positive data, in the
      // warp-specialized kernel: every truncation of the tensor cores'
      // accumulation errs the same way, which promotion every 128 K bounds
      // (fast accumulation came out 6.6% low here on the H200).
      {{"ws_long_k4096_positive_n512", 1, 256, 512, 4096, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::F32, tensorL(), tensorL(), 0, Ty::F32, Epi::None,
        true},
       run_ws_long_k_positive},
      // BF16 operands (--high-precision=bf16: the products a recipe keeps
      // out of FP8), per-tensor scales: the warp-specialized kernel (whole
      // K in the tensor cores, 128 x 256 tiles, N not a multiple of 256),
      // the single-warpgroup one (M < 128, K = 200 not a multiple of the
      // 64-element K tile), batched rhs (attention's QK^T), and K = 4096 on
      // all-positive data: BF16 wgmma accumulates in FP32, so unlike FP8's
      // the error stays at FP32 summation order.
      {{"bf16_ws_520x768x1000", 1, 520, 768, 1000, false, Ty::BF16, Ty::BF16,
        Ty::F32, Ty::F32, tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_bf16_ws},
      {{"bf16_m64_k200_bf16out", 1, 64, 96, 200, false, Ty::BF16, Ty::BF16,
        Ty::F32, Ty::BF16, tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_bf16_small},
      {{"bf16_batched_rhs_4x136x96x64", 4, 136, 96, 64, true, Ty::BF16,
        Ty::BF16, Ty::F32, Ty::F32, tensorL(), tensorL(), 0, Ty::F32,
        Epi::None},
       run_bf16_batched_rhs},
      {{"bf16_ws_long_k4096_positive", 1, 256, 512, 4096, false, Ty::BF16,
        Ty::BF16, Ty::F32, Ty::F32, tensorL(), tensorL(), 0, Ty::F32, Epi::None,
        true},
       run_bf16_long_k_positive},
      {{"perf_bf16_4096x4096x4096_bf16", 1, 4096, 4096, 4096, false, Ty::BF16,
        Ty::BF16, Ty::F32, Ty::BF16, tensorL(), tensorL(), 0, Ty::F32,
        Epi::None, false, 2048, 20},
       run_bf16_perf_4k},
      // M at run time: one compiled function per group, called with every
      // M below (the decode kernel for M <= 64, else the warp-specialized
      // one on 132 CTAs, most of them without a tile for small M; TMA clips
      // A's loads and the output's stores at M).
      {{"dyn_m1_pt_bias_relu_f16", 1, 1, 384, 512, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F16, tensorL(), tensorL(), 1, Ty::F16, Epi::Relu},
       run_dyn_pt_bias_relu},
      {{"dyn_m17_pt_bias_relu_f16", 1, 17, 384, 512, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F16, tensorL(), tensorL(), 1, Ty::F16, Epi::Relu},
       run_dyn_pt_bias_relu},
      {{"dyn_m64_pt_bias_relu_f16", 1, 64, 384, 512, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F16, tensorL(), tensorL(), 1, Ty::F16, Epi::Relu},
       run_dyn_pt_bias_relu},
      {{"dyn_m65_pt_bias_relu_f16", 1, 65, 384, 512, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F16, tensorL(), tensorL(), 1, Ty::F16, Epi::Relu},
       run_dyn_pt_bias_relu},
      {{"dyn_m1000_pt_bias_relu_f16", 1, 1000, 384, 512, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::F16, tensorL(), tensorL(), 1, Ty::F16,
        Epi::Relu},
       run_dyn_pt_bias_relu},
      {{"dyn_m4100_pt_bias_relu_f16", 1, 4100, 384, 512, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::F16, tensorL(), tensorL(), 1, Ty::F16,
        Epi::Relu},
       run_dyn_pt_bias_relu},
      {{"dyn_m3_bf16_f32", 1, 3, 768, 1000, false, Ty::BF16, Ty::BF16, Ty::F32,
        Ty::F32, tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_dyn_bf16},
      {{"dyn_m300_bf16_f32", 1, 300, 768, 1000, false, Ty::BF16, Ty::BF16,
        Ty::F32, Ty::F32, tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_dyn_bf16},
      {{"dyn_fold_3x5_e5m2_bf16", 3, 5, 136, 256, false, Ty::E5M2, Ty::E5M2,
        Ty::F32, Ty::BF16, tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_dyn_fold_e5m2},
      {{"dyn_fold_3x100_e5m2_bf16", 3, 100, 136, 256, false, Ty::E5M2, Ty::E5M2,
        Ty::F32, Ty::BF16, tensorL(), tensorL(), 0, Ty::F32, Epi::None},
       run_dyn_fold_e5m2},
      {{"dyn_m5_row_bf16", 1, 5, 384, 512, false, Ty::E4M3, Ty::E4M3, Ty::F32,
        Ty::BF16, row, row, 0, Ty::F32, Epi::None},
       run_dyn_row},
      {{"dyn_m130_row_bf16", 1, 130, 384, 512, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::BF16, row, row, 0, Ty::F32, Epi::None},
       run_dyn_row},
      {{"dyn_m1_block_mmajor_f32", 1, 1, 256, 512, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F32, blockL(1, 128), blockL(128, 128), 0, Ty::F32,
        Epi::None, false, 0, 0, 4},
       run_dyn_block_mmajor},
      {{"dyn_m63_block_mmajor_f32", 1, 63, 256, 512, false, Ty::E4M3, Ty::E4M3,
        Ty::F32, Ty::F32, blockL(1, 128), blockL(128, 128), 0, Ty::F32,
        Epi::None, false, 0, 0, 4},
       run_dyn_block_mmajor},
      {{"dyn_m301_block_mmajor_f32", 1, 301, 256, 512, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::F32, blockL(1, 128), blockL(128, 128), 0,
        Ty::F32, Epi::None, false, 0, 0, 4},
       run_dyn_block_mmajor},
      {{"perf_pt_4096x4096x4096_bf16", 1, 4096, 4096, 4096, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::BF16, tensorL(), tensorL(), 0, Ty::F32,
        Epi::None, false, 2048, 20},
       run_perf_pt_4k},
      {{"perf_dyn_pt_4096x4096x4096_bf16", 1, 4096, 4096, 4096, false, Ty::E4M3,
        Ty::E4M3, Ty::F32, Ty::BF16, tensorL(), tensorL(), 0, Ty::F32,
        Epi::None, false, 2048, 20},
       run_perf_dyn_pt_4k},
#endif
  };
  if (argc > 1 && std::string(argv[1]) == "--no-run") {
    for (auto &e : all)
      std::printf("would run %s\n", e.p.name.c_str());
    return 0;
  }
  int32_t s = fp8rt_cuda_init();
  std::string loadErr = fp8rt_cuda_module_load_error();
  report(s == 0 && loadErr.empty(), "init",
         s ? fp8rt_cuda_last_error()
           : (loadErr.empty() ? std::string("gemm kernels loaded")
                              : "module load failed: " + loadErr));
  // --no-perf skips the timed 4096^3 product (e.g. under compute-sanitizer);
  // --only TEXT runs the products whose name contains TEXT (a profiler's
  // run of one kernel).
  const bool noPerf = argc > 1 && std::string(argv[1]) == "--no-perf";
  const std::string only =
      argc > 2 && std::string(argv[1]) == "--only" ? argv[2] : "";
  if (s == 0 && loadErr.empty())
    for (auto &e : all)
      if (!(noPerf && e.p.timedRuns) &&
          e.p.name.find(only) != std::string::npos)
        check(e.p, e.fn);
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
