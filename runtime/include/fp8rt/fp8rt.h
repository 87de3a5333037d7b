/*===- fp8rt.h - The C ABI of a model compiled by fp8-compile --------------===*
 *
 * Part of fp8-opt. Every model compiled by `fp8-compile` (for the CPU now,
 * for CUDA later) is a shared library exporting exactly these functions.
 * Tensors are dense, row-major, in host memory, described by the caller;
 * outputs are written into buffers the caller owns. Nothing here exits or
 * aborts: every failure is a status plus a message.
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

#define FP8RT_ABI_VERSION 1

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
/* index < num_inputs, or for outputs index < num_outputs; NULL names and
 * -1 dtypes/ranks for bad indices. */
const char *fp8rt_model_input_name(const fp8rt_model *model, int32_t index);
const char *fp8rt_model_output_name(const fp8rt_model *model, int32_t index);
int32_t fp8rt_model_input_dtype(const fp8rt_model *model, int32_t index);
int32_t fp8rt_model_output_dtype(const fp8rt_model *model, int32_t index);
int32_t fp8rt_model_input_rank(const fp8rt_model *model, int32_t index);
int32_t fp8rt_model_output_rank(const fp8rt_model *model, int32_t index);
const int64_t *fp8rt_model_input_shape(const fp8rt_model *model, int32_t index);
const int64_t *fp8rt_model_output_shape(const fp8rt_model *model, int32_t index);

/* Runs the model: `inputs` and `outputs` must match the signature exactly
 * (count, dtype, rank, shape; non-NULL data). Output buffers may not alias
 * inputs. */
fp8rt_status fp8rt_model_run(fp8rt_model *model, const fp8rt_tensor *inputs,
                             int32_t num_inputs, const fp8rt_tensor *outputs,
                             int32_t num_outputs);

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
