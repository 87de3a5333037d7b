// FP8 GEMM kernels of convert-fp8-gemm-to-gpu, checked on the GPU by
// test/GPU/gemm_test.cpp (scripts/gpu-check suite `gemm`).
// Each @__fp8_gemm_* function has the form fp8-outline-scaled-matmuls +
// bufferization give (lhs, lhs_scale, rhs, rhs_scale, [bias], out) with the
// fp8.gemm dictionary; its body is a placeholder that the pass replaces (a
// function the pass did not serve would leave `out` untouched and fail the
// numerical check). test/GPU/CMakeLists.txt lowers this file with
// convert-fp8-gemm-to-gpu and gpu-lower-to-nvvm-pipeline (sm_90a cubin, ptxas)
// into gemm.o; the @run_* wrappers are the C entry points (llvm.emit_c_interface).
// Epilogue values: 0 none, 1 relu, 2 gelu_tanh.
module {
  func.func private @__fp8_gemm_pt_e4m3(%a: memref<128x256xf8E4M3FN>, %sa: memref<f32>, %b: memref<256x256xf8E4M3FN>, %sb: memref<f32>, %out: memref<128x256xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_pt_e4m3(%a: memref<128x256xf8E4M3FN>, %sa: memref<f32>, %b: memref<256x256xf8E4M3FN>, %sb: memref<f32>, %out: memref<128x256xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_pt_e4m3(%a, %sa, %b, %sb, %out) : (memref<128x256xf8E4M3FN>, memref<f32>, memref<256x256xf8E4M3FN>, memref<f32>, memref<128x256xf32>) -> ()
    return
  }
  func.func private @__fp8_gemm_pt_e5m2(%a: memref<96x192xf8E5M2>, %sa: memref<f32>, %b: memref<128x192xf8E5M2>, %sb: memref<f32>, %out: memref<96x128xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_pt_e5m2(%a: memref<96x192xf8E5M2>, %sa: memref<f32>, %b: memref<128x192xf8E5M2>, %sb: memref<f32>, %out: memref<96x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_pt_e5m2(%a, %sa, %b, %sb, %out) : (memref<96x192xf8E5M2>, memref<f32>, memref<128x192xf8E5M2>, memref<f32>, memref<96x128xf32>) -> ()
    return
  }
  func.func private @__fp8_gemm_block(%a: memref<256x512xf8E4M3FN>, %sa: memref<256x4xf32>, %b: memref<384x512xf8E4M3FN>, %sb: memref<3x4xf32>, %out: memref<256x384xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_block(%a: memref<256x512xf8E4M3FN>, %sa: memref<256x4xf32>, %b: memref<384x512xf8E4M3FN>, %sb: memref<3x4xf32>, %out: memref<256x384xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_block(%a, %sa, %b, %sb, %out) : (memref<256x512xf8E4M3FN>, memref<256x4xf32>, memref<384x512xf8E4M3FN>, memref<3x4xf32>, memref<256x384xf32>) -> ()
    return
  }
  func.func private @__fp8_gemm_block_oddm(%a: memref<200x384xf8E4M3FN>, %sa: memref<200x3xf32>, %b: memref<256x384xf8E4M3FN>, %sb: memref<2x3xf32>, %out: memref<200x256xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_block_oddm(%a: memref<200x384xf8E4M3FN>, %sa: memref<200x3xf32>, %b: memref<256x384xf8E4M3FN>, %sb: memref<2x3xf32>, %out: memref<200x256xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_block_oddm(%a, %sa, %b, %sb, %out) : (memref<200x384xf8E4M3FN>, memref<200x3xf32>, memref<256x384xf8E4M3FN>, memref<2x3xf32>, memref<200x256xbf16>) -> ()
    return
  }
  func.func private @__fp8_gemm_mx(%a: memref<128x256xf8E4M3FN>, %sa: memref<128x8xf8E8M0FNU>, %b: memref<256x256xf8E4M3FN>, %sb: memref<256x8xf8E8M0FNU>, %out: memref<128x256xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x32>, rhs_layout = #fp8.layout<block 1x32>, transpose_rhs = true}} {
    return
  }
  func.func @run_mx(%a: memref<128x256xf8E4M3FN>, %sa: memref<128x8xf8E8M0FNU>, %b: memref<256x256xf8E4M3FN>, %sb: memref<256x8xf8E8M0FNU>, %out: memref<128x256xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_mx(%a, %sa, %b, %sb, %out) : (memref<128x256xf8E4M3FN>, memref<128x8xf8E8M0FNU>, memref<256x256xf8E4M3FN>, memref<256x8xf8E8M0FNU>, memref<128x256xbf16>) -> ()
    return
  }
  func.func private @__fp8_gemm_mx_oddk(%a: memref<64x96xf8E4M3FN>, %sa: memref<64x3xf8E8M0FNU>, %b: memref<64x96xf8E4M3FN>, %sb: memref<64x3xf8E8M0FNU>, %out: memref<64x64xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x32>, rhs_layout = #fp8.layout<block 1x32>, transpose_rhs = true}} {
    return
  }
  func.func @run_mx_oddk(%a: memref<64x96xf8E4M3FN>, %sa: memref<64x3xf8E8M0FNU>, %b: memref<64x96xf8E4M3FN>, %sb: memref<64x3xf8E8M0FNU>, %out: memref<64x64xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_mx_oddk(%a, %sa, %b, %sb, %out) : (memref<64x96xf8E4M3FN>, memref<64x3xf8E8M0FNU>, memref<64x96xf8E4M3FN>, memref<64x3xf8E8M0FNU>, memref<64x64xf32>) -> ()
    return
  }
  func.func private @__fp8_gemm_odd_bias_gelu(%a: memref<200x160xf8E4M3FN>, %sa: memref<200x1xf32>, %b: memref<72x160xf8E4M3FN>, %sb: memref<72x1xf32>, %bias: memref<72xbf16>, %out: memref<200x72xbf16>)
      attributes {fp8.gemm = {epilogue = 2 : i32, has_bias = true, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}} {
    return
  }
  func.func @run_odd_bias_gelu(%a: memref<200x160xf8E4M3FN>, %sa: memref<200x1xf32>, %b: memref<72x160xf8E4M3FN>, %sb: memref<72x1xf32>, %bias: memref<72xbf16>, %out: memref<200x72xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_odd_bias_gelu(%a, %sa, %b, %sb, %bias, %out) : (memref<200x160xf8E4M3FN>, memref<200x1xf32>, memref<72x160xf8E4M3FN>, memref<72x1xf32>, memref<72xbf16>, memref<200x72xbf16>) -> ()
    return
  }
  func.func private @__fp8_gemm_batched_rhs(%a: memref<4x64x128xf8E4M3FN>, %sa: memref<f32>, %b: memref<4x96x128xf8E5M2>, %sb: memref<f32>, %bias: memref<4x64x96xf16>, %out: memref<4x64x96xf16>)
      attributes {fp8.gemm = {epilogue = 1 : i32, has_bias = true, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_batched_rhs(%a: memref<4x64x128xf8E4M3FN>, %sa: memref<f32>, %b: memref<4x96x128xf8E5M2>, %sb: memref<f32>, %bias: memref<4x64x96xf16>, %out: memref<4x64x96xf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_batched_rhs(%a, %sa, %b, %sb, %bias, %out) : (memref<4x64x128xf8E4M3FN>, memref<f32>, memref<4x96x128xf8E5M2>, memref<f32>, memref<4x64x96xf16>, memref<4x64x96xf16>) -> ()
    return
  }
  func.func private @__fp8_gemm_batched_fold(%a: memref<3x40x256xf8E4M3FN>, %sa: memref<3x40x2xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<3x40x128xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_batched_fold(%a: memref<3x40x256xf8E4M3FN>, %sa: memref<3x40x2xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<3x40x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_batched_fold(%a, %sa, %b, %sb, %out) : (memref<3x40x256xf8E4M3FN>, memref<3x40x2xf32>, memref<128x256xf8E4M3FN>, memref<1x2xf32>, memref<3x40x128xf32>) -> ()
    return
  }
  func.func private @__fp8_gemm_long_k(%a: memref<64x4096xf8E4M3FN>, %sa: memref<f32>, %b: memref<128x4096xf8E4M3FN>, %sb: memref<f32>, %out: memref<64x128xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_long_k(%a: memref<64x4096xf8E4M3FN>, %sa: memref<f32>, %b: memref<128x4096xf8E4M3FN>, %sb: memref<f32>, %out: memref<64x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_long_k(%a, %sa, %b, %sb, %out) : (memref<64x4096xf8E4M3FN>, memref<f32>, memref<128x4096xf8E4M3FN>, memref<f32>, memref<64x128xf32>) -> ()
    return
  }
  func.func private @__fp8_gemm_perf_block_4k(%a: memref<4096x4096xf8E4M3FN>, %sa: memref<4096x32xf32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<32x32xf32>, %out: memref<4096x4096xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_perf_block_4k(%a: memref<4096x4096xf8E4M3FN>, %sa: memref<4096x32xf32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<32x32xf32>, %out: memref<4096x4096xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_perf_block_4k(%a, %sa, %b, %sb, %out) : (memref<4096x4096xf8E4M3FN>, memref<4096x32xf32>, memref<4096x4096xf8E4M3FN>, memref<32x32xf32>, memref<4096x4096xbf16>) -> ()
    return
  }
  // Decode products (M <= 64, 128-wide tiles would leave SMs idle): the
  // warp-specialized kernel with one consumer warpgroup and narrow tiles.
  func.func private @__fp8_gemm_decode_block(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x32xf32>, %b: memref<4000x4096xf8E4M3FN>, %sb: memref<32x32xf32>, %out: memref<1x4000xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_decode_block(%a: memref<1x4096xf8E4M3FN>, %sa: memref<1x32xf32>, %b: memref<4000x4096xf8E4M3FN>, %sb: memref<32x32xf32>, %out: memref<1x4000xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_decode_block(%a, %sa, %b, %sb, %out) : (memref<1x4096xf8E4M3FN>, memref<1x32xf32>, memref<4000x4096xf8E4M3FN>, memref<32x32xf32>, memref<1x4000xf32>) -> ()
    return
  }
  func.func private @__fp8_gemm_decode_row_bias(%a: memref<16x1024xf8E4M3FN>, %sa: memref<16x1xf32>, %b: memref<4104x1024xf8E4M3FN>, %sb: memref<4104x1xf32>, %bias: memref<4104xf16>, %out: memref<16x4104xf16>)
      attributes {fp8.gemm = {epilogue = 1 : i32, has_bias = true, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}} {
    return
  }
  func.func @run_decode_row_bias(%a: memref<16x1024xf8E4M3FN>, %sa: memref<16x1xf32>, %b: memref<4104x1024xf8E4M3FN>, %sb: memref<4104x1xf32>, %bias: memref<4104xf16>, %out: memref<16x4104xf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_decode_row_bias(%a, %sa, %b, %sb, %bias, %out) : (memref<16x1024xf8E4M3FN>, memref<16x1xf32>, memref<4104x1024xf8E4M3FN>, memref<4104x1xf32>, memref<4104xf16>, memref<16x4104xf16>) -> ()
    return
  }
  // A decode product with per-tensor scales over 9 K tiles.
  func.func private @__fp8_gemm_decode_tensor_k1152(%a: memref<1x1152xf8E4M3FN>, %sa: memref<f32>, %b: memref<4096x1152xf8E4M3FN>, %sb: memref<f32>, %out: memref<1x4096xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_decode_tensor_k1152(%a: memref<1x1152xf8E4M3FN>, %sa: memref<f32>, %b: memref<4096x1152xf8E4M3FN>, %sb: memref<f32>, %out: memref<1x4096xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_decode_tensor_k1152(%a, %sa, %b, %sb, %out) : (memref<1x1152xf8E4M3FN>, memref<f32>, memref<4096x1152xf8E4M3FN>, memref<f32>, memref<1x4096xf32>) -> ()
    return
  }
  // M-major lhs scales (fp8-block-layout scale-storage=tma): [batch..., Kb, align(Mb, P)].
  func.func private @__fp8_gemm_block_mmajor(%a: memref<198x384xf8E4M3FN>, %sa: memref<3x200xf32>, %b: memref<256x384xf8E4M3FN>, %sb: memref<2x3xf32>, %out: memref<198x256xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_block_mmajor(%a: memref<198x384xf8E4M3FN>, %sa: memref<3x200xf32>, %b: memref<256x384xf8E4M3FN>, %sb: memref<2x3xf32>, %out: memref<198x256xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_block_mmajor(%a, %sa, %b, %sb, %out) : (memref<198x384xf8E4M3FN>, memref<3x200xf32>, memref<256x384xf8E4M3FN>, memref<2x3xf32>, memref<198x256xbf16>) -> ()
    return
  }
  func.func private @__fp8_gemm_mx_mmajor(%a: memref<72x256xf8E4M3FN>, %sa: memref<8x80xf8E8M0FNU>, %b: memref<128x256xf8E4M3FN>, %sb: memref<128x8xf8E8M0FNU>, %out: memref<72x128xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x32>, lhs_scale_m_major = 16 : i64, rhs_layout = #fp8.layout<block 1x32>, transpose_rhs = true}} {
    return
  }
  func.func @run_mx_mmajor(%a: memref<72x256xf8E4M3FN>, %sa: memref<8x80xf8E8M0FNU>, %b: memref<128x256xf8E4M3FN>, %sb: memref<128x8xf8E8M0FNU>, %out: memref<72x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_mx_mmajor(%a, %sa, %b, %sb, %out) : (memref<72x256xf8E4M3FN>, memref<8x80xf8E8M0FNU>, memref<128x256xf8E4M3FN>, memref<128x8xf8E8M0FNU>, memref<72x128xf32>) -> ()
    return
  }
  func.func private @__fp8_gemm_batched_mmajor(%a: memref<3x38x256xf8E4M3FN>, %sa: memref<3x2x40xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<3x38x128xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_batched_mmajor(%a: memref<3x38x256xf8E4M3FN>, %sa: memref<3x2x40xf32>, %b: memref<128x256xf8E4M3FN>, %sb: memref<1x2xf32>, %out: memref<3x38x128xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_batched_mmajor(%a, %sa, %b, %sb, %out) : (memref<3x38x256xf8E4M3FN>, memref<3x2x40xf32>, memref<128x256xf8E4M3FN>, memref<1x2xf32>, memref<3x38x128xf32>) -> ()
    return
  }
  // Warp-specialized kernel (M >= 128) with more K tiles (16) than stages,
  // so that the producer waits on the consumers' empty mbarriers and every
  // stage's phase parity flips: M-major block scales and a partial last
  // CTA tile (264 = 2 x 128 + 8), and a batched rhs whose A boxes cross
  // into the next batch (136 rows).
  func.func private @__fp8_gemm_ws_block_mmajor(%a: memref<264x2048xf8E4M3FN>, %sa: memref<16x264xf32>, %b: memref<384x2048xf8E4M3FN>, %sb: memref<3x16xf32>, %out: memref<264x384xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_ws_block_mmajor(%a: memref<264x2048xf8E4M3FN>, %sa: memref<16x264xf32>, %b: memref<384x2048xf8E4M3FN>, %sb: memref<3x16xf32>, %out: memref<264x384xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_ws_block_mmajor(%a, %sa, %b, %sb, %out) : (memref<264x2048xf8E4M3FN>, memref<16x264xf32>, memref<384x2048xf8E4M3FN>, memref<3x16xf32>, memref<264x384xbf16>) -> ()
    return
  }
  func.func private @__fp8_gemm_ws_batched_rhs(%a: memref<2x136x2048xf8E4M3FN>, %sa: memref<f32>, %b: memref<2x96x2048xf8E4M3FN>, %sb: memref<f32>, %out: memref<2x136x96xf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_ws_batched_rhs(%a: memref<2x136x2048xf8E4M3FN>, %sa: memref<f32>, %b: memref<2x96x2048xf8E4M3FN>, %sb: memref<f32>, %out: memref<2x136x96xf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_ws_batched_rhs(%a, %sa, %b, %sb, %out) : (memref<2x136x2048xf8E4M3FN>, memref<f32>, memref<2x96x2048xf8E4M3FN>, memref<f32>, memref<2x136x96xf16>) -> ()
    return
  }
  // The persistent walk: 3 x 10 x 5 = 150 tiles over 132 CTAs (18 take two
  // tiles, the stages' phases running on across them), a narrower last
  // raster band (10 M tiles = 8 + 2), partial M (1160) and N (520) tiles
  // and the batch from the walk (batched rhs and scales).
  func.func private @__fp8_gemm_ws_walk(%a: memref<3x1160x256xf8E4M3FN>, %sa: memref<3x1160x2xf32>, %b: memref<3x520x256xf8E4M3FN>, %sb: memref<3x5x2xf32>, %out: memref<3x1160x520xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_ws_walk(%a: memref<3x1160x256xf8E4M3FN>, %sa: memref<3x1160x2xf32>, %b: memref<3x520x256xf8E4M3FN>, %sb: memref<3x5x2xf32>, %out: memref<3x1160x520xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_ws_walk(%a, %sa, %b, %sb, %out) : (memref<3x1160x256xf8E4M3FN>, memref<3x1160x2xf32>, memref<3x520x256xf8E4M3FN>, memref<3x5x2xf32>, memref<3x1160x520xbf16>) -> ()
    return
  }
  // Fused consumers (fp8-fuse-gemm-epilogues, then bufferization): the
  // product rounded to its type, then the consumer's body with its other
  // input, an [M, N] tensor of 16-bit elements -- with the TMA-store
  // epilogue that input is staged in shared memory by TMA and read back
  // with ldmatrix (GemmConfig::stagedInput). SiLU(product) * up in f16,
  // per-tensor scales, M and N not multiples of the tile:
  func.func private @__fp8_gemm_fused_silu_mul(%a: memref<2056x512xf8E4M3FN>, %sa: memref<f32>, %b: memref<2056x512xf8E4M3FN>, %sb: memref<f32>, %up: memref<2056x2056xf16>, %out: memref<2056x2056xf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, epilogue_inputs = 1 : i64, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    %one = arith.constant 1.0 : f16
    %p = memref.alloc() : memref<2056x2056xf16>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%p, %up : memref<2056x2056xf16>, memref<2056x2056xf16>) outs(%out : memref<2056x2056xf16>)
        attrs = {fp8.gemm_epilogue} {
    ^bb0(%x: f16, %y: f16, %o: f16):
      %n = arith.negf %x : f16
      %e = math.exp %n : f16
      %d = arith.addf %e, %one : f16
      %s = arith.divf %one, %d : f16
      %xs = arith.mulf %x, %s : f16
      %r = arith.mulf %xs, %y : f16
      linalg.yield %r : f16
    }
    memref.dealloc %p : memref<2056x2056xf16>
    return
  }
  func.func @run_fused_silu_mul(%a: memref<2056x512xf8E4M3FN>, %sa: memref<f32>, %b: memref<2056x512xf8E4M3FN>, %sb: memref<f32>, %up: memref<2056x2056xf16>, %out: memref<2056x2056xf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_fused_silu_mul(%a, %sa, %b, %sb, %up, %out) : (memref<2056x512xf8E4M3FN>, memref<f32>, memref<2056x512xf8E4M3FN>, memref<f32>, memref<2056x2056xf16>, memref<2056x2056xf16>) -> ()
    return
  }
  // ... and a residual add in bf16 after a block-scaled product (the
  // wg3 build: three consumer warpgroups of 64 rows, 8 K tiles; the bands
  // build: two 64-row bands per consumer, both staged), persistent
  // CTAs walking more tiles than SMs (the input barrier's phases):
  func.func private @__fp8_gemm_fused_residual(%a: memref<4200x1024xf8E4M3FN>, %sa: memref<4200x8xf32>, %b: memref<1408x1024xf8E4M3FN>, %sb: memref<11x8xf32>, %res: memref<4200x1408xbf16>, %out: memref<4200x1408xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, epilogue_inputs = 1 : i64, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    %p = memref.alloc() : memref<4200x1408xbf16>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%p, %res : memref<4200x1408xbf16>, memref<4200x1408xbf16>) outs(%out : memref<4200x1408xbf16>)
        attrs = {fp8.gemm_epilogue} {
    ^bb0(%x: bf16, %y: bf16, %o: bf16):
      %r = arith.addf %x, %y : bf16
      linalg.yield %r : bf16
    }
    memref.dealloc %p : memref<4200x1408xbf16>
    return
  }
  func.func @run_fused_residual(%a: memref<4200x1024xf8E4M3FN>, %sa: memref<4200x8xf32>, %b: memref<1408x1024xf8E4M3FN>, %sb: memref<11x8xf32>, %res: memref<4200x1408xbf16>, %out: memref<4200x1408xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_fused_residual(%a, %sa, %b, %sb, %res, %out) : (memref<4200x1024xf8E4M3FN>, memref<4200x8xf32>, memref<1408x1024xf8E4M3FN>, memref<11x8xf32>, memref<4200x1408xbf16>, memref<4200x1408xbf16>) -> ()
    return
  }
  // N odd (33): the epilogue's scalar stores (even N pairs columns).
  func.func private @__fp8_gemm_odd_n(%a: memref<136x64xf8E4M3FN>, %sa: memref<f32>, %b: memref<33x64xf8E4M3FN>, %sb: memref<f32>, %out: memref<136x33xf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_odd_n(%a: memref<136x64xf8E4M3FN>, %sa: memref<f32>, %b: memref<33x64xf8E4M3FN>, %sb: memref<f32>, %out: memref<136x33xf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_odd_n(%a, %sa, %b, %sb, %out) : (memref<136x64xf8E4M3FN>, memref<f32>, memref<33x64xf8E4M3FN>, memref<f32>, memref<136x33xf16>) -> ()
    return
  }
  // Per-tensor scales, M >= 128, K = 4096, all-positive data: every
  // truncation of the tensor cores' accumulation errs the same way, which
  // promotion every 128 K bounds (fast accumulation loses ~7% here).
  func.func private @__fp8_gemm_ws_long_k_positive(%a: memref<256x4096xf8E4M3FN>, %sa: memref<f32>, %b: memref<512x4096xf8E4M3FN>, %sb: memref<f32>, %out: memref<256x512xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_ws_long_k_positive(%a: memref<256x4096xf8E4M3FN>, %sa: memref<f32>, %b: memref<512x4096xf8E4M3FN>, %sb: memref<f32>, %out: memref<256x512xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_ws_long_k_positive(%a, %sa, %b, %sb, %out) : (memref<256x4096xf8E4M3FN>, memref<f32>, memref<512x4096xf8E4M3FN>, memref<f32>, memref<256x512xf32>) -> ()
    return
  }
  // BF16 operands (high-precision products): warp-specialized, whole K in the tensor cores.
  func.func private @__fp8_gemm_bf16_ws(%a: memref<520x1000xbf16>, %sa: memref<f32>, %b: memref<768x1000xbf16>, %sb: memref<f32>, %out: memref<520x768xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_bf16_ws(%a: memref<520x1000xbf16>, %sa: memref<f32>, %b: memref<768x1000xbf16>, %sb: memref<f32>, %out: memref<520x768xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_bf16_ws(%a, %sa, %b, %sb, %out) : (memref<520x1000xbf16>, memref<f32>, memref<768x1000xbf16>, memref<f32>, memref<520x768xf32>) -> ()
    return
  }
  // BF16, M < 128 (one warpgroup), K = 200 (a partial 64-element K tile).
  func.func private @__fp8_gemm_bf16_small(%a: memref<64x200xbf16>, %sa: memref<f32>, %b: memref<96x200xbf16>, %sb: memref<f32>, %out: memref<64x96xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_bf16_small(%a: memref<64x200xbf16>, %sa: memref<f32>, %b: memref<96x200xbf16>, %sb: memref<f32>, %out: memref<64x96xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_bf16_small(%a, %sa, %b, %sb, %out) : (memref<64x200xbf16>, memref<f32>, memref<96x200xbf16>, memref<f32>, memref<64x96xbf16>) -> ()
    return
  }
  // BF16, batched rhs (attention's QK^T per head).
  func.func private @__fp8_gemm_bf16_batched_rhs(%a: memref<4x136x64xbf16>, %sa: memref<f32>, %b: memref<4x96x64xbf16>, %sb: memref<f32>, %out: memref<4x136x96xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_bf16_batched_rhs(%a: memref<4x136x64xbf16>, %sa: memref<f32>, %b: memref<4x96x64xbf16>, %sb: memref<f32>, %out: memref<4x136x96xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_bf16_batched_rhs(%a, %sa, %b, %sb, %out) : (memref<4x136x64xbf16>, memref<f32>, memref<4x96x64xbf16>, memref<f32>, memref<4x136x96xf32>) -> ()
    return
  }
  // BF16, K = 4096, all-positive data: FP32 accumulation in the tensor cores.
  func.func private @__fp8_gemm_bf16_long_k_positive(%a: memref<256x4096xbf16>, %sa: memref<f32>, %b: memref<512x4096xbf16>, %sb: memref<f32>, %out: memref<256x512xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_bf16_long_k_positive(%a: memref<256x4096xbf16>, %sa: memref<f32>, %b: memref<512x4096xbf16>, %sb: memref<f32>, %out: memref<256x512xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_bf16_long_k_positive(%a, %sa, %b, %sb, %out) : (memref<256x4096xbf16>, memref<f32>, memref<512x4096xbf16>, memref<f32>, memref<256x512xf32>) -> ()
    return
  }
  // BF16 4096^3, timed.
  func.func private @__fp8_gemm_bf16_perf_4k(%a: memref<4096x4096xbf16>, %sa: memref<f32>, %b: memref<4096x4096xbf16>, %sb: memref<f32>, %out: memref<4096x4096xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_bf16_perf_4k(%a: memref<4096x4096xbf16>, %sa: memref<f32>, %b: memref<4096x4096xbf16>, %sb: memref<f32>, %out: memref<4096x4096xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_bf16_perf_4k(%a, %sa, %b, %sb, %out) : (memref<4096x4096xbf16>, memref<f32>, memref<4096x4096xbf16>, memref<f32>, memref<4096x4096xbf16>) -> ()
    return
  }
  // M at run time (GemmProblem::dynamicM): one function, called by
  // gemm_test with several M; M <= 64 runs the decode kernel, larger M the
  // warp-specialized one on every SM (tensor maps and bounds from M).
  func.func private @__fp8_gemm_dyn_pt_bias_relu(%a: memref<?x512xf8E4M3FN>, %sa: memref<f32>, %b: memref<384x512xf8E4M3FN>, %sb: memref<f32>, %bias: memref<384xf16>, %out: memref<?x384xf16>)
      attributes {fp8.gemm = {epilogue = 1 : i32, has_bias = true, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_dyn_pt_bias_relu(%a: memref<?x512xf8E4M3FN>, %sa: memref<f32>, %b: memref<384x512xf8E4M3FN>, %sb: memref<f32>, %bias: memref<384xf16>, %out: memref<?x384xf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_dyn_pt_bias_relu(%a, %sa, %b, %sb, %bias, %out) : (memref<?x512xf8E4M3FN>, memref<f32>, memref<384x512xf8E4M3FN>, memref<f32>, memref<384xf16>, memref<?x384xf16>) -> ()
    return
  }
  // BF16 with M at run time, f32 out (TMA stores clipped at M).
  func.func private @__fp8_gemm_dyn_bf16(%a: memref<?x1000xbf16>, %sa: memref<f32>, %b: memref<768x1000xbf16>, %sb: memref<f32>, %out: memref<?x768xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_dyn_bf16(%a: memref<?x1000xbf16>, %sa: memref<f32>, %b: memref<768x1000xbf16>, %sb: memref<f32>, %out: memref<?x768xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_dyn_bf16(%a, %sa, %b, %sb, %out) : (memref<?x1000xbf16>, memref<f32>, memref<768x1000xbf16>, memref<f32>, memref<?x768xf32>) -> ()
    return
  }
  // A batch of 3 with dynamic rows folded into M = 3 x rows (E5M2).
  func.func private @__fp8_gemm_dyn_fold_e5m2(%a: memref<3x?x256xf8E5M2>, %sa: memref<f32>, %b: memref<136x256xf8E5M2>, %sb: memref<f32>, %out: memref<3x?x136xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_dyn_fold_e5m2(%a: memref<3x?x256xf8E5M2>, %sa: memref<f32>, %b: memref<136x256xf8E5M2>, %sb: memref<f32>, %out: memref<3x?x136xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_dyn_fold_e5m2(%a, %sa, %b, %sb, %out) : (memref<3x?x256xf8E5M2>, memref<f32>, memref<136x256xf8E5M2>, memref<f32>, memref<3x?x136xbf16>) -> ()
    return
  }
  // M at run time with per-row (rowwise) and M-major 1x128 block lhs
  // scales (the recipes' activation scales of a dynamic token count): the
  // scales' rows are M's, the M-major row stride align(M, 4) at run time.
  func.func private @__fp8_gemm_dyn_row(%a: memref<?x512xf8E4M3FN>, %sa: memref<?x1xf32>, %b: memref<384x512xf8E4M3FN>, %sb: memref<384x1xf32>, %out: memref<?x384xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}} {
    return
  }
  func.func @run_dyn_row(%a: memref<?x512xf8E4M3FN>, %sa: memref<?x1xf32>, %b: memref<384x512xf8E4M3FN>, %sb: memref<384x1xf32>, %out: memref<?x384xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_dyn_row(%a, %sa, %b, %sb, %out) : (memref<?x512xf8E4M3FN>, memref<?x1xf32>, memref<384x512xf8E4M3FN>, memref<384x1xf32>, memref<?x384xbf16>) -> ()
    return
  }
  func.func private @__fp8_gemm_dyn_block_mmajor(%a: memref<?x512xf8E4M3FN>, %sa: memref<4x?xf32>, %b: memref<256x512xf8E4M3FN>, %sb: memref<2x4xf32>, %out: memref<?x256xf32>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func @run_dyn_block_mmajor(%a: memref<?x512xf8E4M3FN>, %sa: memref<4x?xf32>, %b: memref<256x512xf8E4M3FN>, %sb: memref<2x4xf32>, %out: memref<?x256xf32>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_dyn_block_mmajor(%a, %sa, %b, %sb, %out) : (memref<?x512xf8E4M3FN>, memref<4x?xf32>, memref<256x512xf8E4M3FN>, memref<2x4xf32>, memref<?x256xf32>) -> ()
    return
  }
  // Per-tensor 4096^3 timed twice: M static and M at run time (the same
  // kernel configuration; the bench compares them in one run).
  func.func private @__fp8_gemm_perf_pt_4k(%a: memref<4096x4096xf8E4M3FN>, %sa: memref<f32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<f32>, %out: memref<4096x4096xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_perf_pt_4k(%a: memref<4096x4096xf8E4M3FN>, %sa: memref<f32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<f32>, %out: memref<4096x4096xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_perf_pt_4k(%a, %sa, %b, %sb, %out) : (memref<4096x4096xf8E4M3FN>, memref<f32>, memref<4096x4096xf8E4M3FN>, memref<f32>, memref<4096x4096xbf16>) -> ()
    return
  }
  func.func private @__fp8_gemm_perf_dyn_pt_4k(%a: memref<?x4096xf8E4M3FN>, %sa: memref<f32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<f32>, %out: memref<?x4096xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}} {
    return
  }
  func.func @run_perf_dyn_pt_4k(%a: memref<?x4096xf8E4M3FN>, %sa: memref<f32>, %b: memref<4096x4096xf8E4M3FN>, %sb: memref<f32>, %out: memref<?x4096xbf16>) attributes {llvm.emit_c_interface} {
    call @__fp8_gemm_perf_dyn_pt_4k(%a, %sa, %b, %sb, %out) : (memref<?x4096xf8E4M3FN>, memref<f32>, memref<4096x4096xf8E4M3FN>, memref<f32>, memref<?x4096xbf16>) -> ()
    return
  }
}
