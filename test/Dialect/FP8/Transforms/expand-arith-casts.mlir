// RUN: fp8-opt %s -fp8-expand-arith-casts -split-input-file | FileCheck %s
// Exactness is checked by executing the result (test/Integration/CPU);
// here, the shape of the rewrite and what it leaves alone.

// CHECK-LABEL: func @trunc_e4m3
// CHECK-SAME: (%[[X:.+]]: f32)
// CHECK-NOT: arith.truncf
// CHECK-DAG: %[[NAN:.+]] = arith.constant 127 : i32
// CHECK-DAG: %[[MAXB:.+]] = arith.constant 126 : i32
// CHECK-DAG: %[[MAGIC:.+]] = arith.constant 1.638400e+04 : f32
// CHECK: %[[U:.+]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: arith.minui %{{.+}}, %[[MAXB]]
// CHECK: arith.addf %{{.+}}, %[[MAGIC]]
// CHECK: arith.select %{{.+}}, %[[NAN]], %{{.+}} : i32
// CHECK: %[[B:.+]] = arith.trunci %{{.+}} : i32 to i8
// CHECK: %[[R:.+]] = arith.bitcast %[[B]] : i8 to f8E4M3FN
// CHECK: return %[[R]]
func.func @trunc_e4m3(%x: f32) -> f8E4M3FN {
  %r = arith.truncf %x : f32 to f8E4M3FN
  return %r : f8E4M3FN
}

// -----

// E5M2: max 0x7B, subnormal quantum 2^-16 (magic 2^7); bf16 goes via f32
// (the bf16 -> f32 extension itself expanded by upstream's BF16 patterns:
// the bits shifted into the high half).
// CHECK-LABEL: func @trunc_e5m2_vector
// CHECK-DAG: arith.constant dense<123> : vector<4xi32>
// CHECK-DAG: arith.constant dense<1.280000e+02> : vector<4xf32>
// CHECK: arith.bitcast %{{.+}} : vector<4xbf16> to vector<4xi16>
// CHECK: arith.extui %{{.+}} : vector<4xi16> to vector<4xi32>
// CHECK: arith.shli
// CHECK: arith.bitcast %{{.+}} : vector<4xi32> to vector<4xf32>
// CHECK: arith.bitcast %{{.+}} : vector<4xi8> to vector<4xf8E5M2>
func.func @trunc_e5m2_vector(%x: vector<4xbf16>) -> vector<4xf8E5M2> {
  %r = arith.truncf %x : vector<4xbf16> to vector<4xf8E5M2>
  return %r : vector<4xf8E5M2>
}

// -----

// CHECK-LABEL: func @ext_e4m3
// CHECK-SAME: (%[[Q:.+]]: f8E4M3FN)
// CHECK: %[[B:.+]] = arith.bitcast %[[Q]] : f8E4M3FN to i8
// CHECK: arith.extui %[[B]] : i8 to i32
// CHECK: arith.uitofp
// E4M3FN's only special value is NaN (S.1111.111).
// CHECK: arith.cmpi eq, %{{.+}}, %[[C127:.+]] : i32
// CHECK: %[[F:.+]] = arith.bitcast %{{.+}} : i32 to f32
// CHECK: arith.truncf %[[F]] : f32 to f16
func.func @ext_e4m3(%q: f8E4M3FN) -> f16 {
  %r = arith.extf %q : f8E4M3FN to f16
  return %r : f16
}

// -----

// CHECK-LABEL: func @ext_e5m2
// Infinity (0x7F800000) and NaN (0x7FC00000) for the all-ones exponent.
// CHECK-DAG: arith.constant 2139095040 : i32
// CHECK-DAG: arith.constant 2143289344 : i32
// CHECK: arith.bitcast %{{.+}} : i32 to f32
// CHECK-NOT: arith.extf
func.func @ext_e5m2(%q: f8E5M2) -> f32 {
  %r = arith.extf %q : f8E5M2 to f32
  return %r : f32
}

// -----

// Other casts, and non-default rounding modes, are left alone.
// CHECK-LABEL: func @untouched
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK: arith.truncf %{{.+}} toward_zero : f32 to f8E4M3FN
// CHECK: arith.truncf %{{.+}} : f32 to f8E8M0FNU
// CHECK: arith.extf %{{.+}} : f16 to f32
func.func @untouched(%x: f32, %h: f16) -> (f16, f8E4M3FN, f8E8M0FNU, f32) {
  %a = arith.truncf %x : f32 to f16
  %b = arith.truncf %x toward_zero : f32 to f8E4M3FN
  %c = arith.truncf %x : f32 to f8E8M0FNU
  %d = arith.extf %h : f16 to f32
  return %a, %b, %c, %d : f16, f8E4M3FN, f8E8M0FNU, f32
}

// -----

// f32 -> bf16 (the operands of BF16 products): no truncf reaches LLVM (x86
// would call __truncsfbf2); round to nearest even in integer code.
// CHECK-LABEL: func @trunc_bf16
// CHECK-NOT: arith.truncf
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: arith.trunci %{{.+}} : i32 to i16
// CHECK: arith.bitcast %{{.+}} : i16 to bf16
func.func @trunc_bf16(%x: f32) -> bf16 {
  %r = arith.truncf %x : f32 to bf16
  return %r : bf16
}
