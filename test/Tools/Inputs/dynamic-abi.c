/* A host of a model library with dynamic dimensions (ABI 3), written
 * against fp8rt.h only: test/Tools/dynamic-shapes-abi.test's model
 * (Y = reshape(reshape(X) @ W), K = concat(P, X) along dimension 1) through
 * the queries, runs at several shapes checked against the same computation
 * done here, and refused runs. */
#include "fp8rt/fp8rt.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYM(name) static __typeof__(&name) p_##name;
SYM(fp8rt_abi_version)
SYM(fp8rt_model_create)
SYM(fp8rt_model_destroy)
SYM(fp8rt_model_num_inputs)
SYM(fp8rt_model_num_outputs)
SYM(fp8rt_model_input_name)
SYM(fp8rt_model_output_name)
SYM(fp8rt_model_input_rank)
SYM(fp8rt_model_output_rank)
SYM(fp8rt_model_input_shape)
SYM(fp8rt_model_output_shape)
SYM(fp8rt_model_input_bounds)
SYM(fp8rt_model_input_dim_name)
SYM(fp8rt_model_output_shape_for)
SYM(fp8rt_model_run)
SYM(fp8rt_model_last_error)

static fp8rt_model *m;
static float W[8 * 4];

/* Runs with batch b, sequence s, past p; `kseq` is the K buffer's sequence
 * length (s + p unless a test wants it wrong). Returns the status; prints
 * whether the outputs are what this file computes. */
static int run(int64_t b, int64_t s, int64_t p, int64_t pb, int64_t kseq,
               const char *label) {
  int64_t xs[3] = {b, s, 8}, ps[3] = {pb, p, 8}, ws[2] = {8, 4};
  int64_t ys[3] = {b, s, 4}, ks[3] = {b, kseq, 8};
  size_t nx = (size_t)(b * s * 8), np = (size_t)(pb * p * 8);
  float *x = malloc(nx * 4 + 4), *pp = malloc(np * 4 + 4);
  float *y = calloc((size_t)(b * s * 4) + 1, 4);
  float *k = calloc((size_t)(b * kseq * 8) + 1, 4);
  for (size_t i = 0; i < nx; ++i)
    x[i] = (float)((i * 7919) % 61) / 61.0f - 0.5f;
  for (size_t i = 0; i < np; ++i)
    pp[i] = (float)((i * 104729) % 37) / 37.0f;
  fp8rt_tensor in[3] = {{x, FP8RT_FLOAT, 3, xs},
                        {pp, FP8RT_FLOAT, 3, ps},
                        {W, FP8RT_FLOAT, 2, ws}};
  fp8rt_tensor out[2] = {{y, FP8RT_FLOAT, 3, ys}, {k, FP8RT_FLOAT, 3, ks}};
  int status = p_fp8rt_model_run(m, in, 3, out, 2);
  if (status == FP8RT_OK) {
    int same = 1;
    for (int64_t i = 0; i < b * s; ++i)
      for (int n = 0; n < 4; ++n) {
        float acc = 0;
        for (int c = 0; c < 8; ++c)
          acc += x[i * 8 + c] * W[c * 4 + n];
        same &= fabsf(y[i * 4 + n] - acc) <= 1e-5f;
      }
    for (int64_t bi = 0; bi < b; ++bi)
      for (int64_t t = 0; t < s + p; ++t)
        for (int c = 0; c < 8; ++c)
          same &= k[(bi * (s + p) + t) * 8 + c] ==
                  (t < p ? pp[(bi * p + t) * 8 + c]
                         : x[(bi * s + t - p) * 8 + c]);
    printf("%s: ok, outputs as computed here: %d\n", label, same);
  } else {
    printf("%s: status %d: %s\n", label, status, p_fp8rt_model_last_error(m));
  }
  free(x);
  free(pp);
  free(y);
  free(k);
  return status;
}

int main(int argc, char **argv) {
  void *lib = argc > 1 ? dlopen(argv[1], RTLD_NOW) : NULL;
  if (!lib) {
    fprintf(stderr, "cannot load the library\n");
    return 1;
  }
#define LOAD(name)                                                             \
  if (!(p_##name = (__typeof__(&name))dlsym(lib, #name))) {                    \
    fprintf(stderr, "no %s\n", #name);                                         \
    return 1;                                                                  \
  }
  LOAD(fp8rt_abi_version)
  LOAD(fp8rt_model_create)
  LOAD(fp8rt_model_destroy)
  LOAD(fp8rt_model_num_inputs)
  LOAD(fp8rt_model_num_outputs)
  LOAD(fp8rt_model_input_name)
  LOAD(fp8rt_model_output_name)
  LOAD(fp8rt_model_input_rank)
  LOAD(fp8rt_model_output_rank)
  LOAD(fp8rt_model_input_shape)
  LOAD(fp8rt_model_output_shape)
  LOAD(fp8rt_model_input_bounds)
  LOAD(fp8rt_model_input_dim_name)
  LOAD(fp8rt_model_output_shape_for)
  LOAD(fp8rt_model_run)
  LOAD(fp8rt_model_last_error)
  printf("abi %d\n", p_fp8rt_abi_version());
  const char *err = NULL;
  m = p_fp8rt_model_create(&err);
  if (!m) {
    fprintf(stderr, "create: %s\n", err);
    return 1;
  }
  for (int32_t i = 0; i < p_fp8rt_model_num_inputs(m); ++i) {
    int32_t r = p_fp8rt_model_input_rank(m, i);
    const int64_t *s = p_fp8rt_model_input_shape(m, i);
    int64_t lo[8], hi[8];
    if (p_fp8rt_model_input_bounds(m, i, lo, hi) != FP8RT_OK)
      return 1;
    printf("input %d '%s' shape", i, p_fp8rt_model_input_name(m, i));
    for (int32_t d = 0; d < r; ++d)
      printf(" %lld", (long long)s[d]);
    printf(" bounds");
    for (int32_t d = 0; d < r; ++d)
      printf(" %lld..%lld", (long long)lo[d], (long long)hi[d]);
    printf(" names");
    for (int32_t d = 0; d < r; ++d) {
      const char *n = p_fp8rt_model_input_dim_name(m, i, d);
      printf(" %s", n ? n : "-");
    }
    printf("\n");
  }
  for (int32_t i = 0; i < p_fp8rt_model_num_outputs(m); ++i) {
    const int64_t *s = p_fp8rt_model_output_shape(m, i);
    printf("output %d '%s' shape", i, p_fp8rt_model_output_name(m, i));
    for (int32_t d = 0; d < p_fp8rt_model_output_rank(m, i); ++d)
      printf(" %lld", (long long)s[d]);
    printf("\n");
  }
  for (int i = 0; i < 32; ++i)
    W[i] = (float)(i % 5) - 2.0f;
  {
    int64_t xs[3] = {3, 5, 8}, ps[3] = {3, 2, 8}, ws[2] = {8, 4}, y[3], k[3];
    fp8rt_tensor in[3] = {{NULL, FP8RT_FLOAT, 3, xs},
                          {NULL, FP8RT_FLOAT, 3, ps},
                          {NULL, FP8RT_FLOAT, 2, ws}};
    if (p_fp8rt_model_output_shape_for(m, in, 3, 0, y) != FP8RT_OK ||
        p_fp8rt_model_output_shape_for(m, in, 3, 1, k) != FP8RT_OK)
      return 1;
    printf("shapes for X 3x5x8, P 3x2x8: Y %lldx%lldx%lld, K %lldx%lldx%lld\n",
           (long long)y[0], (long long)y[1], (long long)y[2], (long long)k[0],
           (long long)k[1], (long long)k[2]);
    xs[0] = 0;
    int status = p_fp8rt_model_output_shape_for(m, in, 3, 0, y);
    printf("shape_for batch 0: status %d: %s\n", status,
           p_fp8rt_model_last_error(m));
  }
  run(3, 5, 2, 3, 7, "run b3 s5 p2");
  run(1, 1, 0, 1, 1, "run b1 s1 p0");
  run(8, 64, 64, 8, 128, "run b8 s64 p64");
  run(9, 1, 0, 9, 1, "batch 9");
  run(1, 1, 65, 1, 66, "past 65");
  run(3, 5, 2, 2, 7, "batch 3 vs 2");
  run(3, 5, 2, 3, 6, "K buffer 3x6x8");
  run(3, 5, 2, 3, 7, "run b3 s5 p2 after the refused runs");
  p_fp8rt_model_destroy(m);
  return 0;
}
