// A first decoder step with an empty past: the importer drops the empty
// piece of the Concat, so present.0 holds no cached part. It pairs with
// past_key_values.0 by name ("present" -> "past_key_values" or "past") and
// gets that input's scale, the one the next step reads it with.
// RUN: echo '{"past_key_values.0.key": 0.25}' > %t.json
// RUN: fp8-opt %s --fp8-kv-cache="scales-file=%t.json remarks=true" 2>&1 | FileCheck %s

// CHECK: remark: fp8-kv-cache: 'present.0.key' e4m3 scale 0.25, quantized whole (no cached part), the scale of 'past_key_values.0.key'
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    tensor<1x0x4xf8E4M3FN> {onnx.name = "past_key_values.0.key"}
// CHECK-SAME:    -> (tensor<1x2x4xf8E4M3FN> {onnx.name = "present.0.key"})
// CHECK:         %[[S:.*]] = arith.constant dense<2.500000e-01> : tensor<f32>
// CHECK:         %[[Q:.*]] = fp8.quantize %{{.*}}, %[[S]] layout<tensor>
// CHECK:         return %[[Q]]
func.func @main(%x: tensor<1x2x4xf32> {onnx.name = "x"},
                %past: tensor<1x0x4xf32> {onnx.name = "past_key_values.0.key"})
    -> (tensor<1x2x4xf32> {onnx.name = "present.0.key"}) {
  %k = arith.mulf %x, %x : tensor<1x2x4xf32>
  return %k : tensor<1x2x4xf32>
}
