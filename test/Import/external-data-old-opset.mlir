// RUN: rm -rf %t && mkdir -p %t
// RUN: cp %S/Inputs/external_weights.bin %t/
// RUN: sed 's/opset_import { domain: "" version: 18 }/opset_import { domain: "" version: 11 }/' %S/Inputs/external-data.txtpb | protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto > %t/model.onnx
// RUN: fp8-translate --import-onnx %t/model.onnx | FileCheck %s

// external-data.mlir's model with opset 11: ONNX's version converter
// upgrades it to 13 with the external initializer set aside (its IR would
// lose where the bytes are), and the importer still reads them.

// CHECK-LABEL: func.func @main(
// CHECK-SAME: tensor<4xf32> {onnx.name = "X"}) -> (tensor<4xf32> {onnx.name = "Y"})
// CHECK: arith.constant dense<[1.500000e+00, -2.000000e+00, 2.500000e-01, 8.000000e+00]> : tensor<4xf32>
// CHECK: arith.addf
