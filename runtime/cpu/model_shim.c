/*===- model_shim.c - The fp8rt C ABI over a compiled model ----------------===*
 *
 * Part of fp8-opt. Linked into every model shared library that fp8-compile
 * produces for the CPU. The compiled code provides two symbols:
 *
 *   const char __fp8_model_signature[];  the signature, as text (below)
 *   void __fp8_model_entry(void **args); inputs' then outputs' data pointers
 *
 * Signature text: a header line "fp8rt-signature 1 <inputs> <outputs>", then
 * one line per tensor, inputs first: "<dtype> <rank> <dims...> <len> <name>",
 * where <name> is the <len> bytes after the single space that follows <len>.
 *
 *===----------------------------------------------------------------------===*/

#include "fp8rt/fp8rt.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char __fp8_model_signature[];
extern void __fp8_model_entry(void **args);

#define FP8RT_EXPORT __attribute__((visibility("default")))

typedef struct tensor_sig {
  char *name;
  int32_t dtype;
  int32_t rank;
  int64_t *shape;
} tensor_sig;

struct fp8rt_model {
  int32_t num_inputs, num_outputs;
  tensor_sig *tensors; /* inputs then outputs */
  void **args;
  char error[512];
};

FP8RT_EXPORT int32_t fp8rt_abi_version(void) { return FP8RT_ABI_VERSION; }

FP8RT_EXPORT size_t fp8rt_dtype_size(int32_t dtype) {
  switch (dtype) {
  case FP8RT_DOUBLE:
  case FP8RT_INT64:
    return 8;
  case FP8RT_FLOAT:
  case FP8RT_INT32:
    return 4;
  case FP8RT_FLOAT16:
  case FP8RT_BFLOAT16:
  case FP8RT_INT16:
    return 2;
  case FP8RT_UINT8:
  case FP8RT_INT8:
  case FP8RT_BOOL:
  case FP8RT_FLOAT8E4M3FN:
  case FP8RT_FLOAT8E5M2:
    return 1;
  default:
    return 0;
  }
}

static void set_error(fp8rt_model *m, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->error, sizeof(m->error), fmt, ap);
  va_end(ap);
}

static void free_model(fp8rt_model *m) {
  if (!m)
    return;
  if (m->tensors) {
    for (int32_t i = 0; i < m->num_inputs + m->num_outputs; ++i) {
      free(m->tensors[i].name);
      free(m->tensors[i].shape);
    }
  }
  free(m->tensors);
  free(m->args);
  free(m);
}

/* Parses one integer followed by a single space or newline. */
static int parse_int(const char **p, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(*p, &end, 10);
  if (end == *p || errno)
    return 0;
  *out = v;
  *p = end;
  if (**p == ' ' || **p == '\n')
    ++*p;
  return 1;
}

FP8RT_EXPORT fp8rt_model *fp8rt_model_create(const char **error) {
  static const char *bad = "fp8rt: the model's signature is malformed";
  static const char *oom = "fp8rt: out of memory";
  fp8rt_model *m = calloc(1, sizeof(*m));
  if (!m) {
    if (error)
      *error = oom;
    return NULL;
  }
  const char *p = __fp8_model_signature;
  const char *header = "fp8rt-signature 1 ";
  long long nin, nout;
  if (strncmp(p, header, strlen(header)) != 0)
    goto malformed;
  p += strlen(header);
  if (!parse_int(&p, &nin) || !parse_int(&p, &nout) || nin < 0 || nout < 0 ||
      nin + nout > 100000)
    goto malformed;
  m->num_inputs = (int32_t)nin;
  m->num_outputs = (int32_t)nout;
  m->tensors = calloc((size_t)(nin + nout) + 1, sizeof(tensor_sig));
  m->args = calloc((size_t)(nin + nout) + 1, sizeof(void *));
  if (!m->tensors || !m->args)
    goto out_of_memory;
  for (long long i = 0; i < nin + nout; ++i) {
    long long dtype, rank, len;
    if (!parse_int(&p, &dtype) || !parse_int(&p, &rank) || rank < 0 ||
        rank > 64)
      goto malformed;
    tensor_sig *t = &m->tensors[i];
    t->dtype = (int32_t)dtype;
    t->rank = (int32_t)rank;
    t->shape = calloc((size_t)rank + 1, sizeof(int64_t));
    if (!t->shape)
      goto out_of_memory;
    for (long long d = 0; d < rank; ++d) {
      long long dim;
      if (!parse_int(&p, &dim) || dim < 0)
        goto malformed;
      t->shape[d] = dim;
    }
    if (!parse_int(&p, &len) || len < 0 || (long long)strlen(p) < len)
      goto malformed;
    t->name = malloc((size_t)len + 1);
    if (!t->name)
      goto out_of_memory;
    memcpy(t->name, p, (size_t)len);
    t->name[len] = '\0';
    p += len;
    if (*p == '\n')
      ++p;
  }
  return m;
malformed:
  free_model(m);
  if (error)
    *error = bad;
  return NULL;
out_of_memory:
  free_model(m);
  if (error)
    *error = oom;
  return NULL;
}

FP8RT_EXPORT void fp8rt_model_destroy(fp8rt_model *model) { free_model(model); }

FP8RT_EXPORT int32_t fp8rt_model_num_inputs(const fp8rt_model *m) {
  return m ? m->num_inputs : -1;
}
FP8RT_EXPORT int32_t fp8rt_model_num_outputs(const fp8rt_model *m) {
  return m ? m->num_outputs : -1;
}

static const tensor_sig *sig_at(const fp8rt_model *m, int32_t index,
                                int output) {
  if (!m || index < 0)
    return NULL;
  if (output)
    return index < m->num_outputs ? &m->tensors[m->num_inputs + index] : NULL;
  return index < m->num_inputs ? &m->tensors[index] : NULL;
}

#define ACCESSORS(kind, is_output)                                             \
  FP8RT_EXPORT const char *fp8rt_model_##kind##_name(const fp8rt_model *m,     \
                                                     int32_t i) {              \
    const tensor_sig *t = sig_at(m, i, is_output);                             \
    return t ? t->name : NULL;                                                 \
  }                                                                            \
  FP8RT_EXPORT int32_t fp8rt_model_##kind##_dtype(const fp8rt_model *m,        \
                                                  int32_t i) {                 \
    const tensor_sig *t = sig_at(m, i, is_output);                             \
    return t ? t->dtype : -1;                                                  \
  }                                                                            \
  FP8RT_EXPORT int32_t fp8rt_model_##kind##_rank(const fp8rt_model *m,         \
                                                 int32_t i) {                  \
    const tensor_sig *t = sig_at(m, i, is_output);                             \
    return t ? t->rank : -1;                                                   \
  }                                                                            \
  FP8RT_EXPORT const int64_t *fp8rt_model_##kind##_shape(                      \
      const fp8rt_model *m, int32_t i) {                                       \
    const tensor_sig *t = sig_at(m, i, is_output);                             \
    return t ? t->shape : NULL;                                                \
  }

ACCESSORS(input, 0)
ACCESSORS(output, 1)

static int check_tensor(fp8rt_model *m, const char *kind, int32_t index,
                        const tensor_sig *want, const fp8rt_tensor *got) {
  if (!got->data) {
    set_error(m, "%s %d ('%s'): data is NULL", kind, index, want->name);
    return 0;
  }
  if (got->dtype != want->dtype) {
    set_error(m, "%s %d ('%s'): dtype %d given, the model takes %d", kind,
              index, want->name, got->dtype, want->dtype);
    return 0;
  }
  if (got->rank != want->rank || (got->rank > 0 && !got->shape)) {
    set_error(m, "%s %d ('%s'): rank %d given, the model takes %d", kind,
              index, want->name, got->rank, want->rank);
    return 0;
  }
  for (int32_t d = 0; d < want->rank; ++d) {
    if (got->shape[d] != want->shape[d]) {
      set_error(m,
                "%s %d ('%s'): dimension %d is %lld, the model was compiled "
                "for %lld (recompile with --input-shape to change it)",
                kind, index, want->name, d, (long long)got->shape[d],
                (long long)want->shape[d]);
      return 0;
    }
  }
  return 1;
}

FP8RT_EXPORT fp8rt_status fp8rt_model_run(fp8rt_model *m,
                                          const fp8rt_tensor *inputs,
                                          int32_t num_inputs,
                                          const fp8rt_tensor *outputs,
                                          int32_t num_outputs) {
  if (!m)
    return FP8RT_INVALID_ARGUMENT;
  m->error[0] = '\0';
  if (num_inputs != m->num_inputs || num_outputs != m->num_outputs ||
      (num_inputs && !inputs) || (num_outputs && !outputs)) {
    set_error(m, "run: %d inputs and %d outputs given, the model has %d and %d",
              num_inputs, num_outputs, m->num_inputs, m->num_outputs);
    return FP8RT_INVALID_ARGUMENT;
  }
  for (int32_t i = 0; i < num_inputs; ++i) {
    if (!check_tensor(m, "input", i, &m->tensors[i], &inputs[i]))
      return FP8RT_INVALID_ARGUMENT;
    m->args[i] = inputs[i].data;
  }
  for (int32_t i = 0; i < num_outputs; ++i) {
    if (!check_tensor(m, "output", i, &m->tensors[num_inputs + i], &outputs[i]))
      return FP8RT_INVALID_ARGUMENT;
    m->args[num_inputs + i] = outputs[i].data;
  }
  __fp8_model_entry(m->args);
  return FP8RT_OK;
}

FP8RT_EXPORT const char *fp8rt_model_last_error(const fp8rt_model *m) {
  return m ? m->error : "fp8rt: NULL model handle";
}
