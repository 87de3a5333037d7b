// Every refusal of fp8-kv-cache-in-place names the output and says why.
// RUN: not fp8-opt %s --split-input-file --fp8-kv-cache-in-place 2>&1 | FileCheck %s

// CHECK: error: fp8-kv-cache-in-place: output 'present.0' cannot be updated in place: the step adds 2 tokens; an in-place cache takes a step of one token (compile a prefill without the in-place cache)
func.func @main(%past: tensor<1x2x6x4xf32> {onnx.name = "past.0"}, %new: tensor<1x2x2x4xf32>)
    -> (tensor<1x2x8x4xf32> {onnx.name = "present.0"}) {
  %e = tensor.empty() : tensor<1x2x8x4xf32>
  %a = tensor.insert_slice %past into %e[0, 0, 0, 0] [1, 2, 6, 4] [1, 1, 1, 1] : tensor<1x2x6x4xf32> into tensor<1x2x8x4xf32>
  %p = tensor.insert_slice %new into %a[0, 0, 6, 0] [1, 2, 2, 4] [1, 1, 1, 1] : tensor<1x2x2x4xf32> into tensor<1x2x8x4xf32>
  return %p : tensor<1x2x8x4xf32>
}

// -----

// CHECK: error: fp8-kv-cache-in-place: output 'present.0' cannot be updated in place: input 'past.0' has other uses than the Concat
func.func @main(%past: tensor<1x2x7x4xf32> {onnx.name = "past.0"}, %new: tensor<1x2x1x4xf32>)
    -> (tensor<1x2x8x4xf32> {onnx.name = "present.0"}, tensor<1x2x7x4xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x2x8x4xf32>
  %a = tensor.insert_slice %past into %e[0, 0, 0, 0] [1, 2, 7, 4] [1, 1, 1, 1] : tensor<1x2x7x4xf32> into tensor<1x2x8x4xf32>
  %p = tensor.insert_slice %new into %a[0, 0, 7, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x8x4xf32>
  return %p, %past : tensor<1x2x8x4xf32>, tensor<1x2x7x4xf32>
}

// -----

// A cache of another layout (GPT-2's stacked [2, batch, ...] or a 2-D one).
// CHECK: error: fp8-kv-cache-in-place: output 'present.0' cannot be updated in place: the cache must be a static [batch, heads, sequence, head_dim] tensor
func.func @main(%past: tensor<3x4xf32> {onnx.name = "past.0"}, %new: tensor<1x4xf32>)
    -> (tensor<4x4xf32> {onnx.name = "present.0"}) {
  %e = tensor.empty() : tensor<4x4xf32>
  %a = tensor.insert_slice %past into %e[0, 0] [3, 4] [1, 1] : tensor<3x4xf32> into tensor<4x4xf32>
  %p = tensor.insert_slice %new into %a[3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<4x4xf32>
  return %p : tensor<4x4xf32>
}

// -----

// CHECK: error: fp8-kv-cache-in-place: output 'present.0' cannot be updated in place: its Concat must join along the sequence axis (2) of [batch, heads, sequence, head_dim]
func.func @main(%past: tensor<1x2x8x3xf32> {onnx.name = "past.0"}, %new: tensor<1x2x8x1xf32>)
    -> (tensor<1x2x8x4xf32> {onnx.name = "present.0"}) {
  %e = tensor.empty() : tensor<1x2x8x4xf32>
  %a = tensor.insert_slice %past into %e[0, 0, 0, 0] [1, 2, 8, 3] [1, 1, 1, 1] : tensor<1x2x8x3xf32> into tensor<1x2x8x4xf32>
  %p = tensor.insert_slice %new into %a[0, 0, 0, 3] [1, 2, 8, 1] [1, 1, 1, 1] : tensor<1x2x8x1xf32> into tensor<1x2x8x4xf32>
  return %p : tensor<1x2x8x4xf32>
}

// -----

// CHECK: error: fp8-kv-cache-in-place: the caches disagree on their slots (axis 2): 'present.1' has 6, 'present.0' 8
func.func @main(%p0: tensor<1x2x7x4xf32> {onnx.name = "past.0"}, %p1: tensor<1x2x5x4xf32> {onnx.name = "past.1"},
                %new: tensor<1x2x1x4xf32>)
    -> (tensor<1x2x8x4xf32> {onnx.name = "present.0"}, tensor<1x2x6x4xf32> {onnx.name = "present.1"}) {
  %e = tensor.empty() : tensor<1x2x8x4xf32>
  %a = tensor.insert_slice %p0 into %e[0, 0, 0, 0] [1, 2, 7, 4] [1, 1, 1, 1] : tensor<1x2x7x4xf32> into tensor<1x2x8x4xf32>
  %x = tensor.insert_slice %new into %a[0, 0, 7, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x8x4xf32>
  %f = tensor.empty() : tensor<1x2x6x4xf32>
  %c = tensor.insert_slice %p1 into %f[0, 0, 0, 0] [1, 2, 5, 4] [1, 1, 1, 1] : tensor<1x2x5x4xf32> into tensor<1x2x6x4xf32>
  %y = tensor.insert_slice %new into %c[0, 0, 5, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x6x4xf32>
  return %x, %y : tensor<1x2x8x4xf32>, tensor<1x2x6x4xf32>
}

// -----

// CHECK: error: fp8-kv-cache-in-place: output 'present.0' cannot be updated in place: it is not a Concat of two pieces
func.func @main(%past: tensor<1x2x8x4xf32> {onnx.name = "past.0"})
    -> (tensor<1x2x8x4xf32> {onnx.name = "present.0"}) {
  return %past : tensor<1x2x8x4xf32>
}

// -----

// CHECK: error: fp8-kv-cache-in-place: the graph already has an input 'cache_position'; name the positions input otherwise (position-input=)
func.func @main(%c: tensor<1xi64> {onnx.name = "cache_position"}) -> (tensor<1xi64> {onnx.name = "present.0"}) {
  return %c : tensor<1xi64>
}

// -----

// CHECK: error: fp8-kv-cache-in-place: no output matches '^present'; name the cache outputs with outputs= (fp8-compile --kv-cache-outputs)
func.func @main(%x: tensor<1xf32> {onnx.name = "x"}) -> (tensor<1xf32> {onnx.name = "y"}) {
  return %x : tensor<1xf32>
}
