// The Llama-3-8B layer's o and down products (block build, 8192 tokens)
// with the residual add in their epilogues, as fp8-fuse-gemm-epilogues
// {residual-only} and bufferization leave them (fp8-compile
// --residual-epilogues). Input of test/GPU/gemm-ptxas-layer.test.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d2)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#map4 = affine_map<(d0, d1) -> (d0, d1)>
#map5 = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
#map7 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#map8 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, (d3 + 64) mod 128)>
#map9 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map10 = affine_map<(d0, d1) -> (d0 floordiv 128, d1 floordiv 128)>
#map11 = affine_map<(d0, d1, d2) -> (d0, d2)>
#map12 = affine_map<(d0, d1, d2) -> (d1, d2)>
#map13 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#map14 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
#map15 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#map16 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#map17 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d4, d3)>
module {
  func.func @__fp8_gemm_4(%arg0: memref<8192x4096xf8E4M3FN>, %arg1: memref<8192x32xf32>, %arg2: memref<4096x4096xf8E4M3FN>, %arg3: memref<32x32xf32>, %arg4: memref<8192x4096xf16>, %arg5: memref<8192x4096xf16>) attributes {fp8.gemm = {epilogue = 0 : i32, epilogue_inputs = 1 : i64, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    %cst = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf32>
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf32>
    linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<8192x4096xf8E4M3FN>, memref<8192x32xf32>) outs(%alloc_0 : memref<8192x4096xf32>) {
    ^bb0(%in: f8E4M3FN, %in_3: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_3 : f32
      linalg.yield %1 : f32
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<4096x4096xf32>
    linalg.generic {indexing_maps = [#map4, #map10, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg2, %arg3 : memref<4096x4096xf8E4M3FN>, memref<32x32xf32>) outs(%alloc_1 : memref<4096x4096xf32>) {
    ^bb0(%in: f8E4M3FN, %in_3: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_3 : f32
      linalg.yield %1 : f32
    }
    linalg.fill ins(%cst : f32) outs(%alloc : memref<8192x4096xf32>)
    linalg.generic {indexing_maps = [#map11, #map12, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc_0, %alloc_1 : memref<8192x4096xf32>, memref<4096x4096xf32>) outs(%alloc : memref<8192x4096xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %0 = arith.mulf %in, %in_3 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    %alloc_2 = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf16>
    linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%alloc : memref<8192x4096xf32>) outs(%alloc_2 : memref<8192x4096xf16>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
    linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg4, %alloc_2 : memref<8192x4096xf16>, memref<8192x4096xf16>) outs(%arg5 : memref<8192x4096xf16>) attrs =  {fp8.gemm_epilogue} {
    ^bb0(%in: f16, %in_3: f16, %out: f16):
      %0 = arith.addf %in, %in_3 : f16
      linalg.yield %0 : f16
    }
    memref.dealloc %alloc : memref<8192x4096xf32>
    memref.dealloc %alloc_0 : memref<8192x4096xf32>
    memref.dealloc %alloc_1 : memref<4096x4096xf32>
    memref.dealloc %alloc_2 : memref<8192x4096xf16>
    return
  }
  func.func @__fp8_gemm_5(%arg0: memref<8192x14336xf8E4M3FN>, %arg1: memref<8192x112xf32>, %arg2: memref<4096x14336xf8E4M3FN>, %arg3: memref<32x112xf32>, %arg4: memref<8192x4096xf16>, %arg5: memref<8192x4096xf16>) attributes {fp8.gemm = {epilogue = 0 : i32, epilogue_inputs = 1 : i64, has_bias = false, lhs_layout = #fp8.layout<block 1x128>, rhs_layout = #fp8.layout<block 128x128>, transpose_rhs = true}} {
    %cst = arith.constant 0.000000e+00 : f32
    %alloc = memref.alloc() {alignment = 64 : i64} : memref<8192x14336xf32>
    linalg.generic {indexing_maps = [#map4, #map5, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<8192x14336xf8E4M3FN>, memref<8192x112xf32>) outs(%alloc : memref<8192x14336xf32>) {
    ^bb0(%in: f8E4M3FN, %in_3: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_3 : f32
      linalg.yield %1 : f32
    }
    %alloc_0 = memref.alloc() {alignment = 64 : i64} : memref<4096x14336xf32>
    linalg.generic {indexing_maps = [#map4, #map10, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg2, %arg3 : memref<4096x14336xf8E4M3FN>, memref<32x112xf32>) outs(%alloc_0 : memref<4096x14336xf32>) {
    ^bb0(%in: f8E4M3FN, %in_3: f32, %out: f32):
      %0 = arith.extf %in : f8E4M3FN to f32
      %1 = arith.mulf %0, %in_3 : f32
      linalg.yield %1 : f32
    }
    %alloc_1 = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf32>
    linalg.fill ins(%cst : f32) outs(%alloc_1 : memref<8192x4096xf32>)
    linalg.generic {indexing_maps = [#map11, #map12, #map1], iterator_types = ["parallel", "parallel", "reduction"]} ins(%alloc, %alloc_0 : memref<8192x14336xf32>, memref<4096x14336xf32>) outs(%alloc_1 : memref<8192x4096xf32>) {
    ^bb0(%in: f32, %in_3: f32, %out: f32):
      %0 = arith.mulf %in, %in_3 : f32
      %1 = arith.addf %out, %0 : f32
      linalg.yield %1 : f32
    }
    %alloc_2 = memref.alloc() {alignment = 64 : i64} : memref<8192x4096xf16>
    linalg.generic {indexing_maps = [#map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%alloc_1 : memref<8192x4096xf32>) outs(%alloc_2 : memref<8192x4096xf16>) {
    ^bb0(%in: f32, %out: f16):
      %0 = arith.truncf %in : f32 to f16
      linalg.yield %0 : f16
    }
    linalg.generic {indexing_maps = [#map4, #map4, #map4], iterator_types = ["parallel", "parallel"]} ins(%arg4, %alloc_2 : memref<8192x4096xf16>, memref<8192x4096xf16>) outs(%arg5 : memref<8192x4096xf16>) attrs =  {fp8.gemm_epilogue} {
    ^bb0(%in: f16, %in_3: f16, %out: f16):
      %0 = arith.addf %in, %in_3 : f16
      linalg.yield %0 : f16
    }
    memref.dealloc %alloc : memref<8192x14336xf32>
    memref.dealloc %alloc_0 : memref<4096x14336xf32>
    memref.dealloc %alloc_1 : memref<8192x4096xf32>
    memref.dealloc %alloc_2 : memref<8192x4096xf16>
    return
  }
}
