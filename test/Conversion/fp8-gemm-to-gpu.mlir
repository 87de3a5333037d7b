// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-gemm-to-gpu="tma-pipeline=false remarks=true" | FileCheck %s
// The sm_89 (mma.sync) kernel is not implemented yet: bodies stay.
// RUN: fp8-opt %s -split-input-file --convert-fp8-gemm-to-gpu=chip=sm_89 \
// RUN:   | FileCheck %s --check-prefix=SM89

// Block scaling (DeepSeek-V3 / DeepGEMM recipe) with two K-blocks: the four
// k32 wgmma steps of each K-tile accumulate into a fresh accumulator (first
// step scale-d = 0), which is then promoted in FP32 with sa[m, kb] * sb[n/128, kb].

// The host side flattens the operands and launches the kernel, a gpu.func
// alone in a gpu.module named after the function, right after it; the
// kernel knows its block and grid size (ptxas: .maxntid) and takes the flat
// operands in signature order.
// CHECK:       module attributes {gpu.container_module}
// CHECK-LABEL: func.func private @__fp8_gemm_block
// CHECK-DAG:     %[[A:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<32x256xf8E4M3FN> into memref<8192xf8E4M3FN>
// CHECK-DAG:     %[[SMEM:.*]] = arith.constant 24576 : i32
// CHECK:         gpu.launch_func @__fp8_gemm_block_kernel::@__fp8_gemm_block_kernel blocks in (%c1{{.*}}, %c1{{.*}}, %c1{{.*}}) threads in (%c128{{.*}}, %c1{{.*}}, %c1{{.*}}) dynamic_shared_memory_size %[[SMEM]] args(%[[A]] : memref<8192xf8E4M3FN>, %{{.*}} : memref<64xf32>, %{{.*}} : memref<32768xf8E4M3FN>, %{{.*}} : memref<2xf32>, %{{.*}} : memref<4096xf32>)
// CHECK-NEXT:    return
// CHECK:       gpu.module @__fp8_gemm_block_kernel
// CHECK:         gpu.func @__fp8_gemm_block_kernel(%{{.*}}: memref<8192xf8E4M3FN>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<32768xf8E4M3FN>, %{{.*}}: memref<2xf32>, %{{.*}}: memref<4096xf32>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK:         gpu.dynamic_shared_memory
// CHECK:         scf.for {{.*}} iter_args({{.*}}) -> (!llvm.struct<(f32
// CHECK:           llvm.load {{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK:           llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
// CHECK:           nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      nvvm.wgmma.fence.aligned
// CHECK:           nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <zero>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-COUNT-3:   nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 128, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK-NEXT:      nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT:      nvvm.wgmma.wait.group.sync.aligned 0
// Promotion: scales of this K-block, then total = fma(partial, sa * sb, total).
// CHECK:           %[[SA:.*]] = memref.load %{{.*}} : memref<64xf32>
// CHECK:           memref.load %{{.*}} : memref<64xf32>
// CHECK:           %[[SB:.*]] = memref.load %{{.*}} : memref<2xf32>
// CHECK:           %[[F:.*]] = arith.mulf %[[SA]], %[[SB]]
// CHECK:           %[[P:.*]] = llvm.extractvalue %{{.*}}[0]
// CHECK:           %[[T:.*]] = llvm.extractvalue %{{.*}}[0]
// CHECK:           %[[S:.*]] = llvm.intr.fma(%[[P]], %[[F]], %[[T]]) : (f32, f32, f32) -> f32
// CHECK:           llvm.insertvalue %[[S]], %{{.*}}[0]
// CHECK:           gpu.barrier
// CHECK:           scf.yield
// Epilogue: bounds-checked stores from the fragments; N even: the two
// adjacent columns a thread holds go out as one aligned 2-element store.
// CHECK:         scf.if
// CHECK:           llvm.insertelement {{.*}} : vector<2xf32>
// CHECK:           llvm.insertelement {{.*}} : vector<2xf32>
// CHECK:           llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK:         gpu.return
func.func private @__fp8_gemm_block(%a: memref<32x256xf8E4M3FN>, %sa: memref<32x2xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<32x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, CTA tile 64x128x128, promotion every 128 K, grid 1x1x1}}
  return
}
// SM89-LABEL: func.func private @__fp8_gemm_block
// SM89-NOT:     gpu.launch_func
// SM89:         return

// -----

// Odd shape, per-tensor e5m2 x e4m3, bias [N] in bf16, gelu, bf16 result:
// N = 72 gives a 64x72 tile (wgmma n72); K = 100 is not a multiple of 16,
// so the copy is byte-wise with zero fill.

// CHECK-LABEL: func.func private @__fp8_gemm_odd
// CHECK:         gpu.launch_func {{.*}} blocks in (%c1{{.*}}, %c4{{.*}}, %c1{{.*}})
// CHECK:           scf.if {{.*}} -> (f8E5M2)
// CHECK:             memref.load %{{.*}} : memref<20000xf8E5M2>
// CHECK:           memref.store {{.*}} : memref<8192xf8E5M2, #gpu.address_space<workgroup>>
// CHECK:           nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 72, k = 32>, D[<f32>, <zero>], A[<e5m2>, <one>, <row>], B[<e4m3>, <one>, <col>]
// CHECK:         scf.if
// CHECK:           memref.load %{{.*}} : memref<72xbf16>
// CHECK:           arith.extf %{{.*}} : bf16 to f32
// CHECK:           math.tanh
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK:           llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<1>
func.func private @__fp8_gemm_odd(%a: memref<200x100xf8E5M2>, %sa: memref<f32>, %b: memref<72x100xf8E4M3FN>, %sb: memref<f32>, %bias: memref<72xbf16>, %out: memref<200x72xbf16>)
    attributes {fp8.gemm = {epilogue = 2 : i32, has_bias = true, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n72k32, CTA tile 64x72x128, promotion every 128 K, grid 1x4x1}}
  return
}

// -----

// MXFP8: 1x32 blocks on both operands with E8M0 scales: promotion after every
// k32 step (scale-d = 0 on each), E8M0 decoded as 2^(b-127), 0 -> 2^-127,
// 0xFF -> NaN.

// CHECK-LABEL: func.func private @__fp8_gemm_mx
// CHECK-COUNT-4: nvvm.wgmma.mma_async {{.*}}D[<f32>, <zero>]
// CHECK-NOT:     nvvm.wgmma.mma_async {{.*}}D[<f32>, <one>]
// CHECK:         arith.constant 4194304 : i32
// CHECK:         arith.constant 2143289344 : i32
func.func private @__fp8_gemm_mx(%a: memref<64x128xf8E4M3FN>, %sa: memref<64x4xf8E8M0FNU>, %b: memref<64x128xf8E4M3FN>, %sb: memref<64x4xf8E8M0FNU>, %out: memref<64x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x32>, rhs_layout = #fp8.layout<block 1x32>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n64k32, CTA tile 64x64x128, promotion every 32 K, grid 1x1x1}}
  return
}

// -----

// Batched rhs [batch, N, K]: grid.z runs over the batch.
// CHECK-LABEL: func.func private @__fp8_gemm_batched
// CHECK:         gpu.launch_func {{.*}} blocks in (%c1{{.*}}, %c1{{.*}}, %c4{{.*}})
func.func private @__fp8_gemm_batched(%a: memref<4x16x64xf8E4M3FN>, %sa: memref<f32>, %b: memref<4x32x64xf8E4M3FN>, %sb: memref<f32>, %out: memref<4x16x32xf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n32k32, CTA tile 64x32x128, promotion every 128 K, grid 1x1x4}}
  return
}

// -----

// Batched lhs with a rank-2 rhs: the batch folds into M (3 x 40 = 120 rows).
// CHECK-LABEL: func.func private @__fp8_gemm_fold
// CHECK:         gpu.launch_func {{.*}} blocks in (%c1{{.*}}, %c2{{.*}}, %c1{{.*}})
func.func private @__fp8_gemm_fold(%a: memref<3x40x256xf8E4M3FN>, %sa: memref<3x40x2xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<3x40x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, CTA tile 64x128x128, promotion every 128 K, grid 1x2x1}}
  return
}

// -----

// The same with M-major lhs scales, M = 38 padded to 40 ([3, 2, 40],
// m_major(4)): the batch no longer folds into M (each batch has its own
// scale columns); grid.z = 3. A scale is read at (b * 2 + k / 128) * 40 +
// row: the stride is the padded 40, not M.
// CHECK-LABEL: func.func private @__fp8_gemm_fold_mmajor
// CHECK:         gpu.launch_func {{.*}} blocks in (%c1{{.*}}, %c1{{.*}}, %c3{{.*}})
// CHECK:         arith.constant 40 : index
func.func private @__fp8_gemm_fold_mmajor(%a: memref<3x38x256xf8E4M3FN>, %sa: memref<3x2x40xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<3x38x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n128k32, CTA tile 64x128x128, promotion every 128 K, grid 1x1x3}}
  return
}

// -----

// A zero padding in a hand-written description is malformed, not a crash.
func.func private @__fp8_gemm_mmajor_zero(%a: memref<40x256xf8E4M3FN>, %sa: memref<2x40xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<40x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 0 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: keeping the reference body: malformed fp8.gemm attribute}}
  return
}

// -----

// M-major scales whose size does not match the layout are refused (the
// reference body stays).
func.func private @__fp8_gemm_mmajor_bad(%a: memref<40x256xf8E4M3FN>, %sa: memref<2x40xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<40x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 16 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: keeping the reference body: lhs scale shape does not match its layout}}
  return
}

// -----

// Fallbacks: the reference body stays and a remark says why.

// CHECK-LABEL: func.func private @__fp8_gemm_col
// CHECK-NOT:     gpu.launch
// CHECK:         memref.copy
func.func private @__fp8_gemm_col(%a: memref<32x128xf8E4M3FN>, %sa: memref<1x128xf32>, %b: memref<64x128xf8E4M3FN>, %sb: memref<f32>, %out: memref<32x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<col>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{keeping the reference body: K-blocks of the scale layouts (lhs 1, rhs 1) do not nest into whole k32 wgmma steps}}
  %z = memref.alloc() : memref<32x64xf32>
  memref.copy %z, %out : memref<32x64xf32> to memref<32x64xf32>
  return
}

// -----

// CHECK-LABEL: func.func private @__fp8_gemm_k48
// CHECK-NOT:     gpu.launch
func.func private @__fp8_gemm_k48(%a: memref<32x96xf8E4M3FN>, %sa: memref<32x2xf32>, %b: memref<64x96xf8E4M3FN>, %sb: memref<64x2xf32>, %out: memref<32x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x48>, rhs_layout = #fp8.layout<block 1x48>, transpose_rhs = true}} {
  // expected-remark @-2 {{K-blocks of the scale layouts (lhs 48, rhs 48) do not nest into whole k32 wgmma steps}}
  return
}

// -----

// CHECK-LABEL: func.func private @__fp8_gemm_kn
// CHECK-NOT:     gpu.launch
func.func private @__fp8_gemm_kn(%a: memref<32x128xf8E4M3FN>, %sa: memref<f32>, %b: memref<128x64xf8E4M3FN>, %sb: memref<f32>, %out: memref<32x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = false}} {
  // expected-remark @-2 {{rhs is not K-major (transpose_rhs = false)}}
  return
}

// -----

// M at run time with thread copies: rows >= M are zero-filled against M
// from the launch (test/Conversion/fp8-gemm-to-gpu-dynamic-m.mlir: TMA).
// CHECK-LABEL: func.func private @__fp8_gemm_dyn
// CHECK:         %[[M:.*]] = memref.dim
// CHECK:         gpu.launch_func @__fp8_gemm_dyn_kernel_m64::@__fp8_gemm_dyn_kernel_m64
// CHECK:         gpu.launch_func @__fp8_gemm_dyn_kernel::@__fp8_gemm_dyn_kernel
// CHECK:       gpu.func @__fp8_gemm_dyn_kernel({{.*}}, %[[KM:.*]]: index) kernel
// CHECK:         arith.cmpi ult, %{{.*}}, %[[KM]] : index
func.func private @__fp8_gemm_dyn(%a: memref<?x128xf8E4M3FN>, %sa: memref<f32>, %b: memref<64x128xf8E4M3FN>, %sb: memref<f32>, %out: memref<?x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{M <= 64 (M at run time): wgmma kernel m64n64k32, CTA tile 64x64x128}}
  // expected-remark @-3 {{larger M (M at run time): wgmma kernel m64n64k32, CTA tile 64x64x128}}
  return
}

// -----

// Only M may be dynamic.
// CHECK-LABEL: func.func private @__fp8_gemm_dynk
// CHECK-NOT:     gpu.launch
func.func private @__fp8_gemm_dynk(%a: memref<32x?xf8E4M3FN>, %sa: memref<f32>, %b: memref<64x?xf8E4M3FN>, %sb: memref<f32>, %out: memref<32x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{operands must be memrefs with identity layout, statically shaped but for M (the lhs's and the output's row dimension)}}
  return
}

// -----

// N odd: a thread's column pairs may straddle the end of a row; one
// bounds-checked scalar store per register.
// CHECK-LABEL: func.func private @__fp8_gemm_oddn
// CHECK:         gpu.func
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}} : memref<2112xf16>
// CHECK-NOT:       vector<2xf16>
// CHECK:           gpu.return
func.func private @__fp8_gemm_oddn(%a: memref<64x64xf8E4M3FN>, %sa: memref<f32>, %b: memref<33x64xf8E4M3FN>, %sb: memref<f32>, %out: memref<64x33xf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: wgmma kernel m64n40k32, CTA tile 64x40x128, promotion every 128 K, grid 1x1x1}}
  return
}
