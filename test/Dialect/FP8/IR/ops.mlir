// RUN: fp8-opt %s | FileCheck %s
// RUN: fp8-opt %s | fp8-opt | FileCheck %s
// RUN: fp8-opt %s --mlir-print-op-generic | fp8-opt | FileCheck %s

// CHECK-LABEL: func @quantize_layouts
func.func @quantize_layouts(%x: tensor<4x256xf32>, %t: tensor<f32>, %r: tensor<4x1xf32>,
                            %c: tensor<1x256xf32>, %b: tensor<4x2xf32>, %e: tensor<4x8xf8E8M0FNU>,
                            %h: tensor<4x256xbf16>) {
  // CHECK: fp8.quantize %{{.*}}, %{{.*}} layout<tensor> : tensor<4x256xf32>, tensor<f32> -> tensor<4x256xf8E4M3FN>
  %0 = fp8.quantize %x, %t layout<tensor> : tensor<4x256xf32>, tensor<f32> -> tensor<4x256xf8E4M3FN>
  // CHECK: fp8.quantize %{{.*}}, %{{.*}} layout<row> : tensor<4x256xf32>, tensor<4x1xf32> -> tensor<4x256xf8E5M2>
  %1 = fp8.quantize %x, %r layout<row> : tensor<4x256xf32>, tensor<4x1xf32> -> tensor<4x256xf8E5M2>
  // CHECK: fp8.quantize %{{.*}}, %{{.*}} layout<col> : tensor<4x256xf32>, tensor<1x256xf32> -> tensor<4x256xf8E4M3FN>
  %2 = fp8.quantize %x, %c layout<col> : tensor<4x256xf32>, tensor<1x256xf32> -> tensor<4x256xf8E4M3FN>
  // CHECK: fp8.quantize %{{.*}}, %{{.*}} layout<block 1x128> : tensor<4x256xf32>, tensor<4x2xf32> -> tensor<4x256xf8E4M3FN>
  %3 = fp8.quantize %x, %b layout<block 1x128> : tensor<4x256xf32>, tensor<4x2xf32> -> tensor<4x256xf8E4M3FN>
  // CHECK: fp8.quantize %{{.*}}, %{{.*}} layout<block 32> : tensor<4x256xf32>, tensor<4x8xf8E8M0FNU> -> tensor<4x256xf8E4M3FN>
  %4 = fp8.quantize %x, %e layout<block 32> : tensor<4x256xf32>, tensor<4x8xf8E8M0FNU> -> tensor<4x256xf8E4M3FN>
  // CHECK: fp8.quantize %{{.*}}, %{{.*}} layout<tensor> : tensor<4x256xbf16>, tensor<f32> -> tensor<4x256xf8E4M3FN>
  %5 = fp8.quantize %h, %t layout<tensor> : tensor<4x256xbf16>, tensor<f32> -> tensor<4x256xf8E4M3FN>
  return
}

// CHECK-LABEL: func @dequantize
func.func @dequantize(%q: tensor<4x256xf8E4M3FN>, %b: tensor<4x2xf32>, %e: tensor<4x8xf8E8M0FNU>) {
  // CHECK: fp8.dequantize %{{.*}}, %{{.*}} layout<block 1x128> : tensor<4x256xf8E4M3FN>, tensor<4x2xf32> -> tensor<4x256xf32>
  %0 = fp8.dequantize %q, %b layout<block 1x128> : tensor<4x256xf8E4M3FN>, tensor<4x2xf32> -> tensor<4x256xf32>
  // CHECK: fp8.dequantize %{{.*}}, %{{.*}} layout<block 1x32> : tensor<4x256xf8E4M3FN>, tensor<4x8xf8E8M0FNU> -> tensor<4x256xf16>
  %1 = fp8.dequantize %q, %e layout<block 1x32> : tensor<4x256xf8E4M3FN>, tensor<4x8xf8E8M0FNU> -> tensor<4x256xf16>
  return
}

// CHECK-LABEL: func @amax_and_scales
func.func @amax_and_scales(%x: tensor<3x130xf32>, %h: tensor<16x3x2xf32>, %p: tensor<3x2xf32>, %d: tensor<?x64xf32>) {
  // Partial blocks: 130 = 128 + 2.
  // CHECK: fp8.amax %{{.*}} layout<block 1x128> : tensor<3x130xf32> -> tensor<3x2xf32>
  %a = fp8.amax %x layout<block 1x128> : tensor<3x130xf32> -> tensor<3x2xf32>
  // CHECK: fp8.amax %{{.*}} layout<row> : tensor<?x64xf32> -> tensor<?x1xf32>
  %ad = fp8.amax %d layout<row> : tensor<?x64xf32> -> tensor<?x1xf32>
  // CHECK: fp8.compute_scale %{{.*}} recipe(#fp8.current) format(e4m3) : tensor<3x2xf32> -> tensor<3x2xf32>
  %s0 = fp8.compute_scale %a recipe(#fp8.current) format(e4m3) : tensor<3x2xf32> -> tensor<3x2xf32>
  // CHECK: fp8.compute_scale %{{.*}} recipe(#fp8.block) format(e5m2) : tensor<3x2xf32> -> tensor<3x2xf32>
  %s1 = fp8.compute_scale %a recipe(#fp8.block) format(e5m2) : tensor<3x2xf32> -> tensor<3x2xf32>
  // CHECK: fp8.compute_scale %{{.*}} recipe(#fp8.mxfp8<rounding = floor>) format(e4m3) : tensor<3x2xf32> -> tensor<3x2xf8E8M0FNU>
  %s2 = fp8.compute_scale %a recipe(#fp8.mxfp8<rounding = floor>) format(e4m3) : tensor<3x2xf32> -> tensor<3x2xf8E8M0FNU>
  // CHECK: fp8.compute_scale %{{.*}} previous %{{.*}} recipe(#fp8.delayed<history = 16>) format(e4m3) : tensor<16x3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  %s3 = fp8.compute_scale %h previous %p recipe(#fp8.delayed<history = 16>) format(e4m3) : tensor<16x3x2xf32>, tensor<3x2xf32> -> tensor<3x2xf32>
  // CHECK: fp8.history_update %{{.*}}, %{{.*}} : tensor<16x3x2xf32>, tensor<3x2xf32>
  %h2 = fp8.history_update %h, %a : tensor<16x3x2xf32>, tensor<3x2xf32>
  return
}

// CHECK-LABEL: func @matmuls
func.func @matmuls(%a: tensor<2x32x128xf8E4M3FN>, %sa: tensor<f32>, %w: tensor<64x128xf8E4M3FN>,
                   %sw: tensor<f32>, %b: tensor<2x128x64xf8E5M2>, %bias: tensor<64xbf16>,
                   %ra: tensor<2x32x1xf32>, %cw: tensor<64x1xf32>) {
  // CHECK: fp8.scaled_matmul %{{.*}}, %{{.*}} layout<tensor>, %{{.*}}, %{{.*}} layout<tensor> transpose_rhs : (tensor<2x32x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<2x32x64xf32>
  %0 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<2x32x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<2x32x64xf32>
  // Hybrid operands (E4M3 x E5M2), batched rhs, bias and an epilogue.
  // CHECK: fp8.scaled_matmul {{.*}} bias %{{.*}} epilogue(silu) : (tensor<2x32x128xf8E4M3FN>, tensor<2x32x1xf32>, tensor<2x128x64xf8E5M2>, tensor<f32>, tensor<64xbf16>) -> tensor<2x32x64xbf16>
  %1 = fp8.scaled_matmul %a, %ra layout<row>, %b, %sw layout<tensor> bias %bias epilogue(silu)
      : (tensor<2x32x128xf8E4M3FN>, tensor<2x32x1xf32>, tensor<2x128x64xf8E5M2>, tensor<f32>, tensor<64xbf16>) -> tensor<2x32x64xbf16>
  // The default epilogue is not printed.
  // CHECK: fp8.scaled_matmul {{.*}} layout<row> transpose_rhs : (
  %2 = fp8.scaled_matmul %a, %ra layout<row>, %w, %cw layout<row> transpose_rhs epilogue(none)
      : (tensor<2x32x128xf8E4M3FN>, tensor<2x32x1xf32>, tensor<64x128xf8E4M3FN>, tensor<64x1xf32>) -> tensor<2x32x64xf16>
  return
}

// M-major lhs scales: [batch, Kb, align(Mb, 4)] for 1x64 blocks over 2x30x128.
// CHECK-LABEL: func @matmul_m_major
// CHECK: fp8.scaled_matmul %{{.*}}, %{{.*}} layout<block 1x64> m_major(4), %{{.*}}, %{{.*}} layout<tensor> transpose_rhs : (tensor<2x30x128xf8E4M3FN>, tensor<2x2x32xf32>,
func.func @matmul_m_major(%a: tensor<2x30x128xf8E4M3FN>, %sa: tensor<2x2x32xf32>,
                          %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>) {
  %0 = fp8.scaled_matmul %a, %sa layout<block 1x64> m_major(4), %w, %sw layout<tensor> transpose_rhs
      : (tensor<2x30x128xf8E4M3FN>, tensor<2x2x32xf32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<2x30x64xf32>
  return
}

// CHECK-LABEL: func @transposes
func.func @transposes(%q: tensor<256x512xf8E4M3FN>, %t: tensor<f32>, %r: tensor<256x1xf32>, %b: tensor<256x4xf32>) {
  // Per-tensor scales pass through.
  // CHECK: fp8.transpose %{{.*}}, %{{.*}} layout<tensor> permutation = [1, 0] to layout<tensor> :
  %0:2 = fp8.transpose %q, %t layout<tensor> permutation = [1, 0] to layout<tensor>
      : tensor<256x512xf8E4M3FN>, tensor<f32> -> tensor<512x256xf8E4M3FN>, tensor<f32>
  // Rows become columns: also a pass-through.
  // CHECK: fp8.transpose %{{.*}}, %{{.*}} layout<row> permutation = [1, 0] to layout<col> :
  %1:2 = fp8.transpose %q, %r layout<row> permutation = [1, 0] to layout<col>
      : tensor<256x512xf8E4M3FN>, tensor<256x1xf32> -> tensor<512x256xf8E4M3FN>, tensor<1x256xf32>
  // 1x128 blocks along the old inner dimension must be re-quantized.
  // CHECK: fp8.transpose %{{.*}}, %{{.*}} layout<block 1x128> permutation = [1, 0] to layout<block 1x128> recipe(#fp8.block) :
  %2:2 = fp8.transpose %q, %b layout<block 1x128> permutation = [1, 0] to layout<block 1x128> recipe(#fp8.block)
      : tensor<256x512xf8E4M3FN>, tensor<256x4xf32> -> tensor<512x256xf8E4M3FN>, tensor<512x2xf32>
  return
}

// Amax histories persist in ml_program globals.
// CHECK-LABEL: ml_program.global private mutable @hist
ml_program.global private mutable @hist(dense<0.0> : tensor<4xf32>) : tensor<4xf32>
// CHECK-LABEL: func @delayed_step
func.func @delayed_step(%x: tensor<8x8xf32>, %prev: tensor<f32>) -> tensor<8x8xf8E4M3FN> {
  %h = ml_program.global_load @hist : tensor<4xf32>
  // CHECK: fp8.compute_scale %{{.*}} previous %{{.*}} recipe(#fp8.delayed<history = 4, algo = most_recent, margin = 2, pow2 = true>)
  %s = fp8.compute_scale %h previous %prev recipe(#fp8.delayed<history = 4, algo = most_recent, margin = 2, pow2 = true>) format(e4m3)
      : tensor<4xf32>, tensor<f32> -> tensor<f32>
  %q = fp8.quantize %x, %s layout<tensor> : tensor<8x8xf32>, tensor<f32> -> tensor<8x8xf8E4M3FN>
  %a = fp8.amax %x layout<tensor> : tensor<8x8xf32> -> tensor<f32>
  %h2 = fp8.history_update %h, %a : tensor<4xf32>, tensor<f32>
  ml_program.global_store @hist = %h2 : tensor<4xf32>
  return %q : tensor<8x8xf8E4M3FN>
}

// CHECK-LABEL: func @attention
func.func @attention(%q: tensor<2x8x16x64xbf16>, %k: tensor<2x2x24x64xbf16>, %v: tensor<2x2x24x32xbf16>,
                     %m: tensor<2x1x16x24xf32>, %qd: tensor<1x4x?x64xf32>, %kd: tensor<1x4x?x64xf32>,
                     %md: tensor<1x1x1x?xf16>) {
  // Grouped-query heads (8 query heads on 2 kv heads), a mask, a result
  // type other than the operands'.
  // CHECK: fp8.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale(1.250000e-01) : (tensor<2x8x16x64xbf16>, tensor<2x2x24x64xbf16>, tensor<2x2x24x32xbf16>, tensor<2x1x16x24xf32>) -> tensor<2x8x16x32xf32>
  %0 = fp8.attention %q, %k, %v mask %m scale(0.125) : (tensor<2x8x16x64xbf16>, tensor<2x2x24x64xbf16>, tensor<2x2x24x32xbf16>, tensor<2x1x16x24xf32>) -> tensor<2x8x16x32xf32>
  // Causal, no mask.
  // CHECK: fp8.attention %{{.*}}, %{{.*}}, %{{.*}} scale(1.250000e-01) causal : (tensor<2x8x16x64xbf16>, tensor<2x2x24x64xbf16>, tensor<2x2x24x32xbf16>) -> tensor<2x8x16x32xbf16>
  %1 = fp8.attention %q, %k, %v scale(0.125) causal : (tensor<2x8x16x64xbf16>, tensor<2x2x24x64xbf16>, tensor<2x2x24x32xbf16>) -> tensor<2x8x16x32xbf16>
  // Dynamic sequence lengths, a broadcast f16 mask, both flags.
  // CHECK: fp8.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scale(-2.000000e+00) causal : (tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x1x1x?xf16>) -> tensor<1x4x?x64xf32>
  %2 = fp8.attention %qd, %kd, %kd mask %md scale(-2.0) causal : (tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x4x?x64xf32>, tensor<1x1x1x?xf16>) -> tensor<1x4x?x64xf32>
  return
}

// FP8 query, key and value with their dequantization scales, and a mask.
// CHECK-LABEL: func @attention_fp8
func.func @attention_fp8(%q: tensor<1x4x16x128xf8E4M3FN>, %k: tensor<1x2x24x128xf8E4M3FN>, %m: tensor<1x1x16x24xbf16>, %s: tensor<f32>) -> tensor<1x4x16x128xbf16> {
  // CHECK: fp8.attention %{{.*}}, %{{.*}}, %{{.*}} mask %{{.*}} scales(%{{.*}}, %{{.*}}, %{{.*}}) scale(1.250000e-01) causal : (tensor<1x4x16x128xf8E4M3FN>, tensor<1x2x24x128xf8E4M3FN>, tensor<1x2x24x128xf8E4M3FN>, tensor<1x1x16x24xbf16>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x4x16x128xbf16>
  %0 = fp8.attention %q, %k, %k mask %m scales(%s, %s, %s) scale(0.125) causal : (tensor<1x4x16x128xf8E4M3FN>, tensor<1x2x24x128xf8E4M3FN>, tensor<1x2x24x128xf8E4M3FN>, tensor<1x1x16x24xbf16>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<1x4x16x128xbf16>
  return %0 : tensor<1x4x16x128xbf16>
}

// Scales per block of 128 positions of one (batch, head).
// CHECK-LABEL: func @attention_fp8_blocks
func.func @attention_fp8_blocks(%q: tensor<1x4x200x128xf8E5M2>, %k: tensor<1x2x300x128xf8E5M2>, %sq: tensor<1x4x2x1xf32>, %sk: tensor<1x2x3x1xf32>) -> tensor<1x4x200x128xf32> {
  // CHECK: fp8.attention %{{.*}}, %{{.*}}, %{{.*}} scales(%{{.*}}, %{{.*}}, %{{.*}}) scale_layout<block 128x128> scale(1.250000e-01) : (tensor<1x4x200x128xf8E5M2>, tensor<1x2x300x128xf8E5M2>, tensor<1x2x300x128xf8E5M2>, tensor<1x4x2x1xf32>, tensor<1x2x3x1xf32>, tensor<1x2x3x1xf32>) -> tensor<1x4x200x128xf32>
  %0 = fp8.attention %q, %k, %k scales(%sq, %sk, %sk) scale_layout<block 128x128> scale(0.125) : (tensor<1x4x200x128xf8E5M2>, tensor<1x2x300x128xf8E5M2>, tensor<1x2x300x128xf8E5M2>, tensor<1x4x2x1xf32>, tensor<1x2x3x1xf32>, tensor<1x2x3x1xf32>) -> tensor<1x4x200x128xf32>
  return %0 : tensor<1x4x200x128xf32>
}

