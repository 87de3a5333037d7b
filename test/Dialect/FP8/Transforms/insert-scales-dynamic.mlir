// RUN: fp8-opt %s -fp8-insert-scales="recipe=current keep-first-last=false" | FileCheck %s --check-prefix=CURRENT
// RUN: fp8-opt %s -fp8-insert-scales="recipe=delayed keep-first-last=false" | FileCheck %s --check-prefix=DELAYED
// RUN: fp8-opt %s -fp8-insert-scales="recipe=block keep-first-last=false" | FileCheck %s --check-prefix=KEPT
// RUN: fp8-opt %s -fp8-insert-scales="recipe=rowwise keep-first-last=false" | FileCheck %s --check-prefix=KEPT

// A linear layer whose rows (batch x sequence) are dynamic (issue 14): the
// per-tensor recipes quantize it (the amax runs over the run's elements);
// per-row and per-block scales would have a dynamic shape, so those
// recipes keep the product in high precision.
// CURRENT-LABEL: func @dynamic_rows
// CURRENT: %[[A:.+]] = fp8.amax %{{.+}} layout<tensor> : tensor<?x64xf32> -> tensor<f32>
// CURRENT: fp8.quantize %{{.+}}, %{{.+}} layout<tensor> : tensor<?x64xf32>, tensor<f32> -> tensor<?x64xf8E4M3FN>
// CURRENT: fp8.scaled_matmul {{.+}} : (tensor<?x64xf8E4M3FN>, tensor<f32>, tensor<64x32xf8E4M3FN>, tensor<f32>) -> tensor<?x32xf32>
// CURRENT-NOT: linalg.matmul
// DELAYED-LABEL: func @dynamic_rows
// DELAYED: fp8.scaled_matmul {{.+}} : (tensor<?x64xf8E4M3FN>, tensor<f32>, tensor<64x32xf8E4M3FN>, tensor<f32>) -> tensor<?x32xf32>
// KEPT-LABEL: func @dynamic_rows
// KEPT-NOT: fp8.
// KEPT: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<?x64xf32>, tensor<64x32xf32>)
func.func @dynamic_rows(%x: tensor<?x64xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %w = arith.constant dense<0.5> : tensor<64x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%m) : tensor<?x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x32xf32>) -> tensor<?x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}
