// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --convert-fp8-casts-to-nvvm | FileCheck %s

// f32 -> E4M3: cvt.rn.satfinite on (0, x); the low byte is x's; a NaN
// input gives the canonical 0x7F (what the CPU path's expansion gives).
// CHECK-LABEL: func.func @trunc_e4m3
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK:         %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[P:.*]] = nvvm.convert.f32x2.to.f8x2 %[[Z]], %[[X]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK:         %[[B:.*]] = arith.trunci %[[P]] : i16 to i8
// CHECK:         %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK:         %[[C:.*]] = arith.select %[[NAN]], %c127_i8, %[[B]] : i8
// CHECK:         %[[R:.*]] = arith.bitcast %[[C]] : i8 to f8E4M3FN
// CHECK:         return %[[R]]
func.func @trunc_e4m3(%x: f32) -> f8E4M3FN {
  %0 = arith.truncf %x : f32 to f8E4M3FN
  return %0 : f8E4M3FN
}

// -----

// bf16 -> E5M2 goes through f32 (exact), then the same cvt for E5M2.
// CHECK-LABEL: func.func @trunc_e5m2_from_bf16
// CHECK:         arith.extf %{{.*}} : bf16 to f32
// CHECK:         nvvm.convert.f32x2.to.f8x2 {{.*}} : i16(f8E5M2)
func.func @trunc_e5m2_from_bf16(%x: bf16) -> f8E5M2 {
  %0 = arith.truncf %x : bf16 to f8E5M2
  return %0 : f8E5M2
}

// -----

// E4M3 -> f32: cvt.rn.f16x2.e4m3x2 of the byte, then an exact f16 -> f32.
// CHECK-LABEL: func.func @ext_e4m3
// CHECK:         %[[B:.*]] = arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK:         %[[V:.*]] = vector.broadcast %[[B]] : i8 to vector<2xi8>
// CHECK:         %[[H:.*]] = nvvm.convert.f8x2.to.f16x2 %[[V]] : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK:         %[[E:.*]] = vector.extract %[[H]][0] : f16 from vector<2xf16>
// CHECK:         arith.extf %[[E]] : f16 to f32
func.func @ext_e4m3(%q: f8E4M3FN) -> f32 {
  %0 = arith.extf %q : f8E4M3FN to f32
  return %0 : f32
}

// -----

// E5M2 -> f16 needs no second step; -> bf16 goes through f32.
// CHECK-LABEL: func.func @ext_e5m2
// CHECK:         nvvm.convert.f8x2.to.f16x2 {{.*}}(f8E5M2) -> vector<2xf16>
// CHECK-NOT:     arith.extf %{{.*}} : f16 to f32
// CHECK:         nvvm.convert.f8x2.to.f16x2 {{.*}}(f8E5M2) -> vector<2xf16>
// CHECK:         arith.extf %{{.*}} : f16 to f32
// CHECK:         arith.truncf %{{.*}} : f32 to bf16
func.func @ext_e5m2(%q: f8E5M2) -> (f16, bf16) {
  %0 = arith.extf %q : f8E5M2 to f16
  %1 = arith.extf %q : f8E5M2 to bf16
  return %0, %1 : f16, bf16
}

// -----

// Other non-scalar or non-default-rounding casts are reported, not skipped.
func.func @vector_cast(%x: vector<4xf32>) -> vector<4xf8E4M3FN> {
  // expected-error @below {{FP8 cast that the GPU lowering cannot handle}}
  %0 = arith.truncf %x : vector<4xf32> to vector<4xf8E4M3FN>
  return %0 : vector<4xf8E4M3FN>
}

// -----

// The clamp a saturating rounding starts with (fp8.quantize's lowering:
// minimumf with +max, maximumf with -max) is what .satfinite does: the cvt
// and the NaN test take the unclamped value.
// CHECK-LABEL: func.func @clamped_trunc_e4m3
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK-NOT:     arith.minimumf
// CHECK:         nvvm.convert.f32x2.to.f8x2 %{{.*}}, %[[X]] {{.*}} : i16(f8E4M3FN)
// CHECK:         arith.cmpf uno, %[[X]], %[[X]] : f32
func.func @clamped_trunc_e4m3(%x: f32) -> f8E4M3FN {
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %0 = arith.minimumf %x, %max : f32
  %1 = arith.maximumf %0, %min : f32
  %2 = arith.truncf %1 : f32 to f8E4M3FN
  return %2 : f8E4M3FN
}

// -----

// E5M2's clamp is at 57344.
// CHECK-LABEL: func.func @clamped_trunc_e5m2
// CHECK-SAME:    (%[[X:.*]]: f32)
// CHECK:         nvvm.convert.f32x2.to.f8x2 %{{.*}}, %[[X]] {{.*}} : i16(f8E5M2)
func.func @clamped_trunc_e5m2(%x: f32) -> f8E5M2 {
  %max = arith.constant 57344.0 : f32
  %min = arith.constant -57344.0 : f32
  %0 = arith.minimumf %x, %max : f32
  %1 = arith.maximumf %0, %min : f32
  %2 = arith.truncf %1 : f32 to f8E5M2
  return %2 : f8E5M2
}

// -----

// A clamp at another bound (E5M2's 57344 before an E4M3 rounding), or with
// maxnumf (NaN-dropping), changes results: it stays.
// CHECK-LABEL: func.func @other_clamps_stay
// CHECK:         %[[A:.*]] = arith.maximumf
// CHECK:         nvvm.convert.f32x2.to.f8x2 %{{.*}}, %[[A]] {{.*}} : i16(f8E4M3FN)
// CHECK:         %[[B:.*]] = arith.maxnumf
// CHECK:         nvvm.convert.f32x2.to.f8x2 %{{.*}}, %[[B]] {{.*}} : i16(f8E4M3FN)
func.func @other_clamps_stay(%x: f32) -> (f8E4M3FN, f8E4M3FN) {
  %max = arith.constant 57344.0 : f32
  %min = arith.constant -57344.0 : f32
  %0 = arith.minimumf %x, %max : f32
  %1 = arith.maximumf %0, %min : f32
  %2 = arith.truncf %1 : f32 to f8E4M3FN
  %max4 = arith.constant 448.0 : f32
  %min4 = arith.constant -448.0 : f32
  %3 = arith.minnumf %x, %max4 : f32
  %4 = arith.maxnumf %3, %min4 : f32
  %5 = arith.truncf %4 : f32 to f8E4M3FN
  return %2, %5 : f8E4M3FN, f8E4M3FN
}
