// RUN: fp8-opt %s -split-input-file -verify-diagnostics \
// RUN:   --fp8-gpu-require-static-shapes | FileCheck %s

// A dynamic input is named by its ONNX name.
// expected-error @+1 {{input 'input_ids' (argument #0) of @main is tensor<1x?xi64>: the GPU targets take static shapes only (dynamic shapes are CPU-only for now); give every dimension one size}}
func.func @main(%arg0: tensor<1x?xi64> {onnx.name = "input_ids"}) -> tensor<1xi64> {
  %c = arith.constant dense<0> : tensor<1xi64>
  return %c : tensor<1xi64>
}

// -----

// expected-error @+1 {{output 'logits' (result #0) of @main is tensor<?x8xf32>}}
func.func @main(%arg0: tensor<4x8xf32>) -> (tensor<?x8xf32> {onnx.name = "logits"}) {
  %0 = tensor.cast %arg0 : tensor<4x8xf32> to tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'tensor.cast' has a result of dynamic shape 'tensor<?x8xf32>': the GPU targets take static shapes only}}
  %0 = tensor.cast %arg0 : tensor<4x8xf32> to tensor<?x8xf32>
  %1 = tensor.cast %0 : tensor<?x8xf32> to tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Static functions pass; declarations (the runtime's) may take dynamic
// memrefs.
// CHECK-LABEL: func.func private @fp8rt_helper(memref<?xi8>)
// CHECK-LABEL: func.func @main
func.func private @fp8rt_helper(memref<?xi8>)
func.func @main(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  return %arg0 : tensor<4x8xf32>
}
