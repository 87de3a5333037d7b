// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-gemm-to-gpu="tma-pipeline=true remarks=true" | FileCheck %s
// RUN: fp8-opt %s -split-input-file \
// RUN:   --convert-fp8-gemm-to-gpu="tma-pipeline=true warp-specialized=false" \
// RUN:   | FileCheck %s --check-prefix=SINGLE

// M at run time (prompts and decode steps of any length from one library):
// the host reads M from the lhs, launches nothing for M = 0, the decode
// kernel (one consumer warpgroup, narrow tiles) for M <= 64, and the
// warp-specialized kernel on every SM otherwise. Both kernels take M as a
// parameter; the tensor maps of A (and of the output, for TMA stores) get
// M rows at run time, so TMA clips loads and stores there.
// CHECK-LABEL: func.func private @__fp8_gemm_dyn(
// CHECK-SAME:    %[[A:.*]]: memref<?x512xf8E4M3FN>
// CHECK:         %[[FLAT:.*]] = memref.collapse_shape %[[A]] {{.*}} into memref<?xf8E4M3FN>
// CHECK:         %[[M:.*]] = memref.dim %[[A]], %c0
// CHECK:         %[[ANY:.*]] = arith.cmpi ugt, %[[M]], %{{.*}} : index
// CHECK:         scf.if %[[ANY]] {
// CHECK:           %[[SMALL:.*]] = arith.cmpi ule, %[[M]], %c64 : index
// CHECK:           scf.if %[[SMALL]] {
// CHECK:             %[[M64:.*]] = arith.index_cast %[[M]] : index to i64
// CHECK:             llvm.store %[[M64]]
// CHECK:             llvm.call @fp8rt_cuda_tensor_map_encode_tiled
// CHECK:             gpu.launch_func @__fp8_gemm_dyn_kernel_m64::@__fp8_gemm_dyn_kernel_m64 blocks in (%c24, %{{.*}}, %{{.*}}) threads in (%c256,
// CHECK-SAME:          %[[M]] : index)
// CHECK:           } else {
// CHECK:             gpu.launch_func @__fp8_gemm_dyn_kernel::@__fp8_gemm_dyn_kernel blocks in (%c132, %{{.*}}, %{{.*}}) threads in (%c384,
// CHECK-SAME:          %[[M]] : index)
// CHECK:           }
// CHECK:         }
// CHECK-NEXT:    return
// The general kernel: no known grid beyond the persistent CTAs; its tile
// walk counts ceil(M / 128) x 2 tiles and gives CTAs past them none.
// CHECK:       gpu.func @__fp8_gemm_dyn_kernel({{.*}}, %[[KM:.*]]: index) kernel
// CHECK-SAME:    known_grid_size = array<i32: 132, 1, 1>
// CHECK:         %[[T1:.*]] = arith.addi %[[KM]], %c127
// CHECK:         %[[TM:.*]] = arith.divui %[[T1]], %c128
// CHECK:         %[[TILES:.*]] = arith.muli %[[TM]], %c2
// CHECK:         arith.cmpi ugt, %[[TILES]]
// CHECK:         arith.select
// The epilogue's bounds check and the clamp of the TMA-store rows use M.
// CHECK:         arith.minui %{{.*}}, %{{.*}} : index
// CHECK:       gpu.func @__fp8_gemm_dyn_kernel_m64({{.*}}, %[[DM:.*]]: index) kernel
// CHECK:         arith.cmpi ult, %{{.*}}, %[[DM]] : index

// The single-warpgroup kernel (warp-specialized=false): a grid of
// ceil(M / 64) row tiles, unknown at compile time.
// SINGLE-LABEL: func.func private @__fp8_gemm_dyn(
// SINGLE:         %[[M:.*]] = memref.dim
// SINGLE:         %[[R:.*]] = arith.addi %[[M]], %c63
// SINGLE:         %[[Y:.*]] = arith.divui %[[R]], %c64
// SINGLE:         gpu.launch_func @__fp8_gemm_dyn_kernel_m64::@__fp8_gemm_dyn_kernel_m64 blocks in (%{{.*}}, %[[Y]], %{{.*}})
// SINGLE:       gpu.func @__fp8_gemm_dyn_kernel(
// SINGLE-NOT:     known_grid_size
// SINGLE-SAME:    kernel
func.func private @__fp8_gemm_dyn(%a: memref<?x512xf8E4M3FN>, %sa: memref<f32>, %b: memref<384x512xf8E4M3FN>, %sb: memref<f32>, %bias: memref<384xf16>, %out: memref<?x384xf16>)
    attributes {fp8.gemm = {epilogue = 1 : i32, has_bias = true, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{fp8 gemm: M <= 64 (M at run time): wgmma kernel m64n16k32, warp-specialized (1 producer + 1 consumer warpgroups, setmaxnreg 40/232), CTA tile 64x16x128}}
  // expected-remark @-3 {{fp8 gemm: larger M (M at run time): wgmma kernel m64n192k32, warp-specialized (1 producer + 2 consumer warpgroups, setmaxnreg 40/232), CTA tile 128x192x128}}
  return
}

// -----

// A batched lhs with a shared rhs folds its batch into M: M = 4 x rows.
// CHECK-LABEL: func.func private @__fp8_gemm_dyn_batch(
// CHECK:         %[[R:.*]] = memref.dim %{{.*}}, %c1 : memref<4x?x256xbf16>
// CHECK:         %[[M:.*]] = arith.muli %[[R]], %c4
// CHECK:         arith.cmpi ugt, %[[M]]
func.func private @__fp8_gemm_dyn_batch(%a: memref<4x?x256xbf16>, %sa: memref<f32>, %b: memref<256x256xbf16>, %sb: memref<f32>, %out: memref<4x?x256xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{M <= 64 (M at run time)}}
  // expected-remark @-3 {{larger M (M at run time)}}
  return
}

// -----

// Per-row and per-block lhs scales have M's rows too (rowwise, block and
// mxfp8 quantize the tokens of a dynamic M): [M, Kb] in the layout's own
// order, or M-major [Kb, align(M, P)], whose row stride the kernel computes
// from M at its entry.
// CHECK-LABEL: func.func private @__fp8_gemm_dyn_rows(
// CHECK:         gpu.launch_func @__fp8_gemm_dyn_rows_kernel_m64
// CHECK:         gpu.launch_func @__fp8_gemm_dyn_rows_kernel::
func.func private @__fp8_gemm_dyn_rows(%a: memref<?x256xf8E4M3FN>, %sa: memref<?x2xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<?x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{M <= 64 (M at run time)}}
  // expected-remark @-3 {{larger M (M at run time)}}
  return
}

// -----

// CHECK-LABEL: func.func private @__fp8_gemm_dyn_mmajor(
// CHECK:       gpu.func @__fp8_gemm_dyn_mmajor_kernel_m64({{.*}}, %[[KM:.*]]: index) kernel
// CHECK:         %[[S1:.*]] = arith.addi %[[KM]], %c3
// CHECK:         %[[S2:.*]] = arith.divui %[[S1]], %c4
// CHECK:         %[[STRIDE:.*]] = arith.muli %[[S2]], %c4
// CHECK:         arith.muli %{{.*}}, %[[STRIDE]]
func.func private @__fp8_gemm_dyn_mmajor(%a: memref<?x256xf8E4M3FN>, %sa: memref<2x?xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<?x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{M <= 64 (M at run time)}}
  // expected-remark @-3 {{larger M (M at run time)}}
  return
}

// -----

// What dynamic M does not serve keeps the reference body, saying why.
func.func private @__fp8_gemm_dyn_block(%a: memref<?x256xf8E4M3FN>, %sa: memref<2x8xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<?x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{lhs scale of dynamic rows must be [batch..., rows, Kb] (or M-major [batch..., Kb, rows]) with one row per row}}
  return
}

// -----

func.func private @__fp8_gemm_dyn_mmajor_batch(%a: memref<2x?x256xf8E4M3FN>, %sa: memref<2x2x?xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<2x?x128xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
  // expected-remark @-2 {{dynamic M with M-major lhs scales over a batch is not served yet}}
  return
}

// -----

func.func private @__fp8_gemm_dyn_brhs(%a: memref<2x?x64xbf16>, %sa: memref<f32>, %b: memref<2x96x64xbf16>, %sb: memref<f32>, %out: memref<2x?x96xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{dynamic M with a batched rhs is not served yet}}
  return
}

// -----

func.func private @__fp8_gemm_dyn_out(%a: memref<?x64xbf16>, %sa: memref<f32>, %b: memref<96x64xbf16>, %sb: memref<f32>, %out: memref<8x96xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
  // expected-remark @-2 {{M is dynamic in one of the lhs and the output only}}
  return
}
