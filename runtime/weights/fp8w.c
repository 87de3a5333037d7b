/*===- fp8w.c - fp8-opt's weights file: hash, reader, writer --------------===*
 *
 * Part of fp8-opt. The format is described in fp8rt/fp8w.h and
 * docs/Weights.md. Plain C11 + POSIX: linked into model libraries (the
 * shim), fp8-compile and the packer alike.
 *
 *===----------------------------------------------------------------------===*/

#define _GNU_SOURCE
#include "fp8rt/fp8w.h"
#include "fp8rt/fp8rt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(fp8w_header) == 64, "fp8w_header is 64 bytes");
_Static_assert(sizeof(fp8w_entry) == 128, "fp8w_entry is 128 bytes");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "the weights file is little-endian, as every target is");

/*--- XXH64 (the published algorithm, seed 0) ------------------------------*/

static const uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL,
                      P3 = 0x165667B19E3779F9ULL, P4 = 0x85EBCA77C2B2AE63ULL,
                      P5 = 0x27D4EB2F165667C5ULL;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t read64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static uint32_t read32(const unsigned char *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t round64(uint64_t acc, uint64_t input) {
  acc += input * P2;
  acc = rotl(acc, 31);
  return acc * P1;
}
static uint64_t merge64(uint64_t acc, uint64_t v) {
  acc ^= round64(0, v);
  return acc * P1 + P4;
}

void fp8w_hash_init(fp8w_hash *h) {
  memset(h, 0, sizeof(*h));
  h->v[0] = P1 + P2;
  h->v[1] = P2;
  h->v[2] = 0;
  h->v[3] = (uint64_t)0 - P1;
}

static void stripe(uint64_t v[4], const unsigned char *p) {
  v[0] = round64(v[0], read64(p));
  v[1] = round64(v[1], read64(p + 8));
  v[2] = round64(v[2], read64(p + 16));
  v[3] = round64(v[3], read64(p + 24));
}

void fp8w_hash_update(fp8w_hash *h, const void *data, size_t bytes) {
  const unsigned char *p = data;
  h->total += bytes;
  if (h->buffered) {
    size_t take = 32 - h->buffered;
    if (take > bytes)
      take = bytes;
    memcpy(h->buf + h->buffered, p, take);
    h->buffered += (uint32_t)take;
    p += take;
    bytes -= take;
    if (h->buffered < 32)
      return;
    stripe(h->v, h->buf);
    h->buffered = 0;
  }
  while (bytes >= 32) {
    stripe(h->v, p);
    p += 32;
    bytes -= 32;
  }
  memcpy(h->buf, p, bytes);
  h->buffered = (uint32_t)bytes;
}

uint64_t fp8w_hash_digest(const fp8w_hash *h) {
  uint64_t acc;
  if (h->total >= 32) {
    acc = rotl(h->v[0], 1) + rotl(h->v[1], 7) + rotl(h->v[2], 12) +
          rotl(h->v[3], 18);
    for (int i = 0; i < 4; ++i)
      acc = merge64(acc, h->v[i]);
  } else {
    acc = P5;
  }
  acc += h->total;
  const unsigned char *p = h->buf;
  uint32_t n = h->buffered;
  for (; n >= 8; n -= 8, p += 8)
    acc = rotl(acc ^ round64(0, read64(p)), 27) * P1 + P4;
  if (n >= 4) {
    acc = rotl(acc ^ ((uint64_t)read32(p) * P1), 23) * P2 + P3;
    n -= 4;
    p += 4;
  }
  for (; n; --n, ++p)
    acc = rotl(acc ^ (*p * P5), 11) * P1;
  acc ^= acc >> 33;
  acc *= P2;
  acc ^= acc >> 29;
  acc *= P3;
  acc ^= acc >> 32;
  return acc;
}

uint64_t fp8w_hash_bytes(const void *data, size_t bytes) {
  fp8w_hash h;
  fp8w_hash_init(&h);
  fp8w_hash_update(&h, data, bytes);
  return fp8w_hash_digest(&h);
}

size_t fp8w_dtype_size(int32_t dtype) { return fp8rt_dtype_size_inline(dtype); }

/*--- Shared checks ---------------------------------------------------------*/

static void say(char *error, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *error, size_t size, const char *fmt, ...) {
  if (!error || !size)
    return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error, size, fmt, ap);
  va_end(ap);
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* bytes = product(dims) * size, or 0 with *ok = 0 on a bad dim or overflow
 * past 2^62. */
static uint64_t tensor_bytes(int32_t dtype, uint32_t rank, const int64_t *dims,
                             int *ok) {
  uint64_t bytes = fp8w_dtype_size(dtype);
  *ok = bytes != 0 && rank <= FP8W_MAX_RANK;
  for (uint32_t d = 0; *ok && d < rank; ++d) {
    if (dims[d] < 0 ||
        __builtin_mul_overflow(bytes, (uint64_t)dims[d], &bytes) ||
        bytes > ((uint64_t)1 << 62))
      *ok = 0;
  }
  return *ok ? bytes : 0;
}

typedef struct name_ref {
  const char *name;
  uint32_t bytes;
  uint64_t index;
} name_ref;

static int compare_names(const void *a, const void *b) {
  const name_ref *x = a, *y = b;
  uint32_t n = x->bytes < y->bytes ? x->bytes : y->bytes;
  int c = memcmp(x->name, y->name, n);
  if (c)
    return c;
  return x->bytes < y->bytes ? -1 : x->bytes > y->bytes;
}

/*--- Reading -----------------------------------------------------------------*/

struct fp8w_file {
  char *path;
  unsigned char *map; /* read-only mapping */
  uint64_t size;
  const fp8w_header *header;
  const fp8w_entry *entries;
  name_ref *sorted; /* by name, for fp8w_find */
};

void fp8w_close(fp8w_file *f) {
  if (!f)
    return;
  if (f->map)
    munmap(f->map, f->size);
  free(f->sorted);
  free(f->path);
  free(f);
}

uint64_t fp8w_num_tensors(const fp8w_file *f) { return f->header->num_tensors; }
uint64_t fp8w_fingerprint(const fp8w_file *f) { return f->header->fingerprint; }
const char *fp8w_path(const fp8w_file *f) { return f->path; }
const fp8w_entry *fp8w_entry_at(const fp8w_file *f, uint64_t i) {
  return i < f->header->num_tensors ? &f->entries[i] : NULL;
}
const char *fp8w_name(const fp8w_file *f, uint64_t i) {
  return i < f->header->num_tensors
             ? (const char *)f->map + f->entries[i].name_offset
             : NULL;
}
const void *fp8w_data(const fp8w_file *f, uint64_t i) {
  return i < f->header->num_tensors ? f->map + f->entries[i].offset : NULL;
}

int64_t fp8w_find(const fp8w_file *f, const char *name, size_t name_bytes) {
  if (name_bytes > UINT32_MAX)
    return -1;
  name_ref key = {name, (uint32_t)name_bytes, 0};
  const name_ref *hit =
      bsearch(&key, f->sorted, f->header->num_tensors, sizeof(name_ref),
              compare_names);
  return hit ? (int64_t)hit->index : -1;
}

/* Validates what is mapped; 0 with a message on the first problem. */
static int validate(fp8w_file *f, uint64_t fingerprint, unsigned flags,
                    char *error, size_t error_size) {
  const char *path = f->path;
  if (f->size < sizeof(fp8w_header) ||
      memcmp(f->map, FP8W_MAGIC, 8) != 0) {
    say(error, error_size,
        "%s is not an fp8-opt weights file (no FP8OPTW header)", path);
    return 0;
  }
  const fp8w_header *h = f->header = (const fp8w_header *)f->map;
  if (fp8w_hash_bytes(h, offsetof(fp8w_header, header_hash)) !=
      h->header_hash) {
    say(error, error_size,
        "%s: the header is corrupt (its hash does not match); regenerate "
        "the file with fp8-compile or fp8-pack",
        path);
    return 0;
  }
  if (h->version != FP8W_VERSION) {
    say(error, error_size,
        "%s: weights file version %u; this library reads version %u "
        "(regenerate the file for it)",
        path, h->version, FP8W_VERSION);
    return 0;
  }
  if (h->file_bytes != f->size) {
    say(error, error_size,
        "%s is %s: %llu bytes, its header says %llu", path,
        f->size < h->file_bytes ? "truncated" : "longer than written",
        (unsigned long long)f->size, (unsigned long long)h->file_bytes);
    return 0;
  }
  if (h->alignment == 0 || (h->alignment & (h->alignment - 1)) ||
      h->num_tensors > FP8W_MAX_TENSORS ||
      h->data_offset < sizeof(fp8w_header) +
                           h->num_tensors * sizeof(fp8w_entry) ||
      h->data_offset > f->size) {
    say(error, error_size, "%s: the header is inconsistent (%llu tensors, "
        "data at %llu of %llu bytes)", path,
        (unsigned long long)h->num_tensors,
        (unsigned long long)h->data_offset, (unsigned long long)f->size);
    return 0;
  }
  if (fp8w_hash_bytes(f->map + sizeof(fp8w_header),
                      h->data_offset - sizeof(fp8w_header)) != h->table_hash) {
    say(error, error_size,
        "%s: the tensor table is corrupt (its hash does not match)", path);
    return 0;
  }
  if (fingerprint && h->fingerprint != fingerprint) {
    say(error, error_size,
        "%s belongs to another model, recipe or format (fingerprint "
        "%016llx, the library expects %016llx): use the weights file "
        "written with this library, or repack it for this library",
        path, (unsigned long long)h->fingerprint,
        (unsigned long long)fingerprint);
    return 0;
  }
  f->entries = (const fp8w_entry *)(f->map + sizeof(fp8w_header));
  const uint64_t names_begin =
      sizeof(fp8w_header) + h->num_tensors * sizeof(fp8w_entry);
  f->sorted = calloc(h->num_tensors ? h->num_tensors : 1, sizeof(name_ref));
  if (!f->sorted) {
    say(error, error_size, "%s: out of memory", path);
    return 0;
  }
  for (uint64_t i = 0; i < h->num_tensors; ++i) {
    const fp8w_entry *e = &f->entries[i];
    int ok;
    uint64_t bytes = tensor_bytes(e->dtype, e->rank, e->dims, &ok);
    uint64_t end;
    if (!ok || bytes != e->bytes || e->name_offset < names_begin ||
        e->name_offset > h->data_offset ||
        e->name_bytes > h->data_offset - e->name_offset ||
        e->offset < h->data_offset || e->offset % h->alignment ||
        __builtin_add_overflow(e->offset, e->bytes, &end) || end > f->size) {
      say(error, error_size,
          "%s: tensor %llu of the table is malformed (type, shape, name or "
          "data outside the file)",
          path, (unsigned long long)i);
      return 0;
    }
    f->sorted[i].name = (const char *)f->map + e->name_offset;
    f->sorted[i].bytes = e->name_bytes;
    f->sorted[i].index = i;
  }
  qsort(f->sorted, h->num_tensors, sizeof(name_ref), compare_names);
  for (uint64_t i = 1; i < h->num_tensors; ++i)
    if (compare_names(&f->sorted[i - 1], &f->sorted[i]) == 0) {
      say(error, error_size, "%s: two tensors are named '%.*s'", path,
          (int)f->sorted[i].bytes, f->sorted[i].name);
      return 0;
    }
  if (flags & FP8W_VERIFY_DATA)
    for (uint64_t i = 0; i < h->num_tensors; ++i) {
      const fp8w_entry *e = &f->entries[i];
      if (fp8w_hash_bytes(f->map + e->offset, e->bytes) != e->hash) {
        say(error, error_size,
            "%s: the data of tensor '%.*s' is corrupt (its hash does not "
            "match)",
            path, (int)e->name_bytes, (const char *)f->map + e->name_offset);
        return 0;
      }
    }
  return 1;
}

fp8w_file *fp8w_open(const char *path, uint64_t fingerprint, unsigned flags,
                     char *error, size_t error_size) {
  if (!path || !*path) {
    say(error, error_size, "no weights file named");
    return NULL;
  }
  fp8w_file *f = calloc(1, sizeof(*f));
  if (!f || !(f->path = strdup(path))) {
    free(f);
    say(error, error_size, "%s: out of memory", path);
    return NULL;
  }
  /* O_NONBLOCK: a FIFO must not block the open; it is refused below. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    say(error, error_size, "cannot open the weights file %s: %s", path,
        strerror(errno));
    fp8w_close(f);
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    say(error, error_size, "the weights file %s is not a regular file", path);
    close(fd);
    fp8w_close(f);
    return NULL;
  }
  f->size = (uint64_t)st.st_size;
  if (f->size < sizeof(fp8w_header)) {
    say(error, error_size,
        "%s is not an fp8-opt weights file (%llu bytes, shorter than the "
        "header)",
        path, (unsigned long long)f->size);
    close(fd);
    fp8w_close(f);
    return NULL;
  }
  void *map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    say(error, error_size, "cannot map the weights file %s: %s", path,
        strerror(errno));
    fp8w_close(f);
    return NULL;
  }
  f->map = map;
  if (!validate(f, fingerprint, flags, error, error_size)) {
    fp8w_close(f);
    return NULL;
  }
  return f;
}

/*--- Writing -----------------------------------------------------------------*/

struct fp8w_writer {
  int fd;
  fp8w_header header;
  fp8w_entry *entries;
  uint64_t num_tensors;
  uint64_t current;      /* tensor being written */
  uint64_t written;      /* of the current tensor */
  uint64_t position;     /* file offset of the next byte */
  fp8w_hash hash;        /* of the current tensor */
  char *names;           /* the names region, laid out */
  uint64_t names_bytes;
  int failed;
  int error_number;      /* errno of the failed write, 0: too many bytes */
};

uint64_t fp8w_writer_offset(const fp8w_writer *w, uint64_t i) {
  return i < w->num_tensors ? w->entries[i].offset : 0;
}

static int write_all(int fd, const void *data, size_t bytes, uint64_t at) {
  const char *p = data;
  while (bytes) {
    ssize_t n = pwrite(fd, p, bytes, (off_t)at);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    p += n;
    bytes -= (size_t)n;
    at += (uint64_t)n;
  }
  return 0;
}

void fp8w_writer_abort(fp8w_writer *w) {
  if (!w)
    return;
  free(w->entries);
  free(w->names);
  free(w);
}

fp8w_writer *fp8w_writer_create(int fd, uint64_t fingerprint,
                                const fp8w_tensor_desc *tensors,
                                uint64_t num_tensors, char *error,
                                size_t error_size) {
  if (num_tensors > FP8W_MAX_TENSORS) {
    say(error, error_size, "weights file: %llu tensors, at most %u",
        (unsigned long long)num_tensors, FP8W_MAX_TENSORS);
    return NULL;
  }
  fp8w_writer *w = calloc(1, sizeof(*w));
  if (!w)
    goto oom;
  w->fd = fd;
  w->num_tensors = num_tensors;
  w->entries = calloc(num_tensors ? num_tensors : 1, sizeof(fp8w_entry));
  if (!w->entries)
    goto oom;
  for (uint64_t i = 0; i < num_tensors; ++i) {
    if (tensors[i].name_bytes > UINT32_MAX ||
        __builtin_add_overflow(w->names_bytes, tensors[i].name_bytes,
                               &w->names_bytes)) {
      say(error, error_size, "weights file: tensor %llu's name is too long",
          (unsigned long long)i);
      fp8w_writer_abort(w);
      return NULL;
    }
  }
  w->names = malloc(w->names_bytes ? w->names_bytes : 1);
  name_ref *sorted = calloc(num_tensors ? num_tensors : 1, sizeof(name_ref));
  if (!w->names || !sorted) {
    free(sorted);
    goto oom;
  }
  const uint64_t names_begin =
      sizeof(fp8w_header) + num_tensors * sizeof(fp8w_entry);
  uint64_t name_at = 0;
  uint64_t at = align_up(names_begin + w->names_bytes, 4096);
  w->header.data_offset = at;
  for (uint64_t i = 0; i < num_tensors; ++i) {
    const fp8w_tensor_desc *t = &tensors[i];
    fp8w_entry *e = &w->entries[i];
    int ok;
    e->bytes = tensor_bytes(t->dtype, t->rank, t->dims, &ok);
    if (!ok) {
      say(error, error_size,
          "weights file: tensor '%.*s' has an unsupported type (%d) or shape",
          (int)t->name_bytes, t->name, t->dtype);
      free(sorted);
      fp8w_writer_abort(w);
      return NULL;
    }
    memcpy(w->names + name_at, t->name, t->name_bytes);
    e->name_offset = names_begin + name_at;
    e->name_bytes = (uint32_t)t->name_bytes;
    name_at += t->name_bytes;
    e->dtype = t->dtype;
    e->rank = t->rank;
    for (uint32_t d = 0; d < t->rank; ++d)
      e->dims[d] = t->dims[d];
    at = align_up(at, FP8W_ALIGNMENT);
    e->offset = at;
    at += e->bytes;
    sorted[i].name = t->name;
    sorted[i].bytes = (uint32_t)t->name_bytes;
    sorted[i].index = i;
  }
  qsort(sorted, num_tensors, sizeof(name_ref), compare_names);
  for (uint64_t i = 1; i < num_tensors; ++i)
    if (compare_names(&sorted[i - 1], &sorted[i]) == 0) {
      say(error, error_size, "weights file: two tensors are named '%.*s'",
          (int)sorted[i].bytes, sorted[i].name);
      free(sorted);
      fp8w_writer_abort(w);
      return NULL;
    }
  free(sorted);
  memcpy(w->header.magic, FP8W_MAGIC, 8);
  w->header.version = FP8W_VERSION;
  w->header.alignment = FP8W_ALIGNMENT;
  w->header.num_tensors = num_tensors;
  w->header.file_bytes = at;
  w->header.fingerprint = fingerprint;
  w->position = w->header.data_offset;
  fp8w_hash_init(&w->hash);
  /* Zero-length tensors are complete at once. */
  while (w->current < num_tensors && w->entries[w->current].bytes == 0) {
    w->entries[w->current].hash = fp8w_hash_digest(&w->hash);
    ++w->current;
  }
  return w;
oom:
  fp8w_writer_abort(w);
  say(error, error_size, "weights file: out of memory");
  return NULL;
}

static const char zeros[FP8W_ALIGNMENT];

int fp8w_writer_write(fp8w_writer *w, const void *data, size_t bytes) {
  const char *p = data;
  while (bytes && !w->failed) {
    if (w->current >= w->num_tensors) {
      w->failed = 1; /* more bytes than the tensors hold */
      break;
    }
    fp8w_entry *e = &w->entries[w->current];
    if (w->written == 0 && w->position < e->offset) {
      if (write_all(w->fd, zeros, (size_t)(e->offset - w->position),
                    w->position) != 0) {
        w->failed = 1;
        w->error_number = errno;
        break;
      }
      w->position = e->offset;
    }
    uint64_t take = e->bytes - w->written;
    if (take > bytes)
      take = bytes;
    if (write_all(w->fd, p, (size_t)take, w->position) != 0) {
      w->failed = 1;
      w->error_number = errno;
      break;
    }
    fp8w_hash_update(&w->hash, p, (size_t)take);
    w->position += take;
    w->written += take;
    p += take;
    bytes -= (size_t)take;
    while (w->current < w->num_tensors &&
           w->written == w->entries[w->current].bytes) {
      w->entries[w->current].hash = fp8w_hash_digest(&w->hash);
      fp8w_hash_init(&w->hash);
      w->written = 0;
      ++w->current;
    }
  }
  return w->failed ? -1 : 0;
}

int fp8w_writer_finish(fp8w_writer *w, char *error, size_t error_size) {
  int status = -1;
  if (w->failed) {
    say(error, error_size, "weights file: writing failed: %s",
        w->error_number ? strerror(w->error_number)
                        : "more data than the tensors hold");
    goto done;
  }
  if (w->current < w->num_tensors) {
    const fp8w_entry *e = &w->entries[w->current];
    say(error, error_size,
        "weights file: tensor '%.*s' got %llu of its %llu bytes",
        (int)e->name_bytes, w->names + (e->name_offset - sizeof(fp8w_header) -
                                        w->num_tensors * sizeof(fp8w_entry)),
        (unsigned long long)w->written, (unsigned long long)e->bytes);
    goto done;
  }
  /* The tail (a last tensor ending before file_bytes cannot happen: the
   * file ends with the last tensor), then table, names and header. */
  const uint64_t names_begin =
      sizeof(fp8w_header) + w->num_tensors * sizeof(fp8w_entry);
  const uint64_t gap = w->header.data_offset - names_begin - w->names_bytes;
  struct stat st;
  fp8w_hash h;
  fp8w_hash_init(&h);
  fp8w_hash_update(&h, w->entries, w->num_tensors * sizeof(fp8w_entry));
  fp8w_hash_update(&h, w->names, w->names_bytes);
  char *pad = calloc(gap ? gap : 1, 1);
  if (!pad) {
    say(error, error_size, "weights file: out of memory");
    goto done;
  }
  fp8w_hash_update(&h, pad, gap);
  w->header.table_hash = fp8w_hash_digest(&h);
  w->header.header_hash =
      fp8w_hash_bytes(&w->header, offsetof(fp8w_header, header_hash));
  if (write_all(w->fd, w->entries, w->num_tensors * sizeof(fp8w_entry),
                sizeof(fp8w_header)) != 0 ||
      write_all(w->fd, w->names, w->names_bytes, names_begin) != 0 ||
      write_all(w->fd, pad, gap, names_begin + w->names_bytes) != 0 ||
      write_all(w->fd, &w->header, sizeof(fp8w_header), 0) != 0 ||
      /* A regular file is cut to its size; a device (/dev/null) is not. */
      (fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) &&
       ftruncate(w->fd, (off_t)w->header.file_bytes) != 0)) {
    say(error, error_size, "weights file: writing failed: %s",
        strerror(errno));
    free(pad);
    goto done;
  }
  free(pad);
  status = 0;
done:
  fp8w_writer_abort(w);
  return status;
}
