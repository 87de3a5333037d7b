// RUN: fp8-opt %s --fp8-materialize-external-weights | FileCheck %s

// Packed weights concatenated along N (fp8-merge-sibling-products): one
// global per concatenation, whose table entry lists the parts (each a
// packed weight's data or scales entry) that the packer writes one after
// the other; a part also used alone keeps its own global.

// CHECK: module attributes {fp8.external_weights = {
// CHECK-SAME: __fp8_packed_wq_scale = {block = array<i64: 128, 128>, data_shape = array<i64: 256, 256>, eps = 0.000000e+00 : f32, format = "e4m3", kind = "scale", length = 131072 : i64, location = "m.data", name = "wq", offset = 0 : i64, permutation = array<i64: 1, 0>, pow2 = true, rceil = true, scaling = "current", source_type = tensor<256x256xf16>}
// CHECK-SAME: __fp8_packed_wq_wk = {kind = "concat", parts = [{block = array<i64: 128, 128>, data_shape = array<i64: 256, 256>, {{.*}} kind = "data", length = 131072 : i64, location = "m.data", name = "wq", offset = 0 : i64, permutation = array<i64: 1, 0>, pow2 = true, rceil = true, scaling = "current", source_type = tensor<256x256xf16>}, {block = array<i64: 128, 128>, data_shape = array<i64: 128, 256>, {{.*}} kind = "data", length = 65536 : i64, location = "m.data", name = "wk", offset = 131072 : i64, permutation = array<i64: 1, 0>, pow2 = true, rceil = true, scaling = "current", source_type = tensor<256x128xf16>}]}
// CHECK-SAME: __fp8_packed_wq_wk_scale = {kind = "concat", parts = [{block = {{.*}} kind = "scale", {{.*}} name = "wq", {{.*}} kind = "scale", {{.*}} name = "wk", {{.*}} source_type = tensor<256x128xf16>}]}}}
// CHECK-DAG: memref.global "private" constant @__fp8_packed_wq_wk : memref<384x256xf8E4M3FN> {alignment = 256 : i64}
// CHECK-DAG: memref.global "private" constant @__fp8_packed_wq_wk_scale : memref<3x2xf32> {alignment = 256 : i64}
// CHECK-DAG: memref.global "private" constant @__fp8_packed_wq_scale : memref<2x2xf32> {alignment = 256 : i64}
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @main
// CHECK-NOT: tensor.concat
// CHECK-NOT: fp8.packed_weight
module {
  func.func @main() -> (tensor<384x256xf8E4M3FN>, tensor<3x2xf32>, tensor<2x2xf32>) {
    %wq, %sq = fp8.packed_weight "wq" from "m.data" [0, 131072] : tensor<256x256xf16> layout<block 128x128> recipe(#fp8.block) format(e4m3) permutation = [1, 0] -> tensor<256x256xf8E4M3FN>, tensor<2x2xf32>
    %wk, %sk = fp8.packed_weight "wk" from "m.data" [131072, 65536] : tensor<256x128xf16> layout<block 128x128> recipe(#fp8.block) format(e4m3) permutation = [1, 0] -> tensor<128x256xf8E4M3FN>, tensor<1x2xf32>
    %d = tensor.concat dim(0) %wq, %wk : (tensor<256x256xf8E4M3FN>, tensor<128x256xf8E4M3FN>) -> tensor<384x256xf8E4M3FN>
    %s = tensor.concat dim(0) %sq, %sk : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
    return %d, %s, %sq : tensor<384x256xf8E4M3FN>, tensor<3x2xf32>, tensor<2x2xf32>
  }
}
