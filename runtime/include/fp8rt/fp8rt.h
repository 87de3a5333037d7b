/*===- fp8rt.h - The C ABI of a model compiled by fp8-compile --------------===*
 *
 * Part of fp8-opt. Every model compiled by `fp8-compile` (for the CPU or for
 * CUDA) is a shared library exporting exactly these functions.
 * Tensors are dense, row-major, described by the caller, in host memory
 * (fp8rt_model_run) or, for CUDA libraries, device memory too
 * (fp8rt_model_run_ex); outputs are written into buffers the caller owns.
 * Nothing here exits or aborts: every failure is a status plus a message.
 *
 * A model handle is not thread-safe: use one handle per thread (handles
 * share nothing but the immutable weights of the library).
 *
 *===----------------------------------------------------------------------===*/

#ifndef FP8RT_FP8RT_H
#define FP8RT_FP8RT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: fp8rt_model_run_ex (tensors in device memory, a CUDA stream) and
 * fp8rt_model_last_run_copies; every version-1 function is unchanged, so a
 * host written for version 1 runs a version-2 library as before. */
/* 3: dynamic dimensions with bounds (fp8-compile --input-shape
 * ids=1..8x1..64): fp8rt_model_input_bounds, fp8rt_model_input_dim_name,
 * fp8rt_model_output_shape_for; the shape accessors say -1 for a dynamic
 * dimension, and a run takes each input's actual sizes. Every version-2
 * function is unchanged for static models. */
/* 4: outputs updated in place (fp8-compile --kv-cache-in-place):
 * fp8rt_model_output_tied_input. A tied output is its input updated: pass
 * one buffer for both and the run writes only what changes; another
 * buffer first receives the input's data. Every version-3 function is
 * unchanged. */
#define FP8RT_ABI_VERSION 4

/* Element types, numbered as ONNX's TensorProto.DataType. */
typedef enum fp8rt_dtype {
  FP8RT_FLOAT = 1,
  FP8RT_UINT8 = 2,
  FP8RT_INT8 = 3,
  FP8RT_UINT16 = 4,
  FP8RT_INT16 = 5,
  FP8RT_INT32 = 6,
  FP8RT_INT64 = 7,
  FP8RT_BOOL = 9, /* one byte per element, 0 or 1 */
  FP8RT_FLOAT16 = 10,
  FP8RT_DOUBLE = 11,
  FP8RT_UINT32 = 12,
  FP8RT_UINT64 = 13,
  FP8RT_BFLOAT16 = 16,
  FP8RT_FLOAT8E4M3FN = 17,
  FP8RT_FLOAT8E5M2 = 19,
  FP8RT_FLOAT8E8M0 = 24 /* MXFP8's power-of-two block scales */
} fp8rt_dtype;

typedef enum fp8rt_status {
  FP8RT_OK = 0,
  FP8RT_INVALID_ARGUMENT = 1, /* wrong count, dtype, rank, shape or NULL */
  FP8RT_OUT_OF_MEMORY = 2,
  FP8RT_INTERNAL = 3,
  FP8RT_IO_ERROR = 4 /* state files: cannot read/write, corrupt, mismatched */
} fp8rt_status;

/* A tensor the caller describes: `data` holds prod(shape) elements. */
typedef struct fp8rt_tensor {
  void *data;
  int32_t dtype; /* fp8rt_dtype */
  int32_t rank;
  const int64_t *shape;
} fp8rt_tensor;

typedef struct fp8rt_model fp8rt_model;

/* Where a tensor of fp8rt_model_run_ex lives. */
typedef enum fp8rt_memory {
  FP8RT_MEMORY_HOST = 0,  /* host memory (pageable or pinned) */
  FP8RT_MEMORY_DEVICE = 1 /* CUDA device (or managed) memory of the device
                             and context the library runs on */
} fp8rt_memory;

/* fp8rt_tensor plus where its data lives. */
typedef struct fp8rt_tensor_ex {
  void *data;
  int32_t dtype; /* fp8rt_dtype */
  int32_t rank;
  const int64_t *shape;
  int32_t memory;   /* fp8rt_memory */
  int32_t reserved; /* must be 0 */
} fp8rt_tensor_ex;

/* Options of fp8rt_model_run_ex; a zero-filled struct with `size` set (or a
 * NULL pointer) asks for the defaults. */
typedef struct fp8rt_run_options {
  uint32_t size;  /* sizeof(fp8rt_run_options), so the struct can grow */
  uint32_t flags; /* must be 0 */
  /* CUDA libraries: a CUstream whose queued work the run waits for before
   * it reads its inputs (e.g. the stream that produced them: torch's
   * current stream); NULL orders nothing beyond host order. CPU libraries
   * take NULL only. */
  void *stream;
} fp8rt_run_options;

/* Bytes that the last successful run on a handle copied around the model's
 * own work (staging of inputs and outputs, the run-time checks' status). */
typedef struct fp8rt_copy_stats {
  uint64_t host_to_device;
  uint64_t device_to_host;
  uint64_t device_to_device; /* device tensors that had to be staged */
  uint64_t copies;           /* how many copies */
} fp8rt_copy_stats;

/* FP8RT_ABI_VERSION of the library. */
int32_t fp8rt_abi_version(void);
/* Where the library runs: "cpu", or "cuda" (fp8-compile --target=sm_90a or
 * sm_89: inputs and outputs stay host memory; the library copies them). */
const char *fp8rt_model_device(void);

/* Creates a handle; returns NULL on failure (then, if `error` is not NULL,
 * *error points to a static message). */
fp8rt_model *fp8rt_model_create(const char **error);
/* The same, for a library compiled with external weights
 * (docs/Weights.md), reading them from `weights_path` instead of the
 * default: $FP8RT_WEIGHTS, else the file fp8-compile wrote, looked up
 * beside the library. The weights are loaded once per process (CPU: mapped;
 * CUDA: uploaded) and every handle shares them; naming another file once
 * they are loaded is an error. A missing, truncated, corrupt or mismatched
 * file fails the create. */
fp8rt_model *fp8rt_model_create_with_weights(const char *weights_path,
                                             const char **error);
void fp8rt_model_destroy(fp8rt_model *model);

/* The signature: graph inputs then graph outputs, in ONNX order. `shape`
 * points into the library and stays valid while it is loaded. */
int32_t fp8rt_model_num_inputs(const fp8rt_model *model);
int32_t fp8rt_model_num_outputs(const fp8rt_model *model);
/* The input that output `index` updates in place (the same dtype and
 * shape), or -1 for an output of its own or a bad index (ABI 4). */
int32_t fp8rt_model_output_tied_input(const fp8rt_model *model, int32_t index);
/* index < num_inputs, or for outputs index < num_outputs; NULL names and
 * -1 dtypes/ranks for bad indices. */
const char *fp8rt_model_input_name(const fp8rt_model *model, int32_t index);
const char *fp8rt_model_output_name(const fp8rt_model *model, int32_t index);
int32_t fp8rt_model_input_dtype(const fp8rt_model *model, int32_t index);
int32_t fp8rt_model_output_dtype(const fp8rt_model *model, int32_t index);
int32_t fp8rt_model_input_rank(const fp8rt_model *model, int32_t index);
int32_t fp8rt_model_output_rank(const fp8rt_model *model, int32_t index);
/* -1 for a dynamic dimension (ABI 3). */
const int64_t *fp8rt_model_input_shape(const fp8rt_model *model, int32_t index);
const int64_t *fp8rt_model_output_shape(const fp8rt_model *model, int32_t index);

/* ABI 3. The inclusive bounds of each dimension of input `index` into
 * lo[rank] and hi[rank] (a static dimension: lo == hi == its size);
 * FP8RT_INVALID_ARGUMENT for a bad index or NULL arrays. */
fp8rt_status fp8rt_model_input_bounds(const fp8rt_model *model, int32_t index,
                                      int64_t *lo, int64_t *hi);
/* ABI 3. The name of dynamic dimension `dim` of input `index` (the model's
 * dim_param, e.g. "batch"; dimensions of one name are equal in every run),
 * or NULL for a static dimension or bad indices. */
const char *fp8rt_model_input_dim_name(const fp8rt_model *model, int32_t index,
                                       int32_t dim);
/* ABI 3. The shape of output `index` (rank entries into `shape`) for a run
 * on `inputs` (only their rank and shape are read: data may be NULL). The
 * inputs' dynamic dimensions must lie within their bounds and agree where
 * they share a name, else FP8RT_INVALID_ARGUMENT and the message says which
 * (fp8rt_model_last_error). For a static model: fp8rt_model_output_shape. */
fp8rt_status fp8rt_model_output_shape_for(fp8rt_model *model,
                                          const fp8rt_tensor *inputs,
                                          int32_t num_inputs, int32_t index,
                                          int64_t *shape);

/* Runs the model: `inputs` and `outputs` must match the signature exactly
 * (count, dtype, rank, shape; non-NULL data), all in host memory. An output
 * buffer may not overlap an input or another output (the compiled code
 * writes outputs in place and may keep intermediate values there while it
 * reads the inputs): a CPU library refuses it, FP8RT_INVALID_ARGUMENT naming
 * both; an output updated in place (fp8rt_model_output_tied_input) may be
 * its input's own buffer. A dynamic dimension of an input may be any
 * size within its bounds (outside: FP8RT_INVALID_ARGUMENT naming the input,
 * the dimension and its bounds; the model stays usable); the outputs must
 * then have the shapes fp8rt_model_output_shape_for gives. */
fp8rt_status fp8rt_model_run(fp8rt_model *model, const fp8rt_tensor *inputs,
                             int32_t num_inputs, const fp8rt_tensor *outputs,
                             int32_t num_outputs);

/* ABI 2. Runs the model on tensors that say where they live. A CUDA
 * library reads FP8RT_MEMORY_DEVICE inputs and writes FP8RT_MEMORY_DEVICE
 * outputs in place, without staging copies, when their data is 16-byte
 * aligned (else through a device-to-device copy); host tensors are copied as
 * fp8rt_model_run copies them. Device data must lie wholly inside one
 * allocation of the library's device and context; a host pointer given as
 * device memory, a tensor that runs past its allocation, memory of another
 * device, device outputs that overlap an input or another output, or a
 * stream of another context is FP8RT_INVALID_ARGUMENT with a message naming
 * the tensor, and the model stays usable. The call returns when the outputs
 * are complete (the run synchronizes its own stream). CPU libraries take host
 * tensors only. */
fp8rt_status
fp8rt_model_run_ex(fp8rt_model *model, const fp8rt_tensor_ex *inputs,
                   int32_t num_inputs, const fp8rt_tensor_ex *outputs,
                   int32_t num_outputs, const fp8rt_run_options *options);

/* ABI 2. The copies of the last successful run on this handle (all zero
 * before the first, and always zero on the CPU). */
fp8rt_status fp8rt_model_last_run_copies(const fp8rt_model *model,
                                         fp8rt_copy_stats *stats);

/* Persistent state: what a model keeps across runs (the amax histories and
 * scales of delayed scaling). It belongs to the loaded library, so every
 * handle of one library shares it. */
int32_t fp8rt_model_num_state_tensors(const fp8rt_model *model);
/* Writes the state to `path` atomically (a temporary file renamed into
 * place). */
fp8rt_status fp8rt_model_save_state(fp8rt_model *model, const char *path);
/* Restores state saved by the same model. A missing, truncated or corrupt
 * file, or one saved by a different model, is an error and leaves the state
 * unchanged. */
fp8rt_status fp8rt_model_load_state(fp8rt_model *model, const char *path);

/* The message of the last failed call on this handle ("" if none). */
const char *fp8rt_model_last_error(const fp8rt_model *model);

/* Size in bytes of one element of `dtype`, 0 if unknown. */
size_t fp8rt_dtype_size(int32_t dtype);

/* The same, inline, for hosts that do not link a model (fp8-run's readers). */
static inline size_t fp8rt_dtype_size_inline(int32_t dtype) {
  switch (dtype) {
  case FP8RT_DOUBLE:
  case FP8RT_INT64:
  case FP8RT_UINT64:
    return 8;
  case FP8RT_FLOAT:
  case FP8RT_INT32:
  case FP8RT_UINT32:
    return 4;
  case FP8RT_FLOAT16:
  case FP8RT_BFLOAT16:
  case FP8RT_INT16:
  case FP8RT_UINT16:
    return 2;
  case FP8RT_UINT8:
  case FP8RT_INT8:
  case FP8RT_BOOL:
  case FP8RT_FLOAT8E4M3FN:
  case FP8RT_FLOAT8E5M2:
  case FP8RT_FLOAT8E8M0:
    return 1;
  default:
    return 0;
  }
}

#ifdef __cplusplus
}
#endif

#endif /* FP8RT_FP8RT_H */
