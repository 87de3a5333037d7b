// RUN: fp8-opt %s -split-input-file --fp8-exact-reciprocals | FileCheck %s

// A quantization by the scale a power-of-two recipe computes in the same
// kernel, s = 1 / select(unusable, 1.0, bits(e) & 0xFF800000): each
// x / s becomes x * (the select), the exact reciprocal.
// CHECK-LABEL: func.func @pow2_scale
// CHECK-SAME:    (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[E:.*]]: f32, %[[U:.*]]: i1)
// CHECK:         %[[M:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[SEL:.*]] = arith.select %[[U]], %{{.*}}, %[[M]] : f32
// CHECK-NOT:     arith.divf %[[X]]
// CHECK-DAG:     %[[QX:.*]] = arith.mulf %[[X]], %[[SEL]] : f32
// CHECK-DAG:     %[[QY:.*]] = arith.mulf %[[Y]], %[[SEL]] : f32
// CHECK:         return %[[QX]], %[[QY]]
func.func @pow2_scale(%x: f32, %y: f32, %e: f32, %unusable: i1) -> (f32, f32) {
  %one = arith.constant 1.0 : f32
  %mask = arith.constant -8388608 : i32
  %bits = arith.bitcast %e : f32 to i32
  %m = arith.andi %bits, %mask : i32
  %p = arith.bitcast %m : i32 to f32
  %sel = arith.select %unusable, %one, %p : f32
  %s = arith.divf %one, %sel : f32
  %qx = arith.divf %x, %s : f32
  %qy = arith.divf %y, %s : f32
  return %qx, %qy : f32, f32
}

// -----

// An E8M0 scale decoded in place (byte << 23) divides several elements:
// one 1/s next to it, then multiplications.
// CHECK-LABEL: func.func @e8m0_scale
// CHECK-SAME:    (%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[B:.*]]: i32)
// CHECK:         %[[S:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[R:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK-DAG:     arith.mulf %[[X]], %[[R]] : f32
// CHECK-DAG:     arith.mulf %[[Y]], %{{.*}} : f32
// CHECK-NOT:     arith.divf %[[X]]
// CHECK-NOT:     arith.divf %[[Y]]
func.func @e8m0_scale(%x: f32, %y: f32, %byte: i32) -> (f32, f32) {
  %c23 = arith.constant 23 : i32
  %bits = arith.shli %byte, %c23 : i32
  %s = arith.bitcast %bits : i32 to f32
  %qx = arith.divf %x, %s : f32
  %qy = arith.divf %y, %s : f32
  return %qx, %qy : f32, f32
}

// -----

// A scale divided once, in the block that computes it: a division for a
// division, left alone.
// CHECK-LABEL: func.func @single_division
// CHECK:         arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-NOT:     arith.mulf
func.func @single_division(%x: f32, %byte: i32) -> f32 {
  %c23 = arith.constant 23 : i32
  %bits = arith.shli %byte, %c23 : i32
  %s = arith.bitcast %bits : i32 to f32
  %q = arith.divf %x, %s : f32
  return %q : f32
}

// -----

// Divided once, but in a loop: 1/s is computed once, outside it.
// CHECK-LABEL: func.func @looped_division
// CHECK:         %[[S:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK:         %[[R:.*]] = arith.divf %{{.*}}, %[[S]] : f32
// CHECK:         scf.for
// CHECK:           arith.mulf %{{.*}}, %[[R]] : f32
// CHECK-NOT:       arith.divf
func.func @looped_division(%byte: i32, %buf: memref<8xf32>) {
  %c23 = arith.constant 23 : i32
  %bits = arith.shli %byte, %c23 : i32
  %s = arith.bitcast %bits : i32 to f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %buf[%i] : memref<8xf32>
    %w = arith.divf %v, %s : f32
    memref.store %w, %buf[%i] : memref<8xf32>
  }
  return
}

// -----

// Constant powers of two, zero and infinity have exact reciprocals; a
// subnormal power of two (2^-130: 1/it overflows) and 3.0 do not.
// CHECK-LABEL: func.func @constants
// CHECK-DAG:     %[[Q:.*]] = arith.constant 4.000000e+00 : f32
// CHECK-DAG:     %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK-DAG:     arith.mulf %{{.*}}, %[[Q]] : f32
// CHECK-DAG:     arith.mulf %{{.*}}, %[[INF]] : f32
// CHECK-DAG:     arith.divf %{{.*}}, %{{.*}} : f32
// CHECK-DAG:     arith.divf %{{.*}}, %{{.*}} : f32
func.func @constants(%x: f32, %u: i1) -> (f32, f32, f32, f32) {
  %quarter = arith.constant 0.25 : f32
  %zero = arith.constant 0.0 : f32
  %tiny = arith.constant 7.34683969e-40 : f32
  %three = arith.constant 3.0 : f32
  %a = arith.divf %x, %quarter : f32
  %b = arith.divf %x, %zero : f32
  %c = arith.divf %x, %tiny : f32
  %d = arith.divf %x, %three : f32
  return %a, %b, %c, %d : f32, f32, f32, f32
}

// -----

// Not provably a power of two: a mask that keeps mantissa bits, a plain
// argument, a division with fast-math flags, a select with one unknown arm.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-4: arith.divf %{{.*}}, %{{.*}}
// CHECK-NOT:     arith.mulf
func.func @left_alone(%x: f32, %e: f32, %u: i1) -> (f32, f32, f32, f32) {
  %one = arith.constant 1.0 : f32
  %mask = arith.constant -8388607 : i32
  %bits = arith.bitcast %e : f32 to i32
  %m = arith.andi %bits, %mask : i32
  %p = arith.bitcast %m : i32 to f32
  %s = arith.divf %one, %p : f32
  %a = arith.divf %x, %s : f32
  %s2 = arith.divf %one, %e : f32
  %b = arith.divf %x, %s2 : f32
  %mask2 = arith.constant -8388608 : i32
  %m2 = arith.andi %bits, %mask2 : i32
  %p2 = arith.bitcast %m2 : i32 to f32
  %s3 = arith.divf %one, %p2 : f32
  %c = arith.divf %x, %s3 fastmath<afn> : f32
  %sel = arith.select %u, %s3, %e : f32
  %d = arith.divf %x, %sel : f32
  return %a, %b, %c, %d : f32, f32, f32, f32
}
