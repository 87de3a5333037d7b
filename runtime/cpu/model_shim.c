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
 *   const weight_entry __fp8_model_weights[]; external weights (below)
 *   const uint64_t __fp8_model_weights_fingerprint;
 *   const char __fp8_model_weights_file[]; the weights file's name
 *
 * Signature text: a header line "fp8rt-signature 2 <inputs> <outputs>
 * <checks>", then one line per tensor, inputs first: "<dtype> <rank>
 * <dims...> <len> <name>", where <name> is the <len> bytes after the single
 * space that follows <len>; then one line per run-time check, "<len>
 * <message>"; finally "fingerprint <hex>" (a hash of the compiled
 * computation, weights included).
 *
 * Version 3 (dynamic dimensions, fp8-compile --input-shape ids=1..8x1..64):
 * the header is "fp8rt-signature 3 <inputs> <outputs> <checks> <symbols>",
 * then one line per symbol, "<lo>..<hi> <len> <name>" (s0, s1, ... in that
 * order: a dynamic dimension's inclusive bounds and its dim_param); a
 * tensor's dimension is a size or, when dynamic, a polynomial over the
 * symbols without spaces ("s0", "s1+s2", "4*s0*s1", "2*s0+-1"). Every
 * dynamic input dimension is one symbol; the others follow from them. The
 * entry point then takes one more pointer after the status slot (after the
 * outputs when there is no status): an int64 array of every input's then
 * every output's dimensions for this run, row-major strides implied.
 *
 * Version 4 (outputs updated in place, fp8-kv-cache-in-place): the header
 * is "fp8rt-signature 4 <inputs> <outputs> <checks> <symbols> <ties>"
 * (symbols 0: a tied model is static), and after the checks one line per
 * tie, "<output> <input>": output <output> is input <input> updated in
 * place. The compiled code takes no pointer for a tied output: it updates
 * the buffer it gets as the input, which the shim makes the output's
 * buffer, holding the input's data (copied there unless the caller passed
 * one buffer for both).
 *
 * A model with run-time checks (data-dependent indices: Gather and kin)
 * takes one more pointer after its outputs: an int64[2] status the compiled
 * code fills with {failing check + 1 (0: none), offending value}. Indices
 * out of range are clamped, so nothing is read out of bounds; the run then
 * fails with FP8RT_INVALID_ARGUMENT and the check's message.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE /* dladdr */
#include "fp8rt/fp8rt.h"
#include "fp8rt/fp8w.h"
#ifdef FP8RT_TARGET_CUDA
#include "fp8rt/fp8rt_cuda.h"
#endif
#include <pthread.h>

#include <dlfcn.h>
#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char __fp8_model_signature[];
extern void __fp8_model_entry(void **args);
/* "<bytes> <name>\n" per state tensor, and their addresses in that order. */
extern const char __fp8_model_state_names[];
extern void *const __fp8_model_state_table[];

#ifdef FP8RT_TARGET_CUDA
/* CUDA models (libfp8rt_cuda_model.a, this file built with
 * FP8RT_TARGET_CUDA): the compiled host code reads every global (weights,
 * constants, FP8 state) through a pointer slot that must hold a device copy
 * (fp8::redirectGlobalsToDevice). The table ends with a NULL host address. */
typedef struct device_global {
  const void *host;
  uint64_t bytes;
  void **slot;
} device_global;
extern const device_global __fp8_model_device_globals[];
/* Uploads happen once per process (the slots are process-wide, as the CPU
 * path's globals are); runs are serialized because the buffer pool and a
 * captured graph assume one run at a time. */
static pthread_mutex_t cuda_lock = PTHREAD_MUTEX_INITIALIZER;
static int cuda_uploaded;
static __thread char cuda_create_error[1024];
#endif

/* External weights (fp8::externalizeWeights, docs/Weights.md): the host
 * code reads each weight's address from its slot, which the first create of
 * the process fills from the weights file (CPU: the mapped file; CUDA: a
 * device copy). The table ends with a NULL name; an empty table means the
 * library holds its weights. */
typedef struct weight_entry {
  const char *name;
  uint64_t name_bytes;
  uint64_t bytes;
  uint64_t dtype;
  void **slot;
} weight_entry;
extern const weight_entry __fp8_model_weights[];
extern const uint64_t __fp8_model_weights_fingerprint;
extern const char __fp8_model_weights_file[];
static pthread_mutex_t weights_lock = PTHREAD_MUTEX_INITIALIZER;
static int weights_loaded;
static char weights_loaded_from[4096];
#ifndef FP8RT_TARGET_CUDA
static fp8w_file *weights_map; /* kept mapped while the library is loaded */
#endif
static __thread char weights_error[10240]; /* two paths and a message */

#define FP8RT_EXPORT __attribute__((visibility("default")))

#ifndef FP8RT_TARGET_CUDA
/* CPU: serializes the runs of models with run-time checks and persistent
 * state (see fp8rt_model_run); the CUDA build uses cuda_lock. */
static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
#endif

#ifdef FP8RT_TARGET_CUDA
#define FP8RT_GRAPHS 4 /* captured runs kept per handle */
enum {
  WHERE_HOST = 0,          /* host memory, staged through m->staging */
  WHERE_DEVICE = 1,        /* device memory the kernels use in place */
  WHERE_DEVICE_STAGED = 2, /* device memory not 16-byte aligned: staged */
};
#endif

typedef struct tensor_sig {
  char *name;
  int32_t dtype;
  int32_t rank;
  int64_t *shape;
  size_t bytes; /* prod(shape) * element size, checked for overflow */
  /* Signature version 3: each dynamic dimension's polynomial (NULL for a
   * static one; shape[d] is then -1), or NULL when all are static. */
  char **exprs;
} tensor_sig;

/* A dynamic dimension of signature version 3. */
typedef struct symbol_sig {
  char *name;
  int64_t lo, hi;
} symbol_sig;

typedef struct state_entry {
  char *name;
  uint64_t bytes;
  void *data;
} state_entry;

struct fp8rt_model {
  int32_t num_inputs, num_outputs;
  int32_t num_checks;
  char **checks;     /* the run-time checks' messages */
  int64_t status[2]; /* this run's check status */
  /* Copies of the state taken before a run with checks, so that a run the
   * checks refuse leaves the state as it was (NULL without checks or
   * state); the state tensors' addresses and sizes, for copy_many. */
  void **undo;
  void **state_data;
  size_t *state_bytes;
  int32_t num_state;
  state_entry *state;
  tensor_sig *tensors; /* inputs then outputs */
  /* Signature version 4: per output, the input it updates in place (-1:
   * none), and whether there is any; the compiled entry's arguments (the
   * tied outputs left out) when there is. */
  int32_t *tied_input;
  int32_t num_ties;
  void **entry;
  /* Dynamic dimensions (signature version 3; 0 and NULL otherwise): the
   * symbols, this run's values, this run's dimensions of every tensor
   * (inputs then outputs, the entry point's last argument) and where each
   * tensor's start in it. */
  int32_t num_symbols;
  symbol_sig *symbols;
  int64_t *symbol_values;
  int64_t *run_dims;
  int32_t num_dims; /* entries of run_dims */
  int32_t *dims_at;
  void **args;
  /* This run's size of every tensor in bytes (inputs then outputs; their
   * dynamic dimensions at this run's values). */
  size_t *run_bytes;
  char error[512];
  fp8rt_copy_stats copies; /* of the last successful run */
#ifdef FP8RT_TARGET_CUDA
  void **staging;  /* device buffers for inputs then outputs */
  size_t *bytes;   /* their sizes (a dynamic tensor's grow with its runs) */
  /* This run's tensors: the caller's data and where it is (WHERE_*). */
  void **user;
  unsigned char *where;
  /* Copy lists (inputs + outputs + status at most). */
  void **copy_dst;
  const void **copy_src;
  size_t *copy_bytes;
  int32_t *copy_of; /* the tensor each copy is for (n: the status) */
  /* Captured runs (on unless FP8RT_CUDA_GRAPH=0), each for the device addresses
   * it was captured with (device tensors are read in place, so another address
   * needs another graph) and, with dynamic dimensions, the run's dimensions
   * (the captured launches' grids and sizes); least recently used replaced.
   * Keys are graph_key_bytes long. */
  void *graphs[FP8RT_GRAPHS];
  unsigned char *graph_args[FP8RT_GRAPHS];
  unsigned char *graph_key;
  size_t graph_key_bytes;
  /* Keys of recent plain runs: a run is captured when its key ran plainly
   * before (the pool then holds its buffers; a dynamic model whose shape
   * changes every run, a growing cache, captures nothing). */
  unsigned char *seen_keys[FP8RT_GRAPHS];
  int seen_next;
  unsigned long long graph_used[FP8RT_GRAPHS];
  int use_graph;
  long long runs;
  void **backup; /* load_state's copies of the state (NULL outside it) */
#endif
};

FP8RT_EXPORT int32_t fp8rt_abi_version(void) { return FP8RT_ABI_VERSION; }

FP8RT_EXPORT const char *fp8rt_model_device(void) {
#ifdef FP8RT_TARGET_CUDA
  return "cuda";
#else
  return "cpu";
#endif
}

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
      if (m->tensors[i].exprs)
        for (int32_t d = 0; d < m->tensors[i].rank; ++d)
          free(m->tensors[i].exprs[d]);
      free(m->tensors[i].exprs);
      free(m->tensors[i].shape);
    }
  }
  free(m->tensors);
  if (m->symbols)
    for (int32_t i = 0; i < m->num_symbols; ++i)
      free(m->symbols[i].name);
  free(m->symbols);
  free(m->symbol_values);
  free(m->run_dims);
  free(m->dims_at);
  free(m->args);
  free(m->run_bytes);
  free(m->tied_input);
  free(m->entry);
  if (m->checks)
    for (int32_t i = 0; i < m->num_checks; ++i)
      free(m->checks[i]);
  free(m->checks);
  if (m->undo)
    for (int32_t i = 0; i < m->num_state; ++i) {
#ifdef FP8RT_TARGET_CUDA
      fp8rt_cuda_free(m->undo[i]);
#else
      free(m->undo[i]);
#endif
    }
  free(m->undo);
  free(m->state_data);
  free(m->state_bytes);
  if (m->state)
    for (int32_t i = 0; i < m->num_state; ++i)
      free(m->state[i].name);
  free(m->state);
#ifdef FP8RT_TARGET_CUDA
  if (m->staging)
    for (int32_t i = 0; i < m->num_inputs + m->num_outputs + 1; ++i)
      fp8rt_cuda_free(m->staging[i]);
  free(m->staging);
  free(m->bytes);
  free(m->user);
  free(m->where);
  free(m->copy_dst);
  free(m->copy_src);
  free(m->copy_bytes);
  free(m->copy_of);
  for (int k = 0; k < FP8RT_GRAPHS; ++k) {
    fp8rt_cuda_graph_destroy(m->graphs[k]);
    free(m->graph_args[k]);
  }
  free(m->graph_key);
  for (int k = 0; k < FP8RT_GRAPHS; ++k)
    free(m->seen_keys[k]);
#endif
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

/* The value of a dimension polynomial of signature version 3 ("s0",
 * "4*s0*s1+s2+-1") at the symbols' values `v`; 0 when it is malformed,
 * names a symbol >= n, or overflows int64. */
static int eval_dim(const char *e, const int64_t *v, int32_t n,
                    int64_t *out) {
  int64_t sum = 0;
  for (;;) {
    int64_t term = 1;
    for (;;) {
      int64_t factor;
      char *end;
      errno = 0;
      if (*e == 's') {
        long long k = strtoll(e + 1, &end, 10);
        if (end == e + 1 || errno || k < 0 || k >= n)
          return 0;
        factor = v[k];
      } else {
        factor = strtoll(e, &end, 10);
        if (end == e || errno)
          return 0;
      }
      e = end;
      if (__builtin_mul_overflow(term, factor, &term))
        return 0;
      if (*e != '*')
        break;
      ++e;
    }
    if (__builtin_add_overflow(sum, term, &sum))
      return 0;
    if (*e != '+')
      break;
    ++e;
  }
  if (*e != '\0')
    return 0;
  *out = sum;
  return 1;
}

/* The symbol a dimension polynomial is exactly ("s3": 3), or -1. */
static int32_t single_symbol(const char *e) {
  if (*e != 's')
    return -1;
  char *end;
  errno = 0;
  long long k = strtoll(e + 1, &end, 10);
  return end != e + 1 && *end == '\0' && !errno && k >= 0 && k < INT32_MAX
             ? (int32_t)k
             : -1;
}

/* Reads the token up to the next space or newline (and skips that one
 * separator) into a new string; NULL when empty or out of memory. */
static char *parse_token(const char **p) {
  size_t n = strcspn(*p, " \n");
  if (n == 0)
    return NULL;
  char *t = malloc(n + 1);
  if (!t)
    return NULL;
  memcpy(t, *p, n);
  t[n] = '\0';
  *p += n;
  if (**p == ' ' || **p == '\n')
    ++*p;
  return t;
}

#ifdef FP8RT_TARGET_CUDA
static int env_flag(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* Device side of create: the CUDA context, the kernels' modules, device
 * copies of the globals, state pointers into them, staging buffers. */
static int cuda_prepare(fp8rt_model *m, const char **error) {
  const char *why = NULL;
  if (fp8rt_cuda_init() != 0) {
    why = "CUDA is not usable";
  } else if (*fp8rt_cuda_module_load_error()) {
    snprintf(cuda_create_error, sizeof(cuda_create_error),
             "fp8rt: the model's GPU kernels did not load: %s",
             fp8rt_cuda_module_load_error());
    *error = cuda_create_error;
    return 0;
  }
  if (why) {
    snprintf(cuda_create_error, sizeof(cuda_create_error), "fp8rt: %s: %s",
             why, fp8rt_cuda_last_error());
    *error = cuda_create_error;
    return 0;
  }
  pthread_mutex_lock(&cuda_lock);
  for (const device_global *g = __fp8_model_device_globals; g->host; ++g) {
    if (*g->slot)
      continue;
    void *d = fp8rt_cuda_alloc((size_t)g->bytes);
    if (!d || fp8rt_cuda_copy(d, g->host, (size_t)g->bytes) != 0) {
      snprintf(cuda_create_error, sizeof(cuda_create_error),
               "fp8rt: uploading the model's constants (%llu bytes): %s",
               (unsigned long long)g->bytes, fp8rt_cuda_last_error());
      fp8rt_cuda_free(d);
      pthread_mutex_unlock(&cuda_lock);
      *error = cuda_create_error;
      return 0;
    }
    *g->slot = d;
  }
  ++cuda_uploaded;
  pthread_mutex_unlock(&cuda_lock);
  for (int32_t i = 0; i < m->num_state; ++i) {
    const device_global *g = __fp8_model_device_globals;
    while (g->host && g->host != m->state[i].data)
      ++g;
    if (!g->host) {
      *error = "fp8rt: a state tensor of the model has no device copy";
      return 0;
    }
    m->state[i].data = *g->slot;
  }
  int32_t n = m->num_inputs + m->num_outputs;
  /* inputs, outputs, then the check status (when the model has checks) */
  m->staging = calloc((size_t)n + 2, sizeof(void *));
  m->bytes = calloc((size_t)n + 2, sizeof(size_t));
  m->user = calloc((size_t)n + 2, sizeof(void *));
  m->where = calloc((size_t)n + 2, 1);
  m->copy_dst = calloc((size_t)n + 2, sizeof(void *));
  m->copy_src = calloc((size_t)n + 2, sizeof(void *));
  m->copy_bytes = calloc((size_t)n + 2, sizeof(size_t));
  m->copy_of = calloc((size_t)n + 2, sizeof(int32_t));
  if (!m->staging || !m->bytes || !m->user || !m->where || !m->copy_dst ||
      !m->copy_src || !m->copy_bytes || !m->copy_of) {
    *error = "fp8rt: out of memory";
    return 0;
  }
  for (int32_t i = 0; i < n + (m->num_checks > 0); ++i) {
    if (i == n) { /* the status */
      m->bytes[i] = sizeof(m->status);
      m->staging[i] = fp8rt_cuda_alloc(sizeof(m->status));
      if (!m->staging[i]) {
        snprintf(cuda_create_error, sizeof(cuda_create_error),
                 "fp8rt: allocating device memory for the run-time checks: %s",
                 fp8rt_cuda_last_error());
        *error = cuda_create_error;
        return 0;
      }
      continue;
    }
    /* A tensor with dynamic dimensions is staged in a buffer that grows
     * with the runs that need it (ensure_staging). */
    if (m->tensors[i].exprs)
      continue;
    size_t bytes = m->tensors[i].bytes;
    m->bytes[i] = bytes;
    /* An output updated in place is staged in its input's buffer. */
    if (i >= m->num_inputs && m->tied_input[i - m->num_inputs] >= 0)
      continue;
    m->staging[i] = fp8rt_cuda_alloc(bytes);
    if (!m->staging[i]) {
      snprintf(cuda_create_error, sizeof(cuda_create_error),
               "fp8rt: allocating device memory for '%s': %s",
               m->tensors[i].name, fp8rt_cuda_last_error());
      *error = cuda_create_error;
      return 0;
    }
  }
  /* CUDA graphs are on by default: a run repeated with the same addresses
   * (and dimensions) replays its graph, with no host code and no launch
   * gaps. FP8RT_CUDA_GRAPH=0 turns them off; FP8RT_CUDA_PROFILE, which
   * times the kernels of plain runs, turns them off unless
   * FP8RT_CUDA_GRAPH asks for them. */
  {
    const char *g = getenv("FP8RT_CUDA_GRAPH");
    m->use_graph = (g && *g) ? env_flag("FP8RT_CUDA_GRAPH")
                             : !env_flag("FP8RT_CUDA_PROFILE");
  }
  /* A captured run's key: the entry's arguments (inputs, outputs, the
   * status, the dimensions' address) and the run's dimensions. */
  m->graph_key_bytes =
      ((size_t)n + 2) * sizeof(void *) + (size_t)m->num_dims * sizeof(int64_t);
  if (m->use_graph && !(m->graph_key = malloc(m->graph_key_bytes))) {
    *error = "fp8rt: out of memory";
    return 0;
  }
  return 1;
}
#endif

static double seconds_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Where the weights file is: the path given to create, else $FP8RT_WEIGHTS,
 * else the recorded file name in the library's own directory. */
static int weights_path(const char *given, char *path, size_t size) {
  const char *env = getenv("FP8RT_WEIGHTS");
  if (given && *given)
    return snprintf(path, size, "%s", given) < (int)size;
  if (env && *env)
    return snprintf(path, size, "%s", env) < (int)size;
  Dl_info info;
  if (!dladdr((const void *)__fp8_model_weights, &info) || !info.dli_fname)
    return 0;
  const char *slash = strrchr(info.dli_fname, '/');
  int dir = slash ? (int)(slash - info.dli_fname) : 0;
  return snprintf(path, size, "%.*s%s%s", dir, info.dli_fname,
                  slash ? "/" : "", __fp8_model_weights_file) < (int)size;
}

/* Fills every weight slot from the weights file, once per process. On any
 * failure nothing is filled and *error says why. */
static int load_weights(const char *given, const char **error) {
  if (!__fp8_model_weights[0].name) {
    if (given) {
      snprintf(weights_error, sizeof(weights_error),
               "fp8rt: this library holds its weights (compiled with "
               "--weights=embed, or small enough for --weights=auto): it "
               "uses no weights file, and %s was not read",
               given);
      *error = weights_error;
      return 0;
    }
    return 1;
  }
  char path[4096];
  if (!weights_path(given, path, sizeof(path))) {
    *error = "fp8rt: cannot tell where the weights file is (the library's "
             "path is unknown or too long): set FP8RT_WEIGHTS";
    return 0;
  }
  pthread_mutex_lock(&weights_lock);
  if (weights_loaded) {
    int same = strcmp(path, weights_loaded_from) == 0;
    pthread_mutex_unlock(&weights_lock);
    if (!same && given) {
      snprintf(weights_error, sizeof(weights_error),
               "fp8rt: this library's weights are already loaded from %s "
               "(once per process); %s was not read",
               weights_loaded_from, path);
      *error = weights_error;
      return 0;
    }
    return 1;
  }
  const char *verify = getenv("FP8RT_WEIGHTS_VERIFY");
  unsigned flags = verify && strcmp(verify, "0") == 0 ? 0 : FP8W_VERIFY_DATA;
  char why[1024];
  double start = seconds_now();
  fp8w_file *f = fp8w_open(path, __fp8_model_weights_fingerprint, flags, why,
                           sizeof(why));
  if (!f) {
    snprintf(weights_error, sizeof(weights_error), "fp8rt: %s", why);
    goto fail;
  }
  const weight_entry *w;
  uint64_t total = 0;
  for (w = __fp8_model_weights; w->name; ++w) {
    int64_t i = fp8w_find(f, w->name, (size_t)w->name_bytes);
    const fp8w_entry *e = i < 0 ? NULL : fp8w_entry_at(f, (uint64_t)i);
    if (!e) {
      snprintf(weights_error, sizeof(weights_error),
               "fp8rt: %s has no tensor '%.*s', which the library needs", path,
               (int)w->name_bytes, w->name);
      goto fail;
    }
    if (e->bytes != w->bytes || (uint64_t)e->dtype != w->dtype) {
      snprintf(weights_error, sizeof(weights_error),
               "fp8rt: %s: tensor '%.*s' is %llu bytes of type %d; the "
               "library expects %llu bytes of type %llu",
               path, (int)w->name_bytes, w->name,
               (unsigned long long)e->bytes, e->dtype,
               (unsigned long long)w->bytes, (unsigned long long)w->dtype);
      goto fail;
    }
    total += e->bytes;
  }
#ifdef FP8RT_TARGET_CUDA
  /* Device buffers for every tensor, then one upload through pinned
   * staging (fp8rt_cuda_upload). */
  {
    int32_t n = 0, bad = -1;
    for (w = __fp8_model_weights; w->name; ++w)
      ++n;
    void **dst = calloc((size_t)n + 1, sizeof(void *));
    const void **src = calloc((size_t)n + 1, sizeof(void *));
    size_t *sizes = calloc((size_t)n + 1, sizeof(size_t));
    int ok = dst && src && sizes;
    if (!ok)
      snprintf(weights_error, sizeof(weights_error),
               "fp8rt: out of host memory for the weights table of %s", path);
    for (int32_t i = 0; ok && i < n; ++i) {
      w = &__fp8_model_weights[i];
      src[i] = fp8w_data(f, (uint64_t)fp8w_find(f, w->name,
                                                (size_t)w->name_bytes));
      sizes[i] = (size_t)w->bytes;
      dst[i] = fp8rt_cuda_alloc(sizes[i] ? sizes[i] : 1);
      if (!dst[i]) {
        snprintf(weights_error, sizeof(weights_error),
                 "fp8rt: allocating device memory for tensor '%.*s' of %s "
                 "(%llu bytes): %s",
                 (int)w->name_bytes, w->name, path,
                 (unsigned long long)w->bytes, fp8rt_cuda_last_error());
        ok = 0;
      }
    }
    if (ok && fp8rt_cuda_upload(dst, src, sizes, n, &bad) != 0) {
      w = &__fp8_model_weights[bad >= 0 && bad < n ? bad : 0];
      snprintf(weights_error, sizeof(weights_error),
               "fp8rt: uploading the weights of %s (at tensor '%.*s'): %s",
               path, (int)w->name_bytes, w->name, fp8rt_cuda_last_error());
      ok = 0;
    }
    for (int32_t i = 0; i < n; ++i) {
      if (ok)
        *__fp8_model_weights[i].slot = dst[i];
      else if (dst && dst[i])
        fp8rt_cuda_free(dst[i]);
    }
    free(dst);
    free((void *)src);
    free(sizes);
    if (!ok)
      goto fail;
  }
#else
  for (w = __fp8_model_weights; w->name; ++w)
    *w->slot = (void *)(uintptr_t)fp8w_data(
        f, (uint64_t)fp8w_find(f, w->name, (size_t)w->name_bytes));
#endif
#ifdef FP8RT_TARGET_CUDA
  fp8w_close(f);
#else
  weights_map = f;
#endif
  f = NULL;
  weights_loaded = 1;
  snprintf(weights_loaded_from, sizeof(weights_loaded_from), "%s", path);
  pthread_mutex_unlock(&weights_lock);
  {
    const char *verbose = getenv("FP8RT_VERBOSE");
    if (verbose && *verbose && strcmp(verbose, "0") != 0) {
      double s = seconds_now() - start;
      fprintf(stderr,
              "fp8rt: weights: %s, %.3f GB %s in %.3f s (%.2f GB/s)%s\n",
              path, (double)total * 1e-9,
#ifdef FP8RT_TARGET_CUDA
              "verified and uploaded",
#else
              "mapped and verified",
#endif
              s, s > 0 ? (double)total * 1e-9 / s : 0.0,
              flags ? "" : " (FP8RT_WEIGHTS_VERIFY=0: hashes not checked)");
    }
  }
  return 1;
fail:
  fp8w_close(f);
  pthread_mutex_unlock(&weights_lock);
  *error = weights_error;
  return 0;
}

#ifndef FP8RT_TARGET_CUDA
__attribute__((destructor)) static void unload_weights(void) {
  fp8w_close(weights_map);
  weights_map = NULL;
}
#endif


/* Allocates the undo copies of the state (models with checks and state). */
static int prepare_undo(fp8rt_model *m) {
  if (m->num_checks == 0 || m->num_state == 0)
    return 1;
  m->undo = calloc((size_t)m->num_state, sizeof(void *));
  m->state_data = calloc((size_t)m->num_state, sizeof(void *));
  m->state_bytes = calloc((size_t)m->num_state, sizeof(size_t));
  if (!m->undo || !m->state_data || !m->state_bytes)
    return 0;
  for (int32_t i = 0; i < m->num_state; ++i) {
    m->state_data[i] = m->state[i].data;
    m->state_bytes[i] = (size_t)m->state[i].bytes;
#ifdef FP8RT_TARGET_CUDA
    m->undo[i] = fp8rt_cuda_alloc(m->state_bytes[i] + 1);
#else
    m->undo[i] = malloc(m->state_bytes[i] + 1);
#endif
    if (!m->undo[i])
      return 0;
  }
  return 1;
}

/* Copies the state into the undo buffers, or (restore) back. */
static int copy_undo(fp8rt_model *m, int restore) {
  if (!m->undo)
    return 1;
  void **dst = restore ? m->state_data : m->undo;
  void **src = restore ? m->undo : m->state_data;
#ifdef FP8RT_TARGET_CUDA
  int32_t failed = 0;
  return fp8rt_cuda_copy_many(dst, (const void *const *)src, m->state_bytes,
                              m->num_state, &failed) == 0;
#else
  for (int32_t i = 0; i < m->num_state; ++i)
    memcpy(dst[i], src[i], m->state_bytes[i]);
  return 1;
#endif
}

FP8RT_EXPORT fp8rt_model *fp8rt_model_create(const char **error) {
  return fp8rt_model_create_with_weights(NULL, error);
}

FP8RT_EXPORT fp8rt_model *
fp8rt_model_create_with_weights(const char *weights, const char **error) {
  static const char *bad = "fp8rt: the model's signature is malformed";
  static const char *oom = "fp8rt: out of memory";
  fp8rt_model *m = calloc(1, sizeof(*m));
  if (!m) {
    if (error)
      *error = oom;
    return NULL;
  }
  const char *p = __fp8_model_signature;
  const char *header = "fp8rt-signature ";
  long long version, nin, nout, nchecks, nsyms = 0, nties = 0;
  if (strncmp(p, header, strlen(header)) != 0)
    goto malformed;
  p += strlen(header);
  if (!parse_int(&p, &version) || version < 2 || version > 4 ||
      !parse_int(&p, &nin) || !parse_int(&p, &nout) ||
      !parse_int(&p, &nchecks) || nin < 0 || nout < 0 || nchecks < 0 ||
      nin + nout > 100000 || nchecks > 100000 ||
      (version == 3 && (!parse_int(&p, &nsyms) || nsyms < 1 ||
                        nsyms > 100000)) ||
      (version == 4 && (!parse_int(&p, &nsyms) || nsyms != 0 ||
                        !parse_int(&p, &nties) || nties < 1 || nties > nout)))
    goto malformed;
  m->num_inputs = (int32_t)nin;
  m->num_outputs = (int32_t)nout;
  m->num_checks = (int32_t)nchecks;
  m->num_symbols = (int32_t)nsyms;
  m->tensors = calloc((size_t)(nin + nout) + 1, sizeof(tensor_sig));
  /* inputs, outputs, the check status when there are checks, and the run's
   * dimensions when some are dynamic */
  m->args = calloc((size_t)(nin + nout) + 2, sizeof(void *));
  m->run_bytes = calloc((size_t)(nin + nout) + 1, sizeof(size_t));
  m->checks = calloc((size_t)nchecks + 1, sizeof(char *));
  m->symbols = calloc((size_t)nsyms + 1, sizeof(symbol_sig));
  m->symbol_values = calloc((size_t)nsyms + 1, sizeof(int64_t));
  m->dims_at = calloc((size_t)(nin + nout) + 1, sizeof(int32_t));
  m->tied_input = malloc(((size_t)nout + 1) * sizeof(int32_t));
  m->entry = calloc((size_t)(nin + nout) + 2, sizeof(void *));
  if (!m->tensors || !m->args || !m->run_bytes || !m->checks || !m->symbols ||
      !m->symbol_values || !m->dims_at || !m->tied_input || !m->entry)
    goto out_of_memory;
  for (long long k = 0; k < nout; ++k)
    m->tied_input[k] = -1;
  for (long long i = 0; i < nsyms; ++i) {
    long long lo, hi, len;
    char *end;
    errno = 0;
    lo = strtoll(p, &end, 10);
    if (end == p || errno || strncmp(end, "..", 2) != 0)
      goto malformed;
    p = end + 2;
    if (!parse_int(&p, &hi) || lo < 0 || hi < lo || !parse_int(&p, &len) ||
        len < 0 || (long long)strlen(p) < len)
      goto malformed;
    m->symbols[i].lo = lo;
    m->symbols[i].hi = hi;
    m->symbols[i].name = malloc((size_t)len + 1);
    if (!m->symbols[i].name)
      goto out_of_memory;
    memcpy(m->symbols[i].name, p, (size_t)len);
    m->symbols[i].name[len] = '\0';
    p += len;
    if (*p == '\n')
      ++p;
  }
  long long total_dims = 0;
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
    t->bytes = fp8rt_dtype_size_inline(t->dtype);
    if (t->bytes == 0)
      goto malformed;
    m->dims_at[i] = (int32_t)total_dims;
    total_dims += rank;
    /* The tensor's bytes with every dynamic size at its upper bounds. */
    size_t hi_bytes = t->bytes;
    for (long long d = 0; d < rank; ++d) {
      long long dim;
      /* A size naming a symbol (s0, 1+s1, 2*s0+-1: the importer writes the
       * constant term first) is dynamic; a plain integer is static. */
      const size_t token = strcspn(p, " \n");
      if (nsyms > 0 && memchr(p, 's', token)) {
        /* A dynamic dimension: its polynomial, checked at the bounds. */
        if (!t->exprs && !(t->exprs = calloc((size_t)rank, sizeof(char *))))
          goto out_of_memory;
        if (!(t->exprs[d] = parse_token(&p)))
          goto malformed;
        int64_t v;
        for (int32_t k = 0; k < m->num_symbols; ++k)
          m->symbol_values[k] = m->symbols[k].hi;
        if (!eval_dim(t->exprs[d], m->symbol_values, m->num_symbols, &v) ||
            (i < nin && single_symbol(t->exprs[d]) < 0))
          goto malformed;
        /* With every symbol at its upper bound the tensor stays below 2^62
         * bytes, as a static one must (a sanity bound on the signature;
         * each run computes and checks its sizes again). */
        if (v > 0 && (__builtin_mul_overflow(hi_bytes, (size_t)v, &hi_bytes) ||
                      hi_bytes > ((size_t)1 << 62)))
          goto malformed;
        t->shape[d] = -1;
        continue;
      }
      if (!parse_int(&p, &dim) || dim < 0)
        goto malformed;
      t->shape[d] = dim;
      /* No tensor of a real model needs 2^62 bytes: a larger product is a
       * corrupt signature, never an allocation size. */
      if (__builtin_mul_overflow(t->bytes, (size_t)dim, &t->bytes) ||
          t->bytes > ((size_t)1 << 62) ||
          __builtin_mul_overflow(hi_bytes, (size_t)dim, &hi_bytes) ||
          hi_bytes > ((size_t)1 << 62))
        goto malformed;
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
  if (nsyms > 0) {
    if (!(m->run_dims = calloc((size_t)total_dims + 1, sizeof(int64_t))))
      goto out_of_memory;
    m->num_dims = (int32_t)total_dims;
  }
  for (long long i = 0; i < nchecks; ++i) {
    long long len;
    if (!parse_int(&p, &len) || len < 0 || (long long)strlen(p) < len)
      goto malformed;
    m->checks[i] = malloc((size_t)len + 1);
    if (!m->checks[i])
      goto out_of_memory;
    memcpy(m->checks[i], p, (size_t)len);
    m->checks[i][len] = '\0';
    p += len;
    if (*p == '\n')
      ++p;
  }
  /* Ties: each output at most once, each input at most once, the same
   * dtype and shape. */
  for (long long t = 0; t < nties; ++t) {
    long long out, in;
    if (!parse_int(&p, &out) || !parse_int(&p, &in) || out < 0 ||
        out >= nout || in < 0 || in >= nin || m->tied_input[out] >= 0)
      goto malformed;
    for (long long k = 0; k < nout; ++k)
      if (m->tied_input[k] == in)
        goto malformed;
    const tensor_sig *a = &m->tensors[in], *b = &m->tensors[nin + out];
    if (a->dtype != b->dtype || a->rank != b->rank ||
        memcmp(a->shape, b->shape, (size_t)a->rank * sizeof(int64_t)) != 0)
      goto malformed;
    m->tied_input[out] = (int32_t)in;
  }
  m->num_ties = (int32_t)nties;
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
#ifdef FP8RT_TARGET_CUDA
  {
    const char *why = NULL;
    if (!cuda_prepare(m, &why)) {
      free_model(m);
      if (error)
        *error = why;
      return NULL;
    }
  }
#endif
  {
    const char *why = NULL;
    if (!load_weights(weights, &why)) {
      free_model(m);
      if (error)
        *error = why;
      return NULL;
    }
  }
  if (!prepare_undo(m))
    goto out_of_memory;
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

FP8RT_EXPORT int32_t fp8rt_model_output_tied_input(const fp8rt_model *m,
                                                   int32_t index) {
  if (!m || index < 0 || index >= m->num_outputs)
    return -1;
  return m->tied_input[index];
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

FP8RT_EXPORT fp8rt_status fp8rt_model_input_bounds(const fp8rt_model *m,
                                                   int32_t i, int64_t *lo,
                                                   int64_t *hi) {
  const tensor_sig *t = sig_at(m, i, 0);
  if (!t || ((!lo || !hi) && t->rank > 0))
    return FP8RT_INVALID_ARGUMENT;
  for (int32_t d = 0; d < t->rank; ++d) {
    lo[d] = hi[d] = t->shape[d];
    if (t->exprs && t->exprs[d]) {
      const symbol_sig *sym = &m->symbols[single_symbol(t->exprs[d])];
      lo[d] = sym->lo;
      hi[d] = sym->hi;
    }
  }
  return FP8RT_OK;
}

FP8RT_EXPORT const char *fp8rt_model_input_dim_name(const fp8rt_model *m,
                                                    int32_t i, int32_t d) {
  const tensor_sig *t = sig_at(m, i, 0);
  if (!t || d < 0 || d >= t->rank || !t->exprs || !t->exprs[d])
    return NULL;
  return m->symbols[single_symbol(t->exprs[d])].name;
}

/* Tensor `i` of a run given in either ABI form (exactly one of v1/ex). */
static fp8rt_tensor_ex tensor_at(const fp8rt_tensor *v1,
                                 const fp8rt_tensor_ex *ex, int32_t i) {
  if (ex)
    return ex[i];
  fp8rt_tensor_ex t = {v1[i].data,  v1[i].dtype,       v1[i].rank,
                       v1[i].shape, FP8RT_MEMORY_HOST, 0};
  return t;
}

/* Signature version 3: the symbols' values for this run, read from the
 * inputs' shapes (each within its bounds; dimensions that share a symbol
 * equal), and then every tensor's dimensions for them in m->run_dims.
 * 1, or 0 with the error set. */
static int resolve_dims(fp8rt_model *m, const fp8rt_tensor *in_v1,
                        const fp8rt_tensor_ex *in_ex) {
  for (int32_t k = 0; k < m->num_symbols; ++k)
    m->symbol_values[k] = -1;
  for (int32_t i = 0; i < m->num_inputs; ++i) {
    const tensor_sig *want = &m->tensors[i];
    fp8rt_tensor_ex got = tensor_at(in_v1, in_ex, i);
    if (got.rank != want->rank) {
      set_error(m, "input %d ('%s'): rank %d given, the model takes %d", i,
                want->name, got.rank, want->rank);
      return 0;
    }
    if (got.rank > 0 && !got.shape) {
      set_error(m, "input %d ('%s'): shape is NULL", i, want->name);
      return 0;
    }
    if (!want->exprs)
      continue;
    for (int32_t d = 0; d < want->rank; ++d) {
      if (!want->exprs[d])
        continue;
      const int32_t k = single_symbol(want->exprs[d]);
      const symbol_sig *sym = &m->symbols[k];
      const long long v = (long long)got.shape[d];
      if (v < sym->lo || v > sym->hi) {
        set_error(m,
                  "input %d ('%s'): dimension %d ('%s') is %lld, outside "
                  "the bounds %lld..%lld the model was compiled for",
                  i, want->name, d, sym->name, v, (long long)sym->lo,
                  (long long)sym->hi);
        return 0;
      }
      if (m->symbol_values[k] >= 0 && m->symbol_values[k] != v) {
        set_error(m,
                  "input %d ('%s'): dimension %d ('%s') is %lld, but an "
                  "earlier input's dimension '%s' is %lld (the model needs "
                  "them equal)",
                  i, want->name, d, sym->name, v, sym->name,
                  (long long)m->symbol_values[k]);
        return 0;
      }
      m->symbol_values[k] = v;
    }
  }
  for (int32_t i = 0; i < m->num_inputs + m->num_outputs; ++i) {
    const tensor_sig *t = &m->tensors[i];
    int64_t *dims = m->run_dims + m->dims_at[i];
    for (int32_t d = 0; d < t->rank; ++d) {
      dims[d] = t->shape[d];
      if (t->exprs && t->exprs[d] &&
          !eval_dim(t->exprs[d], m->symbol_values, m->num_symbols,
                    &dims[d])) {
        set_error(m, "%s '%s': dimension %d (%s) cannot be computed",
                  i < m->num_inputs ? "input" : "output", t->name, d,
                  t->exprs[d]);
        return 0;
      }
      if (dims[d] < 0) { /* e.g. -1+s0 at s0 = 0: no such tensor */
        set_error(m, "%s '%s': dimension %d (%s) is %lld for these input "
                  "sizes: the model cannot run on them",
                  i < m->num_inputs ? "input" : "output", t->name, d,
                  t->exprs[d], (long long)dims[d]);
        return 0;
      }
    }
  }
  return 1;
}

static int check_tensor(fp8rt_model *m, const char *kind, int32_t index,
                        const tensor_sig *want, const int64_t *shape,
                        const fp8rt_tensor_ex *got) {
  int empty = want->bytes == 0;
  for (int32_t d = 0; d < want->rank; ++d)
    empty |= shape[d] == 0;
  if (!got->data && !empty) { /* an empty tensor needs no data */
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
    if (got->shape[d] != shape[d] && want->shape[d] < 0) {
      set_error(m,
                "%s %d ('%s'): dimension %d is %lld; for this run's inputs "
                "it is %lld (%s)",
                kind, index, want->name, d, (long long)got->shape[d],
                (long long)shape[d], want->exprs[d]);
      return 0;
    }
    if (got->shape[d] != shape[d]) {
      set_error(m,
                "%s %d ('%s'): dimension %d is %lld, the model was compiled "
                "for %lld (recompile with --input-shape to change it)",
                kind, index, want->name, d, (long long)got->shape[d],
                (long long)want->shape[d]);
      return 0;
    }
  }
  if (got->reserved != 0 || (got->memory != FP8RT_MEMORY_HOST &&
                             got->memory != FP8RT_MEMORY_DEVICE)) {
    set_error(
        m,
        "%s %d ('%s'): memory kind %d (reserved %d) is not one of "
        "FP8RT_MEMORY_HOST (0) or FP8RT_MEMORY_DEVICE (1) with reserved 0",
        kind, index, want->name, got->memory, got->reserved);
    return 0;
  }
#ifndef FP8RT_TARGET_CUDA
  if (got->memory == FP8RT_MEMORY_DEVICE) {
    set_error(m,
              "%s %d ('%s') is device memory, but this library runs on "
              "the CPU (compile with --target=sm_90a for device tensors)",
              kind, index, want->name);
    return 0;
  }
#endif
  return 1;
}

/* 1 with the stream of `o` in *stream (NULL: none), or 0 with the error
 * set. */
static int run_options(fp8rt_model *m, const fp8rt_run_options *o,
                       void **stream) {
  *stream = NULL;
  if (!o)
    return 1;
  if (o->size < 2 * sizeof(uint32_t)) {
    set_error(m,
              "run options: size %u is smaller than its own header (set "
              "it to sizeof(fp8rt_run_options))",
              o->size);
    return 0;
  }
  if (o->flags != 0) {
    set_error(m, "run options: unknown flags 0x%x", o->flags);
    return 0;
  }
  if (o->size >= offsetof(fp8rt_run_options, stream) + sizeof(void *))
    *stream = o->stream;
#ifndef FP8RT_TARGET_CUDA
  if (*stream) {
    set_error(m, "run options: a CUDA stream was given, but this library "
                 "runs on the CPU");
    return 0;
  }
#endif
  return 1;
}

/* Outputs are written where the caller put them, and the compiled code may
 * keep intermediate values in an output's buffer while it still reads the
 * inputs: no output may overlap an input or another output. An output
 * updated in place and its input: with `ties_elsewhere` (the CPU, whose
 * apply_host_ties has its own message) any layout passes here; otherwise
 * only the input's own buffer. Checked over `data`, the caller's pointers,
 * with this run's sizes (device tensors on the GPU, host tensors on the
 * CPU); `where` ends the message. */
static int tensor_in_place(const fp8rt_model *m, int32_t i) {
#ifdef FP8RT_TARGET_CUDA
  if (m->where[i] == WHERE_HOST)
    return 0;
#endif
  return m->run_bytes[i] != 0;
}

static int check_output_overlaps(fp8rt_model *m, void *const *data,
                                 int ties_elsewhere, const char *where) {
  const int32_t n = m->num_inputs + m->num_outputs;
  for (int32_t i = m->num_inputs; i < n; ++i) {
    if (!tensor_in_place(m, i))
      continue;
    uintptr_t a = (uintptr_t)data[i], a_end = a + m->run_bytes[i];
    for (int32_t j = 0; j < n; ++j) {
      if (j == i || !tensor_in_place(m, j))
        continue;
      uintptr_t b = (uintptr_t)data[j], b_end = b + m->run_bytes[j];
      if (j == m->tied_input[i - m->num_inputs] && (ties_elsewhere || a == b))
        continue;
      if (a < b_end && b < a_end) {
        int out = j >= m->num_inputs;
        set_error(m,
                  "output %d ('%s') overlaps %s %d ('%s')%s: give each "
                  "output its own buffer",
                  i - m->num_inputs, m->tensors[i].name,
                  out ? "output" : "input", out ? j - m->num_inputs : j,
                  m->tensors[j].name, where);
        return 0;
      }
    }
  }
  return 1;
}

/* Tensor i's bytes for this run: its static size times its dynamic
 * dimensions (`shape`: this run's), 0 when empty, SIZE_MAX on overflow. */
static size_t bytes_this_run(const tensor_sig *t, const int64_t *shape) {
  size_t bytes = t->bytes;
  for (int32_t d = 0; d < t->rank; ++d) {
    if (shape[d] == 0)
      return 0;
    if (t->shape[d] < 0 &&
        __builtin_mul_overflow(bytes, (size_t)shape[d], &bytes))
      return SIZE_MAX;
  }
  return bytes;
}

#ifdef FP8RT_TARGET_CUDA
/* Tensor i's staging buffer holds this run's bytes (a tensor with dynamic
 * dimensions: grown to them; static ones were allocated at load). */
static int ensure_staging(fp8rt_model *m, int32_t i) {
  if (!m->tensors[i].exprs || (m->run_bytes[i] <= m->bytes[i] && m->staging[i]))
    return 1;
  void *grown = fp8rt_cuda_alloc(m->run_bytes[i]);
  if (!grown) {
    set_error(m, "allocating %llu bytes of device memory for '%s': %s",
              (unsigned long long)m->run_bytes[i], m->tensors[i].name,
              fp8rt_cuda_last_error());
    return 0;
  }
  fp8rt_cuda_free(m->staging[i]);
  m->staging[i] = grown;
  m->bytes[i] = m->run_bytes[i];
  return 1;
}

/* Device tensors used in place: each must be device memory of the model's
 * device inside one allocation, and apart from the others. */
static int check_device_tensors(fp8rt_model *m) {
  const int32_t n = m->num_inputs + m->num_outputs;
  char why[512];
  for (int32_t i = 0; i < n; ++i) {
    if (m->where[i] == WHERE_HOST || m->run_bytes[i] == 0)
      continue;
    if (fp8rt_cuda_check_device_tensor(m->user[i], m->run_bytes[i], why,
                                       sizeof(why)) != 0) {
      int out = i >= m->num_inputs;
      set_error(m, "%s %d ('%s') is given as device memory: %s",
                out ? "output" : "input", out ? i - m->num_inputs : i,
                m->tensors[i].name, why);
      return 0;
    }
  }
  return check_output_overlaps(m, m->user, 0, " in device memory");
}

/* Appends the copy dst <- src of tensor i's bytes (i == inputs + outputs:
 * the status) to the lists (n: their length). */
static void add_copy(fp8rt_model *m, int32_t *n, int32_t i, void *dst,
                     const void *src, size_t bytes) {
  m->copy_of[*n] = i;
  m->copy_dst[*n] = dst;
  m->copy_src[*n] = src;
  m->copy_bytes[*n] = bytes;
  ++*n;
}

/* This run's key in m->graph_key (the addresses in args, then the run's
 * dimensions; zero-filled, so keys of any nargs compare), or -1. */
static int find_graph(fp8rt_model *m, void **args, int32_t nargs) {
  memset(m->graph_key, 0, m->graph_key_bytes);
  memcpy(m->graph_key, args, (size_t)nargs * sizeof(void *));
  if (m->num_dims > 0)
    memcpy(m->graph_key + m->graph_key_bytes -
               (size_t)m->num_dims * sizeof(int64_t),
           m->run_dims, (size_t)m->num_dims * sizeof(int64_t));
  for (int k = 0; k < FP8RT_GRAPHS; ++k)
    if (m->graphs[k] &&
        memcmp(m->graph_args[k], m->graph_key, m->graph_key_bytes) == 0)
      return k;
  return -1;
}

/* Whether this run's key (m->graph_key) is one of the recent plain runs';
 * if not, it becomes one. */
static int seen_before(fp8rt_model *m) {
  for (int k = 0; k < FP8RT_GRAPHS; ++k)
    if (m->seen_keys[k] &&
        memcmp(m->seen_keys[k], m->graph_key, m->graph_key_bytes) == 0)
      return 1;
  unsigned char **slot = &m->seen_keys[m->seen_next];
  if (!*slot)
    *slot = malloc(m->graph_key_bytes);
  if (*slot) {
    memcpy(*slot, m->graph_key, m->graph_key_bytes);
    m->seen_next = (m->seen_next + 1) % FP8RT_GRAPHS;
  }
  return 0;
}

/* Runs the compiled code on args: plainly, or (graphs on: the default)
 * through the graph captured for these addresses (and dimensions),
 * capturing one on the second run of a key (the first warmed the buffer
 * pool, so the captured run allocates nothing new). Holds cuda_lock. */
static int32_t cuda_execute(fp8rt_model *m, void **args, int32_t nargs) {
  static unsigned long long graph_clock; /* under cuda_lock */
  int k = m->use_graph ? find_graph(m, args, nargs) : -1;
  if (k >= 0) {
    m->graph_used[k] = ++graph_clock;
    return fp8rt_cuda_graph_launch(m->graphs[k]);
  }
  if (m->use_graph && seen_before(m)) {
    int slot = 0;
    for (int j = 1; j < FP8RT_GRAPHS; ++j)
      if (m->graph_used[j] < m->graph_used[slot])
        slot = j;
    unsigned char *key = m->graph_args[slot];
    if (!key)
      key = m->graph_args[slot] = malloc(m->graph_key_bytes);
    if (key) {
      void *graph = NULL;
      int32_t status = fp8rt_cuda_run_begin(1);
      if (status == 0) {
        __fp8_model_entry(args);
        status = fp8rt_cuda_run_end(&graph);
      }
      if (status != 0)
        return status;
      fp8rt_cuda_graph_destroy(m->graphs[slot]);
      m->graphs[slot] = graph;
      memcpy(key, m->graph_key, m->graph_key_bytes);
      m->graph_used[slot] = ++graph_clock;
      return fp8rt_cuda_graph_launch(graph);
    }
  }
  int32_t status = fp8rt_cuda_run_begin(0);
  if (status == 0) {
    __fp8_model_entry(args);
    status = fp8rt_cuda_run_end(NULL);
  }
  return status;
}
#endif

/* The compiled entry's arguments: m->args' `slots` (inputs, outputs, the
 * status, the run's dimensions) without the tied outputs, which the
 * compiled code does not take (signature version 4). */
static void **entry_args(fp8rt_model *m, int32_t slots, int32_t *count) {
  if (m->num_ties == 0) {
    *count = slots;
    return m->args;
  }
  int32_t w = 0;
  for (int32_t s = 0; s < slots; ++s) {
    const int32_t k = s - m->num_inputs;
    if (k >= 0 && k < m->num_outputs && m->tied_input[k] >= 0)
      continue;
    m->entry[w++] = m->args[s];
  }
  *count = w;
  return m->entry;
}

#ifndef FP8RT_TARGET_CUDA
/* Whether the `bytes` at a and b overlap without being the same buffer. */
static int overlaps_partly(const void *a, const void *b, size_t bytes) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x != y && x < y + bytes && y < x + bytes;
}

/* Host memory, signature version 4: the compiled code updates the tied
 * output's buffer, which first receives the input's data unless the caller
 * gave one buffer for both; the input's buffer is never written. */
static int apply_host_ties(fp8rt_model *m) {
  for (int32_t k = 0; k < m->num_outputs; ++k) {
    const int32_t i = m->tied_input[k];
    if (i < 0)
      continue;
    void *in = m->args[i], *out = m->args[m->num_inputs + k];
    const size_t bytes = m->tensors[i].bytes;
    if (bytes && overlaps_partly(in, out, bytes)) {
      set_error(m, "output %d ('%s') partly overlaps input %d ('%s'), which "
                   "it updates in place: give one buffer for both, or two "
                   "apart",
                k, m->tensors[m->num_inputs + k].name, i, m->tensors[i].name);
      return 0;
    }
    if (bytes && in != out)
      memcpy(out, in, bytes);
    m->args[i] = out;
  }
  return 1;
}
#endif

/* fp8rt_model_run and fp8rt_model_run_ex: the tensors in one form or the
 * other (v1: all host memory). */
static fp8rt_status run_model(fp8rt_model *m, const fp8rt_tensor *in_v1,
                              const fp8rt_tensor_ex *in_ex, int32_t num_inputs,
                              const fp8rt_tensor *out_v1,
                              const fp8rt_tensor_ex *out_ex,
                              int32_t num_outputs,
                              const fp8rt_run_options *options) {
  if (!m)
    return FP8RT_INVALID_ARGUMENT;
  m->error[0] = '\0';
  if (num_inputs != m->num_inputs || num_outputs != m->num_outputs ||
      (num_inputs && !in_v1 && !in_ex) || (num_outputs && !out_v1 && !out_ex)) {
    set_error(m, "run: %d inputs and %d outputs given, the model has %d and %d",
              num_inputs, num_outputs, m->num_inputs, m->num_outputs);
    return FP8RT_INVALID_ARGUMENT;
  }
  void *stream = NULL;
  if (!run_options(m, options, &stream))
    return FP8RT_INVALID_ARGUMENT;
  if (m->num_symbols > 0 && !resolve_dims(m, in_v1, in_ex))
    return FP8RT_INVALID_ARGUMENT;
  for (int32_t i = 0; i < num_inputs + num_outputs; ++i) {
    const int out = i >= num_inputs;
    const int32_t k = out ? i - num_inputs : i;
    fp8rt_tensor_ex t =
        out ? tensor_at(out_v1, out_ex, k) : tensor_at(in_v1, in_ex, k);
    const int64_t *shape = m->num_symbols > 0
                               ? m->run_dims + m->dims_at[i]
                               : m->tensors[i].shape;
    if (!check_tensor(m, out ? "output" : "input", k, &m->tensors[i], shape,
                      &t))
      return FP8RT_INVALID_ARGUMENT;
    m->run_bytes[i] = bytes_this_run(&m->tensors[i], shape);
#ifdef FP8RT_TARGET_CUDA
    m->user[i] = t.data;
    m->where[i] = t.memory == FP8RT_MEMORY_HOST
                      ? WHERE_HOST
                      /* The kernels' vector accesses assume 16-byte alignment
                       * (every buffer the runtime allocates has it). */
                      : ((uintptr_t)t.data % 16 == 0 ? WHERE_DEVICE
                                                     : WHERE_DEVICE_STAGED);
    if (m->where[i] != WHERE_DEVICE && !ensure_staging(m, i))
      return FP8RT_INTERNAL;
    m->args[i] =
        m->where[i] == WHERE_DEVICE && m->run_bytes[i] ? t.data : m->staging[i];
#else
    m->args[i] = t.data;
#endif
  }
  /* The compiled code writes the whole status (it is an output). */
  const int checked = m->num_checks > 0;
  /* With checks and persistent state, the snapshot, the run and a restore
   * are one critical section: no other handle's run may update the shared
   * state in between (a restore would undo it, a snapshot could be torn). */
  const int guard_state = m->undo != NULL;
  fp8rt_copy_stats copies = {0, 0, 0, 0};
#ifdef FP8RT_TARGET_CUDA
  const int32_t n = num_inputs + num_outputs;
  if (!check_device_tensors(m))
    return FP8RT_INVALID_ARGUMENT;
  /* Outputs updated in place (signature version 4): the kernels update the
   * output's device buffer, which receives the input's data first unless
   * it is the input's own buffer (a host input through its staging buffer,
   * then on the run stream after the caller's stream); a host or unaligned
   * output is updated in the input's staging buffer and copied back after
   * the run. The input's buffer is never written unless it is the
   * output's. */
  for (int32_t k = 0; k < num_outputs; ++k) {
    const int32_t i = m->tied_input[k], o = num_inputs + k;
    if (i < 0)
      continue;
    if (m->where[o] == WHERE_DEVICE) {
      m->args[i] = m->user[o];
      if (m->where[i] == WHERE_DEVICE && m->user[i] != m->user[o])
        m->where[i] = WHERE_DEVICE_STAGED;
    } else {
      m->args[i] = m->staging[i];
      if (m->where[i] == WHERE_DEVICE)
        m->where[i] = WHERE_DEVICE_STAGED;
    }
  }
  /* Host inputs, then one synchronize. */
  int32_t ncopy = 0, failed = 0;
  for (int32_t i = 0; i < num_inputs; ++i)
    if (m->where[i] == WHERE_HOST && m->run_bytes[i]) {
      add_copy(m, &ncopy, i, m->staging[i], m->user[i], m->run_bytes[i]);
      copies.host_to_device += m->run_bytes[i];
    }
  if (fp8rt_cuda_copy_many(m->copy_dst, m->copy_src, m->copy_bytes, ncopy,
                           &failed) != 0) {
    set_error(m, "copying input '%s' to the GPU: %s",
              failed < ncopy ? m->tensors[m->copy_of[failed]].name : "(all)",
              fp8rt_cuda_last_error());
    return FP8RT_INTERNAL;
  }
  copies.copies += (uint64_t)ncopy;
  pthread_mutex_lock(&cuda_lock);
  /* The model stream waits for the caller's stream, then stages the
   * unaligned device inputs on the model stream (ordered after that wait). */
  if (stream && fp8rt_cuda_run_after(stream) != 0) {
    pthread_mutex_unlock(&cuda_lock);
    set_error(m, "run options: %s", fp8rt_cuda_last_error());
    return FP8RT_INVALID_ARGUMENT;
  }
  ncopy = 0;
  for (int32_t i = 0; i < num_inputs; ++i)
    if (m->where[i] == WHERE_DEVICE_STAGED && m->run_bytes[i]) {
      add_copy(m, &ncopy, i, m->args[i], m->user[i], m->run_bytes[i]);
      copies.device_to_device += m->run_bytes[i];
    } else if (m->where[i] == WHERE_HOST && m->run_bytes[i] &&
               m->args[i] != m->staging[i]) {
      /* A host input updated in place in the caller's device output. */
      add_copy(m, &ncopy, i, m->args[i], m->staging[i], m->run_bytes[i]);
      copies.device_to_device += m->run_bytes[i];
    }
  copies.copies += (uint64_t)ncopy;
  int32_t status = fp8rt_cuda_copy_on_run_stream(m->copy_dst, m->copy_src,
                                                 m->copy_bytes, ncopy, &failed);
  if (status != 0) {
    pthread_mutex_unlock(&cuda_lock);
    set_error(m, "staging device input '%s': %s",
              m->tensors[m->copy_of[failed]].name, fp8rt_cuda_last_error());
    return FP8RT_INTERNAL;
  }
  status = copy_undo(m, 0) ? 0 : -1;
  if (status != 0) {
    pthread_mutex_unlock(&cuda_lock);
    set_error(m, "saving the model's state before the run: %s",
              fp8rt_cuda_last_error());
    return FP8RT_INTERNAL;
  }
  m->args[n] = m->staging[n]; /* the status (when the model has checks) */
  if (m->num_symbols > 0)     /* read by the host code, as on the CPU */
    m->args[n + checked] = m->run_dims;
  int32_t nargs;
  void **args = entry_args(m, n + checked + (m->num_symbols > 0), &nargs);
  status = cuda_execute(m, args, nargs);
  if (!guard_state || status != 0)
    pthread_mutex_unlock(&cuda_lock);
  if (status != 0) {
    set_error(m, "CUDA: %s", fp8rt_cuda_last_error());
    return FP8RT_INTERNAL;
  }
  ++m->runs;
  /* Host and staged device outputs and the status, one synchronize. */
  ncopy = 0;
  for (int32_t i = num_inputs; i < n; ++i) {
    if (m->where[i] == WHERE_DEVICE || !m->run_bytes[i])
      continue;
    const int32_t tied = m->tied_input[i - num_inputs];
    add_copy(m, &ncopy, i, m->user[i],
             tied >= 0 ? m->args[tied] : m->staging[i], m->run_bytes[i]);
    if (m->where[i] == WHERE_HOST)
      copies.device_to_host += m->run_bytes[i];
    else
      copies.device_to_device += m->run_bytes[i];
  }
  if (checked) {
    add_copy(m, &ncopy, n, m->status, m->staging[n], sizeof(m->status));
    copies.device_to_host += sizeof(m->status);
  }
  copies.copies += (uint64_t)ncopy;
  if (fp8rt_cuda_copy_many(m->copy_dst, m->copy_src, m->copy_bytes, ncopy,
                           &failed) != 0) {
    if (guard_state)
      pthread_mutex_unlock(&cuda_lock);
    set_error(m, "copying output '%s' from the GPU: %s",
              failed >= ncopy           ? "(all)"
              : m->copy_of[failed] == n ? "(status)"
                                        : m->tensors[m->copy_of[failed]].name,
              fp8rt_cuda_last_error());
    return FP8RT_INTERNAL;
  }
  pthread_mutex_t *held = guard_state ? &cuda_lock : NULL;
#else
  (void)stream;
  /* Before apply_host_ties copies anything, on the caller's pointers. */
  if (!check_output_overlaps(m, m->args, 1, ""))
    return FP8RT_INVALID_ARGUMENT;
  if (m->num_ties > 0 && !apply_host_ties(m))
    return FP8RT_INVALID_ARGUMENT;
  pthread_mutex_t *held = guard_state ? &state_lock : NULL;
  if (held)
    pthread_mutex_lock(held);
  copy_undo(m, 0); /* host memcpy: cannot fail */
  m->args[num_inputs + num_outputs] = m->status;
  if (m->num_symbols > 0)
    m->args[num_inputs + num_outputs + checked] = m->run_dims;
  int32_t nargs;
  __fp8_model_entry(entry_args(
      m, num_inputs + num_outputs + checked + (m->num_symbols > 0), &nargs));
#endif
  fp8rt_status result = FP8RT_OK;
  if (checked && m->status[0] != 0) {
    int64_t site = m->status[0] - 1;
    /* The run is refused: its state updates (amax histories) are undone. */
    int restored = copy_undo(m, 1);
    set_error(m, "%s; got %lld%s",
              site >= 0 && site < m->num_checks ? m->checks[site]
                                                : "a run-time check failed",
              (long long)m->status[1],
              restored ? "" : " (and restoring the model's state failed)");
    result = FP8RT_INVALID_ARGUMENT;
  }
  if (held)
    pthread_mutex_unlock(held);
  if (result == FP8RT_OK)
    m->copies = copies;
  return result;
}

FP8RT_EXPORT fp8rt_status fp8rt_model_output_shape_for(
    fp8rt_model *m, const fp8rt_tensor *inputs, int32_t num_inputs,
    int32_t index, int64_t *shape) {
  if (!m)
    return FP8RT_INVALID_ARGUMENT;
  m->error[0] = '\0';
  const tensor_sig *t = sig_at(m, index, 1);
  if (!t || (!shape && t->rank > 0)) {
    set_error(m, "output_shape_for: output %d does not exist (the model "
                 "has %d) or shape is NULL",
              index, m->num_outputs);
    return FP8RT_INVALID_ARGUMENT;
  }
  if (m->num_symbols > 0) {
    if (num_inputs != m->num_inputs || (num_inputs && !inputs)) {
      set_error(m, "output_shape_for: %d inputs given, the model has %d",
                num_inputs, m->num_inputs);
      return FP8RT_INVALID_ARGUMENT;
    }
    if (!resolve_dims(m, inputs, NULL))
      return FP8RT_INVALID_ARGUMENT;
    memcpy(shape, m->run_dims + m->dims_at[m->num_inputs + index],
           (size_t)t->rank * sizeof(int64_t));
    return FP8RT_OK;
  }
  memcpy(shape, t->shape, (size_t)t->rank * sizeof(int64_t));
  return FP8RT_OK;
}

FP8RT_EXPORT fp8rt_status fp8rt_model_run(fp8rt_model *m,
                                          const fp8rt_tensor *inputs,
                                          int32_t num_inputs,
                                          const fp8rt_tensor *outputs,
                                          int32_t num_outputs) {
  return run_model(m, inputs, NULL, num_inputs, outputs, NULL, num_outputs,
                   NULL);
}

FP8RT_EXPORT fp8rt_status fp8rt_model_run_ex(fp8rt_model *m,
                                             const fp8rt_tensor_ex *inputs,
                                             int32_t num_inputs,
                                             const fp8rt_tensor_ex *outputs,
                                             int32_t num_outputs,
                                             const fp8rt_run_options *options) {
  return run_model(m, NULL, inputs, num_inputs, NULL, outputs, num_outputs,
                   options);
}

FP8RT_EXPORT fp8rt_status fp8rt_model_last_run_copies(const fp8rt_model *m,
                                                      fp8rt_copy_stats *stats) {
  if (!m || !stats)
    return FP8RT_INVALID_ARGUMENT;
  *stats = m->copies;
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

/* Where save_state writes. A missing path or a regular file: a new
 * temporary file beside it (mkstemp), renamed over it once complete; a
 * symbolic link is followed (its target is replaced, the link stays). A
 * character device (/dev/null) or a FIFO with a reader: written into. A
 * directory, a dangling link or anything else: refused. Never a fixed
 * temporary name another process could have prepared. */
typedef struct save_target {
  char *final; /* the file renamed over (NULL when writing into `path`) */
  char *tmp;   /* the temporary file (NULL when writing into `path`) */
  FILE *file;
} save_target;

static void free_save_target(save_target *t) {
  free(t->final);
  free(t->tmp);
}

static fp8rt_status open_save_target(fp8rt_model *m, const char *path,
                                     save_target *t) {
  memset(t, 0, sizeof(*t));
  struct stat st, lst;
  int fd = -1;
  if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &st) != 0) {
    set_error(m,
              "save_state: %s is a symbolic link whose target does not "
              "exist",
              path);
    return FP8RT_IO_ERROR;
  }
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISCHR(st.st_mode)) {
      fd = open(path, O_WRONLY | O_CLOEXEC);
    } else if (S_ISFIFO(st.st_mode)) {
      fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 && errno == ENXIO) {
        set_error(m, "save_state: %s is a FIFO that no process reads", path);
        return FP8RT_IO_ERROR;
      }
      if (fd >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    } else {
      set_error(m, "save_state: %s is %s, not a file", path,
                S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
      return FP8RT_IO_ERROR;
    }
    if (fd < 0 || !(t->file = fdopen(fd, "wb"))) {
      set_error(m, "save_state: cannot write %s: %s", path, strerror(errno));
      if (fd >= 0)
        close(fd);
      return FP8RT_IO_ERROR;
    }
    return FP8RT_OK;
  }
  /* A regular file (through any links) or a new one. */
  t->final = realpath(path, NULL);
  if (!t->final && !(t->final = strdup(path)))
    return FP8RT_OUT_OF_MEMORY;
  size_t n = strlen(t->final);
  t->tmp = malloc(n + 16);
  if (!t->tmp) {
    free_save_target(t);
    return FP8RT_OUT_OF_MEMORY;
  }
  memcpy(t->tmp, t->final, n);
  memcpy(t->tmp + n, ".tmp-XXXXXX", 12);
  fd = mkstemp(t->tmp);
  if (fd < 0 || !(t->file = fdopen(fd, "wb"))) {
    set_error(m, "save_state: cannot create a temporary file beside %s: %s",
              path, strerror(errno));
    if (fd >= 0) {
      close(fd);
      remove(t->tmp);
    }
    free_save_target(t);
    return FP8RT_IO_ERROR;
  }
  /* The mode of the file it replaces, else what a plain fopen would give
   * (0666 less the umask); mkstemp's 0600 is neither. */
  struct stat old;
  mode_t mode;
  if (stat(t->final, &old) == 0) {
    mode = old.st_mode & 07777;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  fchmod(fd, mode);
  return FP8RT_OK;
}

FP8RT_EXPORT fp8rt_status fp8rt_model_save_state(fp8rt_model *m,
                                                 const char *path) {
  if (!m || !path)
    return FP8RT_INVALID_ARGUMENT;
  m->error[0] = '\0';
  save_target target;
  fp8rt_status opened = open_save_target(m, path, &target);
  if (opened != FP8RT_OK)
    return opened;
  char *tmp = target.tmp;
  writer w = {target.file, 0xcbf29ce484222325ULL, 1};
#ifdef FP8RT_TARGET_CUDA
  pthread_mutex_lock(&cuda_lock); /* a consistent snapshot of the state */
#endif
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
#ifdef FP8RT_TARGET_CUDA
    void *host = malloc((size_t)m->state[i].bytes + 1);
    if (!host || fp8rt_cuda_copy(host, m->state[i].data,
                                 (size_t)m->state[i].bytes) != 0) {
      set_error(m, "save_state: reading '%s' from the GPU: %s",
                m->state[i].name,
                host ? fp8rt_cuda_last_error() : "out of memory");
      free(host);
      pthread_mutex_unlock(&cuda_lock);
      fclose(w.f);
      if (tmp)
        remove(tmp);
      free_save_target(&target);
      return FP8RT_INTERNAL;
    }
    put(&w, host, (size_t)m->state[i].bytes);
    free(host);
#else
    put(&w, m->state[i].data, (size_t)m->state[i].bytes);
#endif
  }
#ifdef FP8RT_TARGET_CUDA
  pthread_mutex_unlock(&cuda_lock);
#endif
  uint64_t checksum = w.hash;
  if (w.ok && fwrite(&checksum, 1, 8, w.f) != 8)
    w.ok = 0;
  if (fclose(w.f) != 0)
    w.ok = 0;
  if (!w.ok || (tmp && rename(tmp, target.final) != 0)) {
    set_error(m, "save_state: cannot write %s: %s", path, strerror(errno));
    if (tmp)
      remove(tmp);
    free_save_target(&target);
    return FP8RT_IO_ERROR;
  }
  free_save_target(&target);
  return FP8RT_OK;
}

#ifdef FP8RT_TARGET_CUDA
/* load_state's undo log: host copies of the device state before loading. */
static int cuda_backup_state(fp8rt_model *m) {
  m->backup = calloc((size_t)m->num_state + 1, sizeof(void *));
  if (!m->backup)
    return 0;
  for (int32_t i = 0; i < m->num_state; ++i) {
    m->backup[i] = malloc((size_t)m->state[i].bytes + 1);
    if (!m->backup[i] || fp8rt_cuda_copy(m->backup[i], m->state[i].data,
                                         (size_t)m->state[i].bytes) != 0)
      return 0;
  }
  return 1;
}

/* Writes state tensor i; on failure puts tensors 0..i back as they were. */
static int cuda_write_state(fp8rt_model *m, uint32_t i, const void *data) {
  if (fp8rt_cuda_copy(m->state[i].data, data, (size_t)m->state[i].bytes) == 0)
    return 1;
  for (uint32_t j = 0; j <= i; ++j)
    fp8rt_cuda_copy(m->state[j].data, m->backup[j], (size_t)m->state[j].bytes);
  return 0;
}

static void cuda_drop_backup(fp8rt_model *m) {
  if (m->backup)
    for (int32_t i = 0; i < m->num_state; ++i)
      free(m->backup[i]);
  free(m->backup);
  m->backup = NULL;
}
#endif

FP8RT_EXPORT fp8rt_status fp8rt_model_load_state(fp8rt_model *m,
                                                 const char *path) {
  if (!m || !path)
    return FP8RT_INVALID_ARGUMENT;
  m->error[0] = '\0';
  /* Non-blocking open: a FIFO must not hang the caller; only regular
   * files are read. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0) {
    set_error(m, "load_state: cannot open %s: %s", path, strerror(errno));
    return FP8RT_IO_ERROR;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    set_error(m, "load_state: %s is not a regular file", path);
    return FP8RT_IO_ERROR;
  }
  /* No state file of this model is larger than its tensors, names and
   * framing; a bigger file is refused before it is read. */
  uint64_t limit = 64 + 8;
  for (int32_t i = 0; i < m->num_state; ++i)
    limit += 16 + strlen(m->state[i].name) + m->state[i].bytes;
  long size = (long)st.st_size;
  if ((uint64_t)st.st_size > limit) {
    close(fd);
    set_error(m,
              "load_state: %s (%lld bytes) is larger than any state of "
              "this model",
              path, (long long)st.st_size);
    return FP8RT_IO_ERROR;
  }
  /* Read everything first: the live state changes only when the whole file
   * has been checked. */
  unsigned char *buf = size > 0 ? malloc((size_t)size) : NULL;
  size_t got = 0;
  while (buf && got < (size_t)size) {
    ssize_t r = read(fd, buf + got, (size_t)size - got);
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  if (size <= 0 || !buf || got != (size_t)size) {
    free(buf);
    set_error(m, "load_state: %s is not an fp8rt state file", path);
    return FP8RT_IO_ERROR;
  }
  const size_t magic = sizeof(kStateMagic) - 1;
#ifdef FP8RT_TARGET_CUDA
  int locked = 0; /* cuda_lock held, undo log taken */
#endif
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
#ifdef FP8RT_TARGET_CUDA
  /* The device state is shared by every handle of the process: no run may
   * see it half loaded, and a failed copy restores what was there. */
  pthread_mutex_lock(&cuda_lock);
  locked = 1;
  if (!cuda_backup_state(m)) {
    set_error(m, "load_state: saving the current state first: %s",
              fp8rt_cuda_last_error());
    status = FP8RT_INTERNAL;
    goto done;
  }
#endif
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
      if (pass == 1) {
#ifdef FP8RT_TARGET_CUDA
        if (!cuda_write_state(m, i, buf + p)) {
          set_error(m, "load_state: writing '%s' to the GPU: %s (the state "
                       "is as it was)",
                    m->state[i].name, fp8rt_cuda_last_error());
          status = FP8RT_INTERNAL;
          goto done;
        }
#else
        memcpy(m->state[i].data, buf + p, (size_t)bytes);
#endif
      }
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
#ifdef FP8RT_TARGET_CUDA
  if (locked) {
    cuda_drop_backup(m);
    pthread_mutex_unlock(&cuda_lock);
  }
#endif
  free(buf);
  return status;
}
