// The four products of the Llama-3-8B layer's block build (8192 tokens:
// q/o, k/v, gate/up, down), as fp8-outline-scaled-matmuls leaves them
// (M-major activation scales). Input of test/GPU/gemm-ptxas-layer.test.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
#map6 = affine_map<(d0, d1) -> (d1, d0)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#map9 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, (d3 + 64) mod 128)>
#map10 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map11 = affine_map<(d0, d1) -> (d1 floordiv 128, d0)>
#map12 = affine_map<(d0, d1) -> (d0 floordiv 128, d1 floordiv 128)>
#map13 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map14 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map15 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#map16 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
#map17 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map18 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map19 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d4, d3)>
module {
  func.func @__fp8_gemm_0(%arg0: memref<8192x4096xf8E4M3FN>, %arg1: memref<32x8192xf32>, %arg2: memref<4096x4096xf8E4M3FN>, %arg3: memref<32x32xf32>, %arg4: memref<8192x4096xf16>) attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    %cst = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf32>
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf32>
    linalg.generic {indexing_maps = [#map4, #map11, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<8192x4096xf8E4M3FN>, memref<32x8192xf32>) outs(%alloc_0 : memref<8192x4096xf32>) {
    ^bb0(%in: f8E4M3FN, %in_2: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_2 : f32
      linalg.yield %1 : f32
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<4096x4096xf32>
    linalg.generic {indexing_maps = [#map4, #map12, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg2, %arg3 : memref<4096x4096xf8E4M3FN>, memref<32x32xf32>) outs(%alloc_1 : memref<4096x4096xf32>) {
    ^bb0(%in: f8E4M3FN, %in_2: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_2 : f32
      linalg.yield %1 : f32
    }
    linalg.fill ins(%cst : f32) outs(%alloc : memref<8192x4096xf32>)
    linalg.generic {indexing_maps = [#map13, #map14, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc_0, %alloc_1 : memref<8192x4096xf32>, memref<4096x4096xf32>) outs(%alloc : memref<8192x4096xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %0 = arith.mulf %in, %in_2 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%alloc : memref<8192x4096xf32>) outs(%arg4 : memref<8192x4096xf16>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
    memref.dealloc %alloc : memref<8192x4096xf32>
    memref.dealloc %alloc_0 : memref<8192x4096xf32>
    memref.dealloc %alloc_1 : memref<4096x4096xf32>
    return
  }
  func.func @__fp8_gemm_1(%arg0: memref<8192x4096xf8E4M3FN>, %arg1: memref<32x8192xf32>, %arg2: memref<1024x4096xf8E4M3FN>, %arg3: memref<8x32xf32>, %arg4: memref<8192x1024xf16>) attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    %cst = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf32>
    linalg.generic {indexing_maps = [#map4, #map11, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<8192x4096xf8E4M3FN>, memref<32x8192xf32>) outs(%alloc : memref<8192x4096xf32>) {
    ^bb0(%in: f8E4M3FN, %in_2: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_2 : f32
      linalg.yield %1 : f32
    }
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<1024x4096xf32>
    linalg.generic {indexing_maps = [#map4, #map12, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg2, %arg3 : memref<1024x4096xf8E4M3FN>, memref<8x32xf32>) outs(%alloc_0 : memref<1024x4096xf32>) {
    ^bb0(%in: f8E4M3FN, %in_2: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_2 : f32
      linalg.yield %1 : f32
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<8192x1024xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_1 : memref<8192x1024xf32>)
    linalg.generic {indexing_maps = [#map13, #map14, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_0 : memref<8192x4096xf32>, memref<1024x4096xf32>) outs(%alloc_1 : memref<8192x1024xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %0 = arith.mulf %in, %in_2 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%alloc_1 : memref<8192x1024xf32>) outs(%arg4 : memref<8192x1024xf16>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
    memref.dealloc %alloc : memref<8192x4096xf32>
    memref.dealloc %alloc_0 : memref<1024x4096xf32>
    memref.dealloc %alloc_1 : memref<8192x1024xf32>
    return
  }
  func.func @__fp8_gemm_2(%arg0: memref<8192x4096xf8E4M3FN>, %arg1: memref<32x8192xf32>, %arg2: memref<14336x4096xf8E4M3FN>, %arg3: memref<112x32xf32>, %arg4: memref<8192x14336xf16>) attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    %cst = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf32>
    linalg.generic {indexing_maps = [#map4, #map11, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<8192x4096xf8E4M3FN>, memref<32x8192xf32>) outs(%alloc : memref<8192x4096xf32>) {
    ^bb0(%in: f8E4M3FN, %in_2: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_2 : f32
      linalg.yield %1 : f32
    }
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<14336x4096xf32>
    linalg.generic {indexing_maps = [#map4, #map12, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg2, %arg3 : memref<14336x4096xf8E4M3FN>, memref<112x32xf32>) outs(%alloc_0 : memref<14336x4096xf32>) {
    ^bb0(%in: f8E4M3FN, %in_2: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_2 : f32
      linalg.yield %1 : f32
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<8192x14336xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_1 : memref<8192x14336xf32>)
    linalg.generic {indexing_maps = [#map13, #map14, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_0 : memref<8192x4096xf32>, memref<14336x4096xf32>) outs(%alloc_1 : memref<8192x14336xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %0 = arith.mulf %in, %in_2 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%alloc_1 : memref<8192x14336xf32>) outs(%arg4 : memref<8192x14336xf16>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
    memref.dealloc %alloc : memref<8192x4096xf32>
    memref.dealloc %alloc_0 : memref<14336x4096xf32>
    memref.dealloc %alloc_1 : memref<8192x14336xf32>
    return
  }
  func.func @__fp8_gemm_3(%arg0: memref<8192x14336xf8E4M3FN>, %arg1: memref<112x8192xf32>, %arg2: memref<4096x14336xf8E4M3FN>, %arg3: memref<32x112xf32>, %arg4: memref<8192x4096xf16>) attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, lhs_scale_m_major = 4 : i64, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    %cst = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8192x14336xf32>
    linalg.generic {indexing_maps = [#map4, #map11, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<8192x14336xf8E4M3FN>, memref<112x8192xf32>) outs(%alloc : memref<8192x14336xf32>) {
    ^bb0(%in: f8E4M3FN, %in_2: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_2 : f32
      linalg.yield %1 : f32
    }
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<4096x14336xf32>
    linalg.generic {indexing_maps = [#map4, #map12, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg2, %arg3 : memref<4096x14336xf8E4M3FN>, memref<32x112xf32>) outs(%alloc_0 : memref<4096x14336xf32>) {
    ^bb0(%in: f8E4M3FN, %in_2: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_2 : f32
      linalg.yield %1 : f32
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_1 : memref<8192x4096xf32>)
    linalg.generic {indexing_maps = [#map13, #map14, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_0 : memref<8192x14336xf32>, memref<4096x14336xf32>) outs(%alloc_1 : memref<8192x4096xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %0 = arith.mulf %in, %in_2 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%alloc_1 : memref<8192x4096xf32>) outs(%arg4 : memref<8192x4096xf16>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
    memref.dealloc %alloc : memref<8192x14336xf32>
    memref.dealloc %alloc_0 : memref<4096x14336xf32>
    memref.dealloc %alloc_1 : memref<8192x4096xf32>
    return
  }
}
