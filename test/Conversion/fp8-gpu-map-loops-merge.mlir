// RUN: fp8-opt %s -split-input-file \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=128 vector-width=1},canonicalize))' \
// RUN:   | FileCheck %s

// Independent element-wise nests in a row (RoPE on q and on k, v's cast),
// with only allocations between them, launch as one kernel: blocks 0..1
// run the first (256 elements / 128), block 2 the second (128 / 128).
// CHECK-LABEL: func.func @independent
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}}) threads({{.*}}) in ({{.*}} = %c128,
// CHECK:           arith.cmpi ult, %{{.*}}, %c2
// CHECK:           scf.if
// CHECK:             memref.store %{{.*}} : memref<256xf32>
// CHECK-DAG:       arith.cmpi uge, %{{.*}}, %c2
// CHECK-DAG:       arith.cmpi ult, %{{.*}}, %c3
// CHECK:           scf.if
// CHECK:             arith.subi %{{.*}}, %c2
// CHECK:             memref.store %{{.*}} : memref<128xbf16>
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @independent(%a: memref<256xf32>, %b: memref<128xf32>) -> (memref<256xf32>, memref<128xbf16>) {
  %x = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%x : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  }
  %y = memref.alloc() : memref<128xbf16>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%b : memref<128xf32>) outs(%y : memref<128xbf16>) {
  ^bb0(%i: f32, %o: bf16):
    %t = arith.truncf %i : f32 to bf16
    linalg.yield %t : bf16
  }
  return %x, %y : memref<256xf32>, memref<128xbf16>
}

// -----

// A nest that reads what the one before it writes, one that writes what
// the one before it reads, and two that touch function arguments (which
// may alias one another) each launch alone.
// CHECK-LABEL: func.func @dependent
// CHECK-COUNT-4: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @dependent(%a: memref<256xf32>, %out: memref<256xf32>) {
  %x = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%x : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  }
  // Reads %x: after the first.
  %y = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<256xf32>) outs(%y : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  }
  // Writes %x, which the second reads: after it.
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%y : memref<256xf32>) outs(%x : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  // Writes the argument %out; the first read the argument %a.
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<256xf32>) outs(%out : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  return
}

// -----

// A deallocation between two independent nests ends the run (the merged
// kernel would run after it).
// CHECK-LABEL: func.func @dealloc_between
// CHECK:         gpu.launch
// CHECK:         memref.dealloc
// CHECK:         gpu.launch
func.func @dealloc_between(%a: memref<256xf32>, %b: memref<256xf32>) -> memref<256xf32> {
  %t = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%t : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  }
  %s = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%t : memref<256xf32>) outs(%s : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  memref.dealloc %t : memref<256xf32>
  %y = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%s : memref<256xf32>) outs(%y : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  }
  return %y : memref<256xf32>
}
