// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-gemm-to-gpu="tma-pipeline=false remarks=true" | FileCheck %s

// A GEMM function with a fused consumer (fp8-fuse-gemm-epilogues, then
// bufferization): the kernel takes the consumer's other input after the
// scales and applies the consumer's body in its epilogue -- the product
// rounded to f16 as the graph stored it, then SiLU(product) * input -- and
// stores the consumer's result.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func private @__fp8_gemm_silu
// CHECK:         gpu.launch_func @__fp8_gemm_silu_kernel::@__fp8_gemm_silu_kernel {{.*}} args({{.*}} : memref<8192xf8E4M3FN>, {{.*}} : memref<f32>, {{.*}} : memref<8192xf8E4M3FN>, {{.*}} : memref<f32>, {{.*}} : memref<4096xf16>, {{.*}} : memref<4096xf16>)
// CHECK:       gpu.func @__fp8_gemm_silu_kernel(%{{.*}}: memref<8192xf8E4M3FN>, %{{.*}}: memref<f32>, %{{.*}}: memref<8192xf8E4M3FN>, %{{.*}}: memref<f32>, %[[UP:.*]]: memref<4096xf16>, %[[OUT:.*]]: memref<4096xf16>)
// CHECK:         nvvm.wgmma.mma_async
// CHECK:         %[[P:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK:         %[[U:.*]] = memref.load %[[UP]][%{{.*}}] : memref<4096xf16>
// CHECK:         %[[N:.*]] = arith.negf %[[P]] : f16
// CHECK:         math.exp %[[N]] : f16
// CHECK:         %[[S:.*]] = arith.mulf %[[P]], %{{.*}} : f16
// CHECK:         arith.mulf %[[S]], %[[U]] : f16
// expected-remark @+1 {{fp8 gemm: wgmma kernel m64n64k32, CTA tile 64x64x128, promotion every 128 K, grid 1x1x1, fused element-wise epilogue (1 more inputs)}}
func.func private @__fp8_gemm_silu(%a: memref<64x128xf8E4M3FN>, %sa: memref<f32>,
    %w: memref<64x128xf8E4M3FN>, %sw: memref<f32>, %up: memref<1x64x64xf16>,
    %out: memref<1x64x64xf16>)
    attributes {fp8.gemm = {epilogue = 0 : i32, epilogue_inputs = 1 : i64, has_bias = false,
                            lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>,
                            transpose_rhs = true}} {
  %one = arith.constant 1.0 : f16
  %p = memref.alloc() : memref<64x64xf16>
  %px = memref.expand_shape %p [[0, 1], [2]] output_shape [1, 64, 64] : memref<64x64xf16> into memref<1x64x64xf16>
  linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%px, %up : memref<1x64x64xf16>, memref<1x64x64xf16>) outs(%out : memref<1x64x64xf16>)
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
  memref.dealloc %p : memref<64x64xf16>
  return
}

// -----

// A consumer that claims to fuse but reads an argument outside its inputs
// (here the lhs scale): the reference body stays, with the reason.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func private @__fp8_gemm_bad
// CHECK-NOT:     gpu.launch_func
// CHECK:         linalg.generic
// expected-remark @+1 {{fp8 gemm: keeping the reference body: fused epilogue: reads an argument that is not one of its inputs}}
func.func private @__fp8_gemm_bad(%a: memref<64x128xf8E4M3FN>, %sa: memref<f32>,
    %w: memref<64x128xf8E4M3FN>, %sw: memref<f32>, %x2: memref<64x64xf32>,
    %out: memref<64x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, epilogue_inputs = 1 : i64, has_bias = false,
                            lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>,
                            transpose_rhs = true}} {
  %p = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #scalar, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %sa : memref<64x64xf32>, memref<f32>) outs(%out : memref<64x64xf32>)
      attrs = {fp8.gemm_epilogue} {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %r = arith.mulf %v, %s : f32
    linalg.yield %r : f32
  }
  memref.dealloc %p : memref<64x64xf32>
  return
}

// -----

// Where bufferization did not write the consumer's result in place, it
// writes a buffer that is then copied whole into the output: the same
// kernel, which writes the output itself (the buffer and the copy go with
// the reference body). A row input ([N], indexed by column) as well.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func private @__fp8_gemm_copied
// CHECK-NOT:     memref.copy
// CHECK:         gpu.launch_func
// CHECK:       gpu.func @__fp8_gemm_copied_kernel(%{{.*}}: memref<8192xf8E4M3FN>, %{{.*}}: memref<f32>, %{{.*}}: memref<8192xf8E4M3FN>, %{{.*}}: memref<f32>, %[[B:.*]]: memref<64xbf16>, %{{.*}}: memref<4096xf32>)
// CHECK:         memref.load %[[B]][%{{.*}}] : memref<64xbf16>
// expected-remark @+1 {{fp8 gemm: wgmma kernel m64n64k32, CTA tile 64x64x128, promotion every 128 K, grid 1x1x1, fused element-wise epilogue (1 more inputs)}}
func.func private @__fp8_gemm_copied(%a: memref<64x128xf8E4M3FN>, %sa: memref<f32>,
    %w: memref<64x128xf8E4M3FN>, %sw: memref<f32>, %b: memref<64xbf16>,
    %out: memref<64x64xf32>)
    attributes {fp8.gemm = {epilogue = 0 : i32, epilogue_inputs = 1 : i64, has_bias = false,
                            lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>,
                            transpose_rhs = true}} {
  %p = memref.alloc() : memref<64x64xf32>
  %buf = memref.alloc() : memref<64x64xf32>
  linalg.generic {indexing_maps = [#id2, #col, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b : memref<64x64xf32>, memref<64xbf16>) outs(%buf : memref<64x64xf32>)
      attrs = {fp8.gemm_epilogue} {
  ^bb0(%v: f32, %bb: bf16, %o: f32):
    %e = arith.extf %bb : bf16 to f32
    %r = arith.addf %v, %e : f32
    linalg.yield %r : f32
  }
  memref.copy %buf, %out : memref<64x64xf32> to memref<64x64xf32>
  memref.dealloc %p : memref<64x64xf32>
  memref.dealloc %buf : memref<64x64xf32>
  return
}
