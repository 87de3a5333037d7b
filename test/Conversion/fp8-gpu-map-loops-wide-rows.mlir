// RUN: fp8-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=256 vector-width=8},canonicalize))' \
// RUN:   | FileCheck %s
// RUN: fp8-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=256 vector-width=8},canonicalize,cse))' \
// RUN:   | FileCheck %s --check-prefix=CSE

// Wide rows (RowReductions.h, kMaxRowWarps): few long rows get several
// warps of one block each instead of one warp. A decode step's RMSNorm ->
// rowwise quantization over [1, 2, 4096] f16: 2 rows of 512 vectors of 8,
// so 16 warps a row (512 threads, one vector each), one block a row. Each
// reduction (the sum of squares, then the chained amax of the norm's
// output) takes a butterfly in each warp, lane 0 of every warp stores the
// warp's total in a workgroup buffer of 16, a barrier, and every lane folds
// the 16 totals in warp order; the buffers are the launch's workgroup
// attributions. The passes stride the row by 512 x 8: one step a lane, no
// loop.
// CHECK-LABEL: func.func @norm_rowwise_quantize
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c2, {{.*}} threads({{.*}}) in (%{{.*}} = %c512, {{.*}} workgroup(%[[SUM:.*]] : memref<16xf32, #gpu.address_space<workgroup>>, %[[AMAX:.*]] : memref<16xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT:       gpu.launch
// CHECK-NOT:       scf.for
// CHECK:           vector.load %{{.*}} : memref<1x2x4096xf16>, vector<8xf16>
// CHECK:           gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
// CHECK:           %[[W:.*]] = arith.divui %{{.*}}, %c32 : index
// CHECK:           %[[R:.*]] = arith.remui %{{.*}}, %c32 : index
// CHECK:           %[[LEAD:.*]] = arith.cmpi eq, %[[R]], %c0 : index
// CHECK:           scf.if %[[LEAD]] {
// CHECK-NEXT:        memref.store %{{.*}}, %[[SUM]][%[[W]]]
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      %[[S0:.*]] = memref.load %[[SUM]][%c0]
// CHECK-NEXT:      %[[S1:.*]] = memref.load %[[SUM]][%c1]
// CHECK-NEXT:      arith.addf %[[S1]], %[[S0]] : f32
// CHECK:           memref.load %[[SUM]][%c15]
// CHECK:           math.rsqrt
// CHECK:             arith.maximumf
// CHECK:             vector.store %{{.*}} : memref<1x2x4096xf16>, vector<8xf16>
// CHECK:           gpu.shuffle  xor
// CHECK:           scf.if
// CHECK-NEXT:        memref.store %{{.*}}, %[[AMAX]]
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.barrier
// CHECK:           memref.load %[[AMAX]][%c15]
// CHECK:           arith.divf
// CHECK:             vector.store %{{.*}} : memref<2x4096xf8E4M3FN>, vector<8xf8E4M3FN>
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     linalg.fill
// CHECK:         return
func.func @norm_rowwise_quantize(%x: memref<1x2x4096xf16>, %w: memref<4096xf16>) -> (memref<2xf32>, memref<1x2x1xf32>, memref<2xf32>, memref<2x1xf32>, memref<2x4096xf8E4M3FN>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 0.000244140625 : f32
  %eps = arith.constant 1.0e-5 : f32
  %fmax = arith.constant 448.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  %sum3 = memref.expand_shape %sum [[0, 1]] output_shape [1, 2] : memref<2xf32> into memref<1x2xf32>
  linalg.fill ins(%zero : f32) outs(%sum3 : memref<1x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<1x2x4096xf16>) outs(%sum3 : memref<1x2xf32>) {
  ^bb0(%a: f16, %acc: f32):
    %e = arith.extf %a : f16 to f32
    %sq = arith.mulf %e, %e : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %view = memref.expand_shape %sum [[0, 1, 2]] output_shape [1, 2, 1] : memref<2xf32> into memref<1x2x1xf32>
  %inv = memref.alloc() : memref<1x2x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%view : memref<1x2x1xf32>) outs(%inv : memref<1x2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %n : f32
    %e = arith.addf %m, %eps : f32
    %r = math.rsqrt %e : f32
    linalg.yield %r : f32
  }
  %y = memref.alloc() : memref<1x2x4096xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1, 0)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w, %x, %inv : memref<4096xf16>, memref<1x2x4096xf16>, memref<1x2x1xf32>) outs(%y : memref<1x2x4096xf16>) {
  ^bb0(%g: f16, %a: f16, %r: f32, %o: f16):
    %e = arith.extf %a : f16 to f32
    %t = arith.mulf %e, %r : f32
    %h = arith.truncf %t : f32 to f16
    %u = arith.mulf %g, %h : f16
    linalg.yield %u : f16
  }
  %y2 = memref.collapse_shape %y [[0, 1], [2]] : memref<1x2x4096xf16> into memref<2x4096xf16>
  %amax = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y2 : memref<2x4096xf16>) outs(%amax : memref<2xf32>) {
  ^bb0(%a: f16, %acc: f32):
    %e = arith.extf %a : f16 to f32
    %abs = math.absf %e : f32
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
  %q = memref.alloc() : memref<2x4096xf8E4M3FN>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y2, %scale : memref<2x4096xf16>, memref<2x1xf32>) outs(%q : memref<2x4096xf8E4M3FN>) {
  ^bb0(%a: f16, %s: f32, %o: f8E4M3FN):
    %e = arith.extf %a : f16 to f32
    %d = arith.divf %e, %s : f32
    %t = arith.truncf %d : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  return %sum, %inv, %amax, %scale, %q : memref<2xf32>, memref<1x2x1xf32>, memref<2xf32>, memref<2x1xf32>, memref<2x4096xf8E4M3FN>
}

// -----

// 128 rows of 4096 f32: the row could take 16 warps, but rows x warps stays
// within kWideRowWarpBudget (1024): 8 warps a row, 256 threads a block.
// CHECK-LABEL: func.func @row_sum_budget
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c128, {{.*}} threads({{.*}}) in (%{{.*}} = %c256, {{.*}} workgroup(%{{.*}} : memref<8xf32, #gpu.address_space<workgroup>>)
// CHECK:           gpu.barrier
// CHECK:         return
func.func @row_sum_budget(%a: memref<128x4096xf32>, %r: memref<128xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<128xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<128x4096xf32>) outs(%r : memref<128xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Many rows (2048 of 4096: a prefill's norm) keep a warp a row: 2048
// warps already fill the GPU. No workgroup buffer, no barrier.
// CHECK-LABEL: func.func @many_rows
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c256, {{.*}} threads({{.*}}) in (%{{.*}} = %c256,
// CHECK-NOT:       workgroup
// CHECK-NOT:       gpu.barrier
// CHECK:         return
func.func @many_rows(%a: memref<2048x4096xf32>, %r: memref<2048xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<2048xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2048x4096xf32>) outs(%r : memref<2048xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row of 16384 f32 without a fill: 16 warps, one block; the lanes agree
// on the total (the warps' totals folded in order) and lane 0 folds it into
// the loaded output.
// CHECK-LABEL: func.func @one_long_row_no_fill
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, {{.*}} threads({{.*}}) in (%{{.*}} = %c512, {{.*}} workgroup(%[[T:.*]] : memref<16xf32, #gpu.address_space<workgroup>>)
// CHECK:           gpu.barrier
// CHECK:           %[[L:.*]] = memref.load %[[T]][%c15]
// CHECK:           %[[TOT:.*]] = arith.maximumf %[[L]], %{{.*}} : f32
// CHECK:           scf.if
// CHECK:             %[[OLD:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK:             %[[NEW:.*]] = arith.maximumf %[[TOT]], %[[OLD]] : f32
// CHECK:             memref.store %[[NEW]]
// CHECK:         return
func.func @one_long_row_no_fill(%a: memref<16384xf32>, %r: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%a : memref<16384xf32>) outs(%r : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A decode step's FFN activation quantization (SiLU(gate) * up recomputed
// in its row kernel, RowReductions.cpp): one row of 14336 f16, 16 warps of
// vectors of 8, 14336 = 3.5 x 512 x 8. The amax pass is unrolled: a lane's
// four steps' loads of gate and up first (the fourth, the first 256 lanes'
// only, under `column < 14336`, zeros elsewhere), then the steps'
// arithmetic in order, the fourth step's by every lane and kept (select)
// where its column is in the row. The quantizing pass takes the vectors
// the amax pass loaded (StepVectors: gate and up are not loaded again)
// and stores its steps, the fourth under the guard. After CSE, each
// element's SiLU(gate) * up is evaluated once: 32 exps a lane (4 steps x
// 8), all before the barrier (until 2026-12-07: 64, and two loads of each).
// CHECK-LABEL: func.func @silu_up_rowwise_quantize
// CHECK:         gpu.launch blocks({{.*}}) in (%{{.*}} = %c1, {{.*}} threads({{.*}}) in (%{{.*}} = %c512,
// CHECK-NOT:       scf.for
// CHECK:           %[[K0:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK:           vector.load %arg0[%{{[0-9a-z_]+}}, %[[K0]]] {{.*}}: memref<1x14336xf16>, vector<8xf16>
// CHECK:           vector.load %arg1[%{{[0-9a-z_]+}}, %[[K0]]] {{.*}}: memref<1x14336xf16>, vector<8xf16>
// CHECK:           %[[K1:.*]] = arith.addi %[[K0]], %c4096 : index
// CHECK:           vector.load %arg0[%{{[0-9a-z_]+}}, %[[K1]]]
// CHECK:           vector.load %arg1[%{{[0-9a-z_]+}}, %[[K1]]]
// CHECK:           %[[K2:.*]] = arith.addi %[[K0]], %c8192 : index
// CHECK:           vector.load %arg0[%{{[0-9a-z_]+}}, %[[K2]]]
// CHECK:           vector.load %arg1[%{{[0-9a-z_]+}}, %[[K2]]]
// CHECK:           %[[K3:.*]] = arith.addi %[[K0]], %c12288 : index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[K3]], %c14336 : index
// CHECK:           scf.if %[[IN]] -> (vector<8xf16>, vector<8xf16>) {
// CHECK:             vector.load %arg0[%{{[0-9a-z_]+}}, %[[K3]]]
// CHECK:             vector.load %arg1[%{{[0-9a-z_]+}}, %[[K3]]]
// CHECK:           } else {
// CHECK:           math.exp
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK:           gpu.barrier
// CHECK-NOT:       vector.load
// CHECK:           vector.store %{{.*}}, %{{.*}} {{.*}}: memref<1x14336xf8E4M3FN>, vector<8xf8E4M3FN>
// CHECK-NOT:       vector.load
// CHECK:           vector.store
// CHECK-NOT:       vector.load
// CHECK:           vector.store
// CHECK-NOT:       vector.load
// CHECK:           scf.if
// CHECK-NEXT:        vector.store
// CHECK-NOT:     gpu.launch
// CHECK:         return
// CSE-LABEL: func.func @silu_up_rowwise_quantize
// CSE-COUNT-32:    math.exp
// CSE-NOT:         math.exp
// CSE:             gpu.barrier
// CSE-NOT:         math.exp
// CSE-NOT:         vector.load
// CSE:             vector.store
// CSE-NOT:         math.exp
// CSE:           return
#silu2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @silu_up_rowwise_quantize(%g: memref<1x14336xf16>, %u: memref<1x14336xf16>) -> (memref<1xf32>, memref<1x1xf32>, memref<1x14336xf8E4M3FN>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %max = arith.constant 448.0 : f32
  %amax = memref.alloc() : memref<1xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<1xf32>)
  linalg.generic {indexing_maps = [#silu2, #silu2, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%g, %u : memref<1x14336xf16>, memref<1x14336xf16>) outs(%amax : memref<1xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ga = arith.extf %a : f16 to f32
    %ub = arith.extf %b : f16 to f32
    %n = arith.negf %ga : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %ga, %d : f32
    %h = arith.mulf %s, %ub : f32
    %abs = math.absf %h : f32
    %m = arith.maximumf %acc, %abs : f32
    linalg.yield %m : f32
  }
  %view = memref.expand_shape %amax [[0, 1]] output_shape [1, 1] : memref<1xf32> into memref<1x1xf32>
  %scale = memref.alloc() : memref<1x1xf32>
  linalg.generic {indexing_maps = [#silu2, #silu2], iterator_types = ["parallel", "parallel"]}
      ins(%view : memref<1x1xf32>) outs(%scale : memref<1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.divf %max, %a : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc() : memref<1x14336xf8E4M3FN>
  linalg.generic {indexing_maps = [#silu2, #silu2, affine_map<(d0, d1) -> (d0, 0)>, #silu2],
                  iterator_types = ["parallel", "parallel"]}
      ins(%g, %u, %scale : memref<1x14336xf16>, memref<1x14336xf16>, memref<1x1xf32>) outs(%q : memref<1x14336xf8E4M3FN>) {
  ^bb0(%a: f16, %b: f16, %sc: f32, %o: f8E4M3FN):
    %ga = arith.extf %a : f16 to f32
    %ub = arith.extf %b : f16 to f32
    %n = arith.negf %ga : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %ga, %d : f32
    %h = arith.mulf %s, %ub : f32
    %m = arith.mulf %h, %sc : f32
    %t = arith.truncf %m : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  return %amax, %scale, %q : memref<1xf32>, memref<1x1xf32>, memref<1x14336xf8E4M3FN>
}

// -----

// The prefill FFN activation's 1 x 128 block quantization, as the block
// recipe's graph bufferizes it: gate and up are the two column halves of
// the merged gate/up GEMM's output (subviews), the amax reads them as
// [rows, blocks, 128] expand_shape views, the quantization as [rows,
// columns] subviews. Those are the same elements (StepVectors compares the
// buffer under the views and the element's offset in it): the quantizing
// stage takes the vectors the amax pass loaded -- one load of each a lane
// (16 lanes of 8 per block) -- and, after CSE, each element's SiLU(gate) *
// up is evaluated once (8 exps a lane; until 2026-12-07 two loads of each
// and 16 exps: the views did not match).
// CHECK-LABEL: func.func @silu_up_block_quantize_views
// CHECK:         gpu.launch
// CHECK:           vector.load %{{.*}} : memref<4x2x128xf16, strided<[512, 128, 1]>>, vector<8xf16>
// CHECK:           vector.load %{{.*}} : memref<4x2x128xf16, strided<[512, 128, 1], offset: 256>>, vector<8xf16>
// CHECK-NOT:       vector.load
// CHECK:           vector.store %{{.*}} : memref<4x256xf8E4M3FN>, vector<8xf8E4M3FN>
// CHECK-NOT:     gpu.launch
// CHECK:         return
// CSE-LABEL: func.func @silu_up_block_quantize_views
// CSE-COUNT-8:     math.exp
// CSE-NOT:         math.exp
// CSE-NOT:         vector.load
// CSE:             vector.store
// CSE:           return
func.func @silu_up_block_quantize_views(%gu: memref<4x512xf16>) -> (memref<4x2xf32>, memref<4x256xf8E4M3FN>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f16
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %g = memref.subview %gu[0, 0] [4, 256] [1, 1] : memref<4x512xf16> to memref<4x256xf16, strided<[512, 1]>>
  %u = memref.subview %gu[0, 256] [4, 256] [1, 1] : memref<4x512xf16> to memref<4x256xf16, strided<[512, 1], offset: 256>>
  %amax = memref.alloc() : memref<4x2xf32>
  %gb = memref.expand_shape %g [[0], [1, 2]] output_shape [4, 2, 128] : memref<4x256xf16, strided<[512, 1]>> into memref<4x2x128xf16, strided<[512, 128, 1]>>
  %ub = memref.expand_shape %u [[0], [1, 2]] output_shape [4, 2, 128] : memref<4x256xf16, strided<[512, 1], offset: 256>> into memref<4x2x128xf16, strided<[512, 128, 1], offset: 256>>
  linalg.fill ins(%zero : f32) outs(%amax : memref<4x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%gb, %ub : memref<4x2x128xf16, strided<[512, 128, 1]>>, memref<4x2x128xf16, strided<[512, 128, 1], offset: 256>>) outs(%amax : memref<4x2xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %n = arith.negf %a : f16
    %e = math.exp %n : f16
    %d = arith.addf %e, %one : f16
    %r = arith.divf %one, %d : f16
    %s = arith.mulf %a, %r : f16
    %h = arith.mulf %s, %b : f16
    %x = arith.extf %h : f16 to f32
    %abs = math.absf %x : f32
    %m = arith.maximumf %acc, %abs : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%amax : memref<4x2xf32>) outs(%amax : memref<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.divf %a, %max : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc() : memref<4x256xf8E4M3FN>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1 floordiv 128)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%g, %u, %amax : memref<4x256xf16, strided<[512, 1]>>, memref<4x256xf16, strided<[512, 1], offset: 256>>, memref<4x2xf32>) outs(%q : memref<4x256xf8E4M3FN>) {
  ^bb0(%a: f16, %b: f16, %sc: f32, %o: f8E4M3FN):
    %n = arith.negf %a : f16
    %e = math.exp %n : f16
    %d = arith.addf %e, %one : f16
    %r = arith.divf %one, %d : f16
    %s = arith.mulf %a, %r : f16
    %h = arith.mulf %s, %b : f16
    %x = arith.extf %h : f16 to f32
    %y = arith.divf %x, %sc : f32
    %c1 = arith.minimumf %y, %max : f32
    %c2 = arith.maximumf %c1, %min : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  return %amax, %q : memref<4x2xf32>, memref<4x256xf8E4M3FN>
}
