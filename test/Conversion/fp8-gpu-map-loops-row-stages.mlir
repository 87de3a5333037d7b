// RUN: fp8-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=128 vector-width=4},canonicalize))' \
// RUN:   | FileCheck %s

// RMSNorm as bufferization leaves it: a fill, the row sum of squares, the
// per-row rsqrt(mean + eps) read through a keepdims view, and x * r * w
// over the row. One kernel: the rows are too short for 32 lanes of 4
// elements, so 16 lanes share a row (64 = 16 x 4) and a warp holds both
// rows; the sum's butterfly stays in each half (xor 8, 4, 2, 1), every lane
// takes its half's first lane's total (lane_id & -16), computes the rsqrt
// (the row's lane 0 stores both), then the lanes stride the row again for
// the normalized elements (vectors of 4): w loaded, x's vectors those the
// sum's pass loaded (StepVectors), not loaded again.
// CHECK-LABEL: func.func @rmsnorm
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c32,
// CHECK-NOT:       gpu.launch
// CHECK:           arith.remui %{{.*}}, %c16_i32
// CHECK:             %[[X:.*]] = vector.load %{{.*}} : memref<2x64xf32>, vector<4xf32>
// CHECK-NOT:       gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NEXT:      arith.addf
// CHECK:           %[[L:.*]] = gpu.lane_id
// CHECK:           %[[LI:.*]] = arith.index_castui %[[L]]
// CHECK:           %[[LEAD:.*]] = arith.andi %[[LI]], %c-16_i32
// CHECK:           %[[T0:.*]], %{{.*}} = gpu.shuffle  idx %{{.*}}, %[[LEAD]], %c32_i32
// CHECK:           %[[T:.*]] = arith.addf %[[T0]]
// CHECK:           %[[M:.*]] = arith.mulf %[[T]], %{{.*}} : f32
// CHECK:           %[[E:.*]] = arith.addf %[[M]], %{{.*}} : f32
// CHECK:           %[[R:.*]] = math.rsqrt %[[E]] : f32
// CHECK:           scf.if
// CHECK:             memref.store %[[T]], %{{.*}} : memref<2xf32>
// CHECK:             memref.store %[[R]], %{{.*}} : memref<2x1xf32>
// CHECK:           }
// CHECK:             vector.load %{{.*}} : memref<64xf32>, vector<4xf32>
// CHECK-NOT:         vector.load
// CHECK:             vector.extract %[[X]][0] : f32 from vector<4xf32>
// CHECK-NOT:         vector.load
// CHECK:             arith.mulf %{{.*}}, %[[R]] : f32
// CHECK:             vector.store %{{.*}} : memref<2x64xf32>, vector<4xf32>
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @rmsnorm(%x: memref<2x64xf32>, %w: memref<64xf32>) -> (memref<2xf32>, memref<2x1xf32>, memref<2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 0.015625 : f32
  %eps = arith.constant 1.0e-5 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %view = memref.expand_shape %sum [[0, 1]] output_shape [2, 1] : memref<2xf32> into memref<2x1xf32>
  %inv = memref.alloc() : memref<2x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%view : memref<2x1xf32>) outs(%inv : memref<2x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %n : f32
    %e = arith.addf %m, %eps : f32
    %r = math.rsqrt %e : f32
    linalg.yield %r : f32
  }
  %y = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%w, %x, %inv : memref<64xf32>, memref<2x64xf32>, memref<2x1xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%g: f32, %a: f32, %r: f32, %o: f32):
    %t = arith.mulf %a, %r : f32
    %u = arith.mulf %g, %t : f32
    linalg.yield %u : f32
  }
  return %sum, %inv, %y : memref<2xf32>, memref<2x1xf32>, memref<2x64xf32>
}

// -----

// A per-row quantization: the amax, its scale, the quantized row (the scale
// read per row through [4, 1]) and the scale's transposed [1, 4] copy, one
// kernel.
// Rows of 128: 32 lanes of 4 elements, a warp per row (the butterfly from
// xor 16, the total from lane 0).
// CHECK-LABEL: func.func @rowwise_quantize
// CHECK:         gpu.launch
// CHECK-NOT:       gpu.launch
// CHECK:           gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK:           gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NEXT:      arith.maximumf
// CHECK-NOT:       gpu.lane_id
// CHECK:           gpu.shuffle  idx %{{.*}}, %c0_i32
// CHECK:           %[[A:.*]] = arith.maximumf
// CHECK:           %[[S:.*]] = arith.divf %{{.*}}, %[[A]] : f32
// CHECK:           scf.if
// CHECK:             memref.store %[[A]], %{{.*}} : memref<4xf32>
// CHECK:             memref.store %[[S]], %{{.*}} : memref<4x1xf32>
// CHECK:             memref.store %[[S]], %{{.*}} : memref<1x4xf32>
// CHECK:           }
// CHECK:             arith.mulf %{{.*}}, %[[S]] : f32
// CHECK:             arith.truncf %{{.*}} : f32 to f8E4M3FN
// CHECK:             vector.store %{{.*}} : memref<4x128xf8E4M3FN>, vector<4xf8E4M3FN>
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @rowwise_quantize(%x: memref<4x128xbf16>) -> (memref<4xf32>, memref<4x1xf32>, memref<4x128xf8E4M3FN>, memref<1x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %max = arith.constant 448.0 : f32
  %amax = memref.alloc() : memref<4xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<4xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x128xbf16>) outs(%amax : memref<4xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %e = arith.extf %a : bf16 to f32
    %abs = math.absf %e : f32
    %m = arith.maximumf %acc, %abs : f32
    linalg.yield %m : f32
  }
  %view = memref.expand_shape %amax [[0, 1]] output_shape [4, 1] : memref<4xf32> into memref<4x1xf32>
  %scale = memref.alloc() : memref<4x1xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%view : memref<4x1xf32>) outs(%scale : memref<4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.divf %max, %a : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc() : memref<4x128xf8E4M3FN>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %scale : memref<4x128xbf16>, memref<4x1xf32>) outs(%q : memref<4x128xf8E4M3FN>) {
  ^bb0(%a: bf16, %s: f32, %o: f8E4M3FN):
    %e = arith.extf %a : bf16 to f32
    %m = arith.mulf %e, %s : f32
    %t = arith.truncf %m : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  %t = memref.alloc() : memref<1x4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%scale : memref<4x1xf32>) outs(%t : memref<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return %amax, %scale, %q, %t : memref<4xf32>, memref<4x1xf32>, memref<4x128xf8E4M3FN>, memref<1x4xf32>
}

// -----

// A block quantization: the amax per 1 x 64 block over the [4, 2, 64] view
// of x, its scale, the quantization over [4, 128] that reads the scale at
// (m, k floordiv 64) -- the merged index kb * 64 + k -- and the scales'
// M-major [2, 4] copy (its loops in the other order): one kernel.
// CHECK-LABEL: func.func @block_quantize
// CHECK:         gpu.launch
// CHECK-NOT:       gpu.launch
// CHECK:           gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NEXT:      arith.maximumf
// CHECK:           %[[A:.*]] = arith.maximumf
// CHECK:           %[[S:.*]] = arith.divf %{{.*}}, %[[A]] : f32
// CHECK:           scf.if
// CHECK:             memref.store %[[S]], %{{.*}}[%[[M:.*]], %[[KB:.*]]] : memref<4x2xf32>
// CHECK:             memref.store %[[S]], %{{.*}}[%[[KB]], %[[M]]] : memref<2x4xf32>
// CHECK:           }
// CHECK:             arith.mulf %{{.*}}, %[[S]] : f32
// CHECK:             vector.store %{{.*}} : memref<4x128xf8E4M3FN>, vector<4xf8E4M3FN>
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @block_quantize(%x: memref<4x128xbf16>) -> (memref<4x2xf32>, memref<4x128xf8E4M3FN>, memref<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %max = arith.constant 448.0 : f32
  %xv = memref.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 64] : memref<4x128xbf16> into memref<4x2x64xbf16>
  %amax = memref.alloc() : memref<4x2xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<4x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xv : memref<4x2x64xbf16>) outs(%amax : memref<4x2xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %e = arith.extf %a : bf16 to f32
    %abs = math.absf %e : f32
    %m = arith.maximumf %acc, %abs : f32
    linalg.yield %m : f32
  }
  %scale = memref.alloc() : memref<4x2xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%amax : memref<4x2xf32>) outs(%scale : memref<4x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.divf %max, %a : f32
    linalg.yield %s : f32
  }
  %q = memref.alloc() : memref<4x128xf8E4M3FN>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1 floordiv 64)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %scale : memref<4x128xbf16>, memref<4x2xf32>) outs(%q : memref<4x128xf8E4M3FN>) {
  ^bb0(%a: bf16, %s: f32, %o: f8E4M3FN):
    %e = arith.extf %a : bf16 to f32
    %m = arith.mulf %e, %s : f32
    %t = arith.truncf %m : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  %t = memref.alloc() : memref<2x4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%scale : memref<4x2xf32>) outs(%t : memref<2x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return %scale, %q, %t : memref<4x2xf32>, memref<4x128xf8E4M3FN>, memref<2x4xf32>
}

// A per-element stage that reads the block scale of another block
// ((k floordiv 64 + 1) mod 2) does not join: two kernels.
// CHECK-LABEL: func.func @other_block
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @other_block(%x: memref<4x128xbf16>) -> memref<4x128xf32> {
  %zero = arith.constant 0.0 : f32
  %xv = memref.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 64] : memref<4x128xbf16> into memref<4x2x64xbf16>
  %amax = memref.alloc() : memref<4x2xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<4x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%xv : memref<4x2x64xbf16>) outs(%amax : memref<4x2xf32>) {
  ^bb0(%a: bf16, %acc: f32):
    %e = arith.extf %a : bf16 to f32
    %m = arith.maximumf %acc, %e : f32
    linalg.yield %m : f32
  }
  %y = memref.alloc() : memref<4x128xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, (d1 floordiv 64 + 1) mod 2)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%amax : memref<4x2xf32>) outs(%y : memref<4x128xf32>) {
  ^bb0(%s: f32, %o: f32):
    linalg.yield %s : f32
  }
  return %y : memref<4x128xf32>
}

// -----

// What must not join, each a kernel of its own:
// * without the fill, only lane 0 knows the row's value: no per-element
//   stage;
// CHECK-LABEL: func.func @no_fill
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @no_fill(%x: memref<2x64xf32>, %sum: memref<2xf32>) -> memref<2x64xf32> {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %y = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<2x64xf32>, memref<2xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %u = arith.mulf %a, %s : f32
    linalg.yield %u : f32
  }
  return %y : memref<2x64xf32>
}

// -----

// * a stage that reads the per-row value of another row (softmax-like
//   neighbour, (d0 + 1) mod 2), or one that reads what a per-element stage
//   wrote (its elements are in other lanes' registers): separate kernels.
// CHECK-LABEL: func.func @other_rows
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @other_rows(%x: memref<2x64xf32>) -> (memref<2x64xf32>, memref<2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %y = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> ((d0 + 1) mod 2)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<2x64xf32>, memref<2xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %u = arith.mulf %a, %s : f32
    linalg.yield %u : f32
  }
  %z = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y : memref<2x64xf32>) outs(%z : memref<2x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %u = arith.mulf %a, %a : f32
    linalg.yield %u : f32
  }
  return %y, %z : memref<2x64xf32>, memref<2x64xf32>
}

// -----

// * a stage that writes a buffer the reduction reads (in place over x:
//   another warp may still be reading its row): separate (the copy, the
//   reduction, the stage).
// CHECK-LABEL: func.func @writes_input
// CHECK-COUNT-3: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @writes_input(%x: memref<2x64xf32>) -> memref<2xf32> {
  %zero = arith.constant 0.0 : f32
  %xa = memref.alloc() : memref<2x64xf32>
  memref.copy %x, %xa : memref<2x64xf32> to memref<2x64xf32>
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%xa : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%sum : memref<2xf32>) outs(%xa : memref<2x64xf32>) {
  ^bb0(%s: f32, %o: f32):
    linalg.yield %s : f32
  }
  return %sum : memref<2xf32>
}

// -----

// A per-row stage in place over the reduction's own element (the sum
// becomes the mean), then a per-element stage that reads it and its
// position (linalg.index: a causal-style mask): one kernel; the element
// stage gets the mean from registers, not from memory.
// CHECK-LABEL: func.func @in_place_and_index
// CHECK:         gpu.launch
// CHECK-NOT:       gpu.launch
// CHECK:           %[[MEAN:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %[[SUM:.*]][%{{.*}}] : memref<2xf32>
// CHECK:             memref.store %[[MEAN]], %[[SUM]][%{{.*}}] : memref<2xf32>
// CHECK:           }
// CHECK-NOT:         memref.load %[[SUM]]
// CHECK:             arith.cmpi ult
// CHECK:             arith.select %{{.*}}, %[[MEAN]]
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @in_place_and_index(%x: memref<2x64xf32>) -> (memref<2xf32>, memref<2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 0.015625 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%sum : memref<2xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %n : f32
    linalg.yield %m : f32
  }
  %y = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<2x64xf32>, memref<2xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %i = linalg.index 1 : index
    %c32 = arith.constant 32 : index
    %lt = arith.cmpi ult, %i, %c32 : index
    %r = arith.select %lt, %a, %m : f32
    linalg.yield %r : f32
  }
  return %sum, %y : memref<2xf32>, memref<2x64xf32>
}

// -----

// * a stage that reads what the kernel writes through a view that is not a
//   reshape (a cast: the same elements, but not followed as one) is not
//   forwarded and not loaded either (lane 0's store is not synchronized
//   with the other lanes): separate kernels.
// CHECK-LABEL: func.func @through_cast
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @through_cast(%x: memref<2x64xf32>) -> (memref<2xf32>, memref<2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %c = memref.cast %sum : memref<2xf32> to memref<2xf32, strided<[1], offset: ?>>
  %y = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %c : memref<2x64xf32>, memref<2xf32, strided<[1], offset: ?>>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %u = arith.mulf %a, %s : f32
    linalg.yield %u : f32
  }
  return %sum, %y : memref<2xf32>, memref<2x64xf32>
}

// -----

// * a per-row value written through a subview (elements 2 and 3 of its
//   buffer) is not forwarded to a later read of elements 0 and 1 through a
//   reshape (the same offsets relative to each view): the writer is a
//   stage of the reduction's kernel (lane 0 stores through the subview),
//   the reader a kernel of its own.
// CHECK-LABEL: func.func @written_through_subview
// CHECK:         gpu.launch
// CHECK:           gpu.shuffle
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}}, %{{.*}} : memref<2xf32, strided<[1], offset: 2>>
// CHECK:         gpu.launch
// CHECK:           memref.load %{{.*}} : memref<2x2xf32>
// CHECK-NOT:     gpu.launch
func.func @written_through_subview(%x: memref<2x64xf32>) -> (memref<4xf32>, memref<2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %buf = memref.alloc() : memref<4xf32>
  %hi = memref.subview %buf[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%sum : memref<2xf32>) outs(%hi : memref<2xf32, strided<[1], offset: 2>>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  }
  %rows = memref.expand_shape %buf [[0, 1]] output_shape [2, 2] : memref<4xf32> into memref<2x2xf32>
  %y = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (0, d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %rows : memref<2x64xf32>, memref<2x2xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %u = arith.mulf %a, %s : f32
    linalg.yield %u : f32
  }
  return %buf, %y : memref<4xf32>, memref<2x64xf32>
}

// -----

// RMSNorm over [1, 2, 128] (a unit batch loop), then a per-row quantization
// of its f16 output as a rowwise recipe makes it: a fill and the row amax
// over the output viewed as [2, 128], the scale, the FP8 row. One kernel:
// the sum of squares; the rsqrt; one lane-strided pass that writes y and
// folds |y| into the lane's amax (a chained reduction: y forwarded in
// registers, its fill gone); a butterfly and lane 0's value for the amax;
// the scale; a third pass that reads y back with the second pass's lanes
// and vector width (each element by the thread that wrote it) and writes
// the FP8 row -- y's vectors are those the second pass stored (through the
// [2, 128] view: RowStage::readBack), not loaded again; lane 0 stores the
// per-row values last.
// CHECK-LABEL: func.func @norm_rowwise_quantize
// CHECK:         gpu.launch
// CHECK-NOT:       gpu.launch
// CHECK:           math.rsqrt
// CHECK:             arith.truncf %{{.*}} : f32 to f16
// CHECK:             math.absf
// CHECK:             arith.maximumf
// CHECK:             %[[Y:.*]] = vector.from_elements %[[Y0:[^,]*]], %{{.*}} : vector<4xf16>
// CHECK:             vector.store %[[Y]], %{{.*}} : memref<1x2x128xf16>, vector<4xf16>
// CHECK:           gpu.shuffle  xor
// CHECK:           gpu.shuffle  idx
// CHECK:           %[[S:.*]] = arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:         vector.load %{{.*}} : memref<2x128xf16>
// CHECK:             arith.extf %[[Y0]] : f16 to f32
// CHECK-NOT:         vector.load %{{.*}} : memref<2x128xf16>
// CHECK:             arith.divf %{{.*}}, %[[S]] : f32
// CHECK:             vector.store %{{.*}} : memref<2x128xf8E4M3FN>, vector<4xf8E4M3FN>
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}} : memref<1x2xf32>
// CHECK:             memref.store %{{.*}} : memref<1x2x1xf32>
// CHECK:             memref.store %{{.*}} : memref<2xf32>
// CHECK:             memref.store %[[S]], %{{.*}} : memref<2x1xf32>
// CHECK-NOT:     gpu.launch
// CHECK-NOT:     linalg.fill
// CHECK:         return
func.func @norm_rowwise_quantize(%x: memref<1x2x128xf16>, %w: memref<128xf16>) -> (memref<2xf32>, memref<1x2x1xf32>, memref<2xf32>, memref<2x1xf32>, memref<2x128xf8E4M3FN>) {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 0.0078125 : f32
  %eps = arith.constant 1.0e-5 : f32
  %fmax = arith.constant 448.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  %sum3 = memref.expand_shape %sum [[0, 1]] output_shape [1, 2] : memref<2xf32> into memref<1x2xf32>
  linalg.fill ins(%zero : f32) outs(%sum3 : memref<1x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : memref<1x2x128xf16>) outs(%sum3 : memref<1x2xf32>) {
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
  %y = memref.alloc() : memref<1x2x128xf16>
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1, 0)>,
                                   affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w, %x, %inv : memref<128xf16>, memref<1x2x128xf16>, memref<1x2x1xf32>) outs(%y : memref<1x2x128xf16>) {
  ^bb0(%g: f16, %a: f16, %r: f32, %o: f16):
    %e = arith.extf %a : f16 to f32
    %t = arith.mulf %e, %r : f32
    %h = arith.truncf %t : f32 to f16
    %u = arith.mulf %g, %h : f16
    linalg.yield %u : f16
  }
  %y2 = memref.collapse_shape %y [[0, 1], [2]] : memref<1x2x128xf16> into memref<2x128xf16>
  %amax = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y2 : memref<2x128xf16>) outs(%amax : memref<2xf32>) {
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
  %q = memref.alloc() : memref<2x128xf8E4M3FN>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%y2, %scale : memref<2x128xf16>, memref<2x1xf32>) outs(%q : memref<2x128xf8E4M3FN>) {
  ^bb0(%a: f16, %s: f32, %o: f8E4M3FN):
    %e = arith.extf %a : f16 to f32
    %d = arith.divf %e, %s : f32
    %t = arith.truncf %d : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  return %sum, %inv, %amax, %scale, %q : memref<2xf32>, memref<1x2x1xf32>, memref<2xf32>, memref<2x1xf32>, memref<2x128xf8E4M3FN>
}

// -----

// The amax reads y, written by a per-element stage before the one right
// before it (z): a chained reduction joins only the loop of the stage
// right before it, so the amax is its own kernel (with its fill), after
// the one of the sum, y and z.
// CHECK-LABEL: func.func @chain_earlier_stage
// CHECK:         gpu.launch
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @chain_earlier_stage(%x: memref<2x64xf32>) -> (memref<2xf32>, memref<2x64xf32>, memref<2x64xf32>, memref<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %view = memref.expand_shape %sum [[0, 1]] output_shape [2, 1] : memref<2xf32> into memref<2x1xf32>
  %y = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %view : memref<2x64xf32>, memref<2x1xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.subf %a, %s : f32
    linalg.yield %d : f32
  }
  %z = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %view : memref<2x64xf32>, memref<2x1xf32>) outs(%z : memref<2x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.mulf %a, %s : f32
    linalg.yield %d : f32
  }
  %amax = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%amax : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<2x64xf32>) outs(%amax : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %abs = math.absf %a : f32
    %m = arith.maximumf %acc, %abs : f32
    linalg.yield %m : f32
  }
  return %sum, %y, %z, %amax : memref<2xf32>, memref<2x64xf32>, memref<2x64xf32>, memref<2xf32>
}

// -----

// A later per-element stage reads y back at other positions (element
// d1 * 2 + d0 of its flattened view, not d0 * 64 + d1): not what its lane
// wrote, so it is its own kernel.
// CHECK-LABEL: func.func @read_back_elsewhere
// CHECK:         gpu.launch
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @read_back_elsewhere(%x: memref<2x64xf32>) -> (memref<2xf32>, memref<2x64xf32>, memref<2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  %view = memref.expand_shape %sum [[0, 1]] output_shape [2, 1] : memref<2xf32> into memref<2x1xf32>
  %y = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0, 0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %view : memref<2x64xf32>, memref<2x1xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.subf %a, %s : f32
    linalg.yield %d : f32
  }
  %flat = memref.collapse_shape %y [[0, 1]] : memref<2x64xf32> into memref<128xf32>
  %z = memref.alloc() : memref<2x64xf32>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1 * 2 + d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%flat : memref<128xf32>) outs(%z : memref<2x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %d = arith.mulf %a, %a : f32
    linalg.yield %d : f32
  }
  return %sum, %y, %z : memref<2xf32>, memref<2x64xf32>, memref<2x64xf32>
}

// -----

// A per-element stage may write the model's output (an argument that
// buffer-results-to-out-params marked bufferize.result in a public
// function: the runtime keeps it apart from every other tensor): one
// kernel. An unmarked argument may alias the input it reads: the stage
// keeps its own kernel.
// CHECK-LABEL: func.func @norm_to_output
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.launch
// CHECK:         return
// CHECK-LABEL: func.func @norm_to_argument
// CHECK:         gpu.launch
// CHECK:         gpu.launch
// CHECK:         return
func.func @norm_to_output(%x: memref<2x64xf32>, %y: memref<2x64xf32> {bufferize.result}) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<2x64xf32>, memref<2xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %d = arith.subf %a, %t : f32
    linalg.yield %d : f32
  }
  return
}
func.func @norm_to_argument(%x: memref<2x64xf32>, %y: memref<2x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x64xf32>) outs(%sum : memref<2xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : memref<2x64xf32>, memref<2xf32>) outs(%y : memref<2x64xf32>) {
  ^bb0(%a: f32, %t: f32, %o: f32):
    %d = arith.subf %a, %t : f32
    linalg.yield %d : f32
  }
  return
}
