// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --fp8-require-static-model-abi | FileCheck %s
// Both lowering pipelines run the check under model-abi without
// descriptors (they left a half-lowered func.func before), and not with
// descriptors:
// RUN: not fp8-opt %s -split-input-file \
// RUN:   --fp8-cpu-lowering-pipeline=model-abi=true 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPE
// RUN: not fp8-opt %s -split-input-file \
// RUN:   '--fp8-gpu-lowering-pipeline=model-abi=true format=none' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PIPE
// RUN: fp8-opt %s -split-input-file \
// RUN:   '--fp8-cpu-lowering-pipeline=model-abi=true model-abi-descriptors=true' \
// RUN:   | FileCheck %s --check-prefix=DESC
// PIPE: error: input 'input_ids' (argument #0) of @main is 'tensor<1x?xi64>': a model library's bare-pointer entry takes static shapes; lower with model-abi-descriptors=true
// PIPE: error: output 'logits' (result #0) of @main is 'tensor<?x8xf32>'
// DESC: llvm.func @main(
// DESC: llvm.func @main(
// DESC: llvm.func @main(

// A dynamic input is named by its ONNX name.
// expected-error @+1 {{input 'input_ids' (argument #0) of @main is 'tensor<1x?xi64>': a model library's bare-pointer entry takes static shapes; lower with model-abi-descriptors=true (what fp8-compile does for a model with dynamic dimensions), or give every dimension one size}}
func.func @main(%arg0: tensor<1x?xi64> {onnx.name = "input_ids"}) -> tensor<1xi64> {
  %c = arith.constant dense<0> : tensor<1xi64>
  return %c : tensor<1xi64>
}

// -----

// expected-error @+1 {{output 'logits' (result #0) of @main is 'tensor<?x8xf32>'}}
func.func @main(%arg0: tensor<4x8xf32>) -> (tensor<?x8xf32> {onnx.name = "logits"}) {
  %0 = tensor.cast %arg0 : tensor<4x8xf32> to tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// Static public functions pass; declarations (the runtime's) and private
// functions may be dynamic.
// CHECK-LABEL: func.func private @fp8rt_helper(memref<?xi8>)
// CHECK-LABEL: func.func private @helper(%{{.*}}: tensor<?xf32>)
// CHECK-LABEL: func.func @main
func.func private @fp8rt_helper(memref<?xi8>)
func.func private @helper(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  return %arg0 : tensor<?xf32>
}
func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %arg0 : tensor<4x8xf32>
}
