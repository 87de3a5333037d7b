/*===- decode_dynamic.c - Greedy generation on one dynamic library ---------===*
 *
 * The loop of `decode.py --dynamic` in C: ONE library compiled with dynamic
 * dimensions (batch, new tokens, cached length; decode.py --dynamic
 * --print-commands prints its fp8-compile command, e.g. --input-shape
 * input_ids=1..8x1..12,attention_mask=1..8x1..60,...,
 * past_key_values.0.key=1..8x2x0..48x16) runs the prefill and every decode
 * step, for any batch within its bounds. The cache grows by one token per
 * step: each run's present outputs are the next run's past inputs (no copy
 * into a preallocated cache). Prompts are left-padded to the longest; the
 * attention mask marks the padding, position_ids count the real tokens.
 *
 *   cc -O2 -I<fp8-opt>/runtime/include decode_dynamic.c -o decode_dynamic -ldl
 *   ./decode_dynamic model.so STEPS 5,17,42 7 ...   (one prompt per sequence)
 *
 * Prints one line of generated tokens per prompt. CPU libraries (the GPU
 * targets take static shapes today; decode.c runs those).
 *
 *===----------------------------------------------------------------------===*/

#include "fp8rt/fp8rt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxTensors = 64, kMaxRank = 8 };

typedef struct lib {
  fp8rt_model *m;
  int32_t (*abi_version)(void);
  int32_t (*num_inputs)(const fp8rt_model *);
  int32_t (*num_outputs)(const fp8rt_model *);
  int32_t (*input_dtype)(const fp8rt_model *, int32_t);
  int32_t (*output_dtype)(const fp8rt_model *, int32_t);
  int32_t (*input_rank)(const fp8rt_model *, int32_t);
  int32_t (*output_rank)(const fp8rt_model *, int32_t);
  const int64_t *(*input_shape)(const fp8rt_model *, int32_t);
  fp8rt_status (*input_bounds)(const fp8rt_model *, int32_t, int64_t *,
                               int64_t *);
  fp8rt_status (*output_shape_for)(fp8rt_model *, const fp8rt_tensor *,
                                   int32_t, int32_t, int64_t *);
  fp8rt_status (*run)(fp8rt_model *, const fp8rt_tensor *, int32_t,
                      const fp8rt_tensor *, int32_t);
  const char *(*last_error)(const fp8rt_model *);
} lib;

/* A tensor with its own shape array. */
typedef struct buffer {
  fp8rt_tensor t;
  int64_t shape[kMaxRank];
} buffer;

static void die(const char *what, const char *why) {
  fprintf(stderr, "decode_dynamic: %s: %s\n", what, why);
  exit(1);
}

static size_t elements(const buffer *b) {
  size_t n = 1;
  for (int32_t d = 0; d < b->t.rank; ++d)
    n *= (size_t)b->shape[d];
  return n;
}

/* (Re)allocates `b` for its current shape (zero-filled). */
static void allocate(buffer *b) {
  free(b->t.data);
  b->t.shape = b->shape;
  b->t.data = calloc(elements(b) + 1, fp8rt_dtype_size_inline(b->t.dtype));
  if (!b->t.data)
    die("allocate", "out of memory");
}

static void load(lib *l, const char *path) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h)
    die(path, dlerror());
#define SYM(field, name)                                                       \
  if (!(*(void **)&l->field = dlsym(h, name)))                                 \
    die(path, "not an fp8-compile model library of ABI 3 (no " name ")");
  fp8rt_model *(*create)(const char **);
  SYM(abi_version, "fp8rt_abi_version");
  SYM(num_inputs, "fp8rt_model_num_inputs");
  SYM(num_outputs, "fp8rt_model_num_outputs");
  SYM(input_dtype, "fp8rt_model_input_dtype");
  SYM(output_dtype, "fp8rt_model_output_dtype");
  SYM(input_rank, "fp8rt_model_input_rank");
  SYM(output_rank, "fp8rt_model_output_rank");
  SYM(input_shape, "fp8rt_model_input_shape");
  SYM(input_bounds, "fp8rt_model_input_bounds");
  SYM(output_shape_for, "fp8rt_model_output_shape_for");
  SYM(run, "fp8rt_model_run");
  SYM(last_error, "fp8rt_model_last_error");
#undef SYM
  if (!(*(void **)&create = dlsym(h, "fp8rt_model_create")))
    die(path, "no fp8rt_model_create");
  if (l->abi_version() < 3)
    die(path, "library of ABI < 3: no dynamic dimensions (use decode.c)");
  const char *err = NULL;
  if (!(l->m = create(&err)))
    die(path, err ? err : "create failed");
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s MODEL.so STEPS PROMPT...\n"
            "  MODEL.so: a decoder step compiled with dynamic batch and "
            "lengths\n"
            "  PROMPT: comma-separated token ids, one per sequence\n",
            argv[0]);
    return 2;
  }
  lib l;
  load(&l, argv[1]);
  const int steps = atoi(argv[2]);
  const int64_t B = argc - 3;
  const int32_t ni = l.num_inputs(l.m), no = l.num_outputs(l.m);
  if (ni < 4 || ni > kMaxTensors || no != ni - 2)
    die(argv[1], "not a decoder step (input_ids, attention_mask, "
                 "position_ids, past...; logits, present...)");
  const int32_t ncache = ni - 3;
  static buffer in[kMaxTensors], out[kMaxTensors]; /* zero-initialized */
  int64_t lo[kMaxRank], hi[kMaxRank];
  for (int32_t i = 0; i < ni; ++i) {
    in[i].t.dtype = l.input_dtype(l.m, i);
    in[i].t.rank = l.input_rank(l.m, i);
    if (in[i].t.rank > kMaxRank)
      die(argv[1], "an input of rank > 8");
    memcpy(in[i].shape, l.input_shape(l.m, i), in[i].t.rank * sizeof(int64_t));
  }
  for (int32_t o = 0; o < no; ++o) {
    out[o].t.dtype = l.output_dtype(l.m, o);
    out[o].t.rank = l.output_rank(l.m, o);
  }
  if (in[0].t.rank != 2 || in[1].t.rank != 2 || in[2].t.rank != 2 ||
      in[0].t.dtype != FP8RT_INT64 || out[0].t.dtype != FP8RT_FLOAT ||
      out[0].t.rank != 3)
    die(argv[1], "input_ids/attention_mask/position_ids are not [batch, "
                 "tokens] int64 or the logits not [batch, tokens, vocab] "
                 "float32");
  /* The bounds: batch and width from input_ids, capacity from a past. */
  if (l.input_bounds(l.m, 0, lo, hi) != FP8RT_OK)
    die(argv[1], l.last_error(l.m));
  if (B < lo[0] || B > hi[0]) {
    char why[96];
    snprintf(why, sizeof(why), "%lld prompts given, the library takes a "
             "batch of %lld..%lld", (long long)B, (long long)lo[0],
             (long long)hi[0]);
    die(argv[1], why);
  }
  const int64_t width = hi[1];
  if (l.input_bounds(l.m, 3, lo, hi) != FP8RT_OK || in[3].t.rank != 4)
    die(argv[1], "past inputs are not [batch, heads, cached, head size]");
  const int64_t capacity = hi[2];

  /* Prompts, left-padded to the longest. */
  int64_t longest = 0, *count = calloc(B, sizeof(int64_t));
  int64_t **prompt = calloc(B, sizeof(int64_t *));
  for (int64_t r = 0; r < B; ++r) {
    prompt[r] = calloc(strlen(argv[3 + r]) + 1, sizeof(int64_t));
    for (char *tok = strtok(argv[3 + r], ","); tok; tok = strtok(NULL, ","))
      prompt[r][count[r]++] = atoll(tok);
    if (count[r] > longest)
      longest = count[r];
  }
  for (int64_t r = 0; r < B; ++r) {
    char what[32];
    snprintf(what, sizeof(what), "prompt %lld", (long long)r + 1);
    if (count[r] == 0 || count[r] > width) {
      char why[64];
      snprintf(why, sizeof(why), "must have 1 to %lld tokens",
               (long long)width);
      die(what, why);
    }
  }
  if (steps < 1 || longest + steps - 1 > capacity) {
    char why[96];
    snprintf(why, sizeof(why), "the longest prompt + %d steps exceed the "
             "cache's %lld slots", steps, (long long)capacity);
    die("steps", why);
  }

  /* Step 0's inputs: ids, mask and positions [B, longest], empty pasts. */
  int64_t T = longest, L = longest, P = 0;
  for (int32_t i = 0; i < 3; ++i) {
    in[i].shape[0] = B;
    in[i].shape[1] = T;
    allocate(&in[i]);
  }
  int64_t *mask = NULL; /* [B, L]: grows by a column per step */
  for (int64_t r = 0; r < B; ++r) {
    const int64_t pad = longest - count[r];
    for (int64_t t = 0; t < count[r]; ++t) {
      ((int64_t *)in[0].t.data)[r * T + pad + t] = prompt[r][t];
      ((int64_t *)in[1].t.data)[r * T + pad + t] = 1;
      ((int64_t *)in[2].t.data)[r * T + pad + t] = t;
    }
  }
  for (int32_t c = 0; c < ncache; ++c) {
    in[3 + c].shape[0] = B;
    in[3 + c].shape[2] = P;
    allocate(&in[3 + c]);
  }
  int64_t *tokens = calloc(B * steps, sizeof(int64_t));
  fp8rt_tensor ins[kMaxTensors], outs[kMaxTensors];
  for (int step = 0; step < steps; ++step) {
    for (int32_t i = 0; i < ni; ++i)
      ins[i] = in[i].t;
    /* The outputs' shapes for these sizes (logits [B, T, V], presents with
     * P + T cached tokens). */
    for (int32_t o = 0; o < no; ++o) {
      if (l.output_shape_for(l.m, ins, ni, o, out[o].shape) != FP8RT_OK)
        die("output shape", l.last_error(l.m));
      allocate(&out[o]);
      outs[o] = out[o].t;
    }
    if (l.run(l.m, ins, ni, outs, no) != FP8RT_OK)
      die("run", l.last_error(l.m));
    const int64_t V = out[0].shape[2];
    for (int64_t r = 0; r < B; ++r) {
      const float *row = (const float *)out[0].t.data + (r * T + T - 1) * V;
      int64_t best = 0;
      for (int64_t v = 1; v < V; ++v)
        if (row[v] > row[best])
          best = v;
      tokens[r * steps + step] = best;
    }
    if (step + 1 == steps)
      break;
    /* Next step: one new token per sequence; the mask grows by a valid
     * column; the presents become the pasts (swapped, not copied). */
    mask = calloc(B * (L + 1), sizeof(int64_t));
    for (int64_t r = 0; r < B; ++r) {
      memcpy(mask + r * (L + 1),
             (int64_t *)in[1].t.data + r * L, L * sizeof(int64_t));
      mask[r * (L + 1) + L] = 1;
    }
    int64_t *lastPos = calloc(B, sizeof(int64_t));
    for (int64_t r = 0; r < B; ++r)
      lastPos[r] = ((int64_t *)in[2].t.data)[r * T + T - 1];
    P += T;
    T = 1;
    ++L;
    free(in[1].t.data);
    in[1].t.data = mask;
    in[1].shape[1] = L;
    for (int32_t i = 0; i < 3; i += 2) {
      in[i].shape[1] = T;
      allocate(&in[i]);
    }
    for (int64_t r = 0; r < B; ++r) {
      ((int64_t *)in[0].t.data)[r] = tokens[r * steps + step];
      ((int64_t *)in[2].t.data)[r] = lastPos[r] + 1;
    }
    free(lastPos);
    for (int32_t c = 0; c < ncache; ++c) {
      buffer tmp = in[3 + c];
      in[3 + c] = out[1 + c];
      in[3 + c].t.shape = in[3 + c].shape;
      out[1 + c] = tmp;
      out[1 + c].t.shape = out[1 + c].shape;
    }
  }
  for (int64_t r = 0; r < B; ++r) {
    for (int s = 0; s < steps; ++s)
      printf("%s%lld", s ? " " : "", (long long)tokens[r * steps + s]);
    printf("\n");
  }
  return 0;
}
