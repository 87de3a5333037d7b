// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %S/Inputs/external_weights.bin %t/
// RUN: protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto < %S/Inputs/external-data.txtpb > %t/model.onnx
// RUN: fp8-translate --import-onnx %t/model.onnx | FileCheck %s

// A binary model whose initializer is external data (location, offset,
// length) in a file next to the model.

// CHECK-LABEL: func.func @main(
// CHECK: arith.constant dense<[1.500000e+00, -2.000000e+00, 2.500000e-01, 8.000000e+00]> : tensor<4xf32>
// CHECK: arith.addf
