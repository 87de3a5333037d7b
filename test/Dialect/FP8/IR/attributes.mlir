// RUN: fp8-opt %s | FileCheck %s
// RUN: fp8-opt %s | fp8-opt | FileCheck %s
// Defaults are elided when printing; every parameter round-trips.
// (The printer sorts a dictionary's entries by name.)

// CHECK-LABEL: func @recipes() attributes {
// CHECK-SAME: b0 = #fp8.block,
// CHECK-SAME: b1 = #fp8.block<act = 1x64, weight = 64, pow2 = false>,
// CHECK-SAME: b2 = #fp8.block<eps = 1.000000e+00>,
// CHECK-SAME: c0 = #fp8.current,
// CHECK-SAME: c1 = #fp8.current<eps = 1.000000e+00, pow2 = true>,
// CHECK-SAME: d0 = #fp8.delayed,
// CHECK-SAME: d1 = #fp8.delayed,
// CHECK-SAME: d2 = #fp8.delayed<history = 16, algo = most_recent, margin = 3, pow2 = true>,
// CHECK-SAME: l0 = #fp8.layout<tensor>, l1 = #fp8.layout<row>, l2 = #fp8.layout<col>, l3 = #fp8.layout<block 128x128>,
// CHECK-SAME: m0 = #fp8.mxfp8,
// CHECK-SAME: m1 = #fp8.mxfp8<rounding = floor>}
func.func @recipes() attributes {
  d0 = #fp8.delayed,
  d1 = #fp8.delayed<history = 1024, algo = max, margin = 0, pow2 = false>,
  d2 = #fp8.delayed<pow2 = true, margin = 3, algo = most_recent, history = 16>,
  c0 = #fp8.current<>,
  c1 = #fp8.current<eps = 1.0, pow2 = true>,
  b0 = #fp8.block<act = 1x128, weight = 128x128, pow2 = true>,
  b1 = #fp8.block<act = 1x64, weight = 64, pow2 = false>,
  b2 = #fp8.block<eps = 1.0>,
  m0 = #fp8.mxfp8,
  m1 = #fp8.mxfp8<rounding = floor>,
  l0 = #fp8.layout<tensor>, l1 = #fp8.layout<row>, l2 = #fp8.layout<col>, l3 = #fp8.layout<block 128x128>
} {
  return
}
