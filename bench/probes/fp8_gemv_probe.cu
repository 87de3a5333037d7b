// bench/probes/fp8_gemv_probe.cu -- a measurement probe, not part of the build.
// How close does a plain CUDA-core FP8 GEMV (M = 1: a warp per 1-4 weight
// rows, 16-byte streaming loads, x in shared memory) get to the copy rate at
// the decode products, next to a read-only kernel over the same bytes? Used
// in docs/PERFORMANCE.md (session 28) to decide against a GEMV kernel for
// the decode products. On the GPU machine:
//   nvcc -arch=sm_90a -O3 -std=c++17 -o gemv bench/probes/fp8_gemv_probe.cu && ./gemv
#include <cuda_fp8.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__global__ void readAll(const uint4 *p, size_t n, unsigned *out) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = __ldcs(p + i); acc ^= v.x ^ v.y ^ v.z ^ v.w; }
  if (acc == 0x12345678) *out = acc;
}

// One warp per ROWS rows of W [N, K] (K contiguous, e4m3); x f32 [K] in smem.
template <int ROWS, int U>
__global__ void gemv(const uint8_t *W, const float *x, float *y, int N, int K) {
  extern __shared__ float xs[];
  for (int i = threadIdx.x; i < K; i += blockDim.x) xs[i] = x[i];
  __syncthreads();
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  int n0 = warp * ROWS;
  if (n0 >= N) return;
  float acc[ROWS] = {};
  for (int k0 = lane * 16; k0 < K; k0 += 32 * 16 * U) {
    uint4 w[ROWS][U];
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        int k = k0 + u * 512;
        w[r][u] = k < K ? __ldcs((const uint4 *)(W + (size_t)(n0 + r) * K + k)) : make_uint4(0,0,0,0);
      }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int k = k0 + u * 512;
      if (k >= K) break;
      const float4 *xv = (const float4 *)(xs + k);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const __nv_fp8x2_e4m3 *pr = (const __nv_fp8x2_e4m3 *)&w[r][u];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          float4 xx = xv[j];
          float2 a = float2(pr[2 * j]), b = float2(pr[2 * j + 1]);
          acc[r] += a.x * xx.x + a.y * xx.y + b.x * xx.z + b.y * xx.w;
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    float v = acc[r];
    for (int o = 16; o; o /= 2) v += __shfl_xor_sync(~0u, v, o);
    if (lane == 0) y[n0 + r] = v;
  }
}

template <typename F> float timeIt(F f, int reps) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  for (int i = 0; i < 5; ++i) f();
  for (int i = 0; i < reps; ++i) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms * 1e3f); }
  std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}
template <typename F> float timeBatch(F f, int n) { // n launches back to back, per launch
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ts;
  for (int rep = 0; rep < 7; ++rep) { cudaEventRecord(a); for (int i = 0; i < n; ++i) f(i); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms * 1e3f / n); }
  std::sort(ts.begin(), ts.end()); return ts[3];
}

int main() {
  struct S { int n, k; } shapes[] = {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}, {128256, 4096}};
  size_t big = (size_t)1 << 31; // 2 GB pool to rotate through (cold weights)
  uint8_t *pool; CK(cudaMalloc(&pool, big)); CK(cudaMemset(pool, 0x3c, big));
  float *x, *y; unsigned *o; CK(cudaMalloc(&x, 14336 * 4)); CK(cudaMalloc(&y, 128256 * 4)); CK(cudaMalloc(&o, 4));
  CK(cudaMemset(x, 0, 14336 * 4));
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (auto s : shapes) {
    size_t bytes = (size_t)s.n * s.k; int copies = (int)std::min<size_t>(16, big / bytes);
    auto W = [&](int i) { return pool + (size_t)(i % copies) * bytes; };
    printf("N=%d K=%d  %.1f MB  floor(4.2TB/s) %.1f us\n", s.n, s.k, bytes / 1e6, bytes / 4.2e6);
    for (int bs : {256, 512, 1024}) {
      int blocks = std::min<size_t>(sms * 2048 / bs, bytes / 16 / bs);
      float t = timeBatch([&](int i) { readAll<<<blocks, bs>>>((const uint4 *)W(i), bytes / 16, o); }, 20);
      printf("  read  bs=%4d blocks=%5d %7.1f us %6.0f GB/s\n", bs, blocks, t, bytes / t / 1e3);
    }
#define G(R, U) { int warps = s.n / R; int bs = 256; int blocks = (warps * 32 + bs - 1) / bs; size_t sm = s.k * 4; \
      CK(cudaFuncSetAttribute(gemv<R, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm)); \
      float t = timeBatch([&](int i) { gemv<R, U><<<blocks, bs, sm>>>(W(i), x, y, s.n, s.k); }, 20); CK(cudaGetLastError()); \
      float t1 = timeIt([&]() { gemv<R, U><<<blocks, bs, sm>>>(W(0), x, y, s.n, s.k); }, 30); \
      printf("  gemv R=%d U=%d blocks=%5d %7.1f us b2b (%6.0f GB/s), %7.1f us single\n", R, U, blocks, t, bytes / t / 1e3, t1); }
    G(1, 2) G(1, 4) G(2, 2) G(2, 4) G(4, 2)
  }
  return 0;
}
