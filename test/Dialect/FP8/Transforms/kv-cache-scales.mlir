// Per-tensor scales from a JSON file: by the input's or the output's name,
// as a scale or as a calibrated amax; a pair shares one scale.
// RUN: echo '{"past.0": {"amax": 3.5}, "present.1": 0.5, "past.9": 2.0}' > %t.json
// RUN: fp8-opt %s --fp8-kv-cache="scales-file=%t.json" | FileCheck %s
// RUN: echo '{"present.0": {"amax": 3.5}}' > %t.out.json
// RUN: fp8-opt %s --fp8-kv-cache="scales-file=%t.out.json scale=0.125" | FileCheck %s --check-prefix=OUT

// amax 3.5 -> scale 1 / (448 / 3.5) = 2^-7 (current scaling's rule).
// CHECK-DAG:   %[[S0:.*]] = arith.constant dense<7.812500e-03> : tensor<f32>
// CHECK-DAG:   %[[S9:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG:   %[[S1:.*]] = arith.constant dense<5.000000e-01> : tensor<f32>
// CHECK-DAG:   fp8.dequantize %arg2, %[[S9]] layout<tensor>
// CHECK-DAG:   %[[N:.*]] = fp8.quantize %arg0, %[[S0]] layout<tensor> : tensor<1x4xf32>, tensor<f32> -> tensor<1x4xf8E4M3FN>
// CHECK-DAG:   %[[Q1:.*]] = fp8.quantize %{{.*}}, %[[S1]] layout<tensor> : tensor<8xf32>
// CHECK-DAG:   %[[C:.*]] = tensor.insert_slice %[[N]] into
// CHECK:       return %[[C]], %[[Q1]]

// The output's entry gives the pair its scale; the rest take scale=.
// OUT-DAG:     arith.constant dense<7.812500e-03> : tensor<f32>
// OUT-DAG:     arith.constant dense<1.250000e-01> : tensor<f32>
func.func @main(%x: tensor<1x4xf32> {onnx.name = "x"},
                %past: tensor<3x4xf32> {onnx.name = "past.0"},
                %p9: tensor<8xf32> {onnx.name = "past.9"})
    -> (tensor<4x4xf32> {onnx.name = "present.0"}, tensor<8xf32> {onnx.name = "present.1"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %c0 = tensor.insert_slice %past into %e[0, 0] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<4x4xf32>
  %c1 = tensor.insert_slice %x into %c0[3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<4x4xf32>
  %a = arith.addf %p9, %p9 : tensor<8xf32>
  return %c1, %a : tensor<4x4xf32>, tensor<8xf32>
}
