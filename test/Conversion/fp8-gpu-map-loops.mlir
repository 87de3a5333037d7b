// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=128},canonicalize))' \
// RUN:   | FileCheck %s

// A 3-d element-wise op: one linear index over 2*3*40 = 240 elements, two
// blocks of 128 threads, the tail guarded, indices recovered by div/rem.
// CHECK-LABEL: func.func @elementwise
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c2, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c128, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// CHECK:           %[[LIN:.*]] = arith.addi
// CHECK:           %[[IN:.*]] = arith.cmpi slt, %[[LIN]], %c240
// CHECK:           scf.if %[[IN]] {
// CHECK:             arith.remui %[[LIN]], %c40
// CHECK:             arith.divui %[[LIN]], %c40
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
