/*===- fp8w.h - fp8-opt's weights file (.fp8w): format, reader, writer ----===*
 *
 * Part of fp8-opt. A model library compiled with external weights
 * (fp8-compile --weights=external, or auto past a size) keeps no weight
 * bytes: every large constant in its final form (FP8 bytes and scales after
 * the recipe's weight quantization, what stays in high precision as is)
 * lives in a weights file beside it, which the library maps (CPU) or
 * uploads once (CUDA) when its first handle is created. docs/Weights.md.
 *
 * Format, version 1 (all integers little-endian):
 *
 *   offset 0       fp8w_header (64 bytes)
 *   64             fp8w_entry[num_tensors] (128 bytes each)
 *   then           the tensor names, back to back (no terminators)
 *   data_offset    tensor data, each tensor at a multiple of `alignment`
 *                  (FP8W_ALIGNMENT: TMA and vector loads), zero padding
 *   file_bytes     end of file
 *
 * Integrity: a hash of the header, one of the table and names, one per
 * tensor's bytes (XXH64, seed 0). Identity: `fingerprint`, which the
 * library that may use the file records too (fp8-compile computes it from
 * the compiled computation and the tensors' names, types and shapes). A
 * missing, truncated, corrupt or mismatched file is refused with a message
 * naming the file and what is wrong; nothing is loaded then.
 *
 * The reader and writer are plain C with no dependency but libc, linked into
 * every model library, fp8-compile and the packer.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FP8RT_FP8W_H
#define FP8RT_FP8W_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FP8W_MAGIC "FP8OPTW\n"
#define FP8W_VERSION 1
#define FP8W_ALIGNMENT 256
#define FP8W_MAX_RANK 8
/* No real model has more tensors; a larger count is a corrupt header. */
#define FP8W_MAX_TENSORS (1u << 22)

typedef struct fp8w_header {
  char magic[8];         /* FP8W_MAGIC */
  uint32_t version;      /* FP8W_VERSION */
  uint32_t alignment;    /* of every tensor's offset: FP8W_ALIGNMENT */
  uint64_t num_tensors;
  uint64_t data_offset;  /* first byte of tensor data */
  uint64_t file_bytes;   /* the whole file */
  uint64_t fingerprint;  /* ties the file to the libraries that use it */
  uint64_t table_hash;   /* XXH64 of bytes [64, data_offset) */
  uint64_t header_hash;  /* XXH64 of the 56 bytes before this field */
} fp8w_header;

typedef struct fp8w_entry {
  uint64_t name_offset;  /* from the start of the file */
  uint32_t name_bytes;
  int32_t dtype;         /* fp8rt_dtype (ONNX TensorProto.DataType) */
  uint32_t rank;         /* <= FP8W_MAX_RANK */
  uint32_t flags;        /* 0 in version 1 */
  uint64_t offset;       /* from the start of the file, aligned */
  uint64_t bytes;        /* = product(dims) * dtype size */
  uint64_t hash;         /* XXH64 of the bytes */
  int64_t dims[FP8W_MAX_RANK];
  uint64_t reserved[2];  /* 0 */
} fp8w_entry;

/* XXH64 (seed 0), streaming: init, update any number of times, digest. */
typedef struct fp8w_hash {
  uint64_t v[4], total;
  unsigned char buf[32];
  uint32_t buffered;
} fp8w_hash;
void fp8w_hash_init(fp8w_hash *h);
void fp8w_hash_update(fp8w_hash *h, const void *data, size_t bytes);
uint64_t fp8w_hash_digest(const fp8w_hash *h);
uint64_t fp8w_hash_bytes(const void *data, size_t bytes);

/* Size of one element of an fp8rt_dtype, 0 for those a weights file does
 * not hold. */
size_t fp8w_dtype_size(int32_t dtype);

/*--- Reading -------------------------------------------------------------*/

typedef struct fp8w_file fp8w_file;

enum {
  FP8W_VERIFY_DATA = 1 /* hash every tensor's bytes while opening */
};

/* Opens `path` (a regular file), maps it read-only and validates the
 * header, the table (bounds, alignment, sizes, distinct names) and, with
 * FP8W_VERIFY_DATA, every tensor's hash. `fingerprint` != 0 must equal the
 * file's. Returns NULL with a message in `error` (naming the file) on any
 * failure. */
fp8w_file *fp8w_open(const char *path, uint64_t fingerprint, unsigned flags,
                     char *error, size_t error_size);
void fp8w_close(fp8w_file *file);

uint64_t fp8w_num_tensors(const fp8w_file *file);
uint64_t fp8w_fingerprint(const fp8w_file *file);
const char *fp8w_path(const fp8w_file *file);
/* Entry `i` (< num_tensors), its name (not NUL-terminated: name_bytes) and
 * its data, inside the mapping (valid until fp8w_close). */
const fp8w_entry *fp8w_entry_at(const fp8w_file *file, uint64_t i);
const char *fp8w_name(const fp8w_file *file, uint64_t i);
const void *fp8w_data(const fp8w_file *file, uint64_t i);
/* The index of the tensor named `name` (`name_bytes` long), or -1. */
int64_t fp8w_find(const fp8w_file *file, const char *name, size_t name_bytes);

/*--- Writing -------------------------------------------------------------*/

/* What a tensor will be; the writer lays the file out from these. */
typedef struct fp8w_tensor_desc {
  const char *name;
  size_t name_bytes;
  int32_t dtype;
  uint32_t rank;
  const int64_t *dims;
} fp8w_tensor_desc;

typedef struct fp8w_writer fp8w_writer;

/* Starts a file on `fd` (opened for writing, empty; the caller owns it and
 * renames it into place afterwards): the table is laid out at once, then
 * the tensors' bytes are streamed in table order with fp8w_writer_write,
 * in pieces of any size, and fp8w_writer_finish writes the hashes. Names
 * must be distinct. Returns NULL with a message on failure. */
fp8w_writer *fp8w_writer_create(int fd, uint64_t fingerprint,
                                const fp8w_tensor_desc *tensors,
                                uint64_t num_tensors, char *error,
                                size_t error_size);
/* Appends `bytes` of data to the current tensor (moving on to the next one
 * when it is complete). 0 on success. */
int fp8w_writer_write(fp8w_writer *w, const void *data, size_t bytes);
/* Checks that every tensor got all its bytes, writes the hashes, flushes.
 * 0 on success. The writer is freed either way. */
int fp8w_writer_finish(fp8w_writer *w, char *error, size_t error_size);
/* Frees a writer without finishing (the caller removes the file). */
void fp8w_writer_abort(fp8w_writer *w);
/* The byte offset tensor `i` will have in the file. */
uint64_t fp8w_writer_offset(const fp8w_writer *w, uint64_t i);

#ifdef __cplusplus
}
#endif

#endif /* FP8RT_FP8W_H */
