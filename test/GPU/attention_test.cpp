//===- attention_test.cpp - Fused attention kernels vs a CPU reference ----===//
//
// Part of fp8-opt. Linked with attention.o (test/GPU/attention.mlir lowered
// through convert-fp8-attention-to-gpu and gpu-lower-to-nvvm-pipeline: host
// code + sm_90a cubins) and libfp8rt_cuda.a. Every case runs on managed
// memory from mgpuMemAlloc and is compared with a CPU reference of the
// `fp8.attention` definition: scores scale * q.k in double, rounded to f32
// and the mask added in f32 (as the exporters' graphs do), causal keys
// j > i + Skv - Sq masked, softmax in double, a row without a key 0.
// FP8 cases (fp8_*) quantize random q, k, v to E4M3 with per-tensor scales
// (amax / 448) and compare with the reference on the dequantized values
// (P exact): the kernel rounds P to E4M3, so their tolerance is wider.
//
//   attention_test            on a GPU (scripts/gpu-check suite `attention`)
//   attention_test --no-run   only prints what it would run (no driver)
//   attention_test NAME...    only the cases whose name contains a NAME
//
// Prints one "PASS|FAIL <case> <detail>" line per case (relative L2 error,
// max abs error over the checked rows) and, for perf_* cases, the kernel's
// time (CUDA events on the run's stream, median of 30 calls) and TFLOP/s
// over the unmasked score pairs (4 FLOPs per pair and head dim element).
//
//===----------------------------------------------------------------------===//

#include "fp8rt/fp8rt_cuda.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

template <int N> struct MemRef {
  void *allocated;
  void *aligned;
  int64_t offset;
  int64_t sizes[N];
  int64_t strides[N];
};
using Desc = MemRef<4>;

int failures = 0;

void report(bool ok, const std::string &name, const std::string &detail) {
  std::printf("%s %s %s\n", ok ? "PASS" : "FAIL", name.c_str(),
              detail.c_str());
  std::fflush(stdout);
  if (!ok)
    ++failures;
}

enum class Ty { F32, F16, BF16, E4M3 };
size_t bytesOf(Ty t) { return t == Ty::F32 ? 4 : t == Ty::E4M3 ? 1 : 2; }

/// E4M3 (OCP FN: bias 7, no infinities, 0x7F NaN) to float.
float e4m3ToFloat(uint8_t x) {
  int sign = x >> 7, exp = (x >> 3) & 0xF, mant = x & 7;
  float v;
  if (exp == 15 && mant == 7)
    v = NAN;
  else if (exp == 0)
    v = std::ldexp(static_cast<float>(mant), -9);
  else
    v = std::ldexp(static_cast<float>(mant | 8), exp - 10);
  return sign ? -v : v;
}
/// Round to the nearest E4M3 (ties to even), saturating at 448: the
/// nearest of the 127 finite magnitudes (a table search is plenty here).
uint8_t floatToE4M3(float f) {
  static std::vector<float> mags = [] {
    std::vector<float> m;
    for (int b = 0; b < 0x7F; ++b)
      m.push_back(e4m3ToFloat(static_cast<uint8_t>(b)));
    return m;
  }();
  float a = std::min(std::fabs(f), 448.0f);
  auto it = std::lower_bound(mags.begin(), mags.end(), a);
  int hi = static_cast<int>(it - mags.begin());
  int best = hi;
  if (hi == static_cast<int>(mags.size()))
    best = hi - 1;
  else if (hi > 0) {
    float dl = a - mags[hi - 1], dh = mags[hi] - a;
    best = dl < dh || (dl == dh && (hi - 1) % 2 == 0) ? hi - 1 : hi;
  }
  return static_cast<uint8_t>(best | (std::signbit(f) ? 0x80 : 0));
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
float bf16ToFloat(uint16_t h) {
  uint32_t b = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint16_t floatToBF16(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
/// Round to nearest even half (values well inside the normal range).
uint16_t floatToHalf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  uint32_t sign = (b >> 16) & 0x8000;
  int exp = static_cast<int>((b >> 23) & 0xff) - 127 + 15;
  uint32_t mant = b & 0x7fffff;
  if (exp <= 0)
    return static_cast<uint16_t>(sign); // flush (not produced by the tests)
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

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
  float get(int64_t i) const {
    switch (ty) {
    case Ty::F32:
      return static_cast<float *>(ptr)[i];
    case Ty::F16:
      return halfToFloat(static_cast<uint16_t *>(ptr)[i]);
    case Ty::BF16:
      return bf16ToFloat(static_cast<uint16_t *>(ptr)[i]);
    case Ty::E4M3:
      return e4m3ToFloat(static_cast<uint8_t *>(ptr)[i]);
    }
    return NAN;
  }
  void set(int64_t i, float v) {
    switch (ty) {
    case Ty::F32:
      static_cast<float *>(ptr)[i] = v;
      return;
    case Ty::F16:
      static_cast<uint16_t *>(ptr)[i] = floatToHalf(v);
      return;
    case Ty::BF16:
      static_cast<uint16_t *>(ptr)[i] = floatToBF16(v);
      return;
    case Ty::E4M3:
      static_cast<uint8_t *>(ptr)[i] = floatToE4M3(v);
      return;
    }
  }
  Desc desc() const {
    Desc d;
    d.allocated = d.aligned = ptr;
    d.offset = 0;
    int64_t stride = 1;
    for (int i = 3; i >= 0; --i) {
      d.sizes[i] = shape[i];
      d.strides[i] = stride;
      stride *= shape[i];
    }
    return d;
  }
};

bool alloc(Buf &b) {
  b.ptr = mgpuMemAlloc(b.bytes(), nullptr, 1);
  return b.ptr != nullptr;
}

std::mt19937 rng(4321);

enum class MaskKind {
  None,
  /// [1, 1, Sq, Skv]: 0, -inf, a few finite negatives; one row all -inf
  /// (output 0) and one row all the f32 lowest (a finite row: uniform).
  Mixed,
  /// [B, 1, Sq, Skv]: batch b's last 8 b keys padded with the f32 lowest.
  Padding,
  /// [B, 1, Sq, Skv]: batch 0's second half of the keys -inf (whole splits
  /// of a decode step without a key), every key of the other batches -inf
  /// (output 0).
  Tail,
};

struct Case {
  std::string name;
  int64_t batch, heads, kvHeads, sq, skv, d;
  bool causal;
  MaskKind mask;
  Ty elem, out;
  int64_t sampleRows = 0; // 0: every row
  int timedRuns = 0;
  /// FP8: scales per block of 128 positions of one (batch, head) (else one
  /// per tensor); the data's magnitude varies between blocks.
  bool blockScales = false;
  /// out is [B, Sq, Hq, D] (sequence_major), not [B, Hq, Sq, D].
  bool seqMajor = false;
  /// A decode step's split-key kernel: the splits of its f32 workspace [B,
  /// Hq, splits, D + 2] (attention::decodeAttentionSplits), 0 for none.
  int64_t decodeSplits = 0;
  /// k and v are an E4M3 cache with per-tensor scales (amax / 448), q of
  /// `elem`: the decode kernel dequantizes the rows it reads (the
  /// reference reads x * scale exactly; the kernel also rounds it through
  /// the graph's types, within the 16-bit tolerance).
  bool fp8Cache = false;
  /// The scales rounded up to powers of two (2^ceil(log2(amax / 448))): the
  /// decode kernel's folded loop (foldableScaleExponents) instead of the
  /// dequantizing one.
  bool pow2Scales = false;
};

using Scalar = MemRef<0>;
/// The FP8 scales of q, k and v: rank 0 (per tensor) or [B, H, nb, 1].
struct Scales {
  Scalar tensor[3];
  Desc blocks[3];
};
/// q, k, v, mask (or null), the FP8 scales (or null), the FP8 workspace
/// (or null), out.
using RunFn = void (*)(Desc *, Desc *, Desc *, Desc *, Scales *, Desc *,
                       Desc *);

void fillMask(const Case &c, Buf &m) {
  const float lowest = std::numeric_limits<float>::lowest();
  const float inf = std::numeric_limits<float>::infinity();
  std::uniform_int_distribution<int> pick(0, 9);
  for (int64_t bb = 0; bb < m.shape[0]; ++bb)
    for (int64_t i = 0; i < c.sq; ++i)
      for (int64_t j = 0; j < c.skv; ++j) {
        float v = 0;
        if (c.mask == MaskKind::Mixed) {
          int r = pick(rng);
          v = r == 0 ? -inf : r == 1 ? -1.5f : 0.0f;
          if (i == 3)
            v = -inf;
          if (i == 5)
            v = lowest;
        } else if (c.mask == MaskKind::Tail) {
          if (bb > 0 || j >= c.skv / 2)
            v = -inf;
        } else if (j >= c.skv - 8 * bb) {
          v = lowest;
        }
        m.set((bb * c.sq + i) * c.skv + j, v);
      }
}

void check(const Case &c, RunFn run) {
  Buf q{c.elem, {c.batch, c.heads, c.sq, c.d}};
  const Ty kvElem = c.fp8Cache ? Ty::E4M3 : c.elem;
  Buf k{kvElem, {c.batch, c.kvHeads, c.skv, c.d}};
  Buf v{kvElem, {c.batch, c.kvHeads, c.skv, c.d}};
  Buf out{c.out, {c.batch, c.heads, c.sq, c.d}};
  Buf mask{
      Ty::F32,
      {c.mask == MaskKind::Padding || c.mask == MaskKind::Tail ? c.batch : 1, 1,
       c.sq, c.skv}};
  const bool hasMask = c.mask != MaskKind::None;
  const bool fp8 = c.elem == Ty::E4M3;
  Buf ws = c.decodeSplits
               ? Buf{Ty::F32, {c.batch, c.heads, c.decodeSplits, c.d + 2}}
               : Buf{c.elem, {c.batch, c.kvHeads, c.d, (c.skv + 31) / 32 * 32}};
  const bool hasWs = fp8 || c.decodeSplits;
  // Scale blocks per (batch, head) of q and of k / v.
  const int64_t nb[3] = {c.blockScales ? (c.sq + 127) / 128 : 1,
                         c.blockScales ? (c.skv + 127) / 128 : 1,
                         c.blockScales ? (c.skv + 127) / 128 : 1};
  const int64_t planes[3] = {c.blockScales ? c.batch * c.heads : 1,
                             c.blockScales ? c.batch * c.kvHeads : 1,
                             c.blockScales ? c.batch * c.kvHeads : 1};
  Buf scaleBufs[3] = {
      {Ty::F32, {c.blockScales ? c.batch : 1, c.blockScales ? c.heads : 1,
                 nb[0], 1}},
      {Ty::F32, {c.blockScales ? c.batch : 1, c.blockScales ? c.kvHeads : 1,
                 nb[1], 1}},
      {Ty::F32, {c.blockScales ? c.batch : 1, c.blockScales ? c.kvHeads : 1,
                 nb[2], 1}}};
  // Which of q, k, v are FP8 (with scales).
  const bool quantized[3] = {fp8, fp8 || c.fp8Cache, fp8 || c.fp8Cache};
  const bool anyScales = fp8 || c.fp8Cache;
  bool scalesOk = true;
  for (Buf &b : scaleBufs)
    scalesOk = scalesOk && (!anyScales || alloc(b));
  if (!alloc(q) || !alloc(k) || !alloc(v) || !alloc(out) ||
      (hasMask && !alloc(mask)) || (hasWs && !alloc(ws)) || !scalesOk) {
    report(false, c.name, std::string("mgpuMemAlloc: ") +
                              fp8rt_cuda_last_error());
    return;
  }
  std::uniform_real_distribution<float> qk(-2.0f, 2.0f), vv(-1.0f, 1.0f);
  // FP8: current scales amax / 448 per tensor or per block of 128
  // positions (block scales: each block's values also scaled by 2^(b % 3 -
  // 1), so that the blocks' scales differ), the values quantized; the
  // reference reads the dequantized ones.
  std::vector<float> scale[3];
  // Scale index of element i of tensor t ([planes, S, D]).
  auto blockOf = [&](int t, int64_t i) -> int64_t {
    if (!c.blockScales)
      return 0;
    const int64_t s = t == 0 ? c.sq : c.skv;
    const int64_t plane = i / (s * c.d), pos = i / c.d % s;
    return plane * nb[t] + pos / 128;
  };
  auto fill = [&](int t, Buf &b, std::uniform_real_distribution<float> &dist) {
    std::vector<float> x(b.numel());
    scale[t].assign(planes[t] * nb[t], 0.0f);
    for (int64_t i = 0; i < b.numel(); ++i) {
      x[i] = dist(rng);
      if (c.blockScales)
        x[i] *= std::ldexp(1.0f, static_cast<int>(blockOf(t, i) % 3) - 1);
      float &amax = scale[t][blockOf(t, i)];
      amax = std::max(amax, std::fabs(x[i]));
    }
    for (float &sc : scale[t])
      sc = !quantized[t]  ? 1.0f
           : c.pow2Scales ? std::exp2(std::ceil(std::log2(sc / 448.0f)))
                          : sc / 448.0f;
    for (int64_t i = 0; i < b.numel(); ++i)
      b.set(i, x[i] / scale[t][blockOf(t, i)]);
  };
  fill(0, q, qk);
  fill(1, k, qk);
  fill(2, v, vv);
  if (anyScales) {
    for (int t = 0; t < 3; ++t)
      std::memcpy(scaleBufs[t].ptr, scale[t].data(), 4 * scale[t].size());
  }
  if (hasWs)
    std::memset(ws.ptr, 0x5A, ws.bytes()); // the kernel must write it all
  if (hasMask)
    fillMask(c, mask);
  std::memset(out.ptr, 0xFF, out.bytes()); // NaN: unwritten outputs fail

  Desc dq = q.desc(), dk = k.desc(), dv = v.desc(), dm = mask.desc(),
       dout = out.desc(), dws = ws.desc();
  Scales ds;
  for (int t = 0; t < 3; ++t) {
    ds.tensor[t] = Scalar{scaleBufs[t].ptr, scaleBufs[t].ptr, 0};
    ds.blocks[t] = scaleBufs[t].desc();
  }
  auto call = [&] {
    run(&dq, &dk, &dv, hasMask ? &dm : nullptr, anyScales ? &ds : nullptr,
        hasWs ? &dws : nullptr, &dout);
  };
  fp8rt_cuda_clear_error();
  call();
  if (fp8rt_cuda_synchronize() != 0) {
    report(false, c.name, std::string("launch: ") + fp8rt_cuda_last_error());
    return;
  }
  std::string timing;
  if (c.timedRuns) {
    std::vector<double> ms;
    for (int i = 0; i <= c.timedRuns; ++i) {
      fp8rt_cuda_run_begin(0);
      call();
      fp8rt_cuda_run_end(nullptr);
      if (i > 0)
        ms.push_back(fp8rt_cuda_last_run_ms());
    }
    std::sort(ms.begin(), ms.end());
    double med = ms[ms.size() / 2];
    double pairs = 0;
    for (int64_t i = 0; i < c.sq; ++i)
      pairs += c.causal ? std::clamp<int64_t>(i + c.skv - c.sq + 1, 0, c.skv)
                        : c.skv;
    double flops = 4.0 * c.batch * c.heads * pairs * c.d;
    char buf[200];
    if (c.decodeSplits) {
      // A decode step reads K and V once: bytes over time, against the
      // H200's 4.2 TB/s copy rate.
      double bytes = 2.0 * c.batch * c.kvHeads * c.skv * c.d * bytesOf(kvElem);
      std::snprintf(buf, sizeof buf,
                    " time %.4f ms (%.0f GB/s of K and V, CUDA events, median "
                    "of %d)",
                    med, bytes / (med * 1e-3) / 1e9, c.timedRuns);
    } else {
      std::snprintf(buf, sizeof buf,
                    " time %.3f ms (%.1f TFLOP/s, CUDA events, median of %d)",
                    med, flops / (med * 1e-3) / 1e12, c.timedRuns);
    }
    timing = buf;
  }

  // Reference rows.
  std::vector<int64_t> rows;
  const int64_t total = c.batch * c.heads * c.sq;
  if (c.sampleRows) {
    std::uniform_int_distribution<int64_t> d(0, total - 1);
    for (int64_t i = 0; i < c.sampleRows; ++i)
      rows.push_back(d(rng));
  } else {
    for (int64_t i = 0; i < total; ++i)
      rows.push_back(i);
  }
  const double attnScale = 1.0 / std::sqrt(static_cast<double>(c.d));
  const int64_t g = c.heads / c.kvHeads;
  double errSq = 0, refSq = 0, maxErr = 0;
  int64_t nan = 0;
  std::vector<double> s(c.skv), o(c.d);
  for (int64_t r : rows) {
    int64_t bb = r / (c.heads * c.sq), h = (r / c.sq) % c.heads, i = r % c.sq;
    int64_t kvPlane = bb * c.kvHeads + h / g;
    double mx = -INFINITY;
    for (int64_t j = 0; j < c.skv; ++j) {
      double dot = 0;
      const int64_t qi = ((bb * c.heads + h) * c.sq + i) * c.d,
                    ki = (kvPlane * c.skv + j) * c.d;
      for (int64_t e = 0; e < c.d; ++e)
        dot += static_cast<double>(q.get(qi + e)) * k.get(ki + e);
      float x = static_cast<float>(dot * scale[0][blockOf(0, qi)] *
                                   scale[1][blockOf(1, ki)] * attnScale);
      if (hasMask) {
        int64_t mb =
            c.mask == MaskKind::Padding || c.mask == MaskKind::Tail ? bb : 0;
        x += mask.get((mb * c.sq + i) * c.skv + j);
      }
      if (c.causal && j > i + c.skv - c.sq)
        x = -INFINITY;
      s[j] = x;
      mx = std::max(mx, s[j]);
    }
    std::fill(o.begin(), o.end(), 0.0);
    if (mx != -INFINITY) {
      double sum = 0;
      for (int64_t j = 0; j < c.skv; ++j)
        sum += s[j] = std::exp(s[j] - mx);
      for (int64_t j = 0; j < c.skv; ++j)
        for (int64_t e = 0; e < c.d; ++e)
          o[e] += s[j] / sum * v.get((kvPlane * c.skv + j) * c.d + e) *
                  scale[2][blockOf(2, (kvPlane * c.skv + j) * c.d)];
    }
    for (int64_t e = 0; e < c.d; ++e) {
      const int64_t at =
          c.seqMajor ? ((bb * c.sq + i) * c.heads + h) * c.d : r * c.d;
      double got = out.get(at + e);
      if (std::isnan(got)) {
        ++nan;
        continue;
      }
      double err = std::fabs(got - o[e]);
      errSq += err * err;
      refSq += o[e] * o[e];
      maxErr = std::max(maxErr, err);
    }
  }
  double relL2 = std::sqrt(errSq / std::max(refSq, 1e-300));
  // P is rounded to the operand type before P.V, the output to its type;
  // FP8: P in E4M3 (3 mantissa bits: up to 6 % per probability).
  const double tol = fp8 ? 5e-2 : 1e-2;
  bool ok = nan == 0 && relL2 <= tol && maxErr <= (fp8 ? 0.1 : 0.05);
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "B=%lld Hq=%lld Hkv=%lld Sq=%lld Skv=%lld D=%lld%s%s rel_l2=%.3e "
                "(tol %.0e) max_abs=%.3e nan=%lld rows=%zu",
                (long long)c.batch, (long long)c.heads, (long long)c.kvHeads,
                (long long)c.sq, (long long)c.skv, (long long)c.d,
                c.causal ? " causal" : "", hasMask ? " mask" : "", relL2, tol,
                maxErr, (long long)nan, rows.size());
  report(ok, c.name, buf + timing);
  for (Buf *x : {&q, &k, &v, &out})
    mgpuMemFree(x->ptr, nullptr);
  if (hasWs)
    mgpuMemFree(ws.ptr, nullptr);
  if (anyScales)
    for (Buf &b : scaleBufs)
      mgpuMemFree(b.ptr, nullptr);
  if (hasMask)
    mgpuMemFree(mask.ptr, nullptr);
}

} // namespace

// Host functions of attention.mlir (llvm.emit_c_interface).
#define DECL4(NAME)                                                            \
  extern "C" void _mlir_ciface_run_##NAME(Desc *, Desc *, Desc *, Desc *);     \
  static void run_##NAME(Desc *q, Desc *k, Desc *v, Desc *, Scales *, Desc *,  \
                         Desc *o) {                                            \
    _mlir_ciface_run_##NAME(q, k, v, o);                                       \
  }
#define DECL5(NAME)                                                            \
  extern "C" void _mlir_ciface_run_##NAME(Desc *, Desc *, Desc *, Desc *,      \
                                          Desc *);                             \
  static void run_##NAME(Desc *q, Desc *k, Desc *v, Desc *m, Scales *,        \
                         Desc *, Desc *o) {                                    \
    _mlir_ciface_run_##NAME(q, k, v, m, o);                                    \
  }
// FP8: q, k, v, [mask], q/k/v scales (S: Scalar per tensor, Desc per
// block; SC: the matching member of Scales), workspace, out.
#define DECL8(NAME, S, SC)                                                     \
  extern "C" void _mlir_ciface_run_##NAME(Desc *, Desc *, Desc *, S *, S *,    \
                                          S *, Desc *, Desc *);                \
  static void run_##NAME(Desc *q, Desc *k, Desc *v, Desc *, Scales *s,         \
                         Desc *ws, Desc *o) {                                  \
    _mlir_ciface_run_##NAME(q, k, v, s->SC, s->SC + 1, s->SC + 2, ws, o);      \
  }
#define DECL9(NAME, S, SC)                                                     \
  extern "C" void _mlir_ciface_run_##NAME(Desc *, Desc *, Desc *, Desc *, S *, \
                                          S *, S *, Desc *, Desc *);           \
  static void run_##NAME(Desc *q, Desc *k, Desc *v, Desc *m, Scales *s,       \
                         Desc *ws, Desc *o) {                                  \
    _mlir_ciface_run_##NAME(q, k, v, m, s->SC, s->SC + 1, s->SC + 2, ws, o);   \
  }
// Decode steps: q, k, v, [mask], the split workspace, out.
#define DECL5W(NAME)                                                           \
  extern "C" void _mlir_ciface_run_##NAME(Desc *, Desc *, Desc *, Desc *,      \
                                          Desc *);                             \
  static void run_##NAME(Desc *q, Desc *k, Desc *v, Desc *, Scales *,          \
                         Desc *ws, Desc *o) {                                  \
    _mlir_ciface_run_##NAME(q, k, v, ws, o);                                   \
  }
#define DECL6W(NAME)                                                           \
  extern "C" void _mlir_ciface_run_##NAME(Desc *, Desc *, Desc *, Desc *,      \
                                          Desc *, Desc *);                     \
  static void run_##NAME(Desc *q, Desc *k, Desc *v, Desc *m, Scales *,         \
                         Desc *ws, Desc *o) {                                  \
    _mlir_ciface_run_##NAME(q, k, v, m, ws, o);                                \
  }
// Decode steps reading an FP8 cache: q, k8, v8, [mask], the k and v
// scales (per tensor), the split workspace, out.
#define DECL8C(NAME)                                                           \
  extern "C" void _mlir_ciface_run_##NAME(Desc *, Desc *, Desc *, Desc *,      \
                                          Scalar *, Scalar *, Desc *, Desc *); \
  static void run_##NAME(Desc *q, Desc *k, Desc *v, Desc *m, Scales *s,        \
                         Desc *ws, Desc *o) {                                  \
    _mlir_ciface_run_##NAME(q, k, v, m, s->tensor + 1, s->tensor + 2, ws, o);  \
  }
#define DECL7C(NAME)                                                           \
  extern "C" void _mlir_ciface_run_##NAME(Desc *, Desc *, Desc *, Scalar *,    \
                                          Scalar *, Desc *, Desc *);           \
  static void run_##NAME(Desc *q, Desc *k, Desc *v, Desc *, Scales *s,         \
                         Desc *ws, Desc *o) {                                  \
    _mlir_ciface_run_##NAME(q, k, v, s->tensor + 1, s->tensor + 2, ws, o);     \
  }
DECL4(causal_gqa)
DECL4(partial_d64_f32)
DECL5(mask_f16)
DECL4(causal_cache)
DECL5(causal_mask_rows)
DECL4(perf_causal_8k)
DECL4(perf_full_4k)
DECL8(fp8_causal_gqa, Scalar, tensor)
DECL9(fp8_partial_mask, Scalar, tensor)
DECL8(fp8_blocks_causal_gqa, Desc, blocks)
DECL9(fp8_blocks_partial_mask, Desc, blocks)
DECL8(fp8_blocks_causal_cache, Desc, blocks)
DECL8(perf_fp8_causal_8k, Desc, blocks)
DECL8(perf_fp8_full_4k, Desc, blocks)
DECL4(seq_major_causal_gqa)
DECL9(fp8_seq_major_partial_mask, Scalar, tensor)
DECL6W(decode_gqa_b1)
DECL6W(decode_mask_f32)
DECL6W(decode_mixed_f16)
DECL5W(decode_one_split)
DECL6W(perf_decode_b8)
DECL6W(decode_tail_inf)
DECL8C(decode_cache_b1)
DECL7C(decode_cache_f16)
DECL8C(perf_decode_cache_b8)

int main(int argc, char **argv) {
  bool noRun = argc > 1 && std::string(argv[1]) == "--no-run";
  std::vector<std::string> only;
  for (int i = noRun ? 2 : 1; i < argc; ++i)
    only.push_back(argv[i]);
  // Keep in sync with attention.mlir.
  struct Entry {
    Case c;
    RunFn fn;
  };
  std::vector<Entry> all = {
      {{"causal_gqa", 1, 4, 2, 256, 256, 128, true, MaskKind::None, Ty::BF16,
        Ty::BF16},
       run_causal_gqa},
      {{"partial_d64_f32", 2, 2, 2, 200, 333, 64, false, MaskKind::None,
        Ty::BF16, Ty::F32},
       run_partial_d64_f32},
      {{"mask_f16", 1, 2, 2, 130, 257, 128, false, MaskKind::Mixed, Ty::F16,
        Ty::BF16},
       run_mask_f16},
      {{"causal_cache", 1, 2, 1, 100, 300, 128, true, MaskKind::None, Ty::BF16,
        Ty::BF16},
       run_causal_cache},
      {{"causal_mask_rows", 2, 2, 2, 96, 96, 64, true, MaskKind::Padding,
        Ty::BF16, Ty::F32},
       run_causal_mask_rows},
      {{"perf_causal_8k", 1, 32, 8, 8192, 8192, 128, true, MaskKind::None,
        Ty::BF16, Ty::BF16, 96, 30},
       run_perf_causal_8k},
      {{"perf_full_4k", 1, 32, 32, 4096, 4096, 128, false, MaskKind::None,
        Ty::BF16, Ty::BF16, 96, 30},
       run_perf_full_4k},
      {{"fp8_causal_gqa", 1, 4, 2, 256, 256, 128, true, MaskKind::None,
        Ty::E4M3, Ty::BF16},
       run_fp8_causal_gqa},
      {{"fp8_partial_mask", 2, 2, 1, 130, 333, 128, false, MaskKind::Padding,
        Ty::E4M3, Ty::F32},
       run_fp8_partial_mask},
      {{"fp8_blocks_causal_gqa", 1, 4, 2, 384, 384, 128, true, MaskKind::None,
        Ty::E4M3, Ty::BF16, 0, 0, true},
       run_fp8_blocks_causal_gqa},
      {{"fp8_blocks_partial_mask", 2, 2, 1, 130, 333, 128, false,
        MaskKind::Padding, Ty::E4M3, Ty::F32, 0, 0, true},
       run_fp8_blocks_partial_mask},
      {{"fp8_blocks_causal_cache", 1, 2, 1, 100, 300, 128, true, MaskKind::None,
        Ty::E4M3, Ty::BF16, 0, 0, true},
       run_fp8_blocks_causal_cache},
      {{"perf_fp8_causal_8k", 1, 32, 8, 8192, 8192, 128, true, MaskKind::None,
        Ty::E4M3, Ty::BF16, 96, 30, true},
       run_perf_fp8_causal_8k},
      {{"perf_fp8_full_4k", 1, 32, 32, 4096, 4096, 128, false, MaskKind::None,
        Ty::E4M3, Ty::BF16, 96, 30, true},
       run_perf_fp8_full_4k},
      {{"seq_major_causal_gqa", 1, 4, 2, 256, 256, 128, true, MaskKind::None,
        Ty::BF16, Ty::BF16, 0, 0, false, true},
       run_seq_major_causal_gqa},
      {{"fp8_seq_major_partial_mask", 2, 2, 1, 130, 333, 128, false,
        MaskKind::Padding, Ty::E4M3, Ty::F32, 0, 0, false, true},
       run_fp8_seq_major_partial_mask},
      // Decode steps (Sq = 1): the split-key kernels, the splits as
      // decodeAttentionSplits chooses them (attention.mlir's workspaces).
      {{"decode_gqa_b1", 1, 32, 8, 1, 2080, 128, false, MaskKind::Padding,
        Ty::BF16, Ty::BF16, 0, 30, false, true, 65},
       run_decode_gqa_b1},
      {{"decode_mask_f32", 3, 4, 2, 1, 333, 64, false, MaskKind::Padding,
        Ty::BF16, Ty::F32, 0, 0, false, false, 6},
       run_decode_mask_f32},
      {{"decode_mixed_f16", 1, 2, 1, 1, 257, 128, false, MaskKind::Mixed,
        Ty::F16, Ty::BF16, 0, 0, false, false, 9},
       run_decode_mixed_f16},
      {{"decode_one_split", 2, 8, 8, 1, 30, 128, false, MaskKind::None,
        Ty::BF16, Ty::F32, 0, 0, false, false, 1},
       run_decode_one_split},
      {{"decode_tail_inf", 2, 4, 1, 1, 520, 128, false, MaskKind::Tail,
        Ty::BF16, Ty::F32, 0, 0, false, false, 17},
       run_decode_tail_inf},
      {{"perf_decode_b8", 8, 32, 8, 1, 2080, 128, false, MaskKind::Padding,
        Ty::BF16, Ty::BF16, 0, 30, false, true, 6},
       run_perf_decode_b8},
      // ... reading an E4M3 cache (fp8-outline-attention's kv_dequant).
      {{"decode_cache_b1", 1, 32, 8, 1, 2080, 128, false, MaskKind::Padding,
        Ty::BF16, Ty::BF16, 0, 30, false, true, 33, true},
       run_decode_cache_b1},
      {{"decode_cache_f16", 3, 4, 2, 1, 333, 64, false, MaskKind::None, Ty::F16,
        Ty::F32, 0, 0, false, false, 6, true},
       run_decode_cache_f16},
      // ... with power-of-two scales (the folded loop).
      {{"decode_cache_pow2_b1", 1, 32, 8, 1, 2080, 128, false,
        MaskKind::Padding, Ty::BF16, Ty::BF16, 0, 30, false, true, 33, true,
        true},
       run_decode_cache_b1},
      {{"decode_cache_pow2_f16", 3, 4, 2, 1, 333, 64, false, MaskKind::None,
        Ty::F16, Ty::F32, 0, 0, false, false, 6, true, true},
       run_decode_cache_f16},
      {{"perf_decode_cache_b8", 8, 32, 8, 1, 2080, 128, false,
        MaskKind::Padding, Ty::BF16, Ty::BF16, 0, 30, false, true, 6, true},
       run_perf_decode_cache_b8},
      {{"perf_decode_cache_pow2_b8", 8, 32, 8, 1, 2080, 128, false,
        MaskKind::Padding, Ty::BF16, Ty::BF16, 0, 30, false, true, 6, true,
        true},
       run_perf_decode_cache_b8},
  };
  for (const Entry &e : all) {
    if (!only.empty() &&
        std::none_of(only.begin(), only.end(), [&](const std::string &o) {
          return e.c.name.find(o) != std::string::npos;
        }))
      continue;
    if (noRun) {
      std::printf("would run %s\n", e.c.name.c_str());
      continue;
    }
    check(e.c, e.fn);
  }
  if (!noRun)
    std::printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
