// RUN: fp8-opt %s -split-input-file --fp8-outline-attention | FileCheck %s
// RUN: fp8-opt %s -split-input-file --fp8-outline-attention=decode-kernel=false | FileCheck %s --check-prefix=NODECODE
// RUN: fp8-opt %s -split-input-file --fp8-outline-attention=decode-fp8-cache=false | FileCheck %s --check-prefix=NOCACHE

// Each fp8.attention becomes a call of a private function whose body is
// the op and whose fp8.attention dictionary describes it; ops with the
// same types and attributes share one function.
// CHECK-LABEL: func.func @two_layers
// CHECK:         %[[A:.*]] = call @__fp8_attention_0(%arg0, %arg1, %arg2)
// CHECK:         %[[B:.*]] = call @__fp8_attention_0(%[[A]], %arg1, %arg2)
// CHECK:         %[[C:.*]] = call @__fp8_attention_1(%[[B]], %arg1, %arg2, %arg3)
// CHECK:         return %[[C]]
// CHECK:       func.func private @__fp8_attention_0(%[[Q:.*]]: tensor<1x4x64x64xbf16>, %[[K:.*]]: tensor<1x2x64x64xbf16>, %[[V:.*]]: tensor<1x2x64x64xbf16>) -> tensor<1x4x64x64xbf16>
// CHECK-SAME:    attributes {fp8.attention = {causal = true, has_mask = false, scale = 1.250000e-01 : f32, sequence_major = false}}
// CHECK:         %[[O:.*]] = fp8.attention %[[Q]], %[[K]], %[[V]] scale(1.250000e-01) causal
// CHECK:         return %[[O]]
// CHECK:       func.func private @__fp8_attention_1({{.*}}, %{{.*}}: tensor<1x1x64x64xf32>) -> tensor<1x4x64x64xbf16>
// CHECK-SAME:    attributes {fp8.attention = {causal = false, has_mask = true, scale = 1.250000e-01 : f32, sequence_major = false}}
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
// CHECK-SAME:    attributes {fp8.attention = {causal = true, has_mask = false, scale = 1.250000e-01 : f32, sequence_major = false}}
// CHECK:         fp8.attention %[[Q]], %[[K]], %[[V]] scales(%[[SQ]], %[[SK]], %[[SV]]) scale(1.250000e-01) causal
func.func @fp8(%q: tensor<1x4x70x128xf8E4M3FN>, %k: tensor<1x2x70x128xf8E4M3FN>, %s: tensor<f32>) -> tensor<1x4x70x128xbf16> {
  %o = fp8.attention %q, %k, %k scales(%s, %s, %s) scale(0.125) causal : (tensor<1x4x70x128xf8E4M3FN>, tensor<1x2x70x128xf8E4M3FN>, tensor<1x2x70x128xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x4x70x128xbf16>
  return %o : tensor<1x4x70x128xbf16>
}

// -----

// The transpose to [B, Sq, Hq, Dv] that is an attention's only use folds
// into it (sequence_major): the kernel writes that layout. Another
// permutation, or a second use, keeps the transpose.
// CHECK-LABEL: func.func @sequence_major
// CHECK-NOT:     linalg.transpose
// CHECK:         %[[O:.*]] = call @__fp8_attention_0(%arg0, %arg1, %arg2) : {{.*}} -> tensor<1x64x4x32xbf16>
// CHECK:         return %[[O]]
// CHECK-LABEL: func.func @kept
// CHECK:         %[[A:.*]] = call @__fp8_attention_1(
// CHECK:         linalg.transpose ins(%[[A]] {{.*}} permutation = [0, 2, 3, 1]
// CHECK:       func.func private @__fp8_attention_0({{.*}}) -> tensor<1x64x4x32xbf16>
// CHECK-SAME:    attributes {fp8.attention = {causal = true, has_mask = false, scale = 1.250000e-01 : f32, sequence_major = true}}
// CHECK:         fp8.attention {{.*}} causal sequence_major : {{.*}} -> tensor<1x64x4x32xbf16>
// CHECK:       func.func private @__fp8_attention_1(
// CHECK-SAME:    sequence_major = false
func.func @sequence_major(%q: tensor<1x4x64x32xbf16>, %k: tensor<1x2x64x32xbf16>, %v: tensor<1x2x64x32xbf16>) -> tensor<1x64x4x32xbf16> {
  %a = fp8.attention %q, %k, %v scale(0.125) causal : (tensor<1x4x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>) -> tensor<1x4x64x32xbf16>
  %e = tensor.empty() : tensor<1x64x4x32xbf16>
  %t = linalg.transpose ins(%a : tensor<1x4x64x32xbf16>) outs(%e : tensor<1x64x4x32xbf16>) permutation = [0, 2, 1, 3]
  return %t : tensor<1x64x4x32xbf16>
}
func.func @kept(%q: tensor<1x4x64x32xbf16>, %k: tensor<1x2x64x32xbf16>, %v: tensor<1x2x64x32xbf16>) -> tensor<1x64x32x4xbf16> {
  %a = fp8.attention %q, %k, %v scale(0.125) : (tensor<1x4x64x32xbf16>, tensor<1x2x64x32xbf16>, tensor<1x2x64x32xbf16>) -> tensor<1x4x64x32xbf16>
  %e = tensor.empty() : tensor<1x64x32x4xbf16>
  %t = linalg.transpose ins(%a : tensor<1x4x64x32xbf16>) outs(%e : tensor<1x64x32x4xbf16>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x64x32x4xbf16>
}

// -----

// A decode step the split-key kernel serves (one query per head, 16-bit
// operands, head dim 64 or 128): the function also takes the splits'
// workspace, [B, Hq, splits, Dv + 2] f32 (attention::decodeAttentionSplits:
// 1 x 2 kv heads and 1000 keys -> 32 splits of 32 keys; 8 x 8 kv heads and
// 2080 keys -> 6 splits of 352: 384 CTAs, 2.5 per SM aimed at). Several
// queries, or FP8 operands, do not get one.
// decode-kernel=false (fp8-compile --attention-decode-kernel=false): no
// workspace, the FlashAttention kernel's signature.
// NODECODE-LABEL: func.func @decode
// NODECODE-NOT:     tensor.empty
// NODECODE:         call @__fp8_attention_0(%arg0, %arg1, %arg1, %arg2) :
// CHECK-LABEL: func.func @decode
// CHECK:         %[[WS:.*]] = tensor.empty() : tensor<1x8x32x130xf32>
// CHECK:         call @__fp8_attention_0(%arg0, %arg1, %arg1, %arg2, %[[WS]])
// CHECK:         %[[WS8:.*]] = tensor.empty() : tensor<8x32x6x130xf32>
// CHECK:         call @__fp8_attention_1(%arg3, %arg4, %arg4, %[[WS8]])
// CHECK:         call @__fp8_attention_2(%arg5, %arg1, %arg1, %arg6)
// CHECK:       func.func private @__fp8_attention_0({{.*}}: tensor<1x8x1x128xbf16>, {{.*}}: tensor<1x2x1000x128xbf16>, {{.*}}: tensor<1x2x1000x128xbf16>, {{.*}}: tensor<1x1x1x1000xf32>, {{.*}}: tensor<1x8x32x130xf32>) -> tensor<1x8x1x128xbf16>
// CHECK:       func.func private @__fp8_attention_2({{.*}}: tensor<1x8x2x128xbf16>, {{.*}}, {{.*}}, {{.*}}: tensor<1x1x2x1000xf32>) -> tensor<1x8x2x128xbf16>
func.func @decode(%q: tensor<1x8x1x128xbf16>, %k: tensor<1x2x1000x128xbf16>, %m: tensor<1x1x1x1000xf32>,
                  %q8: tensor<8x32x1x128xbf16>, %k8: tensor<8x8x2080x128xbf16>,
                  %q2: tensor<1x8x2x128xbf16>, %m2: tensor<1x1x2x1000xf32>)
    -> (tensor<1x8x1x128xbf16>, tensor<8x32x1x128xbf16>, tensor<1x8x2x128xbf16>) {
  %a = fp8.attention %q, %k, %k mask %m scale(0.125) : (tensor<1x8x1x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x1x1x1000xf32>) -> tensor<1x8x1x128xbf16>
  %b = fp8.attention %q8, %k8, %k8 scale(0.125) : (tensor<8x32x1x128xbf16>, tensor<8x8x2080x128xbf16>, tensor<8x8x2080x128xbf16>) -> tensor<8x32x1x128xbf16>
  %c = fp8.attention %q2, %k, %k mask %m2 scale(0.125) : (tensor<1x8x2x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x1x2x1000xf32>) -> tensor<1x8x2x128xbf16>
  return %a, %b, %c : tensor<1x8x1x128xbf16>, tensor<8x32x1x128xbf16>, tensor<1x8x2x128xbf16>
}

// -----

// A decode step over an FP8 cache (what fp8-kv-cache leaves: the cache's
// fp8.dequantize with one f32 scale, to f16, then extf/truncf to the
// query's bf16): the function absorbs the key's and the value's
// dequantization and casts and takes the E4M3 cache itself, (k8, k_scale,
// v8, v_scale, q, mask, workspace); kv_dequant lists the types after each
// step. The caller's dequantizations are gone (nothing else reads them).
// With decode-fp8-cache=false the dequantized tensors are passed.
// CHECK-LABEL: func.func @decode_cache
// CHECK-NOT:     fp8.dequantize
// CHECK:         %[[WS:.*]] = tensor.empty() : tensor<1x8x32x130xf32>
// CHECK:         call @__fp8_attention_0(%arg1, %arg2, %arg3, %arg2, %arg0, %arg4, %[[WS]])
// CHECK:       func.func private @__fp8_attention_0(%{{.*}}: tensor<1x2x1000x128xf8E4M3FN>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<1x2x1000x128xf8E4M3FN>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<1x8x1x128xbf16>, %{{.*}}: tensor<1x1x1x1000xf32>, %{{.*}}: tensor<1x8x32x130xf32>) -> tensor<1x8x1x128xbf16>
// CHECK-SAME:      fp8.attention = {causal = false, has_mask = true, kv_dequant = [f16, f32, bf16], scale = 1.250000e-01 : f32, sequence_major = false}
// CHECK:         fp8.dequantize %arg0, %arg1 layout<tensor> {{.*}} -> tensor<1x2x1000x128xf16>
// CHECK:         arith.extf
// CHECK:         arith.truncf
// CHECK:         fp8.dequantize %arg2, %arg3 layout<tensor>
// CHECK:         fp8.attention %arg4,
// NOCACHE-LABEL: func.func @decode_cache
// NOCACHE-COUNT-2: fp8.dequantize
// NOCACHE:         call @__fp8_attention_0(%arg0, %{{.*}}, %{{.*}}, %arg4, %{{.*}}) :
// NOCACHE-NOT:     kv_dequant
func.func @decode_cache(%q: tensor<1x8x1x128xbf16>, %k8: tensor<1x2x1000x128xf8E4M3FN>, %s: tensor<f32>,
                        %v8: tensor<1x2x1000x128xf8E4M3FN>, %m: tensor<1x1x1x1000xf32>) -> tensor<1x8x1x128xbf16> {
  %kd = fp8.dequantize %k8, %s layout<tensor> : tensor<1x2x1000x128xf8E4M3FN>, tensor<f32> -> tensor<1x2x1000x128xf16>
  %ke = arith.extf %kd : tensor<1x2x1000x128xf16> to tensor<1x2x1000x128xf32>
  %k = arith.truncf %ke : tensor<1x2x1000x128xf32> to tensor<1x2x1000x128xbf16>
  %vd = fp8.dequantize %v8, %s layout<tensor> : tensor<1x2x1000x128xf8E4M3FN>, tensor<f32> -> tensor<1x2x1000x128xf16>
  %ve = arith.extf %vd : tensor<1x2x1000x128xf16> to tensor<1x2x1000x128xf32>
  %v = arith.truncf %ve : tensor<1x2x1000x128xf32> to tensor<1x2x1000x128xbf16>
  %a = fp8.attention %q, %k, %v mask %m scale(0.125) : (tensor<1x8x1x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x1x1x1000xf32>) -> tensor<1x8x1x128xbf16>
  return %a : tensor<1x8x1x128xbf16>
}

// -----

// Key and value the same dequantized tensor: nothing is absorbed (one chain
// cannot join the function twice); the dequantized tensor is passed.
// CHECK-LABEL: func.func @decode_cache_shared
// CHECK:         %[[D:.*]] = fp8.dequantize
// CHECK:         call @__fp8_attention_0(%arg0, %[[K:.*]], %[[K]], %arg3, %{{.*}}) :
// CHECK-NOT:     kv_dequant
func.func @decode_cache_shared(%q: tensor<1x8x1x128xbf16>, %k8: tensor<1x2x1000x128xf8E4M3FN>, %s: tensor<f32>,
                               %m: tensor<1x1x1x1000xf32>) -> tensor<1x8x1x128xbf16> {
  %kd = fp8.dequantize %k8, %s layout<tensor> : tensor<1x2x1000x128xf8E4M3FN>, tensor<f32> -> tensor<1x2x1000x128xbf16>
  %a = fp8.attention %q, %kd, %kd mask %m scale(0.125) : (tensor<1x8x1x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x2x1000x128xbf16>, tensor<1x1x1x1000xf32>) -> tensor<1x8x1x128xbf16>
  return %a : tensor<1x8x1x128xbf16>
}
