// RUN: fp8-opt %s \
// RUN:   --pass-pipeline='builtin.module(func.func(fp8-gpu-map-loops{block-size=256 vector-width=1}),gpu-kernel-outlining)' \
// RUN:   | FileCheck %s

// Kernels see their trip counts, bounds and constants as constants, not as
// parameters: after outlining (no canonicalization between, as in
// fp8-gpu-lowering-pipeline) the kernel of a static nest takes only its
// buffers, and its index arithmetic divides by constants in i32.
// CHECK-LABEL: gpu.func @scale_rows__0(
// CHECK-SAME:      %{{[a-z0-9]+}}: memref<8x4096xf16>, %{{[a-z0-9]+}}: memref<8xf32>, %{{[a-z0-9]+}}: memref<8x4096xf16>) kernel
// CHECK-DAG:     arith.constant 4096 : i32
// CHECK-DAG:     arith.constant 32768 : i32
// CHECK:         arith.remui %{{.*}}, %{{.*}} : i32
// CHECK:         arith.divui %{{.*}}, %{{.*}} : i32
// CHECK-NOT:     arith.divui %{{.*}} : index
// CHECK:         gpu.return
func.func @scale_rows(%x: memref<8x4096xf16>, %r: memref<8xf32>, %y: memref<8x4096xf16>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                   affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %r : memref<8x4096xf16>, memref<8xf32>) outs(%y : memref<8x4096xf16>) {
  ^bb0(%a: f16, %s: f32, %o: f16):
    %e = arith.extf %a : f16 to f32
    %m = arith.mulf %e, %s : f32
    %m2 = arith.mulf %m, %two : f32
    %t = arith.truncf %m2 : f32 to f16
    linalg.yield %t : f16
  }
  return
}
