// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=current keep-first-last=false" | FileCheck %s --check-prefix=CURRENT
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=block keep-first-last=false" | FileCheck %s --check-prefix=BLOCK
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=rowwise keep-first-last=false" | FileCheck %s --check-prefix=ROWWISE
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=block act-block=1,64 weight-block=64 block-pow2=false keep-first-last=false" | FileCheck %s --check-prefix=BLOCK64
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=mxfp8 mx-rounding=floor format=e5m2 keep-first-last=false" | FileCheck %s --check-prefix=MX
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=delayed history=16 margin=1 keep-first-last=false" | FileCheck %s --check-prefix=DELAYED
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=current" | FileCheck %s --check-prefix=DEFAULT
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=current keep-first-last=false include-attention=true" | FileCheck %s --check-prefix=ATTN

// Three linear layers (weights are constants) and one attention product.
func.func @layers(%x: tensor<32x128xf32>, %k: tensor<4x32x32xf32>, %q: tensor<4x32x32xf32>)
    -> (tensor<32x64xf32>, tensor<4x32x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %w0 = arith.constant dense<0.5> : tensor<128x256xf32>
  %w1 = arith.constant dense<0.25> : tensor<256x256xf32>
  %w2 = arith.constant dense<0.125> : tensor<256x64xf32>
  %e0 = tensor.empty() : tensor<32x256xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<32x256xf32>) -> tensor<32x256xf32>
  %h0 = linalg.matmul ins(%x, %w0 : tensor<32x128xf32>, tensor<128x256xf32>) outs(%f0 : tensor<32x256xf32>) -> tensor<32x256xf32> loc("first_proj")
  %f1 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<32x256xf32>) -> tensor<32x256xf32>
  %h1 = linalg.matmul ins(%h0, %w1 : tensor<32x256xf32>, tensor<256x256xf32>) outs(%f1 : tensor<32x256xf32>) -> tensor<32x256xf32> loc("mlp_fc")
  %e2 = tensor.empty() : tensor<32x64xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<32x64xf32>) -> tensor<32x64xf32>
  %h2 = linalg.matmul ins(%h1, %w2 : tensor<32x256xf32>, tensor<256x64xf32>) outs(%f2 : tensor<32x64xf32>) -> tensor<32x64xf32> loc("lm_head")
  %ea = tensor.empty() : tensor<4x32x32xf32>
  %fa = linalg.fill ins(%zero : f32) outs(%ea : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %s = linalg.batch_matmul ins(%q, %k : tensor<4x32x32xf32>, tensor<4x32x32xf32>) outs(%fa : tensor<4x32x32xf32>) -> tensor<4x32x32xf32> loc("attn_scores")
  return %h2, %s : tensor<32x64xf32>, tensor<4x32x32xf32>
}

// CURRENT-LABEL: func @layers
// CURRENT: fp8.compute_scale %{{.*}} recipe(#fp8.current) format(e4m3) : tensor<f32> -> tensor<f32>
// CURRENT-COUNT-3: fp8.scaled_matmul {{.*}} layout<tensor>, {{.*}} layout<tensor> : (
// CURRENT: linalg.batch_matmul

// BLOCK-LABEL: func @layers
// BLOCK: fp8.amax %{{.*}} layout<block 1x128> : tensor<32x128xf32> -> tensor<32x1xf32>
// BLOCK: fp8.compute_scale %{{.*}} recipe(#fp8.block) format(e4m3) : tensor<32x1xf32> -> tensor<32x1xf32>
// BLOCK: fp8.amax %{{.*}} layout<block 128x128> : tensor<128x256xf32> -> tensor<1x2xf32>
// BLOCK: fp8.scaled_matmul %{{.*}}, %{{.*}} layout<block 1x128>, %{{.*}}, %{{.*}} layout<block 128x128> : (tensor<32x128xf8E4M3FN>, tensor<32x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x2xf32>) -> tensor<32x256xf32>

// ROWWISE-LABEL: func @layers
// ROWWISE: fp8.amax %{{.*}} layout<row> : tensor<32x128xf32> -> tensor<32x1xf32>
// ROWWISE: fp8.compute_scale %{{.*}} recipe(#fp8.current) format(e4m3) : tensor<32x1xf32> -> tensor<32x1xf32>
// ROWWISE: fp8.amax %{{.*}} layout<col> : tensor<128x256xf32> -> tensor<1x256xf32>
// ROWWISE: fp8.scaled_matmul %{{.*}}, %{{.*}} layout<row>, %{{.*}}, %{{.*}} layout<col> : (tensor<32x128xf8E4M3FN>, tensor<32x1xf32>, tensor<128x256xf8E4M3FN>, tensor<1x256xf32>) -> tensor<32x256xf32>

// BLOCK64-LABEL: func @layers
// BLOCK64: fp8.compute_scale %{{.*}} recipe(#fp8.block<act = 1x64, weight = 64, pow2 = false>)
// BLOCK64: fp8.scaled_matmul {{.*}} layout<block 1x64>, {{.*}} layout<block 64> :

// MX-LABEL: func @layers
// MX: fp8.amax %{{.*}} layout<block 1x32> : tensor<32x128xf32> -> tensor<32x4xf32>
// MX: fp8.compute_scale %{{.*}} recipe(#fp8.mxfp8<rounding = floor>) format(e5m2) : tensor<32x4xf32> -> tensor<32x4xf8E8M0FNU>
// MX: fp8.amax %{{.*}} layout<block 32x1> : tensor<128x256xf32> -> tensor<4x256xf32>
// MX: fp8.scaled_matmul {{.*}} : (tensor<32x128xf8E5M2>, tensor<32x4xf8E8M0FNU>, tensor<128x256xf8E5M2>, tensor<4x256xf8E8M0FNU>) -> tensor<32x256xf32>

// Delayed: activations are tagged for fp8-track-amax, constant weights keep
// current scaling (it folds to the exact scale).
// DELAYED-LABEL: func @layers
// DELAYED: fp8.compute_scale {{.*}} recipe(#fp8.current) format(e4m3) {fp8.delayed = #fp8.delayed<history = 16, margin = 1>}
// DELAYED: fp8.compute_scale {{.*}} recipe(#fp8.current) format(e4m3) : tensor<f32> -> tensor<f32>
// DELAYED-NOT: fp8.delayed =
// DELAYED: fp8.scaled_matmul

// Default: the first and last linear layers and attention stay in FP32.
// DEFAULT-LABEL: func @layers
// DEFAULT: linalg.matmul {{.*}} tensor<128x256xf32>
// DEFAULT: fp8.scaled_matmul {{.*}} tensor<256x256xf8E4M3FN>
// DEFAULT: linalg.matmul {{.*}} tensor<256x64xf32>
// DEFAULT: linalg.batch_matmul

// ATTN-LABEL: func @layers
// ATTN-COUNT-4: fp8.scaled_matmul
// ATTN-SAME: (tensor<4x32x32xf8E4M3FN>, tensor<f32>, tensor<4x32x32xf8E4M3FN>, tensor<f32>) -> tensor<4x32x32xf32>

// -----

// Products that are not plain zero-initialized matmuls are left alone.
// CURRENT-LABEL: func @not_candidates
// CURRENT: linalg.matmul
// CURRENT: linalg.matmul
// CURRENT-NOT: fp8.
func.func @not_candidates(%x: tensor<8x16xf32>, %w: tensor<16x8xf32>, %acc: tensor<8x8xf32>,
                          %xi: tensor<8x16xi32>, %wi: tensor<16x8xi32>, %acci: tensor<8x8xi32>)
    -> (tensor<8x8xf32>, tensor<8x8xi32>) {
  %0 = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x8xf32>) outs(%acc : tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = linalg.matmul ins(%xi, %wi : tensor<8x16xi32>, tensor<16x8xi32>) outs(%acci : tensor<8x8xi32>) -> tensor<8x8xi32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xi32>
}
