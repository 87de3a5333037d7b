// Block-scaled products (1x128 activation, 128x128 weight scales, bf16
// output, 4200 x K x 1408) at K tile counts where three consumer
// warpgroups at setmaxnreg 32/160 assemble cleanly (a power of two; with a
// fused residual add at least 8) and where ptxas spilled them (2026-12-08:
// 16-188 bytes): gemm-ptxas-three-consumers.test.
module {
  func.func private @__fp8_gemm_k768(%a: memref<4200x768xf8E4M3FN>, %sa: memref<4200x6xf32>, %b: memref<1408x768xf8E4M3FN>, %sb: memref<11x6xf32>, %out: memref<4200x1408xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func private @__fp8_gemm_k1024(%a: memref<4200x1024xf8E4M3FN>, %sa: memref<4200x8xf32>, %b: memref<1408x1024xf8E4M3FN>, %sb: memref<11x8xf32>, %out: memref<4200x1408xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func private @__fp8_gemm_k1536(%a: memref<4200x1536xf8E4M3FN>, %sa: memref<4200x12xf32>, %b: memref<1408x1536xf8E4M3FN>, %sb: memref<11x12xf32>, %out: memref<4200x1408xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func private @__fp8_gemm_k6144(%a: memref<4200x6144xf8E4M3FN>, %sa: memref<4200x48xf32>, %b: memref<1408x6144xf8E4M3FN>, %sb: memref<11x48xf32>, %out: memref<4200x1408xbf16>)
      attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    return
  }
  func.func private @__fp8_gemm_res_k512(%a: memref<4200x512xf8E4M3FN>, %sa: memref<4200x4xf32>, %b: memref<1408x512xf8E4M3FN>, %sb: memref<11x4xf32>, %res: memref<4200x1408xbf16>, %out: memref<4200x1408xbf16>)
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
  func.func private @__fp8_gemm_res_k1024(%a: memref<4200x1024xf8E4M3FN>, %sa: memref<4200x8xf32>, %b: memref<1408x1024xf8E4M3FN>, %sb: memref<11x8xf32>, %res: memref<4200x1408xbf16>, %out: memref<4200x1408xbf16>)
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
  func.func private @__fp8_gemm_res_k3072(%a: memref<4200x3072xf8E4M3FN>, %sa: memref<4200x24xf32>, %b: memref<1408x3072xf8E4M3FN>, %sb: memref<11x24xf32>, %res: memref<4200x1408xbf16>, %out: memref<4200x1408xbf16>)
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
}
