// RUN: fp8-opt %s --split-input-file --fp8-kv-cache | FileCheck %s
// RUN: fp8-opt %s --split-input-file --fp8-kv-cache="format=e5m2 scale=0.25" | FileCheck %s --check-prefix=E5M2

// A decoder step as the importer writes it: present = Concat(past, new)
// along the sequence axis (an insert_slice chain), and attention reading
// the concatenation. The cache becomes FP8; the cached part of present is
// the past input's bytes, only the new token is quantized, and attention
// reads the quantized cache.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: tensor<1x4xf32> {onnx.name = "x"},
// CHECK-SAME:    %[[PAST:.*]]: tensor<1x3x4xf8E4M3FN> {onnx.name = "past.0"})
// CHECK-SAME:    -> (tensor<1x4xf32> {onnx.name = "y"}, tensor<1x4x4xf8E4M3FN> {onnx.name = "present.0"})
// CHECK:         %[[S:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NOT:     fp8.dequantize %[[PAST]]
// CHECK:         %[[NEW:.*]] = fp8.quantize %{{.*}}, %[[S]] layout<tensor> : tensor<1x1x4xf32>, tensor<f32> -> tensor<1x1x4xf8E4M3FN>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x4x4xf8E4M3FN>
// CHECK:         %[[C0:.*]] = tensor.insert_slice %[[PAST]] into %[[E]][0, 0, 0] [1, 3, 4] [1, 1, 1]
// CHECK:         %[[C1:.*]] = tensor.insert_slice %[[NEW]] into %[[C0]][0, 3, 0] [1, 1, 4] [1, 1, 1]
// CHECK:         %[[KV:.*]] = fp8.dequantize %[[C1]], %[[S]] layout<tensor> : tensor<1x4x4xf8E4M3FN>, tensor<f32> -> tensor<1x4x4xf32>
// CHECK:         linalg.batch_matmul ins(%{{.*}}, %[[KV]] :
// CHECK:         return %{{.*}}, %[[C1]] : tensor<1x4xf32>, tensor<1x4x4xf8E4M3FN>

// E5M2-LABEL: func.func @main(
// E5M2-SAME:    tensor<1x3x4xf8E5M2> {onnx.name = "past.0"}
// E5M2-SAME:    -> (tensor<1x4xf32> {onnx.name = "y"}, tensor<1x4x4xf8E5M2> {onnx.name = "present.0"})
// E5M2:         arith.constant dense<2.500000e-01> : tensor<f32>

func.func @main(%x: tensor<1x4xf32> {onnx.name = "x"},
                %past: tensor<1x3x4xf32> {onnx.name = "past.0"})
    -> (tensor<1x4xf32> {onnx.name = "y"}, tensor<1x4x4xf32> {onnx.name = "present.0"}) {
  %new = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 1, 4] : tensor<1x4xf32> into tensor<1x1x4xf32>
  %e = tensor.empty() : tensor<1x4x4xf32>
  %c0 = tensor.insert_slice %past into %e[0, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<1x3x4xf32> into tensor<1x4x4xf32>
  %c1 = tensor.insert_slice %new into %c0[0, 3, 0] [1, 1, 4] [1, 1, 1] : tensor<1x1x4xf32> into tensor<1x4x4xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<1x1x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %att = linalg.batch_matmul ins(%new, %c1 : tensor<1x1x4xf32>, tensor<1x4x4xf32>) outs(%fill : tensor<1x1x4xf32>) -> tensor<1x1x4xf32>
  %y = tensor.collapse_shape %att [[0, 1], [2]] : tensor<1x1x4xf32> into tensor<1x4xf32>
  return %y, %c1 : tensor<1x4xf32>, tensor<1x4x4xf32>
}

// -----

// An output that is not built from a cache input is quantized whole (its
// own scale); an input no output is built from is only read. Other inputs
// and outputs keep their types.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %{{.*}}: tensor<2xi64> {onnx.name = "ids"}, %[[P:.*]]: tensor<8xf8E4M3FN> {onnx.name = "past.9"})
// CHECK-SAME:    -> (tensor<8xf32> {onnx.name = "y"}, tensor<8xf8E4M3FN> {onnx.name = "present.1"})
// CHECK:         %[[D:.*]] = fp8.dequantize %[[P]], %[[S:.*]] layout<tensor> : tensor<8xf8E4M3FN>, tensor<f32> -> tensor<8xf32>
// CHECK:         %[[A:.*]] = arith.addf %[[D]], %[[D]]
// CHECK:         %[[Q:.*]] = fp8.quantize %[[A]], %[[S]] layout<tensor>
// CHECK:         %[[DQ:.*]] = fp8.dequantize %[[Q]], %[[S]]
// CHECK:         return %[[DQ]], %[[Q]]

func.func @main(%ids: tensor<2xi64> {onnx.name = "ids"},
                %p: tensor<8xf32> {onnx.name = "past.9"})
    -> (tensor<8xf32> {onnx.name = "y"}, tensor<8xf32> {onnx.name = "present.1"}) {
  %a = arith.addf %p, %p : tensor<8xf32>
  return %a, %a : tensor<8xf32>, tensor<8xf32>
}
