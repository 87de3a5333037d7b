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

// Each pair below has one dependence, so each nest launches alone:
// read after write, write after read, two different arguments (which may
// alias), two get_global of one global (one buffer).
// CHECK-LABEL: func.func @read_after_write
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @read_after_write(%a: memref<256xf32>) -> memref<256xf32> {
  %x = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%x : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  }
  %y = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<256xf32>) outs(%y : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  }
  return %y : memref<256xf32>
}

// CHECK-LABEL: func.func @write_after_read
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @write_after_read(%a: memref<256xf32>) -> (memref<256xf32>, memref<256xf32>) {
  %x = memref.alloc() : memref<256xf32>
  %y = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<256xf32>) outs(%y : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%x : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  return %x, %y : memref<256xf32>, memref<256xf32>
}

// CHECK-LABEL: func.func @two_arguments
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @two_arguments(%a: memref<256xf32>, %out: memref<256xf32>) -> memref<256xf32> {
  %x = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%x : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  %c = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%c : memref<256xf32>) outs(%out : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  return %x : memref<256xf32>
}

memref.global "private" @state : memref<256xf32> = dense<0.0>

// CHECK-LABEL: func.func @one_global
// CHECK-COUNT-2: gpu.launch
// CHECK-NOT:     gpu.launch
func.func @one_global(%a: memref<256xf32>) -> memref<256xf32> {
  %g1 = memref.get_global @state : memref<256xf32>
  %c = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%c : memref<256xf32>) outs(%g1 : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  %g2 = memref.get_global @state : memref<256xf32>
  %x = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%g2 : memref<256xf32>) outs(%x : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    linalg.yield %i : f32
  }
  return %x : memref<256xf32>
}

// -----

// A deallocation between two independent nests ends the run (the merged
// kernel would run after it); without it they share a launch.
// CHECK-LABEL: func.func @dealloc_between
// CHECK:         gpu.launch
// CHECK:         memref.dealloc
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.launch
func.func @dealloc_between(%a: memref<256xf32>, %b: memref<256xf32>) -> (memref<256xf32>, memref<256xf32>) {
  %t = memref.alloc() : memref<256xf32>
  %s = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%t : memref<256xf32>) outs(%s : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  }
  memref.dealloc %t : memref<256xf32>
  %y = memref.alloc() : memref<256xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%y : memref<256xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  }
  return %s, %y : memref<256xf32>, memref<256xf32>
}

// -----

// Row reductions (warps, shuffles) and coarsened element-wise nests
// (vectors) share a launch too; a nest smaller than a block launches alone.
// (8 rows x 32 lanes = 2 blocks of 128, then 1 block for the 128-element
// nest; the 32-element one alone, with 32 threads.)
// CHECK-LABEL: func.func @mixed
// CHECK:         gpu.launch blocks({{.*}}) in ({{.*}} = %c3, {{.*}}) threads({{.*}}) in ({{.*}} = %c128,
// CHECK:           scf.if
// CHECK:             gpu.shuffle  xor
// CHECK:           scf.if
// CHECK:             arith.subi %{{.*}}, %c2
// CHECK:             memref.store %{{.*}} : memref<128xf32>
// CHECK:         gpu.launch {{.*}} threads({{.*}}) in ({{.*}} = %c32,
// CHECK:           memref.store %{{.*}} : memref<32xf32>
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @mixed(%a: memref<8x64xf32>, %b: memref<128xf32>, %c: memref<32xf32>) -> (memref<8xf32>, memref<128xf32>, memref<32xf32>) {
  %zero = arith.constant 0.0 : f32
  %s = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%s : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x64xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%i: f32, %acc: f32):
    %m = arith.addf %i, %acc : f32
    linalg.yield %m : f32
  }
  %y = memref.alloc() : memref<128xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%b : memref<128xf32>) outs(%y : memref<128xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.mulf %i, %i : f32
    linalg.yield %m : f32
  }
  %z = memref.alloc() : memref<32xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%c : memref<32xf32>) outs(%z : memref<32xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %i, %i : f32
    linalg.yield %m : f32
  }
  return %s, %y, %z : memref<8xf32>, memref<128xf32>, memref<32xf32>
}
