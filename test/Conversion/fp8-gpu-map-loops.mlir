// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=128 vector-width=1},canonicalize))' \
// RUN:   | FileCheck %s

// A 3-d element-wise op: one linear index over 2*3*40 = 240 elements, two
// blocks of 128 threads, the tail guarded, indices recovered by div/rem by
// constants, in i32 (a static nest of fewer than 2^31 threads).
// CHECK-LABEL: func.func @elementwise
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK:           %[[LIN:.*]] = arith.addi {{.*}} : i32
// CHECK:           %[[IN:.*]] = arith.cmpi slt, %[[LIN]], %c240_i32 : i32
// CHECK:           scf.if %[[IN]] {
// CHECK:             arith.remui %[[LIN]], %c40_i32 : i32
// CHECK:             arith.divui %[[LIN]], %c40_i32 : i32
// CHECK:             arith.index_castui {{.*}} : i32 to index
// CHECK:             memref.load
// CHECK:             arith.mulf
// CHECK:             memref.store
// CHECK:         return
func.func @elementwise(%a: memref<2x3x40xf32>, %b: memref<2x3x40xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<2x3x40xf32>) outs(%b : memref<2x3x40xf32>) {
  ^bb0(%x: f32, %y: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A row reduction written reduction-first: interchanged so the row is the
// parallel (thread) index and the reduction a loop inside the thread; a
// small static nest gets a block of 32 threads, not 128.
// CHECK-LABEL: func.func @row_sum
// CHECK:         gpu.launch {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c32
// CHECK:           scf.if
// CHECK:             scf.for
// CHECK:               memref.load
// CHECK:               arith.addf
func.func @row_sum(%a: memref<16x8xf32>, %r: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<16x8xf32>) outs(%r : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A full reduction (per-tensor amax) has no parallel loop: one thread. The
// 0-d memref.copy after it is sequential code too and joins that kernel;
// allocation and deallocation stay on the host.
// CHECK-LABEL: func.func @full_reduction
// CHECK:         memref.alloc
// CHECK:         gpu.launch {{.*}} in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads({{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               arith.maximumf
// CHECK:           memref.store %{{.*}}, %arg1[]
// CHECK:           gpu.terminator
// CHECK:         memref.dealloc
// CHECK-NOT:     memref.copy
func.func @full_reduction(%a: memref<4x8xf32>, %out: memref<f32>) {
  %tmp = memref.alloc() : memref<f32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%tmp : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %x, %acc : f32
    linalg.yield %m : f32
  }
  memref.copy %tmp, %out : memref<f32> to memref<f32>
  memref.dealloc %tmp : memref<f32>
  return
}

// -----

// A value loaded by a kernel cannot flow back to host code.
func.func @escape(%a: memref<4xindex>) -> index {
  %c0 = arith.constant 0 : index
  // expected-error @below {{result is used on the host after the GPU kernel that computes it}}
  %v = memref.load %a[%c0] : memref<4xindex>
  return %v : index
}

// -----

// A row reduction at least a warp long (softmax's sum of exp(x - max)): a
// warp per row. 24 rows x 32 lanes = 768 threads (6 blocks of 128); lane l
// folds elements l, l + 32, l + 64, l + 96 from 0 (addf's identity): its
// four steps unrolled, their loads first, then the folds in order; five
// shuffles combine the lanes, lane 0 adds the total into the output.
// CHECK-LABEL: func.func @row_sum_warps
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c6, {{.*}} threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128
// CHECK:           %[[LANEI:.*]] = arith.remui %{{.*}}, %c32_i32 : i32
// CHECK:           %[[LANE:.*]] = arith.index_castui %[[LANEI]] : i32 to index
// CHECK-NOT:       scf.for
// CHECK:           %[[X0:.*]] = memref.load %arg0[%[[ROW:.*]], %[[LANE]]]
// CHECK:           %[[K1:.*]] = arith.addi %[[LANE]], %c32
// CHECK:           %[[X1:.*]] = memref.load %arg0[%[[ROW]], %[[K1]]]
// CHECK:           %[[K2:.*]] = arith.addi %[[LANE]], %c64
// CHECK:           memref.load %arg0[%[[ROW]], %[[K2]]]
// CHECK:           %[[K3:.*]] = arith.addi %[[LANE]], %c96
// CHECK:           memref.load %arg0[%[[ROW]], %[[K3]]]
// CHECK-NOT:       memref.load %arg0
// CHECK:           arith.subf %[[X0]]
// CHECK:           math.exp
// CHECK:           %[[S0:.*]] = arith.addf %{{.*}}, %cst
// CHECK:           arith.subf %[[X1]]
// CHECK:           math.exp
// CHECK:           arith.addf %{{.*}}, %[[S0]]
// CHECK-COUNT-2:   math.exp
// CHECK:           %[[SUM:.*]] = arith.addf
// CHECK-NOT:       memref.load %arg0
// CHECK:           gpu.shuffle  xor %[[SUM]], %c16_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// CHECK:           arith.cmpi eq, %[[LANE]], %c0
// CHECK:           scf.if
// CHECK:             memref.load %arg2
// CHECK:             arith.addf
// CHECK:             memref.store %{{.*}}, %arg2
func.func @row_sum_warps(%a: memref<24x128xf32>, %m: memref<24xf32>, %r: memref<24xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %m : memref<24x128xf32>, memref<24xf32>) outs(%r : memref<24xf32>) {
  ^bb0(%x: f32, %mx: f32, %acc: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Run-time sizes (a softmax over a dynamic key length in a library with
// dynamic dimensions): still a warp per row, one element per lane per step
// up to the row's length read from the buffer; the grid (rows x 32 lanes
// in blocks of 128) is computed at launch, the output's initial value
// (its fill, a kernel of its own) loaded by lane 0.
// CHECK-LABEL: func.func @row_sum_warps_dynamic
// CHECK-DAG:     %[[ROWS:.*]] = memref.dim %arg0, %c0
// CHECK-DAG:     %[[LEN:.*]] = memref.dim %arg0, %c1
// CHECK:         gpu.launch
// CHECK:           %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %c32 iter_args
// CHECK:             math.exp
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           scf.if
// CHECK:             memref.load %arg2
// CHECK:             memref.store %{{.*}}, %arg2
func.func @row_sum_warps_dynamic(%a: memref<?x?xf32>, %m: memref<?xf32>, %r: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a, %m : memref<?x?xf32>, memref<?xf32>) outs(%r : memref<?xf32>) {
  ^bb0(%x: f32, %mx: f32, %acc: f32):
    %d = arith.subf %x, %mx : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----
// A static row too long to unroll whole (a prefill's RMSNorm mean: here
// 1024 rows of 1024, a warp per row, 32 steps of a lane): a loop whose
// iterations each take 8 steps, their 8 loads before the 8 folds, which
// stay in order (the same sum as one step an iteration).
// CHECK-LABEL: func.func @row_sum_long_rows
// CHECK:         gpu.launch
// CHECK:           %[[SUM:.*]] = scf.for %[[K:.*]] = %{{.*}} to %c1024 step %c256 iter_args(%[[ACC:.*]] = %cst)
// CHECK:             %[[X0:.*]] = memref.load %arg0[%{{.*}}, %[[K]]]
// CHECK:             %[[K1:.*]] = arith.addi %[[K]], %c32
// CHECK:             %[[X1:.*]] = memref.load %arg0[%{{.*}}, %[[K1]]]
// CHECK-COUNT-6:     memref.load %arg0
// CHECK-NOT:         memref.load
// CHECK:             %[[Q0:.*]] = arith.mulf %[[X0]], %[[X0]]
// CHECK:             %[[S0:.*]] = arith.addf %[[Q0]], %[[ACC]]
// CHECK:             %[[Q1:.*]] = arith.mulf %[[X1]], %[[X1]]
// CHECK:             arith.addf %[[Q1]], %[[S0]]
// CHECK-COUNT-6:     arith.addf
// CHECK-NEXT:        scf.yield
// CHECK-COUNT-5:   gpu.shuffle  xor
func.func @row_sum_long_rows(%a: memref<1024x1024xf32>, %r: memref<1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<1024x1024xf32>) outs(%r : memref<1024xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %q = arith.mulf %x, %x : f32
    %s = arith.addf %q, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----


// Block amaxes (1x32 blocks of two 64-wide rows): one element a lane (the
// max with -inf, maximumf's identity, folded away).
// CHECK-LABEL: func.func @block_amax_warps
// CHECK-NOT:       scf.for
// CHECK:           %[[X:.*]] = memref.load %arg0
// CHECK:           %[[A:.*]] = math.absf %[[X]] : f32
// CHECK:           gpu.shuffle  xor %[[A]], %c16_i32
// CHECK-COUNT-4:   gpu.shuffle  xor
func.func @block_amax_warps(%a: memref<2x2x32xf32>, %r: memref<2x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a : memref<2x2x32xf32>) outs(%r : memref<2x2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %ab = math.absf %x : f32
    %mx = arith.maximumf %ab, %acc : f32
    linalg.yield %mx : f32
  }
  return
}

// -----

// A fill that initializes the whole output just before a row reduction
// (what bufferization makes of a reduction's init) is folded into it: one
// kernel, every lane computes max(total, the fill's value: 0, as an amax
// starts) and lane 0 stores it, without loading. A fill the reduction does not cover entirely (rows 0..1
// of 4), or one separated from it by a write to memory, stays a kernel of
// its own (fill_kept: 2 fills, 2 reductions, the scalar store).
// CHECK-LABEL: func.func @fill_folded
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-COUNT-1: gpu.launch
// CHECK-NOT:     gpu.launch
// CHECK-NOT:       memref.load %arg1
// CHECK:           gpu.shuffle  xor
// CHECK-NOT:       memref.load %arg1
// CHECK:           %[[M:.*]] = arith.maximumf %{{.*}}, %[[ZERO]] : f32
// CHECK:           scf.if
// CHECK:             memref.store %[[M]], %arg1
func.func @fill_folded(%a: memref<2x64xf32>, %r: memref<2xf32>) {
  %neg = arith.constant 0.0 : f32
  linalg.fill ins(%neg : f32) outs(%r : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x64xf32>) outs(%r : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %ab = math.absf %x : f32
    %mx = arith.maximumf %ab, %acc : f32
    linalg.yield %mx : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @fill_kept
// CHECK-COUNT-5: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @fill_kept(%a: memref<2x64xf32>, %r: memref<4xf32>, %b: memref<2x64xf32>, %t: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%r : memref<4xf32>)
  %rows = memref.subview %r[0] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x64xf32>) outs(%rows : memref<2xf32, strided<[1]>>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.fill ins(%zero : f32) outs(%t : memref<2xf32>)
  memref.store %zero, %b[%c0, %c0] : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<2x64xf32>) outs(%t : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// An element-wise generic right after a row reduction that reads only its
// output, element for element (RMSNorm's rsqrt(mean + eps), a recipe's
// scale after its amax), runs in the reduction's kernel: every lane computes
// the total and the consumer's value, lane 0 stores both at the same index.
// One kernel for fill, reduction and epilogue (more such stages:
// fp8-gpu-map-loops-row-stages.mlir).
// CHECK-LABEL: func.func @reduction_epilogue
// CHECK:         %[[INV:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         gpu.launch
// CHECK:           gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NEXT:      arith.addf
// CHECK:           %[[T:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:           %[[M:.*]] = arith.mulf %[[T]], %{{.*}} : f32
// CHECK:           %[[E:.*]] = arith.addf %[[M]], %{{.*}} : f32
// CHECK:           %[[R:.*]] = math.rsqrt %[[E]] : f32
// CHECK:           scf.if
// CHECK:             memref.store %[[T]], %arg1[%[[I:.*]]] : memref<4xf32>
// CHECK:             memref.store %[[R]], %[[INV]][%[[I]]] : memref<4xf32>
// The copy out is the second and last kernel.
// CHECK:         gpu.launch
// CHECK:           memref.store %{{.*}}, %arg2
// CHECK-NOT:     gpu.launch
func.func @reduction_epilogue(%a: memref<4x64xf32>, %sum: memref<4xf32>, %res: memref<4xf32>) {
  %inv = memref.alloc() : memref<4xf32>
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 0.015625 : f32
  %eps = arith.constant 1.0e-5 : f32
  linalg.fill ins(%zero : f32) outs(%sum : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x64xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%sum : memref<4xf32>) outs(%inv : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %n : f32
    %e = arith.addf %m, %eps : f32
    %r = math.rsqrt %e : f32
    linalg.yield %r : f32
  }
  memref.copy %inv, %res : memref<4xf32> to memref<4xf32>
  return
}

// -----

// A consumer that writes a buffer that is not a fresh allocation (it might
// alias the rows being read) stays a kernel of its own, whatever else it
// reads.
// CHECK-LABEL: func.func @reduction_no_epilogue
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @reduction_no_epilogue(%a: memref<4x64xf32>, %sum: memref<4xf32>, %b: memref<4xf32>, %out: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%sum : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x64xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%sum, %b : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  }
  linalg.fill ins(%zero : f32) outs(%sum : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x64xf32>) outs(%sum : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%sum : memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = math.sqrt %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A contraction (a loop-kernel matmul: the right operand is K x N, strided
// along K) keeps one thread per output: no shuffles.
// CHECK-LABEL: func.func @matmul_thread_per_output
// CHECK-NOT:     gpu.shuffle
// CHECK:         scf.for
// CHECK-NOT:     gpu.shuffle
// CHECK:         return
func.func @matmul_thread_per_output(%a: memref<8x64xf32>, %b: memref<64x16xf32>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x64xf32>, memref<64x16xf32>) outs(%c : memref<8x16xf32>)
  return
}

// -----

// An integer reduction (a run-time index check's first out-of-range
// position: lib/Import/BoundsChecks.cpp): a warp too, from minsi's identity
// INT32_MAX, i32 shuffles, the lane's position read through linalg.index.
// 100 = 3 x 32 + 4: the unrolled lane's fourth step is the first four
// lanes' only: its load under `column < 100` (zero elsewhere), its fold
// computed by every lane (the body is speculatable) and kept where the
// column is in the row.
// CHECK-LABEL: func.func @first_bad_position_warps
// CHECK-DAG:       %[[NONE:.*]] = arith.constant 2147483647 : i32
// CHECK-NOT:       scf.for
// CHECK:           %[[K3:.*]] = arith.addi %[[LANE:.*]], %c96 : index
// CHECK:           %[[IN:.*]] = arith.cmpi ult, %[[K3]], %c100 : index
// CHECK:           %[[X3:.*]] = scf.if %[[IN]] -> (i64) {
// CHECK:             memref.load %arg0[%[[K3]]]
// CHECK:           } else {
// CHECK:             scf.yield %c0_i64 : i64
// CHECK:           arith.cmpi sge, %{{.*}}, %c512_i64
// CHECK:           arith.select %{{.*}}, %{{.*}}, %[[NONE]]
// CHECK:           arith.minsi
// CHECK:           %[[PART:.*]] = arith.minsi
// CHECK:           %[[IN3:.*]] = arith.cmpi ult, %[[K3]], %c100 : index
// CHECK-NOT:       scf.if
// CHECK:           arith.cmpi sge, %[[X3]], %c512_i64
// CHECK:           %[[FOLD3:.*]] = arith.minsi %{{.*}}, %[[PART]]
// CHECK:           %[[LAST:.*]] = arith.select %[[IN3]], %[[FOLD3]], %[[PART]] : i32
// CHECK:           gpu.shuffle  xor %[[LAST]], %c16_i32, %c32_i32 : i32
// CHECK-COUNT-4:   gpu.shuffle  xor %{{.*}} : i32
// CHECK:           scf.if
// CHECK:             arith.minsi
// CHECK:             memref.store %{{.*}}, %arg1[] : memref<i32>
func.func @first_bad_position_warps(%idx: memref<100xi64>, %r: memref<i32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%idx : memref<100xi64>) outs(%r : memref<i32>) {
  ^bb0(%x: i64, %acc: i32):
    %p = linalg.index 0 : index
    %bound = arith.constant 512 : i64
    %bad = arith.cmpi sge, %x, %bound : i64
    %pi = arith.index_cast %p : index to i32
    %none = arith.constant 2147483647 : i32
    %cand = arith.select %bad, %pi, %none : i32
    %m = arith.minsi %cand, %acc : i32
    linalg.yield %m : i32
  }
  return
}
