/*===- decode.c - Greedy generation over the fp8rt C ABI ------------------===*
 *
 * The loop of decode.py in C, on host memory: a prefill library (WIDTH
 * tokens per sequence) and a decode library (one token), both compiled with
 * a past of CAPACITY slots (decode.py prints the fp8-compile commands with
 * --print-commands), serve every prompt of at most WIDTH tokens. The cache
 * holds each sequence's tokens in slots [0, length); the attention mask
 * marks those and the new tokens valid; position_ids carry the real
 * positions; after each run the new tokens' K/V (the last rows of the
 * present outputs) are copied into the cache at each sequence's length.
 *
 *   cc -O2 -I<fp8-opt>/runtime/include decode.c -o decode -ldl
 *   ./decode prefill.so decode.so STEPS 5,17,42 7 ...   (one prompt per
 *sequence)
 *
 * Prints one line of generated tokens per prompt. Works for CPU and CUDA
 * libraries alike (a CUDA library copies the host buffers each run; decode.py
 * shows the device-resident form).
 *
 *===----------------------------------------------------------------------===*/

#include "fp8rt/fp8rt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lib {
  fp8rt_model *m;
  int32_t (*num_inputs)(const fp8rt_model *);
  int32_t (*num_outputs)(const fp8rt_model *);
  int32_t (*input_dtype)(const fp8rt_model *, int32_t);
  int32_t (*output_dtype)(const fp8rt_model *, int32_t);
  int32_t (*input_rank)(const fp8rt_model *, int32_t);
  int32_t (*output_rank)(const fp8rt_model *, int32_t);
  const int64_t *(*input_shape)(const fp8rt_model *, int32_t);
  const int64_t *(*output_shape)(const fp8rt_model *, int32_t);
  fp8rt_status (*run)(fp8rt_model *, const fp8rt_tensor *, int32_t,
                      const fp8rt_tensor *, int32_t);
  const char *(*last_error)(const fp8rt_model *);
  fp8rt_tensor in[64], out[64];
} lib;

static void die(const char *what, const char *why) {
  fprintf(stderr, "decode: %s: %s\n", what, why);
  exit(1);
}

static size_t elements(int32_t rank, const int64_t *shape) {
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d)
    n *= (size_t)shape[d];
  return n;
}

/* Loads a library and allocates a buffer for each of its tensors. */
static void load(lib *l, const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    die(path, dlerror());
#define SYM(field, name)                                                       \
  if (!(*(void **)&l->field = dlsym(h, name)))                                 \
    die(path, "not an fp8-compile model library (no " name ")");
  fp8rt_model *(*create)(const char **);
  SYM(num_inputs, "fp8rt_model_num_inputs");
  SYM(num_outputs, "fp8rt_model_num_outputs");
  SYM(input_dtype, "fp8rt_model_input_dtype");
  SYM(output_dtype, "fp8rt_model_output_dtype");
  SYM(input_rank, "fp8rt_model_input_rank");
  SYM(output_rank, "fp8rt_model_output_rank");
  SYM(input_shape, "fp8rt_model_input_shape");
  SYM(output_shape, "fp8rt_model_output_shape");
  SYM(run, "fp8rt_model_run");
  SYM(last_error, "fp8rt_model_last_error");
  if (!(*(void **)&create = dlsym(h, "fp8rt_model_create")))
    die(path, "no fp8rt_model_create");
  const char *err = NULL;
  if (!(l->m = create(&err)))
    die(path, err ? err : "create failed");
  int32_t ni = l->num_inputs(l->m), no = l->num_outputs(l->m);
  if (ni < 4 || ni > 64 || no < 2 || no > 64 || ni - 3 != no - 1)
    die(path, "not a decoder step (input_ids, attention_mask, position_ids, "
              "past...; logits, present...)");
  for (int32_t i = 0; i < ni + no; ++i) {
    int out = i >= ni, k = out ? i - ni : i;
    fp8rt_tensor *t = out ? &l->out[k] : &l->in[k];
    t->dtype = out ? l->output_dtype(l->m, k) : l->input_dtype(l->m, k);
    t->rank = out ? l->output_rank(l->m, k) : l->input_rank(l->m, k);
    t->shape = out ? l->output_shape(l->m, k) : l->input_shape(l->m, k);
    t->data = calloc(elements(t->rank, t->shape) + 1,
                     fp8rt_dtype_size_inline(t->dtype));
    if (!t->data)
      die(path, "out of memory");
  }
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr,
            "usage: %s PREFILL.so DECODE.so STEPS PROMPT...\n"
            "  PROMPT: comma-separated token ids, one per sequence\n",
            argv[0]);
    return 2;
  }
  lib pre, dec;
  load(&pre, argv[1]);
  load(&dec, argv[2]);
  int steps = atoi(argv[3]);
  const int64_t B = pre.in[0].shape[0], W = pre.in[0].shape[1];
  const int64_t C = pre.in[3].shape[2]; /* the cache's slots */
  const int64_t V = pre.out[0].shape[2];
  const int32_t ncache = pre.num_inputs(pre.m) - 3;
  if (argc - 4 != B)
    die(argv[1], "its batch differs from the number of prompts given");
  if (pre.out[0].dtype != FP8RT_FLOAT)
    die(argv[1], "logits are not float32");
  int64_t *len = calloc(B, sizeof(int64_t)), *add = calloc(B, sizeof(int64_t));
  int64_t *tokens = calloc(B * (steps + 1), sizeof(int64_t));
  /* The cache: the prefill library's past buffers, shared by both. */
  for (int32_t c = 0; c < ncache; ++c)
    dec.in[3 + c].data = pre.in[3 + c].data;
  int64_t *ids = pre.in[0].data;
  for (int64_t r = 0; r < B; ++r) {
    char what[32];
    snprintf(what, sizeof(what), "prompt %lld", (long long)r + 1);
    for (char *tok = strtok(argv[4 + r], ","); tok; tok = strtok(NULL, ",")) {
      if (add[r] == W)
        die(what, "longer than the prefill library's width");
      ids[r * W + add[r]++] = atoll(tok);
    }
    if (add[r] == 0 || add[r] + steps > C)
      die(what, "empty, or its tokens + STEPS exceed the cache's slots");
  }
  for (int step = 0; step < steps; ++step) {
    lib *l = step == 0 ? &pre : &dec;
    const int64_t T = l->in[0].shape[1];
    int64_t *mask = l->in[1].data, *pos = l->in[2].data;
    for (int64_t r = 0; r < B; ++r) {
      for (int64_t j = 0; j < C + T; ++j) /* cached slots and new tokens */
        mask[r * (C + T) + j] = j < len[r] || (j >= C && j - C < add[r]);
      for (int64_t t = 0; t < T; ++t)
        pos[r * T + t] = len[r] + t;
      if (step > 0)
        ((int64_t *)dec.in[0].data)[r] = tokens[r * (steps + 1) + step - 1];
    }
    if (l->run(l->m, l->in, 3 + ncache, l->out, 1 + ncache) != FP8RT_OK)
      die("run", l->last_error(l->m));
    const float *logits = l->out[0].data;
    for (int64_t r = 0; r < B; ++r) {
      const float *row = logits + (r * T + add[r] - 1) * V;
      int64_t best = 0;
      for (int64_t v = 1; v < V; ++v)
        if (row[v] > row[best])
          best = v;
      tokens[r * (steps + 1) + step] = best;
    }
    /* Append the new tokens' K/V: rows [C, C + add) of each present. */
    for (int32_t c = 0; c < ncache; ++c) {
      const fp8rt_tensor *p = &l->out[1 + c];
      const int64_t H = p->shape[1], D = p->shape[3];
      const size_t es = fp8rt_dtype_size_inline(p->dtype);
      char *cache = pre.in[3 + c].data;
      const char *src = p->data;
      for (int64_t r = 0; r < B; ++r)
        for (int64_t h = 0; h < H; ++h)
          memcpy(cache + (((r * H + h) * C) + len[r]) * D * es,
                 src + (((r * H + h) * (C + T)) + C) * D * es,
                 (size_t)(add[r] * D) * es);
    }
    for (int64_t r = 0; r < B; ++r) {
      len[r] += add[r];
      add[r] = 1;
    }
  }
  for (int64_t r = 0; r < B; ++r) {
    for (int s = 0; s < steps; ++s)
      printf("%s%lld", s ? " " : "", (long long)tokens[r * (steps + 1) + s]);
    printf("\n");
  }
  return 0;
}
