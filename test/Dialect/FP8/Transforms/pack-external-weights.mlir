// RUN: fp8-opt %s --split-input-file --fp8-pack-external-weights | FileCheck %s
// RUN: fp8-opt %s --split-input-file --fp8-pack-external-weights --fp8-materialize-external-weights | FileCheck %s --check-prefix=GLOBALS

// The block recipe's weight chain (amax, compute_scale, quantize, K-major
// transpose, padding to whole tiles) of a weight in a file is one
// fp8.packed_weight: the scales' users take its scales, nothing of the
// chain remains.

// CHECK-LABEL: func.func @block
// CHECK-NOT: fp8.amax
// CHECK: %[[Q:.*]], %[[S:.*]] = fp8.packed_weight "w" from "model.data"[0, 49152] : tensor<192x128xf16> layout<block 128x128> recipe(#fp8.block) format(e4m3) permutation = [1, 0] -> tensor<128x256xf8E4M3FN>, tensor<1x2xf32>
// CHECK-NOT: fp8.external_weight
// CHECK-NOT: fp8.quantize
// CHECK-NOT: tensor.pad
// CHECK: fp8.scaled_matmul %arg0, %arg1 layout<block 1x128>, %[[Q]], %[[S]] layout<block 128x128> transpose_rhs

// GLOBALS-LABEL: module attributes
// GLOBALS-SAME: __fp8_packed_w = {block = array<i64: 128, 128>, data_shape = array<i64: 128, 256>, eps = 0.000000e+00 : f32, format = "e4m3", kind = "data", length = 49152 : i64, location = "model.data", name = "w", offset = 0 : i64, permutation = array<i64: 1, 0>, pow2 = true, rceil = true, scaling = "current", source_type = tensor<192x128xf16>}
// GLOBALS-SAME: __fp8_packed_w_scale = {{{.*}}kind = "scale"
// GLOBALS-DAG: memref.global "private" constant @__fp8_packed_w : memref<128x256xf8E4M3FN> {alignment = 256 : i64}
// GLOBALS-DAG: memref.global "private" constant @__fp8_packed_w_scale : memref<1x2xf32> {alignment = 256 : i64}
// GLOBALS-NOT: fp8.packed_weight
module attributes {fp8.external_data_dir = "/models/m"} {
  func.func @block(%x: tensor<16x256xf8E4M3FN>, %xs: tensor<16x2xf32>) -> tensor<16x128xf32> {
    %zero = arith.constant 0.000000e+00 : f8E4M3FN
    %w = fp8.external_weight "w" from "model.data" [0, 49152] : tensor<192x128xf16>
    %a = fp8.amax %w layout<block 128x128> : tensor<192x128xf16> -> tensor<2x1xf32>
    %s = fp8.compute_scale %a recipe(#fp8.block) format(e4m3) : tensor<2x1xf32> -> tensor<2x1xf32>
    %q = fp8.quantize %w, %s layout<block 128x128> : tensor<192x128xf16>, tensor<2x1xf32> -> tensor<192x128xf8E4M3FN>
    %t, %ts = fp8.transpose %q, %s layout<block 128x128> permutation = [1, 0] to layout<block 128x128> : tensor<192x128xf8E4M3FN>, tensor<2x1xf32> -> tensor<128x192xf8E4M3FN>, tensor<1x2xf32>
    %p = tensor.pad %t low[0, 0] high[0, 64] {
    ^bb0(%i: index, %j: index):
      tensor.yield %zero : f8E4M3FN
    } : tensor<128x192xf8E4M3FN> to tensor<128x256xf8E4M3FN>
    %y = fp8.scaled_matmul %x, %xs layout<block 1x128>, %p, %ts layout<block 128x128> transpose_rhs : (tensor<16x256xf8E4M3FN>, tensor<16x2xf32>, tensor<128x256xf8E4M3FN>, tensor<1x2xf32>) -> tensor<16x128xf32>
    return %y : tensor<16x128xf32>
  }
}

// -----

// MXFP8: E8M0 scales, 32x1 blocks that the transpose makes 1x32; the raw
// weight has another user, so it stays too.

// CHECK-LABEL: func.func @mx
// CHECK-DAG: %[[W:.*]] = fp8.external_weight "w"
// CHECK-DAG: %[[Q:.*]], %[[S:.*]] = fp8.packed_weight "w" from "model.data"[64, 8192] : tensor<64x32xf32> layout<block 32x1> recipe(#fp8.mxfp8) format(e5m2) permutation = [1, 0] -> tensor<32x64xf8E5M2>, tensor<32x2xf8E8M0FNU>
// CHECK: return %[[Q]], %[[S]], %[[W]]
// GLOBALS-LABEL: func.func @mx
// GLOBALS-COUNT-3: memref.get_global
module attributes {fp8.external_data_dir = "/models/m"} {
  func.func @mx() -> (tensor<32x64xf8E5M2>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf32>) {
    %w = fp8.external_weight "w" from "model.data" [64, 8192] : tensor<64x32xf32>
    %a = fp8.amax %w layout<block 32x1> : tensor<64x32xf32> -> tensor<2x32xf32>
    %s = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e5m2) : tensor<2x32xf32> -> tensor<2x32xf8E8M0FNU>
    %q = fp8.quantize %w, %s layout<block 32x1> : tensor<64x32xf32>, tensor<2x32xf8E8M0FNU> -> tensor<64x32xf8E5M2>
    %t, %ts = fp8.transpose %q, %s layout<block 32x1> permutation = [1, 0] to layout<block 1x32> : tensor<64x32xf8E5M2>, tensor<2x32xf8E8M0FNU> -> tensor<32x64xf8E5M2>, tensor<32x2xf8E8M0FNU>
    return %t, %ts, %w : tensor<32x64xf8E5M2>, tensor<32x2xf8E8M0FNU>, tensor<64x32xf32>
  }
}

// -----

// Not folded: a delayed scale (history state), a scale from another
// tensor's amax, a constant weight (the folders' job).

// CHECK-LABEL: func.func @not_packed
// CHECK-NOT: fp8.packed_weight
// CHECK-COUNT-2: fp8.quantize
module attributes {fp8.external_data_dir = "/models/m"} {
  func.func @not_packed(%h: tensor<16xf32>, %prev: tensor<f32>, %other: tensor<64x32xf32>) -> (tensor<64x32xf8E4M3FN>, tensor<64x32xf8E4M3FN>) {
    %w = fp8.external_weight "w" from "model.data" [0, 8192] : tensor<64x32xf32>
    %s = fp8.compute_scale %h previous %prev recipe(#fp8.delayed<history = 16>) format(e4m3) : tensor<16xf32>, tensor<f32> -> tensor<f32>
    %q = fp8.quantize %w, %s layout<tensor> : tensor<64x32xf32>, tensor<f32> -> tensor<64x32xf8E4M3FN>
    %a2 = fp8.amax %other layout<tensor> : tensor<64x32xf32> -> tensor<f32>
    %s2 = fp8.compute_scale %a2 recipe(#fp8.current) format(e4m3) : tensor<f32> -> tensor<f32>
    %q2 = fp8.quantize %w, %s2 layout<tensor> : tensor<64x32xf32>, tensor<f32> -> tensor<64x32xf8E4M3FN>
    return %q, %q2 : tensor<64x32xf8E4M3FN>, tensor<64x32xf8E4M3FN>
  }
}

// -----

// A high-precision product's BF16 operand of a weight in a file (what
// fp8-high-precision-products makes: FP16 widened to FP32, rounded to BF16,
// transposed K-major) is one fp8.rounded_weight that the packer writes: no
// conversion or transpose kernel at run time. An FP32 weight is rounded
// without the widening; a BF16 one is only transposed.

// CHECK-LABEL: func.func @rounded
// CHECK-DAG: %[[H:.*]] = fp8.rounded_weight "head" from "model.data"[0, 16384] : tensor<64x128xf16> permutation = [1, 0] -> tensor<128x64xbf16>
// CHECK-DAG: %[[F:.*]] = fp8.rounded_weight "f" from "model.data"[16384, 8192] : tensor<64x32xf32> -> tensor<64x32xbf16>
// CHECK-DAG: %[[B:.*]] = fp8.rounded_weight "b" from "model.data"[24576, 4096] : tensor<64x32xbf16> permutation = [1, 0] -> tensor<32x64xbf16>
// CHECK-NOT: fp8.external_weight
// CHECK-NOT: arith.truncf
// CHECK-NOT: linalg.transpose
// CHECK: return %[[H]], %[[F]], %[[B]]

// GLOBALS-LABEL: fp8.external_weights = {__fp8_bf16_b = {kind = "round", length = 4096 : i64, location = "model.data", name = "b", offset = 24576 : i64, permutation = array<i64: 1, 0>, source_type = tensor<64x32xbf16>}
// GLOBALS-SAME: __fp8_bf16_f = {kind = "round", length = 8192 : i64, location = "model.data", name = "f", offset = 16384 : i64, permutation = array<i64>, source_type = tensor<64x32xf32>}
// GLOBALS-SAME: __fp8_bf16_head = {kind = "round", length = 16384 : i64, location = "model.data", name = "head", offset = 0 : i64, permutation = array<i64: 1, 0>, source_type = tensor<64x128xf16>}
// GLOBALS-DAG: memref.global "private" constant @__fp8_bf16_head : memref<128x64xbf16> {alignment = 256 : i64}
// GLOBALS-DAG: memref.global "private" constant @__fp8_bf16_f : memref<64x32xbf16> {alignment = 256 : i64}
// GLOBALS-NOT: fp8.rounded_weight
module attributes {fp8.external_data_dir = "/models/m"} {
  func.func @rounded() -> (tensor<128x64xbf16>, tensor<64x32xbf16>, tensor<32x64xbf16>) {
    %w = fp8.external_weight "head" from "model.data" [0, 16384] : tensor<64x128xf16>
    %x = arith.extf %w : tensor<64x128xf16> to tensor<64x128xf32>
    %b = arith.truncf %x : tensor<64x128xf32> to tensor<64x128xbf16>
    %e = tensor.empty() : tensor<128x64xbf16>
    %t = linalg.transpose ins(%b : tensor<64x128xbf16>) outs(%e : tensor<128x64xbf16>) permutation = [1, 0]
    %f = fp8.external_weight "f" from "model.data" [16384, 8192] : tensor<64x32xf32>
    %fb = arith.truncf %f : tensor<64x32xf32> to tensor<64x32xbf16>
    %g = fp8.external_weight "b" from "model.data" [24576, 4096] : tensor<64x32xbf16>
    %e2 = tensor.empty() : tensor<32x64xbf16>
    %gt = linalg.transpose ins(%g : tensor<64x32xbf16>) outs(%e2 : tensor<32x64xbf16>) permutation = [1, 0]
    return %t, %fb, %gt : tensor<128x64xbf16>, tensor<64x32xbf16>, tensor<32x64xbf16>
  }
}

// -----

// Not rounded by the packer: another rounding mode, a rounding to f16, a
// transposed value that is not a weight.

// CHECK-LABEL: func.func @not_rounded
// CHECK-NOT: fp8.rounded_weight
// CHECK: arith.truncf %{{.*}} to_nearest_away
// CHECK: arith.truncf %{{.*}} : tensor<64x32xf32> to tensor<64x32xf16>
// CHECK: linalg.transpose
module attributes {fp8.external_data_dir = "/models/m"} {
  func.func @not_rounded(%a: tensor<64x32xbf16>) -> (tensor<64x32xbf16>, tensor<64x32xf16>, tensor<32x64xbf16>) {
    %f = fp8.external_weight "f" from "model.data" [0, 8192] : tensor<64x32xf32>
    %r = arith.truncf %f to_nearest_away : tensor<64x32xf32> to tensor<64x32xbf16>
    %h = arith.truncf %f : tensor<64x32xf32> to tensor<64x32xf16>
    %e = tensor.empty() : tensor<32x64xbf16>
    %t = linalg.transpose ins(%a : tensor<64x32xbf16>) outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
    return %r, %h, %t : tensor<64x32xbf16>, tensor<64x32xf16>, tensor<32x64xbf16>
  }
}

// -----

// The same bytes rounded and transposed twice (two products of one weight)
// are one global.

// GLOBALS-LABEL: fp8.external_weights = {__fp8_bf16_twice = {kind = "round"
// GLOBALS-NOT: __fp8_bf16_twice_
// GLOBALS: memref.global "private" constant @__fp8_bf16_twice : memref<32x64xbf16>
// GLOBALS-NOT: memref.global
// GLOBALS-LABEL: func.func @twice
// GLOBALS-COUNT-2: memref.get_global @__fp8_bf16_twice :
module attributes {fp8.external_data_dir = "/models/m"} {
  func.func @twice() -> (tensor<32x64xbf16>, tensor<32x64xbf16>) {
    %w = fp8.external_weight "twice" from "model.data" [0, 4096] : tensor<64x32xf16>
    %x = arith.extf %w : tensor<64x32xf16> to tensor<64x32xf32>
    %b = arith.truncf %x : tensor<64x32xf32> to tensor<64x32xbf16>
    %e = tensor.empty() : tensor<32x64xbf16>
    %t = linalg.transpose ins(%b : tensor<64x32xbf16>) outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
    %w2 = fp8.external_weight "twice" from "model.data" [0, 4096] : tensor<64x32xf16>
    %x2 = arith.extf %w2 : tensor<64x32xf16> to tensor<64x32xf32>
    %b2 = arith.truncf %x2 : tensor<64x32xf32> to tensor<64x32xbf16>
    %e2 = tensor.empty() : tensor<32x64xbf16>
    %t2 = linalg.transpose ins(%b2 : tensor<64x32xbf16>) outs(%e2 : tensor<32x64xbf16>) permutation = [1, 0]
    return %t, %t2 : tensor<32x64xbf16>, tensor<32x64xbf16>
  }
}
