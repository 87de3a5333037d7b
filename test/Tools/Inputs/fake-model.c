/* A stand-in for a model library, exporting the fp8rt ABI with whatever
 * signature the environment gives it, so that tests can feed fp8-run
 * signatures fp8-compile never makes (fp8-run must not trust them):
 *   FAKE_NUM_OUTPUTS    number of outputs (default 1; may be negative)
 *   FAKE_OUT_DTYPE      the outputs' dtype (default 1, float)
 *   FAKE_OUT_RANK       their rank (default: the number of FAKE_OUT_SHAPE dims)
 *   FAKE_OUT_SHAPE      their dims, comma-separated (default 2,3; may be
 *                       negative or overflow), or "null" for a NULL shape
 *   FAKE_OUT_NAME       their name (default "y"), or "null" for NULL
 *   FAKE_ABI            what fp8rt_abi_version returns (default 1: it
 *                       exports version 1's functions only)
 * It has no inputs; a run sets every byte of every output to 1. */
#include "fp8rt/fp8rt.h"

#include <stdlib.h>
#include <string.h>

static int64_t shape[16];
static int rank = 2, null_shape, num_outputs = 1, dtype = FP8RT_FLOAT;
static const char *name = "y";

int32_t fp8rt_abi_version(void) {
  const char *v = getenv("FAKE_ABI");
  return v ? atoi(v) : 1;
}
const char *fp8rt_model_device(void) { return "cpu"; }

fp8rt_model *fp8rt_model_create(const char **error) {
  static int handle;
  const char *s = getenv("FAKE_OUT_SHAPE");
  shape[0] = 2;
  shape[1] = 3;
  if (s && strcmp(s, "null") == 0) {
    null_shape = 1;
  } else if (s) {
    rank = 0;
    while (*s && rank < 16) {
      char *end;
      shape[rank++] = strtoll(s, &end, 10);
      s = *end == ',' ? end + 1 : end;
    }
  }
  if (getenv("FAKE_OUT_RANK"))
    rank = atoi(getenv("FAKE_OUT_RANK"));
  if (getenv("FAKE_NUM_OUTPUTS"))
    num_outputs = atoi(getenv("FAKE_NUM_OUTPUTS"));
  if (getenv("FAKE_OUT_DTYPE"))
    dtype = atoi(getenv("FAKE_OUT_DTYPE"));
  if (getenv("FAKE_OUT_NAME"))
    name = strcmp(getenv("FAKE_OUT_NAME"), "null") ? getenv("FAKE_OUT_NAME")
                                                    : NULL;
  (void)error;
  return (fp8rt_model *)&handle;
}
void fp8rt_model_destroy(fp8rt_model *m) { (void)m; }
int32_t fp8rt_model_num_inputs(const fp8rt_model *m) { (void)m; return 0; }
int32_t fp8rt_model_num_outputs(const fp8rt_model *m) {
  (void)m;
  return num_outputs;
}
const char *fp8rt_model_input_name(const fp8rt_model *m, int32_t i) {
  (void)m, (void)i;
  return NULL;
}
const char *fp8rt_model_output_name(const fp8rt_model *m, int32_t i) {
  (void)m, (void)i;
  return name;
}
int32_t fp8rt_model_input_dtype(const fp8rt_model *m, int32_t i) {
  (void)m, (void)i;
  return -1;
}
int32_t fp8rt_model_output_dtype(const fp8rt_model *m, int32_t i) {
  (void)m, (void)i;
  return dtype;
}
int32_t fp8rt_model_input_rank(const fp8rt_model *m, int32_t i) {
  (void)m, (void)i;
  return -1;
}
int32_t fp8rt_model_output_rank(const fp8rt_model *m, int32_t i) {
  (void)m, (void)i;
  return rank;
}
const int64_t *fp8rt_model_input_shape(const fp8rt_model *m, int32_t i) {
  (void)m, (void)i;
  return NULL;
}
const int64_t *fp8rt_model_output_shape(const fp8rt_model *m, int32_t i) {
  (void)m, (void)i;
  return null_shape ? NULL : shape;
}
fp8rt_status fp8rt_model_run(fp8rt_model *m, const fp8rt_tensor *inputs,
                             int32_t num_inputs, const fp8rt_tensor *outputs,
                             int32_t n) {
  (void)m, (void)inputs, (void)num_inputs;
  for (int32_t i = 0; i < n; ++i) {
    size_t bytes = fp8rt_dtype_size_inline(outputs[i].dtype);
    for (int32_t d = 0; d < outputs[i].rank; ++d)
      bytes *= (size_t)outputs[i].shape[d];
    memset(outputs[i].data, 1, bytes);
  }
  return FP8RT_OK;
}
int32_t fp8rt_model_num_state_tensors(const fp8rt_model *m) {
  (void)m;
  return 0;
}
fp8rt_status fp8rt_model_save_state(fp8rt_model *m, const char *path) {
  (void)m, (void)path;
  return FP8RT_IO_ERROR;
}
fp8rt_status fp8rt_model_load_state(fp8rt_model *m, const char *path) {
  (void)m, (void)path;
  return FP8RT_IO_ERROR;
}
const char *fp8rt_model_last_error(const fp8rt_model *m) {
  (void)m;
  return "fake model";
}
size_t fp8rt_dtype_size(int32_t t) { return fp8rt_dtype_size_inline(t); }
