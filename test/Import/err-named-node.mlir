// Diagnostics name the ONNX node (its NameLoc) and its op type.
// RUN: protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto < %S/Inputs/named-node.txtpb > %t.onnx
// RUN: not fp8-translate --import-onnx %t.onnx 2>&1 | FileCheck %s
// CHECK: error: 'Det' node "/encoder/layer.0/Det_3": unsupported op type 'Det'
