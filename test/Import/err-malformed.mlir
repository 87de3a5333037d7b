// A truncated binary model and a text model with a syntax error.
// RUN: protoc --encode=onnx.ModelProto -I/usr/include /usr/include/onnx/onnx.proto < %S/Inputs/external-data.txtpb | head -c 40 > %t.onnx
// RUN: not fp8-translate --import-onnx %t.onnx 2>&1 | FileCheck %s --check-prefix=BINARY
// RUN: printf '<ir_version: 8, opset_import: ["" : 17]>\ng (float[2] X) => (float[2] Y) {\n  Y = Identity(X\n}\n' > %t.onnxtext
// RUN: not fp8-translate --import-onnx %t.onnxtext 2>&1 | FileCheck %s --check-prefix=TEXT
// RUN: not fp8-translate --import-onnx %t.does-not-exist.onnx 2>&1 | FileCheck %s --check-prefix=MISSING

// BINARY: error: cannot read ONNX model: not a valid ONNX ModelProto (malformed or truncated protobuf)
// TEXT: error: cannot read ONNX model: ONNX text parser: [ParseError
// MISSING: error: cannot open ONNX model: No such file or directory
