// RUN: fp8-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops,canonicalize,cse))' \
// RUN:   | FileCheck %s
// RUN: fp8-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{vector-width=1},canonicalize,cse))' \
// RUN:   | FileCheck %s --check-prefix=SCALAR

// fp8-gpu-map-loops gives each thread 8 (or 4, 2) consecutive elements of
// the innermost dimension and moves the contiguous, aligned ones as
// vectors (VectorAccess.h); vector-width=1 keeps one element per thread.
// SCALAR-NOT: vector.{{load|store}}

// CHECK-LABEL: func.func @quantize
// 64 x 256 elements, 8 per thread: 2048 threads.
// CHECK:         arith.cmpi slt, %{{.*}}, %c2048_i32 : i32
// CHECK:         %[[COL:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK:         %[[X:.*]] = vector.load %arg0[%[[ROW:.*]], %[[COL]]] {alignment = 16 : i64} : memref<64x256xf16>, vector<8xf16>
// CHECK-COUNT-8: vector.extract %[[X]][{{[0-7]}}] : f16 from vector<8xf16>
// CHECK:         memref.load %arg1[] : memref<f32>
// CHECK-COUNT-8: arith.truncf %{{.*}} : f32 to f8E4M3FN
// CHECK:         %[[Q:.*]] = vector.from_elements {{.*}} : vector<8xf8E4M3FN>
// CHECK:         vector.store %[[Q]], %arg2[%[[ROW]], %[[COL]]] {alignment = 8 : i64} : memref<64x256xf8E4M3FN>, vector<8xf8E4M3FN>
// CHECK-NOT:     memref.store

// Quantization: f16 in, one scale, f8 out.
func.func @quantize(%x: memref<64x256xf16>, %s: memref<f32>, %o: memref<64x256xf8E4M3FN>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<64x256xf16>, memref<f32>) outs(%o : memref<64x256xf8E4M3FN>) {
  ^bb0(%a: f16, %b: f32, %c: f8E4M3FN):
    %e = arith.extf %a : f16 to f32
    %d = arith.divf %e, %b : f32
    %t = arith.truncf %d : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  }
  return
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK:         %[[COL:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK-COUNT-8: memref.load %arg0[%{{.*}}, %{{.*}}] : memref<32x64xf32>
// CHECK:         memref.load %arg1[%[[ROW:.*]]] : memref<64xf32>
// CHECK-NOT:     memref.load
// CHECK:         vector.store %{{.*}}, %arg2[%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<64x32xf32>, vector<8xf32>

// Transpose: the output is contiguous in the innermost loop, the input is
// not; a per-row operand is a broadcast.
func.func @transpose(%x: memref<32x64xf32>, %r: memref<64xf32>, %o: memref<64x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %r : memref<32x64xf32>, memref<64xf32>) outs(%o : memref<64x32xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @width4
// CHECK:         arith.cmpi slt, %{{.*}}, %c15_i32 : i32
// CHECK:         vector.load %arg0{{.*}} {alignment = 16 : i64} : memref<5x12xf32>, vector<4xf32>
// CHECK:         vector.store {{.*}} {alignment = 16 : i64} : memref<5x12xf32>, vector<4xf32>

// Rows of 12: width 4 (8 does not divide 12).
func.func @width4(%x: memref<5x12xf32>, %o: memref<5x12xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<5x12xf32>) outs(%o : memref<5x12xf32>) {
  ^bb0(%a: f32, %c: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @offset
// CHECK:         vector.load %arg0{{.*}} {alignment = 8 : i64} : memref<8x64xf16, strided<[128, 1], offset: 4>>, vector<4xf16>
// CHECK:         vector.store {{.*}} {alignment = 8 : i64} : memref<8x64xf16>, vector<4xf16>

// A slice at offset 4: 8-element vectors would straddle 16-byte lines,
// 4-element ones do not.
func.func @offset(%x: memref<8x64xf16, strided<[128, 1], offset: 4>>, %o: memref<8x64xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x64xf16, strided<[128, 1], offset: 4>>) outs(%o : memref<8x64xf16>) {
  ^bb0(%a: f16, %c: f16):
    linalg.yield %a : f16
  }
  return
}

// -----

// CHECK-LABEL: func.func @dynamic_layout
// CHECK-NOT:     vector.load
// CHECK-COUNT-8: memref.load %arg0
// CHECK:         vector.store {{.*}} {alignment = 16 : i64} : memref<8x64xf16>, vector<8xf16>

// A dynamic layout stays scalar; the static output is still a vector.
func.func @dynamic_layout(%x: memref<8x64xf16, strided<[?, 1], offset: ?>>, %o: memref<8x64xf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x64xf16, strided<[?, 1], offset: ?>>) outs(%o : memref<8x64xf16>) {
  ^bb0(%a: f16, %c: f16):
    linalg.yield %a : f16
  }
  return
}

// -----

// CHECK-LABEL: func.func @bools
// CHECK-NOT:     vector.
// CHECK:         memref.load %arg0{{.*}} : memref<4x64xi1>
// CHECK-NOT:     vector.
// CHECK:         gpu.terminator

// i1 buffers hold a byte per element; vectors of i1 are bit-packed: scalar.
func.func @bools(%x: memref<4x64xi1>, %o: memref<4x64xi1>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x64xi1>) outs(%o : memref<4x64xi1>) {
  ^bb0(%a: i1, %c: i1):
    linalg.yield %a : i1
  }
  return
}

// -----

// CHECK-LABEL: func.func @colmax
// 1024 columns, 8 per thread: 128 threads, each runs the 32 rows with its
// 8 maxima in registers (promoted from load/max/store of the output).
// CHECK:         arith.cmpi slt, %{{.*}}, %c128_i32 : i32
// CHECK:         %[[COL:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK:         vector.load %arg1[%[[COL]]] {alignment = 16 : i64} : memref<1024xf32>, vector<8xf32>
// CHECK:         %[[MAX:.*]]:8 = scf.for %[[R:.*]] = %c0 to %c32 step %c1 iter_args(
// CHECK-NOT:       memref.
// CHECK:           vector.load %arg0[%[[R]], %[[COL]]] {alignment = 16 : i64} : memref<32x1024xf16>, vector<8xf16>
// CHECK-COUNT-8:   arith.maximumf
// CHECK-NOT:       vector.store
// CHECK:           scf.yield
// CHECK:         %[[V:.*]] = vector.from_elements %[[MAX]]#0, {{.*}}, %[[MAX]]#7 : vector<8xf32>
// CHECK:         vector.store %[[V]], %arg1[%[[COL]]] {alignment = 16 : i64} : memref<1024xf32>, vector<8xf32>
// SCALAR-LABEL: func.func @colmax
// SCALAR:         %[[INIT:.*]] = memref.load %arg1
// SCALAR:         %[[M:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]]) -> (f32) {
// SCALAR-NOT:       memref.store
// SCALAR:         }
// SCALAR-NEXT:    memref.store %[[M]], %arg1
func.func @colmax(%x: memref<32x1024xf16>, %o: memref<1024xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<32x1024xf16>) outs(%o : memref<1024xf32>) {
  ^bb0(%a: f16, %b: f32):
    %e = arith.extf %a : f16 to f32
    %m = math.absf %e : f32
    %d = arith.maximumf %m, %b : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// CHECK-LABEL: func.func @rowsum
// CHECK:         %[[LANE:.*]] = arith.index_castui %{{.*}} : i32 to index
// CHECK:         %[[START:.*]] = arith.muli %[[LANE]], %c8 : index
// CHECK-NOT:     scf.for
// CHECK:         vector.load %arg0[%{{.*}}, %[[START]]] {alignment = 16 : i64} : memref<4x4096xf16>, vector<8xf16>
// CHECK-COUNT-8: arith.addf
// CHECK:         gpu.shuffle  xor

// A row reduction (RMSNorm's sum of squares): each lane loads 8 elements
// per step; 4 rows of 4096 are wide rows (16 warps a row: the row's 512
// lanes take 4096 consecutive elements a step, fp8-gpu-map-loops-wide-rows.mlir),
// so one step a lane and no loop.
func.func @rowsum(%x: memref<4x4096xf16>, %o: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x4096xf16>) outs(%o : memref<4xf32>) {
  ^bb0(%a: f16, %b: f32):
    %e = arith.extf %a : f16 to f32
    %q = arith.mulf %e, %e : f32
    %d = arith.addf %q, %b : f32
    linalg.yield %d : f32
  }
  return
}

// -----

// The output element is read again after it is stored in the reduction
// loop: not an accumulator (two reads), so no promotion, and no
// coarsening either (a block that reads after it writes).
// CHECK-LABEL: func.func @not_accumulator
// CHECK-NOT:     vector.
// CHECK:         scf.for
// CHECK-NOT:       iter_args
// CHECK:           memref.load %arg1
// CHECK:           memref.store
// CHECK:           memref.load %arg1
// SCALAR-LABEL: func.func @not_accumulator
// SCALAR:         scf.for
// SCALAR-NOT:       iter_args
// SCALAR:           memref.store
func.func @not_accumulator(%x: memref<32x1024xf16>, %o: memref<1024xf32>, %p: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%j) = (%c0) to (%c1024) step (%c1) {
    scf.for %r = %c0 to %c32 step %c1 {
      %a = memref.load %x[%r, %j] : memref<32x1024xf16>
      %e = arith.extf %a : f16 to f32
      %o0 = memref.load %o[%j] : memref<1024xf32>
      %s = arith.addf %e, %o0 : f32
      memref.store %s, %o[%j] : memref<1024xf32>
      %again = memref.load %o[%j] : memref<1024xf32>
      memref.store %again, %p[%j] : memref<1024xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A buffer stored twice by one iteration (contiguously, then transposed):
// gathering the first store at the end of the block would reorder the two,
// so the nest keeps one element per thread.
// CHECK-LABEL: func.func @stored_twice
// CHECK-NOT:     vector.
// CHECK:         memref.store
// CHECK:         memref.store
// CHECK:         gpu.terminator
func.func @stored_twice(%x: memref<8x8xf32>, %o: memref<8x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c8) step (%c1, %c1) {
    %a = memref.load %x[%i, %j] : memref<8x8xf32>
    memref.store %a, %o[%i, %j] : memref<8x8xf32>
    memref.store %a, %o[%j, %i] : memref<8x8xf32>
    scf.reduce
  }
  return
}

// -----

// A row index computed by a loop whose carried value picks up the
// coarsened induction variable only in its body: it depends on the
// column, so the load stays per element (one vector load would read the
// first clone's row for all eight); the output is still a vector.
// CHECK-LABEL: func.func @loop_carried_index
// CHECK-NOT:     vector.load
// CHECK-COUNT-8: memref.load %arg0
// CHECK:         vector.store {{.*}} : memref<4x64xf32>, vector<8xf32>
func.func @loop_carried_index(%x: memref<64x64xf32>, %o: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c64) step (%c1, %c1) {
    %row = scf.for %t = %c0 to %c2 step %c1 iter_args(%acc = %i) -> (index) {
      %n = arith.addi %acc, %j : index
      %m = arith.remui %n, %c64 : index
      scf.yield %m : index
    }
    %a = memref.load %x[%row, %j] : memref<64x64xf32>
    memref.store %a, %o[%i, %j] : memref<4x64xf32>
    scf.reduce
  }
  return
}
