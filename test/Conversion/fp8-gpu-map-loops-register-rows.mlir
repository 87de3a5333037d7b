// RUN: fp8-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=256 vector-width=8 register-rows=true},canonicalize,cse))' \
// RUN:   | FileCheck %s
// RUN: fp8-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=256 vector-width=8},canonicalize,cse))' \
// RUN:   | FileCheck %s --check-prefix=WARP

// Register rows (fp8-gpu-map-loops{register-rows}, RowReductions.h): a
// prefill's rowwise quantization of the FFN activation, SiLU(gate) * up
// over 8192 rows of 14336 f16, its amax, then x / scale. A warp a row
// (without the option: more rows than kWideRowWarpBudget allows wide)
// walks the row twice, loading gate and up in each pass. With the option
// each row gets 8 warps (256 lanes, one block), so that a lane's 7 steps
// of 8 elements unroll: the 14 loads of the amax pass are all there is,
// and the quantization takes their registers.
// CHECK-LABEL: func.func @ffn_rowwise_quantize
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c8192, {{.*}} threads({{.*}}) in (%{{.*}} = %c256,
// CHECK-COUNT-14:  vector.load %{{.*}} : memref<8192x14336xf16, strided<{{.*}}>>, vector<8xf16>
// CHECK-NOT:       vector.load
// CHECK:           gpu.barrier
// CHECK-NOT:       vector.load
// CHECK-COUNT-7:   vector.store %{{.*}} : memref<8192x14336xf8E4M3FN>, vector<8xf8E4M3FN>
// CHECK-NOT:     gpu.launch
// A warp a row: a loop over the row in each pass, each loading gate and up.
// WARP-LABEL: func.func @ffn_rowwise_quantize
// WARP:         gpu.launch
// WARP-NOT:       gpu.barrier
// WARP:           scf.for
// WARP:             vector.load %{{.*}} : memref<8192x14336xf16, strided<{{.*}}>>, vector<8xf16>
// WARP:           scf.for
// WARP:             vector.load %{{.*}} : memref<8192x14336xf16, strided<{{.*}}>>, vector<8xf16>
func.func @ffn_rowwise_quantize(%gu: memref<8192x28672xf16>) -> (memref<8192xf32>, memref<8192x14336xf8E4M3FN>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f16
  %fmax = arith.constant 448.0 : f32
  %gate = memref.subview %gu[0, 0] [8192, 14336] [1, 1] : memref<8192x28672xf16> to memref<8192x14336xf16, strided<[28672, 1]>>
  %up = memref.subview %gu[0, 14336] [8192, 14336] [1, 1] : memref<8192x28672xf16> to memref<8192x14336xf16, strided<[28672, 1], offset: 14336>>
  %amax = memref.alloc() : memref<8192xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<8192xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%gate, %up : memref<8192x14336xf16, strided<[28672, 1]>>, memref<8192x14336xf16, strided<[28672, 1], offset: 14336>>) outs(%amax : memref<8192xf32>) {
  ^bb0(%g: f16, %u: f16, %acc: f32):
    %n = arith.negf %g : f16
    %e = math.exp %n : f16
    %d = arith.addf %e, %one : f16
    %s = arith.divf %g, %d : f16
    %y = arith.mulf %s, %u : f16
    %y32 = arith.extf %y : f16 to f32
    %abs = math.absf %y32 : f32
    %m = arith.maximumf %acc, %abs : f32
    linalg.yield %m : f32
  }
  %amax2 = memref.expand_shape %amax [[0, 1]] output_shape [8192, 1] : memref<8192xf32> into memref<8192x1xf32>
  %scale = memref.alloc() : memref<8192x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%amax2 : memref<8192x1xf32>) outs(%scale : memref<8192x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.divf %a, %fmax : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc() : memref<8192x14336xf8E4M3FN>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %scale : memref<8192x14336xf16, strided<[28672, 1]>>, memref<8192x14336xf16, strided<[28672, 1], offset: 14336>>, memref<8192x1xf32>) outs(%q : memref<8192x14336xf8E4M3FN>) {
  ^bb0(%g: f16, %u: f16, %sc: f32, %o: f8E4M3FN):
    %n = arith.negf %g : f16
    %e = math.exp %n : f16
    %d = arith.addf %e, %one : f16
    %s = arith.divf %g, %d : f16
    %y = arith.mulf %s, %u : f16
    %y32 = arith.extf %y : f16 to f32
    %v = arith.divf %y32, %sc : f32
    %t = arith.truncf %v : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  return %amax, %q : memref<8192xf32>, memref<8192x14336xf8E4M3FN>
}

// -----

// Few rows (a decode step's 2 tokens) keep the wide rows' 16 warps a row
// (one vector a lane, no loop) rather than the 8 that register rows need:
// the option only ever adds warps.
// CHECK-LABEL: func.func @decode_rows_keep_wide_blocks
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c2, {{.*}} threads({{.*}}) in (%{{.*}} = %c512,
// CHECK-NOT:       scf.for
// WARP-LABEL: func.func @decode_rows_keep_wide_blocks
// WARP:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c2, {{.*}} threads({{.*}}) in (%{{.*}} = %c512,
func.func @decode_rows_keep_wide_blocks(%gu: memref<2x28672xf16>) -> (memref<2xf32>, memref<2x14336xf8E4M3FN>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f16
  %fmax = arith.constant 448.0 : f32
  %gate = memref.subview %gu[0, 0] [2, 14336] [1, 1] : memref<2x28672xf16> to memref<2x14336xf16, strided<[28672, 1]>>
  %up = memref.subview %gu[0, 14336] [2, 14336] [1, 1] : memref<2x28672xf16> to memref<2x14336xf16, strided<[28672, 1], offset: 14336>>
  %amax = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%gate, %up : memref<2x14336xf16, strided<[28672, 1]>>, memref<2x14336xf16, strided<[28672, 1], offset: 14336>>) outs(%amax : memref<2xf32>) {
  ^bb0(%g: f16, %u: f16, %acc: f32):
    %n = arith.negf %g : f16
    %e = math.exp %n : f16
    %d = arith.addf %e, %one : f16
    %s = arith.divf %g, %d : f16
    %y = arith.mulf %s, %u : f16
    %y32 = arith.extf %y : f16 to f32
    %abs = math.absf %y32 : f32
    %m = arith.maximumf %acc, %abs : f32
    linalg.yield %m : f32
  }
  %amax2 = memref.expand_shape %amax [[0, 1]] output_shape [2, 1] : memref<2xf32> into memref<2x1xf32>
  %scale = memref.alloc() : memref<2x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%amax2 : memref<2x1xf32>) outs(%scale : memref<2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.divf %a, %fmax : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc() : memref<2x14336xf8E4M3FN>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up, %scale : memref<2x14336xf16, strided<[28672, 1]>>, memref<2x14336xf16, strided<[28672, 1], offset: 14336>>, memref<2x1xf32>) outs(%q : memref<2x14336xf8E4M3FN>) {
  ^bb0(%g: f16, %u: f16, %sc: f32, %o: f8E4M3FN):
    %n = arith.negf %g : f16
    %e = math.exp %n : f16
    %d = arith.addf %e, %one : f16
    %s = arith.divf %g, %d : f16
    %y = arith.mulf %s, %u : f16
    %y32 = arith.extf %y : f16 to f32
    %v = arith.divf %y32, %sc : f32
    %t = arith.truncf %v : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  return %amax, %q : memref<2xf32>, memref<2x14336xf8E4M3FN>
}
