// RUN: fp8-opt %s -convert-fp8-to-linalg -split-input-file -verify-diagnostics

// A dynamic dimension split into blocks would need dynamic padding.
func.func @dynamic_blocks(%x: tensor<4x?xf32>, %s: tensor<4x?xf32>) -> tensor<4x?xf8E4M3FN> {
  // expected-error @+1 {{cannot be lowered: layout #fp8.layout<block 1x128> splits a dynamic dimension of 'tensor<4x?xf32>' into blocks; specialise the shape first}}
  %q = fp8.quantize %x, %s layout<block 1x128> : tensor<4x?xf32>, tensor<4x?xf32> -> tensor<4x?xf8E4M3FN>
  return %q : tensor<4x?xf8E4M3FN>
}

// -----

func.func @dynamic_history(%h: tensor<?xf32>, %a: tensor<f32>) -> tensor<?xf32> {
  // expected-error @+1 {{cannot be lowered: the history shape must be static}}
  %n = fp8.history_update %h, %a : tensor<?xf32>, tensor<f32>
  return %n : tensor<?xf32>
}

// -----

// M-major lhs scales are read back with static slices: a dynamic M (which
// the verifier accepts) is refused here rather than miscompiled.
func.func @m_major_dynamic(%a: tensor<?x256xf8E4M3FN>, %sa: tensor<2x8xf32>, %w: tensor<64x256xf8E4M3FN>, %s: tensor<f32>) -> tensor<?x64xf32> {
  // expected-error @+1 {{cannot be lowered: m_major lhs scales need static lhs and scale shapes (specialise the shape first)}}
  %y = fp8.scaled_matmul %a, %sa layout<block 1x128> m_major(4), %w, %s layout<tensor> transpose_rhs : (tensor<?x256xf8E4M3FN>, tensor<2x8xf32>, tensor<64x256xf8E4M3FN>, tensor<f32>) -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}
