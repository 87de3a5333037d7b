/*===- memref_copy.c - Strided copies for compiled models ------------------===*
 *
 * Part of fp8-opt. MLIR's memref-to-LLVM lowering turns copies between
 * non-contiguous memrefs into calls of `memrefCopy`, normally provided by
 * libmlir_c_runner_utils. Compiled models must not depend on an LLVM
 * installation at run time, so the runtime carries its own implementation
 * of that (stable, C) interface.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <string.h>

/* UnrankedMemRefType<char>: rank and a pointer to the ranked descriptor
 * { char *allocated; char *aligned; int64_t offset; int64_t sizes[rank];
 *   int64_t strides[rank]; }. */
typedef struct unranked_memref {
  int64_t rank;
  void *descriptor;
} unranked_memref;

typedef struct ranked_header {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t dims[]; /* sizes[rank], then strides[rank] */
} ranked_header;

__attribute__((visibility("hidden"))) void
memrefCopy(int64_t elemSize, unranked_memref *src, unranked_memref *dst) {
  const int64_t rank = src->rank;
  const ranked_header *s = (const ranked_header *)src->descriptor;
  const ranked_header *d = (const ranked_header *)dst->descriptor;
  const int64_t *sizes = s->dims;
  const int64_t *sstrides = s->dims + rank;
  const int64_t *dstrides = d->dims + rank;
  const char *sbase = s->aligned + s->offset * elemSize;
  char *dbase = d->aligned + d->offset * elemSize;
  if (rank == 0) {
    memcpy(dbase, sbase, (size_t)elemSize);
    return;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  int64_t index[64] = {0};
  if (rank > 64)
    return; /* ranks beyond 64 are rejected by the compiler */
  for (;;) {
    int64_t so = 0, dof = 0;
    for (int64_t i = 0; i < rank; ++i) {
      so += index[i] * sstrides[i];
      dof += index[i] * dstrides[i];
    }
    memcpy(dbase + dof * elemSize, sbase + so * elemSize, (size_t)elemSize);
    int64_t axis = rank - 1;
    while (axis >= 0 && ++index[axis] == sizes[axis])
      index[axis--] = 0;
    if (axis < 0)
      return;
  }
}
