// One FP8 candidate product, for option tests.
func.func @main(%x: tensor<32x128xf32>, %w: tensor<128x64xf32>) -> tensor<32x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32x64xf32>) -> tensor<32x64xf32>
  %y = linalg.matmul ins(%x, %w : tensor<32x128xf32>, tensor<128x64xf32>) outs(%f : tensor<32x64xf32>) -> tensor<32x64xf32>
  return %y : tensor<32x64xf32>
}
