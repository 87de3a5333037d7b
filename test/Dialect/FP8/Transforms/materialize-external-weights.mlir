// RUN: fp8-opt %s --fp8-materialize-external-weights | FileCheck %s

// Each external weight becomes an uninitialized constant global (named
// after the initializer, 256-byte aligned) read through a restrict,
// read-only to_tensor; the same bytes referenced twice are one global; the
// module records where each global's bytes are.

// CHECK: module attributes {fp8.external_data_dir = "/models/llama", fp8.external_weights = {
// CHECK-SAME: __fp8_external_layers_0_up = {length = 65536 : i64, location = "model.data", name = "layers.0.up", offset = 0 : i64}
// CHECK-SAME: __fp8_external_tok_emb = {length = 16384 : i64, location = "model.data", name = "tok_emb", offset = 65536 : i64}
// CHECK-DAG: memref.global "private" constant @__fp8_external_layers_0_up : memref<128x256xf16> {alignment = 256 : i64}
// CHECK-DAG: memref.global "private" constant @__fp8_external_tok_emb : memref<64x128xf16> {alignment = 256 : i64}
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]] = memref.get_global @__fp8_external_layers_0_up : memref<128x256xf16>
// CHECK: bufferization.to_tensor %[[G]] restrict : memref<128x256xf16> to tensor<128x256xf16>
// CHECK: memref.get_global @__fp8_external_tok_emb
// CHECK: memref.get_global @__fp8_external_tok_emb
// CHECK-NOT: fp8.external_weight
module attributes {fp8.external_data_dir = "/models/llama"} {
  func.func @main() -> (tensor<128x256xf16>, tensor<64x128xf16>, tensor<64x128xf16>) {
    %up = fp8.external_weight "layers.0.up" from "model.data" [0, 65536] : tensor<128x256xf16>
    %emb = fp8.external_weight "tok_emb" from "model.data" [65536, 16384] : tensor<64x128xf16>
    %head = fp8.external_weight "lm_head" from "model.data" [65536, 16384] : tensor<64x128xf16>
    return %up, %emb, %head : tensor<128x256xf16>, tensor<64x128xf16>, tensor<64x128xf16>
  }
}
