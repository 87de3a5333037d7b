/*===- fp8rt_cuda.h - fp8rt's CUDA runtime (driver API) --------------------===*
 *
 * Part of fp8-opt. The functions that the host code of MLIR's `gpu-to-llvm`
 * lowering (MLIR 22) calls -- the `mgpu*` entry points -- plus a few of our
 * own (`fp8rt_cuda_*`) for error reporting and explicit module loading.
 * Implemented over the CUDA driver API only (libcuda); no cudart, no MLIR.
 *
 * Error policy (docs/RuntimeABI.md, "CUDA runtime"):
 *  - nothing here calls exit() or abort(), and nothing throws;
 *  - every failure records, in a thread-local slot, a message naming the
 *    operation, the CUDA error name and string, and the kernel or module
 *    involved: fp8rt_cuda_last_error();
 *  - the mgpu* entry points return void or a handle (NULL on failure), as
 *    MLIR's generated code expects, so each failure also leaves a *pending*
 *    error on the calling thread: the next status-returning call,
 *    fp8rt_cuda_status() or fp8rt_cuda_synchronize(), returns it (and clears
 *    it). A call given a NULL handle that an earlier failure produced fails
 *    cleanly, with a message that quotes the earlier failure;
 *  - module loads run in global constructors: their failures are also kept
 *    process-wide (fp8rt_cuda_module_load_error()) so a host on another
 *    thread can see them.
 *
 * Context: created lazily on the first call that needs one: the primary
 * context of device 0, or of $FP8RT_CUDA_DEVICE, or of the ordinal given to
 * mgpuSetDefaultDevice. It is made current around each call (pushed only
 * when the thread's current context differs) and never destroyed.
 *
 * Environment: FP8RT_CUDA_DEVICE=<ordinal>; FP8RT_CUDA_SYNC=1 synchronizes
 * after every launch (attributes asynchronous faults to their kernel);
 * FP8RT_CUDA_LOG=1 also prints every recorded error to stderr.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FP8RT_FP8RT_CUDA_H
#define FP8RT_FP8RT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque to callers; they are the CUDA driver's handles. */
typedef struct CUmod_st *fp8rt_cu_module;
typedef struct CUfunc_st *fp8rt_cu_function;
typedef struct CUstream_st *fp8rt_cu_stream;
typedef struct CUevent_st *fp8rt_cu_event;

/*===--------------------- fp8rt's own entry points ----------------------===*/

/* The message of the last failure on this thread ("" if none). Valid until
 * the next failing call on this thread. */
const char *fp8rt_cuda_last_error(void);
/* The CUresult of the last failure on this thread (0 if none; our own
 * argument checks report CUDA_ERROR_INVALID_VALUE, 1). */
int32_t fp8rt_cuda_last_error_code(void);
/* Returns the first pending error on this thread (a CUresult, 0 if none)
 * and clears it; fp8rt_cuda_last_error() keeps the message. */
int32_t fp8rt_cuda_status(void);
/* Clears the pending error and the message on this thread. */
void fp8rt_cuda_clear_error(void);
/* Initializes the driver and the context now (status as above). */
int32_t fp8rt_cuda_init(void);
/* Synchronizes the context; returns the pending error if there is one,
 * else the synchronize's own status (both recorded as usual). */
int32_t fp8rt_cuda_synchronize(void);
/* The first module-load failure of the process ("" if none). */
const char *fp8rt_cuda_module_load_error(void);
/* The device ordinal in use, or that would be used (-1 if invalid). */
int32_t fp8rt_cuda_device(void);

/* Loads `image` (cubin, fatbin or NUL-terminated PTX; `size` may be 0 for
 * PTX). If a cubin/fatbin is rejected for the device's architecture and
 * `ptx_fallback` is not NULL, JIT-compiles that PTX instead. `name` (may be
 * NULL) names the module in messages. NULL on failure. */
fp8rt_cu_module fp8rt_cuda_module_load(const void *image, size_t size,
                                       const char *ptx_fallback,
                                       const char *name);

/* A tiled TMA descriptor for a dense row-major tensor: `dims`/`box` in
 * elements, outermost first (as in MLIR), `elem_bytes` in {1,2,4,8}.
 * `data_type` is a CUtensorMapDataType; interleave/swizzle/l2/oob are the
 * CUDA enums. Returns a device pointer to the 128-byte CUtensorMap (kept by
 * the runtime; identical requests share one copy), NULL on failure. */
void *fp8rt_cuda_tensor_map_encode_tiled(void *global, int32_t rank,
                                         const int64_t *dims,
                                         const int64_t *strides_elems,
                                         const int64_t *box,
                                         int32_t elem_bytes, int32_t data_type,
                                         int32_t interleave, int32_t swizzle,
                                         int32_t l2_promotion, int32_t oob_fill);

/*===------------------- model runs (compiled models) --------------------===*
 * A CUDA model library (fp8-compile --target=sm_90a) calls these around
 * its generated host code. Between run_begin and run_end on a thread, the
 * per-launch stream create/synchronize/destroy of MLIR's host code become
 * uses of the thread's persistent model stream, with no synchronization
 * until run_end, and launches after a failure are skipped. With `capture`,
 * the run is recorded into a CUDA graph instead of executed: run_end
 * returns the instantiated graph, which graph_launch replays (and waits
 * for). Buffers come from a caching device-memory pool
 * (_mlir_memref_to_llvm_alloc/free), handed out in stream order. */
int32_t fp8rt_cuda_run_begin(int32_t capture);
int32_t fp8rt_cuda_run_end(void **graph_exec);
/* GPU time in ms of this thread's last run that ran (not captured) or was
 * replayed, and succeeded: CUDA events recorded on the model stream at
 * run_begin and at run_end, i.e. what a CUDA-event benchmark of the same
 * calls measures (the kernels and copies the run queued, and any wait of
 * the GPU for the host's launches), or around graph_launch's replay; -1
 * when there is none. */
float fp8rt_cuda_last_run_ms(void);
int32_t fp8rt_cuda_graph_launch(void *graph_exec);
void fp8rt_cuda_graph_destroy(void *graph_exec);
/* CUDA graphs instantiated and not yet destroyed (every model's). */
int32_t fp8rt_cuda_live_graphs(void);
/* Plain device memory (not pooled) and a synchronous UVA copy. */
void *fp8rt_cuda_alloc(size_t bytes);
void fp8rt_cuda_free(void *ptr);
int32_t fp8rt_cuda_copy(void *dst, const void *src, size_t bytes);
/* Uploads n host ranges (pageable: a mapped weights file) to device memory
 * through two pinned staging buffers of 64 MiB, chunk by chunk on a stream
 * of its own, the copy into one buffer overlapping the DMA from the other;
 * returns when every byte has landed. Without pinned memory to spare it
 * falls back to fp8rt_cuda_copy_many. *failed as there. */
int32_t fp8rt_cuda_upload(void *const *dst, const void *const *src,
                          const size_t *bytes, int32_t n, int32_t *failed);
/* n copies dst[i] <- src[i] of bytes[i] (UVA), then one synchronize: what a
 * run does with its inputs or outputs. On failure *failed is the index of
 * the copy that failed (or n if the final synchronize did). */
int32_t fp8rt_cuda_copy_many(void *const *dst, const void *const *src,
                             const size_t *bytes, int32_t n, int32_t *failed);
/* Device-resident tensors (fp8rt_model_run_ex). check_device_tensor: 0
 * when [ptr, ptr + bytes) lies inside one allocation of device (or managed)
 * memory of the runtime's device; else 1 and `why` says what is wrong
 * ("it is pinned host memory, ..."), to follow the tensor's name. */
int32_t fp8rt_cuda_check_device_tensor(const void *ptr, size_t bytes, char *why,
                                       size_t why_size);
/* This thread's model stream waits (an event, no host synchronization) for
 * the work queued on `stream` so far; a stream of another context, or one
 * CUDA refuses, is an error. */
int32_t fp8rt_cuda_run_after(void *stream);
/* n asynchronous copies on this thread's model stream (stream-ordered
 * before the next run or graph launch on it); *failed as copy_many. */
int32_t fp8rt_cuda_copy_on_run_stream(void *const *dst, const void *const *src,
                                      const size_t *bytes, int32_t n,
                                      int32_t *failed);
/* Bytes the pool holds, hands out now, and the most it handed out. */
void fp8rt_cuda_pool_stats(uint64_t *cached, uint64_t *in_use,
                           uint64_t *peak);
/* What finalize-memref-to-llvm{use-generic-functions} host code calls. */
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/*===------------ what MLIR 22's gpu-to-llvm host code calls -------------===*/
/* Signatures as the LLVM IR declares them (checked against mlir-opt 22). */

fp8rt_cu_module mgpuModuleLoad(void *data, int64_t size);
fp8rt_cu_module mgpuModuleLoadJIT(void *ptx, int32_t opt_level);
void mgpuModuleUnload(fp8rt_cu_module module);
fp8rt_cu_function mgpuModuleGetFunction(fp8rt_cu_module module,
                                        const char *name);
void mgpuLaunchKernel(fp8rt_cu_function function, intptr_t grid_x,
                      intptr_t grid_y, intptr_t grid_z, intptr_t block_x,
                      intptr_t block_y, intptr_t block_z, int32_t smem,
                      fp8rt_cu_stream stream, void **params, void **extra,
                      size_t num_params);
void mgpuLaunchClusterKernel(fp8rt_cu_function function, intptr_t cluster_x,
                             intptr_t cluster_y, intptr_t cluster_z,
                             intptr_t grid_x, intptr_t grid_y, intptr_t grid_z,
                             intptr_t block_x, intptr_t block_y,
                             intptr_t block_z, int32_t smem,
                             fp8rt_cu_stream stream, void **params,
                             void **extra);

fp8rt_cu_stream mgpuStreamCreate(void);
void mgpuStreamDestroy(fp8rt_cu_stream stream);
void mgpuStreamSynchronize(fp8rt_cu_stream stream);
void mgpuStreamWaitEvent(fp8rt_cu_stream stream, fp8rt_cu_event event);

fp8rt_cu_event mgpuEventCreate(void);
void mgpuEventDestroy(fp8rt_cu_event event);
void mgpuEventSynchronize(fp8rt_cu_event event);
void mgpuEventRecord(fp8rt_cu_event event, fp8rt_cu_stream stream);

/* `is_host_shared` (MLIR's i8): nonzero asks for managed memory. */
void *mgpuMemAlloc(uint64_t size, fp8rt_cu_stream stream,
                   int8_t is_host_shared);
void mgpuMemFree(void *ptr, fp8rt_cu_stream stream);
void mgpuMemcpy(void *dst, void *src, size_t size, fp8rt_cu_stream stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count,
                  fp8rt_cu_stream stream);
void mgpuMemset16(void *dst, uint16_t value, size_t count,
                  fp8rt_cu_stream stream);

void mgpuMemHostRegister(void *ptr, uint64_t size);
void mgpuMemHostUnregister(void *ptr);
/* `descriptor` points to a ranked memref descriptor of rank `rank`:
 * {allocated, aligned, offset, sizes[rank], strides[rank]}. */
void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t element_size);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t element_size);

void mgpuSetDefaultDevice(int32_t device);

/* nvgpu.tma.create.descriptor: the memref is (rank, descriptor); the enums
 * are CUDA's; `box` holds rank sizes, outermost first. Returns a device
 * pointer to the CUtensorMap. NOTE: MLIR 22 passes data type 9 (BFLOAT16)
 * for every type it does not know, f8E4M3FN/f8E5M2/i8/i16 included; see
 * docs/RuntimeABI.md. */
void *mgpuTensorMapEncodeTiledMemref(int64_t rank, void *descriptor,
                                     int64_t data_type, int64_t interleave,
                                     int64_t swizzle, int64_t l2_promotion,
                                     int64_t oob_fill, int64_t *box);

#ifdef __cplusplus
}
#endif

#endif /* FP8RT_FP8RT_CUDA_H */
