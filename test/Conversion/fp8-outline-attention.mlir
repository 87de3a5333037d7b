// RUN: fp8-opt %s -split-input-file --fp8-outline-attention | FileCheck %s

// Each fp8.attention becomes a call of a private function whose body is
// the op and whose fp8.attention dictionary describes it; ops with the
// same types and attributes share one function.
// CHECK-LABEL: func.func @two_layers
// CHECK:         %[[A:.*]] = call @__fp8_attention_0(%arg0, %arg1, %arg2)
// CHECK:         %[[B:.*]] = call @__fp8_attention_0(%[[A]], %arg1, %arg2)
// CHECK:         %[[C:.*]] = call @__fp8_attention_1(%[[B]], %arg1, %arg2, %arg3)
// CHECK:         return %[[C]]
// CHECK:       func.func private @__fp8_attention_0(%[[Q:.*]]: tensor<1x4x64x64xbf16>, %[[K:.*]]: tensor<1x2x64x64xbf16>, %[[V:.*]]: tensor<1x2x64x64xbf16>) -> tensor<1x4x64x64xbf16>
// CHECK-SAME:    attributes {fp8.attention = {causal = true, has_mask = false, scale = 1.250000e-01 : f32}}
// CHECK:         %[[O:.*]] = fp8.attention %[[Q]], %[[K]], %[[V]] scale(1.250000e-01) causal
// CHECK:         return %[[O]]
// CHECK:       func.func private @__fp8_attention_1({{.*}}, %{{.*}}: tensor<1x1x64x64xf32>) -> tensor<1x4x64x64xbf16>
// CHECK-SAME:    attributes {fp8.attention = {causal = false, has_mask = true, scale = 1.250000e-01 : f32}}
func.func @two_layers(%q: tensor<1x4x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>, %m: tensor<1x1x64x64xf32>) -> tensor<1x4x64x64xbf16> {
  %a = fp8.attention %q, %k, %v scale(0.125) causal : (tensor<1x4x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x4x64x64xbf16>
  %b = fp8.attention %a, %k, %v scale(0.125) causal : (tensor<1x4x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<1x4x64x64xbf16>
  %c = fp8.attention %b, %k, %v mask %m scale(0.125) : (tensor<1x4x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x1x64x64xf32>) -> tensor<1x4x64x64xbf16>
  return %c : tensor<1x4x64x64xbf16>
}

// -----

// FP8 operands: the function also takes the three scales and, as its last
// argument, the kernel's workspace -- v K-major, [B, Hkv, Dv, Skv rounded
// up to 32] of v's type -- which the caller allocates (tensor.empty) and
// the body (the op) does not read.
// CHECK-LABEL: func.func @fp8
// CHECK:         %[[WS:.*]] = tensor.empty() : tensor<1x2x128x96xf8E4M3FN>
// CHECK:         %[[O:.*]] = call @__fp8_attention_0(%arg0, %arg1, %arg1, %arg2, %arg2, %arg2, %[[WS]])
// CHECK:       func.func private @__fp8_attention_0(%[[Q:.*]]: tensor<1x4x70x128xf8E4M3FN>, %[[K:.*]]: tensor<1x2x70x128xf8E4M3FN>, %[[V:.*]]: tensor<1x2x70x128xf8E4M3FN>, %[[SQ:.*]]: tensor<f32>, %[[SK:.*]]: tensor<f32>, %[[SV:.*]]: tensor<f32>, %{{.*}}: tensor<1x2x128x96xf8E4M3FN>) -> tensor<1x4x70x128xbf16>
// CHECK-SAME:    attributes {fp8.attention = {causal = true, has_mask = false, scale = 1.250000e-01 : f32}}
// CHECK:         fp8.attention %[[Q]], %[[K]], %[[V]] scales(%[[SQ]], %[[SK]], %[[SV]]) scale(1.250000e-01) causal
func.func @fp8(%q: tensor<1x4x70x128xf8E4M3FN>, %k: tensor<1x2x70x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<1x4x70x128xbf16> {
  %o = fp8.attention %q, %k, %k scales(%s, %s, %s) scale(0.125) causal : (tensor<1x4x70x128xf8E4M3FN>, tensor<1x2x70x128xf8E4M3FN>, tensor<1x2x70x128xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x4x70x128xbf16>
  return %o : tensor<1x4x70x128xbf16>
}
