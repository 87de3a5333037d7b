/*===- model_shim.c - The fp8rt C ABI over a compiled model ----------------===*
 *
 * Part of fp8-opt. Linked into every model shared library that fp8-compile
 * produces for the CPU. The compiled code provides two symbols:
 *
 *   const char __fp8_model_signature[];  the signature, as text (below)
 *   void __fp8_model_entry(void **args); inputs' then outputs' data pointers
 *
 *   const char __fp8_model_state_names[];  "<bytes> <name>" per line
 *   void *const __fp8_model_state_table[]; the state tensors' addresses
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
/* "<bytes> <name>\n" per state tensor, and their addresses in that order. */
extern const char __fp8_model_state_names[];
extern void *const __fp8_model_state_table[];

#define FP8RT_EXPORT __attribute__((visibility("default")))

typedef struct tensor_sig {
  char *name;
  int32_t dtype;
  int32_t rank;
  int64_t *shape;
} tensor_sig;

typedef struct state_entry {
  char *name;
  uint64_t bytes;
  void *data;
} state_entry;

struct fp8rt_model {
  int32_t num_inputs, num_outputs;
  int32_t num_state;
  state_entry *state;
  tensor_sig *tensors; /* inputs then outputs */
  void **args;
  char error[512];
};

FP8RT_EXPORT int32_t fp8rt_abi_version(void) { return FP8RT_ABI_VERSION; }

FP8RT_EXPORT size_t fp8rt_dtype_size(int32_t dtype) {
  return fp8rt_dtype_size_inline(dtype);
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
  if (m->state)
    for (int32_t i = 0; i < m->num_state; ++i)
      free(m->state[i].name);
  free(m->state);
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
  /* The state table. */
  {
    const char *q = __fp8_model_state_names;
    int32_t count = 0;
    for (const char *c = q; *c; ++c)
      count += *c == '\n';
    m->num_state = count;
    m->state = calloc((size_t)count + 1, sizeof(state_entry));
    if (!m->state)
      goto out_of_memory;
    for (int32_t i = 0; i < count; ++i) {
      long long bytes;
      if (!parse_int(&q, &bytes) || bytes < 0)
        goto malformed;
      const char *end = strchr(q, '\n');
      if (!end)
        goto malformed;
      m->state[i].name = malloc((size_t)(end - q) + 1);
      if (!m->state[i].name)
        goto out_of_memory;
      memcpy(m->state[i].name, q, (size_t)(end - q));
      m->state[i].name[end - q] = '\0';
      m->state[i].bytes = (uint64_t)bytes;
      m->state[i].data = __fp8_model_state_table[i];
      if (!m->state[i].data)
        goto malformed;
      q = end + 1;
    }
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

/*===----------------------------------------------------------------------===*
 * State files
 *
 * "FP8RTSTATE1\n", then little-endian: u64 model fingerprint (FNV-1a of the
 * signature and state table texts), u32 count, per tensor u32 name length,
 * name, u64 byte size, bytes; finally u64 FNV-1a of everything before it.
 *===----------------------------------------------------------------------===*/

static const char kStateMagic[] = "FP8RTSTATE1\n";

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = (const unsigned char *)data;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

static uint64_t fingerprint(void) {
  uint64_t h = 0xcbf29ce484222325ULL;
  h = fnv1a(h, __fp8_model_signature, strlen(__fp8_model_signature));
  return fnv1a(h, __fp8_model_state_names, strlen(__fp8_model_state_names));
}

FP8RT_EXPORT int32_t fp8rt_model_num_state_tensors(const fp8rt_model *m) {
  return m ? m->num_state : -1;
}

typedef struct writer {
  FILE *f;
  uint64_t hash;
  int ok;
} writer;

static void put(writer *w, const void *data, size_t n) {
  if (w->ok && fwrite(data, 1, n, w->f) != n)
    w->ok = 0;
  w->hash = fnv1a(w->hash, data, n);
}

FP8RT_EXPORT fp8rt_status fp8rt_model_save_state(fp8rt_model *m,
                                                 const char *path) {
  if (!m || !path)
    return FP8RT_INVALID_ARGUMENT;
  m->error[0] = '\0';
  size_t n = strlen(path);
  char *tmp = malloc(n + 8);
  if (!tmp)
    return FP8RT_OUT_OF_MEMORY;
  memcpy(tmp, path, n);
  memcpy(tmp + n, ".tmpXXX", 8);
  writer w = {fopen(tmp, "wb"), 0xcbf29ce484222325ULL, 1};
  if (!w.f) {
    set_error(m, "save_state: cannot create %s: %s", tmp, strerror(errno));
    free(tmp);
    return FP8RT_IO_ERROR;
  }
  put(&w, kStateMagic, sizeof(kStateMagic) - 1);
  uint64_t fp = fingerprint();
  put(&w, &fp, 8);
  uint32_t count = (uint32_t)m->num_state;
  put(&w, &count, 4);
  for (int32_t i = 0; i < m->num_state; ++i) {
    uint32_t len = (uint32_t)strlen(m->state[i].name);
    put(&w, &len, 4);
    put(&w, m->state[i].name, len);
    put(&w, &m->state[i].bytes, 8);
    put(&w, m->state[i].data, (size_t)m->state[i].bytes);
  }
  uint64_t checksum = w.hash;
  if (w.ok && fwrite(&checksum, 1, 8, w.f) != 8)
    w.ok = 0;
  if (fclose(w.f) != 0)
    w.ok = 0;
  if (!w.ok || rename(tmp, path) != 0) {
    set_error(m, "save_state: cannot write %s: %s", path, strerror(errno));
    remove(tmp);
    free(tmp);
    return FP8RT_IO_ERROR;
  }
  free(tmp);
  return FP8RT_OK;
}

FP8RT_EXPORT fp8rt_status fp8rt_model_load_state(fp8rt_model *m,
                                                 const char *path) {
  if (!m || !path)
    return FP8RT_INVALID_ARGUMENT;
  m->error[0] = '\0';
  FILE *f = fopen(path, "rb");
  if (!f) {
    set_error(m, "load_state: cannot open %s: %s", path, strerror(errno));
    return FP8RT_IO_ERROR;
  }
  /* Read everything first: the live state changes only when the whole file
   * has been checked. */
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *buf = size > 0 ? malloc((size_t)size) : NULL;
  if (size <= 0 || !buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    free(buf);
    set_error(m, "load_state: cannot read %s", path);
    return FP8RT_IO_ERROR;
  }
  fclose(f);
  const size_t magic = sizeof(kStateMagic) - 1;
  fp8rt_status status = FP8RT_IO_ERROR;
  size_t at = magic + 8 + 4;
  uint64_t fp, checksum;
  uint32_t count;
  if ((size_t)size < at + 8 || memcmp(buf, kStateMagic, magic) != 0) {
    set_error(m, "load_state: %s is not an fp8rt state file", path);
    goto done;
  }
  memcpy(&checksum, buf + size - 8, 8);
  if (fnv1a(0xcbf29ce484222325ULL, buf, (size_t)size - 8) != checksum) {
    set_error(m, "load_state: %s is corrupt (checksum mismatch)", path);
    goto done;
  }
  memcpy(&fp, buf + magic, 8);
  memcpy(&count, buf + magic + 8, 4);
  if (fp != fingerprint() || count != (uint32_t)m->num_state) {
    set_error(m, "load_state: %s was saved by a different model (its "
                 "signature or state differs from this library's)",
              path);
    goto done;
  }
  /* Validate every entry, then copy. */
  for (int pass = 0; pass < 2; ++pass) {
    size_t p = at;
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t len;
      uint64_t bytes;
      if (p + 4 > (size_t)size - 8)
        goto truncated;
      memcpy(&len, buf + p, 4);
      p += 4;
      if (p + len + 8 > (size_t)size - 8)
        goto truncated;
      if (len != strlen(m->state[i].name) ||
          memcmp(buf + p, m->state[i].name, len) != 0) {
        set_error(m, "load_state: %s: entry %u is not '%s'", path, i,
                  m->state[i].name);
        goto done;
      }
      p += len;
      memcpy(&bytes, buf + p, 8);
      p += 8;
      if (bytes != m->state[i].bytes || p + bytes > (size_t)size - 8) {
        set_error(m, "load_state: %s: '%s' has %llu bytes, expected %llu",
                  path, m->state[i].name, (unsigned long long)bytes,
                  (unsigned long long)m->state[i].bytes);
        goto done;
      }
      if (pass == 1)
        memcpy(m->state[i].data, buf + p, (size_t)bytes);
      p += bytes;
    }
    if (p != (size_t)size - 8) {
      set_error(m, "load_state: %s has trailing data", path);
      goto done;
    }
  }
  status = FP8RT_OK;
  goto done;
truncated:
  set_error(m, "load_state: %s is truncated", path);
done:
  free(buf);
  return status;
}
