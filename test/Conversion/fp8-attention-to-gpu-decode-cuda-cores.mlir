// RUN: fp8-opt %s -verify-diagnostics \
// RUN:   --convert-fp8-attention-to-gpu="remarks=true decode-tensor-cores=false" | FileCheck %s

// decode-tensor-cores=false: a decode step over an E4M3 cache keeps the
// CUDA-core loop for every scale. Power-of-two scales still fold out of it
// (a second copy of the loop, chosen at run time, without the per-element
// multiplication and casts); no mma.
// CHECK-LABEL: gpu.func @__fp8_attention_decode_cache_kernel(
// CHECK-NOT:     mma.sync
// CHECK:         scf.if %{{.*}} {
// CHECK:           scf.for
// CHECK:             nvvm.convert.f8x2.to.f16x2
// CHECK-NOT:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:             llvm.intr.fma
// CHECK-NOT:         arith.truncf %{{.*}} : f32 to bf16
// CHECK:         } else {
// CHECK:           scf.for
// CHECK:             arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT:     mma.sync
// CHECK-NOT:     movmatrix
func.func private @__fp8_attention_decode_cache(%k: memref<1x2x1000x128xf8E4M3FN>, %ks: memref<f32>, %v: memref<1x2x1000x128xf8E4M3FN>, %vs: memref<f32>, %q: memref<1x8x1x128xbf16>, %m: memref<1x1x1x1000xf32>, %ws: memref<1x8x32x130xf32>, %out: memref<1x8x1x128xbf16>)
    attributes {fp8.attention = {scale = 0.0883883476 : f32, causal = false, has_mask = true, kv_dequant = [f16, f32, bf16]}} {
  // expected-remark @-2 {{fp8 attention: split-key decode attention kernel: 8 heads (2 kv heads), 1 x 1000 keys, head dim 128, additive mask, reading a f8E4M3FN cache (scaled, rounded to f16 f32 bf16; scales 2^-15..2^7 fold out); 32 splits of 32 keys x 2 kv heads x 1 sequences, 4 warps per CTA, then a kernel that combines the splits}}
  return
}
