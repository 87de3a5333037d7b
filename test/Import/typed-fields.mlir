// RUN: protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto < %S/Inputs/typed-fields.txtpb > %t.onnx
// RUN: fp8-translate --import-onnx %t.onnx | FileCheck %s

// Initializers in the typed TensorProto fields decode to the right values
// (casts of constants fold, so the float checks read the decoded numbers).

// CHECK-LABEL: func.func @main(
// CHECK-DAG: dense<[1.000000e+00, -2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: dense<[1.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-DAG: dense<[1.000000e+00, 4.480000e+02]> : tensor<2xf32>
// CHECK-DAG: dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: dense<[true, false, true]> : tensor<3xi1>
// CHECK-DAG: dense<[-5, 7]> : tensor<2xi8>
// CHECK-DAG: dense<[-56, 3]> : tensor<2xi8>
// CHECK-DAG: dense<[5.000000e-01, -1.250000e+00]> : tensor<2xf64>
// CHECK-DAG: dense<[-70000, 9]> : tensor<2xi32>
// CHECK-DAG: dense<[12345678901, -1]> : tensor<2xi64>
