// RUN: fp8-opt %s -split-input-file --fp8-quantize-attention | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-quantize-attention=format=e5m2 | FileCheck %s --check-prefix=E5M2
// RUN: fp8-opt %s -split-input-file --fp8-quantize-attention=block-tokens=0 | FileCheck %s --check-prefix=TENSOR
// RUN: not fp8-opt %s -split-input-file --fp8-quantize-attention=block-tokens=-1 2>&1 | FileCheck %s --check-prefix=BAD

// q, k and v each get current scales per block of 128 positions of one
// (batch, head) over the whole head dim (amax -> compute_scale -> quantize
// with layout<block 128x128>: q's scales are [1, 4, 2, 1], k's and v's
// [1, 2, 3, 1] for 300 keys); the op takes the FP8 tensors and the scales
// in q, k, v order, keeps its mask, scale, causality and result type.
// CHECK-LABEL: func.func @causal_mask
// CHECK-SAME:    (%[[Q:.*]]: tensor<1x4x256x128xbf16>, %[[K:.*]]: tensor<1x2x300x128xbf16>, %[[V:.*]]: tensor<1x2x300x128xbf16>, %[[M:.*]]: tensor<1x1x256x300xf32>)
// CHECK:         %[[AQ:.*]] = fp8.amax %[[Q]] layout<block 128x128> : tensor<1x4x256x128xbf16> -> tensor<1x4x2x1xf32>
// CHECK:         %[[SQ:.*]] = fp8.compute_scale %[[AQ]] recipe(#fp8.current) format(e4m3) : tensor<1x4x2x1xf32> -> tensor<1x4x2x1xf32>
// CHECK:         %[[Q8:.*]] = fp8.quantize %[[Q]], %[[SQ]] layout<block 128x128> : {{.*}} -> tensor<1x4x256x128xf8E4M3FN>
// CHECK:         %[[AK:.*]] = fp8.amax %[[K]] layout<block 128x128> : tensor<1x2x300x128xbf16> -> tensor<1x2x3x1xf32>
// CHECK:         %[[SK:.*]] = fp8.compute_scale %[[AK]]
// CHECK:         %[[K8:.*]] = fp8.quantize %[[K]], %[[SK]]
// CHECK:         %[[AV:.*]] = fp8.amax %[[V]] layout<block 128x128>
// CHECK:         %[[SV:.*]] = fp8.compute_scale %[[AV]]
// CHECK:         %[[V8:.*]] = fp8.quantize %[[V]], %[[SV]]
// CHECK:         %[[O:.*]] = fp8.attention %[[Q8]], %[[K8]], %[[V8]] mask %[[M]] scales(%[[SQ]], %[[SK]], %[[SV]]) scale_layout<block 128x128> scale(0.0883883461) causal : (tensor<1x4x256x128xf8E4M3FN>, tensor<1x2x300x128xf8E4M3FN>, tensor<1x2x300x128xf8E4M3FN>, tensor<1x1x256x300xf32>, tensor<1x4x2x1xf32>, tensor<1x2x3x1xf32>, tensor<1x2x3x1xf32>) -> tensor<1x4x256x128xbf16>
// CHECK:         return %[[O]]
// E5M2-LABEL:  func.func @causal_mask
// E5M2:          fp8.compute_scale %{{.*}} recipe(#fp8.current) format(e5m2)
// E5M2:          fp8.attention {{.*}} : (tensor<1x4x256x128xf8E5M2>, tensor<1x2x300x128xf8E5M2>, tensor<1x2x300x128xf8E5M2>,
// TENSOR-LABEL: func.func @causal_mask
// TENSOR:         fp8.amax %{{.*}} layout<tensor> : tensor<1x4x256x128xbf16> -> tensor<f32>
// TENSOR:         fp8.attention {{.*}} scales(%{{.*}}, %{{.*}}, %{{.*}}) scale(0.0883883461) causal : ({{.*}}, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x4x256x128xbf16>
// BAD: error: fp8-quantize-attention: block-tokens must be >= 0, got -1
func.func @causal_mask(%q: tensor<1x4x256x128xbf16>, %k: tensor<1x2x300x128xbf16>, %v: tensor<1x2x300x128xbf16>, %m: tensor<1x1x256x300xf32>) -> tensor<1x4x256x128xbf16> {
  %o = fp8.attention %q, %k, %v mask %m scale(0.0883883476) causal : (tensor<1x4x256x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x2x300x128xbf16>, tensor<1x1x256x300xf32>) -> tensor<1x4x256x128xbf16>
  return %o : tensor<1x4x256x128xbf16>
}

// -----

// Already FP8: unchanged. A dynamic sequence length takes per-tensor
// scales (a per-tensor amax covers the run's elements; block amaxes need
// static extents).
// CHECK-LABEL: func.func @fp8_and_dynamic
// CHECK:         fp8.attention %arg0, %arg0, %arg0 scales(%arg1, %arg1, %arg1) scale(1.250000e-01)
// CHECK:         %[[A:.*]] = fp8.amax %arg2 layout<tensor> : tensor<1x2x?x64xf32> -> tensor<f32>
// CHECK:         fp8.attention {{.*}} : (tensor<1x2x?x64xf8E4M3FN>, tensor<1x2x?x64xf8E4M3FN>, tensor<1x2x?x64xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x2x?x64xf32>
func.func @fp8_and_dynamic(%q8: tensor<1x2x4x64xf8E4M3FN>, %s: tensor<f32>, %x: tensor<1x2x?x64xf32>) -> (tensor<1x2x4x64xf32>, tensor<1x2x?x64xf32>) {
  %a = fp8.attention %q8, %q8, %q8 scales(%s, %s, %s) scale(0.125) : (tensor<1x2x4x64xf8E4M3FN>, tensor<1x2x4x64xf8E4M3FN>, tensor<1x2x4x64xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x64xf32>
  %b = fp8.attention %x, %x, %x scale(0.125) : (tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32>
  return %a, %b : tensor<1x2x4x64xf32>, tensor<1x2x?x64xf32>
}
