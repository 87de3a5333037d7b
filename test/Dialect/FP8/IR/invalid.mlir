// RUN: fp8-opt %s -split-input-file -verify-diagnostics
// One test per invariant a verifier enforces.

func.func @quantize_scale_shape(%x: tensor<4x256xf32>, %s: tensor<4x3xf32>) {
  // expected-error @+1 {{scale: scale shape 4x3 does not match layout #fp8.layout<block 1x128> for data 4x256: expected 4x2}}
  %0 = fp8.quantize %x, %s layout<block 1x128> : tensor<4x256xf32>, tensor<4x3xf32> -> tensor<4x256xf8E4M3FN>
  return
}

// -----

func.func @quantize_per_tensor_needs_rank0(%x: tensor<4x256xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{expected scalar (rank 0)}}
  %0 = fp8.quantize %x, %s layout<tensor> : tensor<4x256xf32>, tensor<1xf32> -> tensor<4x256xf8E4M3FN>
  return
}

// -----

func.func @quantize_layout_rank(%x: tensor<256xf32>, %s: tensor<1xf32>) {
  // expected-error @+1 {{scale layout #fp8.layout<col> does not fit data of rank 1}}
  %0 = fp8.quantize %x, %s layout<col> : tensor<256xf32>, tensor<1xf32> -> tensor<256xf8E4M3FN>
  return
}

// -----

func.func @quantize_result_type(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values}}
  %0 = fp8.quantize %x, %s layout<tensor> : tensor<4xf32>, tensor<f32> -> tensor<4xi8>
  return
}

// -----

func.func @quantize_shapes(%x: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{all of {input, result} have same shape}}
  %0 = fp8.quantize %x, %s layout<tensor> : tensor<4xf32>, tensor<f32> -> tensor<8xf8E4M3FN>
  return
}

// -----

func.func @quantize_scale_type(%x: tensor<4xf32>, %s: tensor<f16>) {
  // expected-error @+1 {{operand #1 must be ranked tensor of 32-bit float or f8E8M0FNU type values}}
  %0 = fp8.quantize %x, %s layout<tensor> : tensor<4xf32>, tensor<f16> -> tensor<4xf8E4M3FN>
  return
}

// -----

func.func @dequantize_scale_shape(%q: tensor<64x64xf8E4M3FN>, %s: tensor<64x1xf32>) {
  // expected-error @+1 {{scale shape 64x1 does not match layout #fp8.layout<col> for data 64x64: expected 1x64}}
  %0 = fp8.dequantize %q, %s layout<col> : tensor<64x64xf8E4M3FN>, tensor<64x1xf32> -> tensor<64x64xf32>
  return
}

// -----

func.func @dequantize_input_type(%q: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type or bfloat16 type values}}
  %0 = fp8.dequantize %q, %s layout<tensor> : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return
}

// -----

func.func @amax_shape(%x: tensor<130x3xf32>) {
  // expected-error @+1 {{result: scale shape 1x1 does not match layout #fp8.layout<block 128x128> for data 130x3: expected 2x1}}
  %0 = fp8.amax %x layout<block 128x128> : tensor<130x3xf32> -> tensor<1x1xf32>
  return
}

// -----

func.func @compute_scale_hybrid(%a: tensor<f32>) {
  // expected-error @+1 {{needs a concrete format (e4m3 or e5m2)}}
  %0 = fp8.compute_scale %a recipe(#fp8.current) format(hybrid) : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @compute_scale_mx_type(%a: tensor<4x2xf32>) {
  // expected-error @+1 {{recipe #fp8.mxfp8 produces f8E8M0FNU scales, but the result is 'tensor<4x2xf32>'}}
  %0 = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e4m3) : tensor<4x2xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @compute_scale_f32_type(%a: tensor<4x2xf32>) {
  // expected-error @+1 {{recipe #fp8.block produces f32 scales}}
  %0 = fp8.compute_scale %a recipe(#fp8.block) format(e4m3) : tensor<4x2xf32> -> tensor<4x2xf8E8M0FNU>
  return
}

// -----

func.func @compute_scale_not_a_recipe(%a: tensor<f32>) {
  // expected-error @+1 {{invalid kind of attribute specified}}
  %0 = fp8.compute_scale %a recipe(#fp8.layout<tensor>) format(e4m3) : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @delayed_needs_previous(%h: tensor<16xf32>) {
  // expected-error @+1 {{delayed scaling needs the 'previous' scale}}
  %0 = fp8.compute_scale %h recipe(#fp8.delayed<history = 16>) format(e4m3) : tensor<16xf32> -> tensor<f32>
  return
}

// -----

func.func @delayed_history_length(%h: tensor<8xf32>, %p: tensor<f32>) {
  // expected-error @+1 {{amax history must have shape 16x(scale shape), got 8}}
  %0 = fp8.compute_scale %h previous %p recipe(#fp8.delayed<history = 16>) format(e4m3) : tensor<8xf32>, tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @delayed_previous_type(%h: tensor<16x2xf32>, %p: tensor<f32>) {
  // expected-error @+1 {{'previous' has type 'tensor<f32>' but the result is 'tensor<2xf32>'}}
  %0 = fp8.compute_scale %h previous %p recipe(#fp8.delayed<history = 16>) format(e4m3) : tensor<16x2xf32>, tensor<f32> -> tensor<2xf32>
  return
}

// -----

func.func @current_with_previous(%a: tensor<f32>, %p: tensor<f32>) {
  // expected-error @+1 {{'previous' is only used by delayed scaling, not #fp8.current}}
  %0 = fp8.compute_scale %a previous %p recipe(#fp8.current) format(e4m3) : tensor<f32>, tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @compute_scale_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{amax shape 4 does not match scale shape 3}}
  %0 = fp8.compute_scale %a recipe(#fp8.current) format(e5m2) : tensor<4xf32> -> tensor<3xf32>
  return
}

// -----

func.func @history_rank(%h: tensor<16xf32>, %a: tensor<2xf32>) {
  // expected-error @+1 {{history must have rank 2 ([length] + amax shape), got rank 1}}
  %0 = fp8.history_update %h, %a : tensor<16xf32>, tensor<2xf32>
  return
}

// -----

func.func @history_shape(%h: tensor<16x3xf32>, %a: tensor<2xf32>) {
  // expected-error @+1 {{history shape 16x3 does not extend amax shape 2}}
  %0 = fp8.history_update %h, %a : tensor<16x3xf32>, tensor<2xf32>
  return
}

// -----

func.func @history_length(%h: tensor<0xf32>, %a: tensor<f32>) {
  // expected-error @+1 {{history length must be at least 1}}
  %0 = fp8.history_update %h, %a : tensor<0xf32>, tensor<f32>
  return
}

// -----

func.func @matmul_rank(%a: tensor<128xf8E4M3FN>, %b: tensor<128x64xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{operands must have rank >= 2}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor>, %b, %s layout<tensor> : (tensor<128xf8E4M3FN>, tensor<f32>, tensor<128x64xf8E4M3FN>, tensor<f32>) -> tensor<64xf32>
  return
}

// -----

func.func @matmul_rhs_rank(%a: tensor<2x2x8x128xf8E4M3FN>, %b: tensor<2x128x64xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{rhs must have rank 2 (shared by every batch) or the rank of lhs (4), got 3}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor>, %b, %s layout<tensor> : (tensor<2x2x8x128xf8E4M3FN>, tensor<f32>, tensor<2x128x64xf8E4M3FN>, tensor<f32>) -> tensor<2x2x8x64xf32>
  return
}

// -----

func.func @matmul_batch(%a: tensor<2x8x128xf8E4M3FN>, %b: tensor<3x128x64xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{batch dimensions differ: lhs 2x8x128, rhs 3x128x64}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor>, %b, %s layout<tensor> : (tensor<2x8x128xf8E4M3FN>, tensor<f32>, tensor<3x128x64xf8E4M3FN>, tensor<f32>) -> tensor<2x8x64xf32>
  return
}

// -----

func.func @matmul_k(%a: tensor<8x128xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{contraction sizes differ: lhs 8x128 has K = 128, rhs 64x128 has K = 64 (rhs is K x N)}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor>, %b, %s layout<tensor> : (tensor<8x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<8x128xf32>
  return
}

// -----

func.func @matmul_result(%a: tensor<8x128xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{result shape 8x128 does not match the product shape 8x64}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor>, %b, %s layout<tensor> transpose_rhs : (tensor<8x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<8x128xf32>
  return
}

// -----

func.func @matmul_scale(%a: tensor<8x128xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>, %r: tensor<8x2xf32>) {
  // expected-error @+1 {{lhs scale: scale shape 8x2 does not match layout #fp8.layout<row> for data 8x128: expected 8x1}}
  %0 = fp8.scaled_matmul %a, %r layout<row>, %b, %s layout<tensor> transpose_rhs : (tensor<8x128xf8E4M3FN>, tensor<8x2xf32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @matmul_bias(%a: tensor<8x128xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<8xf32>) {
  // expected-error @+1 {{bias must have shape [N] = [64] or the result shape, got 8}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor>, %b, %s layout<tensor> bias %bias transpose_rhs : (tensor<8x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<8xf32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @matmul_result_type(%a: tensor<8x128xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor>, %b, %s layout<tensor> transpose_rhs : (tensor<8x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<8x64xf8E4M3FN>
  return
}

// -----

func.func @transpose_perm_size(%q: tensor<4x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{permutation has 3 entries for an input of rank 2}}
  %0:2 = fp8.transpose %q, %s layout<tensor> permutation = [1, 0, 2] to layout<tensor> : tensor<4x8xf8E4M3FN>, tensor<f32> -> tensor<8x4xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @transpose_not_perm(%q: tensor<4x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{permutation must be a permutation of [0, rank)}}
  %0:2 = fp8.transpose %q, %s layout<tensor> permutation = [1, 1] to layout<tensor> : tensor<4x8xf8E4M3FN>, tensor<f32> -> tensor<8x4xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @transpose_shape(%q: tensor<4x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{result shape 4x8 is not the input shape 4x8 permuted}}
  %0:2 = fp8.transpose %q, %s layout<tensor> permutation = [1, 0] to layout<tensor> : tensor<4x8xf8E4M3FN>, tensor<f32> -> tensor<4x8xf8E4M3FN>, tensor<f32>
  return
}

// -----

func.func @transpose_result_scale(%q: tensor<4x8xf8E4M3FN>, %s: tensor<4x1xf32>) {
  // expected-error @+1 {{result scale: scale shape 4x1 does not match layout #fp8.layout<col> for data 8x4: expected 1x4}}
  %0:2 = fp8.transpose %q, %s layout<row> permutation = [1, 0] to layout<col> : tensor<4x8xf8E4M3FN>, tensor<4x1xf32> -> tensor<8x4xf8E4M3FN>, tensor<4x1xf32>
  return
}

// -----

func.func @transpose_pass_through_types(%q: tensor<4x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{a transpose that keeps the scale layout moves values unchanged: element types must match}}
  %0:2 = fp8.transpose %q, %s layout<tensor> permutation = [1, 0] to layout<tensor> : tensor<4x8xf8E4M3FN>, tensor<f32> -> tensor<8x4xf8E5M2>, tensor<f32>
  return
}

// -----

func.func @transpose_needs_recipe(%q: tensor<256x256xf8E4M3FN>, %s: tensor<256x2xf32>) {
  // expected-error @+1 {{layout #fp8.layout<block 1x128> does not survive this permutation as #fp8.layout<block 1x128>: the values must be re-quantized, so a recipe is required}}
  %0:2 = fp8.transpose %q, %s layout<block 1x128> permutation = [1, 0] to layout<block 1x128> : tensor<256x256xf8E4M3FN>, tensor<256x2xf32> -> tensor<256x256xf8E4M3FN>, tensor<256x2xf32>
  return
}

// -----

func.func @transpose_delayed_recipe(%q: tensor<256x256xf8E4M3FN>, %s: tensor<256x2xf32>) {
  // expected-error @+1 {{re-quantization needs a recipe that scales from the tensor itself}}
  %0:2 = fp8.transpose %q, %s layout<block 1x128> permutation = [1, 0] to layout<block 1x128> recipe(#fp8.delayed) : tensor<256x256xf8E4M3FN>, tensor<256x2xf32> -> tensor<256x256xf8E4M3FN>, tensor<256x2xf32>
  return
}

// -----

func.func @transpose_recipe_scale_type(%q: tensor<64x64xf8E4M3FN>, %s: tensor<64x2xf8E8M0FNU>) {
  // expected-error @+1 {{recipe #fp8.block does not produce scales of type 'f8E8M0FNU'}}
  %0:2 = fp8.transpose %q, %s layout<block 1x32> permutation = [1, 0] to layout<block 1x32> recipe(#fp8.block) : tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU> -> tensor<64x64xf8E4M3FN>, tensor<64x2xf8E8M0FNU>
  return
}

// -----

func.func @matmul_m_major_shape(%a: tensor<200x256xf8E4M3FN>, %b: tensor<64x256xf8E4M3FN>, %s: tensor<f32>, %sa: tensor<2x200xf32>) {
  // expected-error @+1 {{m_major(16) lhs scale must have shape 2x208 (the layout's 200x2 transposed, M padded), got 2x200}}
  %0 = fp8.scaled_matmul %a, %sa layout<block 1x128> m_major(16), %b, %s layout<tensor> transpose_rhs : (tensor<200x256xf8E4M3FN>, tensor<2x200xf32>, tensor<64x256xf8E4M3FN>, tensor<f32>) -> tensor<200x64xf32>
  return
}

// -----

func.func @matmul_m_major_tensor(%a: tensor<8x128xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{m_major needs lhs scales that vary along M (a row or block layout), not per-tensor}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor> m_major(4), %b, %s layout<tensor> transpose_rhs : (tensor<8x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @matmul_m_major_zero(%a: tensor<8x128xf8E4M3FN>, %b: tensor<64x128xf8E4M3FN>, %s: tensor<f32>, %sa: tensor<1x8xf32>) {
  // expected-error @+1 {{attribute 'lhs_scale_m_major' failed to satisfy constraint}}
  %0 = fp8.scaled_matmul %a, %sa layout<row> m_major(0), %b, %s layout<tensor> transpose_rhs : (tensor<8x128xf8E4M3FN>, tensor<1x8xf32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @external_weight_length() -> tensor<4x8xf16> {
  // expected-error @+1 {{'fp8.external_weight' op length 63 bytes, but 'tensor<4x8xf16>' holds 64}}
  %w = fp8.external_weight "w" from "model.data" [0, 63] : tensor<4x8xf16>
  return %w : tensor<4x8xf16>
}

// -----

func.func @external_weight_bool() -> tensor<8xi1> {
  // expected-error @+1 {{'fp8.external_weight' op element type 'i1' has no byte-per-element file layout}}
  %w = fp8.external_weight "w" from "model.data" [0, 8] : tensor<8xi1>
  return %w : tensor<8xi1>
}

// -----

func.func @external_weight_negative_offset() -> tensor<8xf32> {
  // expected-error @+1 {{'fp8.external_weight' op attribute 'offset' failed to satisfy constraint}}
  %w = fp8.external_weight "w" from "model.data" [-4, 32] : tensor<8xf32>
  return %w : tensor<8xf32>
}

// -----

func.func @packed_weight_delayed() -> (tensor<8x4xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{'fp8.packed_weight' op weights are quantized with a recipe that scales from the tensor itself (current, block or mxfp8), not #fp8.delayed}}
  %q, %s = fp8.packed_weight "w" from "model.data" [0, 128] : tensor<4x8xf32> layout<tensor> recipe(#fp8.delayed) format(e4m3) permutation = [1, 0] -> tensor<8x4xf8E4M3FN>, tensor<f32>
  return %q, %s : tensor<8x4xf8E4M3FN>, tensor<f32>
}

// -----

func.func @packed_weight_format() -> (tensor<4x8xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{'fp8.packed_weight' op format e5m2 but the result is 'tensor<4x8xf8E4M3FN>'}}
  %q, %s = fp8.packed_weight "w" from "model.data" [0, 128] : tensor<4x8xf32> layout<tensor> recipe(#fp8.current) format(e5m2) -> tensor<4x8xf8E4M3FN>, tensor<f32>
  return %q, %s : tensor<4x8xf8E4M3FN>, tensor<f32>
}

// -----

func.func @packed_weight_mx_scales() -> (tensor<64x32xf8E4M3FN>, tensor<2x32xf32>) {
  // expected-error @+1 {{'fp8.packed_weight' op recipe #fp8.mxfp8 produces f8E8M0FNU scales, not 'f32'}}
  %q, %s = fp8.packed_weight "w" from "model.data" [0, 8192] : tensor<64x32xf32> layout<block 32x1> recipe(#fp8.mxfp8) format(e4m3) -> tensor<64x32xf8E4M3FN>, tensor<2x32xf32>
  return %q, %s : tensor<64x32xf8E4M3FN>, tensor<2x32xf32>
}

// -----

func.func @packed_weight_scale_shape() -> (tensor<32x64xf8E4M3FN>, tensor<2x32xf8E8M0FNU>) {
  // expected-error @+1 {{'fp8.packed_weight' op scale must have shape 32x2, got 2x32}}
  %q, %s = fp8.packed_weight "w" from "model.data" [0, 8192] : tensor<64x32xf32> layout<block 32x1> recipe(#fp8.mxfp8) format(e4m3) permutation = [1, 0] -> tensor<32x64xf8E4M3FN>, tensor<2x32xf8E8M0FNU>
  return %q, %s : tensor<32x64xf8E4M3FN>, tensor<2x32xf8E8M0FNU>
}

// -----

func.func @packed_weight_smaller() -> (tensor<8x3xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{'fp8.packed_weight' op result shape 8x3 must be the (permuted) weight shape 8x4, or larger (padded)}}
  %q, %s = fp8.packed_weight "w" from "model.data" [0, 128] : tensor<4x8xf32> layout<tensor> recipe(#fp8.current) format(e4m3) permutation = [1, 0] -> tensor<8x3xf8E4M3FN>, tensor<f32>
  return %q, %s : tensor<8x3xf8E4M3FN>, tensor<f32>
}

// -----

func.func @packed_weight_permutation() -> (tensor<8x4xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{'fp8.packed_weight' op permutation must be a permutation of [0, 2)}}
  %q, %s = fp8.packed_weight "w" from "model.data" [0, 128] : tensor<4x8xf32> layout<tensor> recipe(#fp8.current) format(e4m3) permutation = [1, 1] -> tensor<8x4xf8E4M3FN>, tensor<f32>
  return %q, %s : tensor<8x4xf8E4M3FN>, tensor<f32>
}

// -----

func.func @packed_weight_length() -> (tensor<4x8xf8E4M3FN>, tensor<f32>) {
  // expected-error @+1 {{'fp8.packed_weight' op length 64 bytes, but 'tensor<4x8xf32>' holds 128}}
  %q, %s = fp8.packed_weight "w" from "model.data" [0, 64] : tensor<4x8xf32> layout<tensor> recipe(#fp8.current) format(e4m3) -> tensor<4x8xf8E4M3FN>, tensor<f32>
  return %q, %s : tensor<4x8xf8E4M3FN>, tensor<f32>
}

// -----

func.func @scaled_matmul_mixed_bf16_fp8(%a: tensor<8x128xbf16>, %s: tensor<f32>, %b: tensor<128x64xf8E4M3FN>) {
  // expected-error @+1 {{operands must both be FP8 or both be BF16}}
  %0 = fp8.scaled_matmul %a, %s layout<tensor>, %b, %s layout<tensor> : (tensor<8x128xbf16>, tensor<f32>, tensor<128x64xf8E4M3FN>, tensor<f32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @scaled_matmul_bf16_blocks(%a: tensor<8x128xbf16>, %sa: tensor<8x1xf32>, %b: tensor<128x64xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{BF16 operands take per-tensor f32 scales}}
  %0 = fp8.scaled_matmul %a, %sa layout<block 1x128>, %b, %s layout<tensor> : (tensor<8x128xbf16>, tensor<8x1xf32>, tensor<128x64xbf16>, tensor<f32>) -> tensor<8x64xf32>
  return
}

// -----

func.func @attention_rank(%q: tensor<8x16x64xf32>, %k: tensor<8x16x64xf32>) {
  // expected-error @+1 {{query must have rank 4 ([B, H, S, D]), got 8x16x64}}
  %0 = fp8.attention %q, %k, %k scale(1.0) : (tensor<8x16x64xf32>, tensor<8x16x64xf32>, tensor<8x16x64xf32>) -> tensor<8x16x64xf32>
  return
}

// -----

func.func @attention_types(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xbf16>) {
  // expected-error @+1 {{query, key and value must have one element type, got 'f32', 'bf16', 'bf16'}}
  %0 = fp8.attention %q, %k, %k scale(1.0) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_fp8(%q: tensor<1x2x4x8xf8E4M3FN>) {
  // expected-error @+1 {{FP8 query, key and value need dequantization scales (scales(%sq, %sk, %sv))}}
  %0 = fp8.attention %q, %q, %q scale(1.0) : (tensor<1x2x4x8xf8E4M3FN>, tensor<1x2x4x8xf8E4M3FN>, tensor<1x2x4x8xf8E4M3FN>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_fp8_scale_rank(%q: tensor<1x2x4x8xf8E4M3FN>, %s: tensor<f32>, %r: tensor<2xf32>) {
  // expected-error @+1 {{key scale: scale shape 2 does not match layout #fp8.layout<tensor> for data 1x2x4x8: expected scalar (rank 0)}}
  %0 = fp8.attention %q, %q, %q scales(%s, %r, %s) scale(1.0) : (tensor<1x2x4x8xf8E4M3FN>, tensor<1x2x4x8xf8E4M3FN>, tensor<1x2x4x8xf8E4M3FN>, tensor<f32>, tensor<2xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_fp8_block_shape(%q: tensor<1x2x200x64xf8E4M3FN>, %k: tensor<1x1x300x64xf8E4M3FN>, %sq: tensor<1x2x2x1xf32>, %sk: tensor<1x1x2x1xf32>) {
  // expected-error @+1 {{key scale: scale shape 1x1x2x1 does not match layout #fp8.layout<block 128x64> for data 1x1x300x64: expected 1x1x3x1}}
  %0 = fp8.attention %q, %k, %k scales(%sq, %sk, %sk) scale_layout<block 128x64> scale(1.0) : (tensor<1x2x200x64xf8E4M3FN>, tensor<1x1x300x64xf8E4M3FN>, tensor<1x1x300x64xf8E4M3FN>, tensor<1x2x2x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>) -> tensor<1x2x200x64xf32>
  return
}

// -----

func.func @attention_fp8_block_width(%q: tensor<1x2x128x64xf8E4M3FN>, %s: tensor<1x2x1x2xf32>) {
  // expected-error @+1 {{scale_layout must be tensor or block TxD with D covering the head dimensions (static), got #fp8.layout<block 128x32>}}
  %0 = fp8.attention %q, %q, %q scales(%s, %s, %s) scale_layout<block 128x32> scale(1.0) : (tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x128x64xf8E4M3FN>, tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x128x64xf32>
  return
}

// -----

func.func @attention_fp8_block_dynamic(%q: tensor<1x2x?x64xf8E4M3FN>, %s: tensor<1x2x?x1xf32>) {
  // expected-error @+1 {{scale_layout #fp8.layout<block 128x64> needs static sequence lengths and head dims; use per-tensor scales}}
  %0 = fp8.attention %q, %q, %q scales(%s, %s, %s) scale_layout<block 128x64> scale(1.0) : (tensor<1x2x?x64xf8E4M3FN>, tensor<1x2x?x64xf8E4M3FN>, tensor<1x2x?x64xf8E4M3FN>, tensor<1x2x?x1xf32>, tensor<1x2x?x1xf32>, tensor<1x2x?x1xf32>) -> tensor<1x2x?x64xf32>
  return
}

// -----

func.func @attention_scales_bf16(%q: tensor<1x2x4x8xbf16>, %s: tensor<f32>) {
  // expected-error @+1 {{dequantization scales apply to FP8 operands only, got 'bf16'}}
  %0 = fp8.attention %q, %q, %q scales(%s, %s, %s) scale(1.0) : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_fp8_mixed(%q: tensor<1x2x4x8xf8E4M3FN>, %k: tensor<1x2x4x8xf8E5M2>, %s: tensor<f32>) {
  // expected-error @+1 {{query, key and value must have one element type, got 'f8E4M3FN', 'f8E5M2', 'f8E5M2'}}
  %0 = fp8.attention %q, %k, %k scales(%s, %s, %s) scale(1.0) : (tensor<1x2x4x8xf8E4M3FN>, tensor<1x2x4x8xf8E5M2>, tensor<1x2x4x8xf8E5M2>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_batch(%q: tensor<2x2x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{batch sizes differ: query 2x2x4x8, key 1x2x4x8, value 1x2x4x8}}
  %0 = fp8.attention %q, %k, %k scale(1.0) : (tensor<2x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return
}

// -----

func.func @attention_kv_heads(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x1x4x8xf32>) {
  // expected-error @+1 {{key and value head counts differ}}
  %0 = fp8.attention %q, %k, %v scale(1.0) : (tensor<1x4x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @attention_kv_length(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{key and value sequence lengths differ}}
  %0 = fp8.attention %q, %k, %v scale(1.0) : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @attention_head_size(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x16xf32>) {
  // expected-error @+1 {{query and key head sizes differ}}
  %0 = fp8.attention %q, %k, %k scale(1.0) : (tensor<1x2x4x8xf32>, tensor<1x2x4x16xf32>, tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  return
}

// -----

func.func @attention_groups(%q: tensor<1x6x4x8xf32>, %k: tensor<1x4x4x8xf32>) {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  %0 = fp8.attention %q, %k, %k scale(1.0) : (tensor<1x6x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x6x4x8xf32>
  return
}

// -----

func.func @attention_dynamic_heads(%q: tensor<1x?x4x8xf32>, %k: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{head counts must be static}}
  %0 = fp8.attention %q, %k, %k scale(1.0) : (tensor<1x?x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x?x4x8xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x16xf32>) {
  // expected-error @+1 {{result shape 1x4x4x8 must be [B, Hq, Sq, Dv] = 1x4x4x16}}
  %0 = fp8.attention %q, %k, %v scale(1.0) : (tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x16xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @attention_mask_shape(%q: tensor<1x4x4x8xf32>, %k: tensor<1x2x6x8xf32>, %m: tensor<1x1x4x4xf32>) {
  // expected-error @+1 {{mask 1x1x4x4 must have rank 4 and broadcast to the scores [B, Hq, Sq, Skv] = 1x4x4x6}}
  %0 = fp8.attention %q, %k, %k mask %m scale(1.0) : (tensor<1x4x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<1x4x4x8xf32>, %m: tensor<4x4xf32>) {
  // expected-error @+1 {{mask 4x4 must have rank 4}}
  %0 = fp8.attention %q, %q, %q mask %m scale(1.0) : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<4x4xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<1x4x4x8xf32>) {
  // expected-error @+1 {{scale must be finite}}
  %0 = fp8.attention %q, %q, %q scale(0x7F800000) : (tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>, tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return
}

// -----

func.func @attention_sequence_major(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) {
  // expected-error @below {{result shape 1x4x8x16 must be [B, Sq, Hq, Dv] = 1x8x4x16}}
  %0 = fp8.attention %q, %k, %k scale(1.0) sequence_major : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
  return
}
