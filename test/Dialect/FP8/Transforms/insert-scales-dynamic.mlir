// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=current keep-first-last=false" | FileCheck %s --check-prefix=CURRENT
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=delayed keep-first-last=false" | FileCheck %s --check-prefix=DELAYED
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=block keep-first-last=false" | FileCheck %s --check-prefix=BLOCK
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=rowwise keep-first-last=false" | FileCheck %s --check-prefix=ROWWISE
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=mxfp8 keep-first-last=false" | FileCheck %s --check-prefix=MX
// RUN: fp8-opt %s -split-input-file -fp8-insert-scales="recipe=rowwise keep-first-last=false" -convert-fp8-to-linalg | FileCheck %s --check-prefix=LOWERED

// A linear layer whose rows (batch x sequence) are dynamic (issue 14): the
// per-tensor recipes quantize it (the amax runs over the run's elements);
// per-row and per-block activation scales take the dynamic row count as
// their own first dimension (one scale per row, or per 1 x 128 / 1 x 32
// block of a row); the weight's stay static.
// CURRENT-LABEL: func @dynamic_rows
// CURRENT: %[[A:.+]] = fp8.amax %{{.+}} layout<tensor> : tensor<?x64xf32> -> tensor<f32>
// CURRENT: fp8.quantize %{{.+}}, %{{.+}} layout<tensor> : tensor<?x64xf32>, tensor<f32> -> tensor<?x64xf8E4M3FN>
// CURRENT: fp8.scaled_matmul {{.+}} : (tensor<?x64xf8E4M3FN>, tensor<f32>, tensor<64x32xf8E4M3FN>, tensor<f32>) -> tensor<?x32xf32>
// CURRENT-NOT: linalg.matmul
// DELAYED-LABEL: func @dynamic_rows
// DELAYED: fp8.scaled_matmul {{.+}} : (tensor<?x64xf8E4M3FN>, tensor<f32>, tensor<64x32xf8E4M3FN>, tensor<f32>) -> tensor<?x32xf32>
// ROWWISE-LABEL: func @dynamic_rows
// ROWWISE: fp8.amax %{{.+}} layout<row> : tensor<?x64xf32> -> tensor<?x1xf32>
// ROWWISE: fp8.scaled_matmul {{.+}} : (tensor<?x64xf8E4M3FN>, tensor<?x1xf32>, tensor<64x32xf8E4M3FN>, tensor<1x32xf32>) -> tensor<?x32xf32>
// ROWWISE-NOT: linalg.matmul
// BLOCK-LABEL: func @dynamic_rows
// BLOCK: fp8.amax %{{.+}} layout<block 1x128> : tensor<?x64xf32> -> tensor<?x1xf32>
// BLOCK: fp8.scaled_matmul {{.+}} : (tensor<?x64xf8E4M3FN>, tensor<?x1xf32>, tensor<64x32xf8E4M3FN>, tensor<1x1xf32>) -> tensor<?x32xf32>
// BLOCK-NOT: linalg.matmul
// MX-LABEL: func @dynamic_rows
// MX: fp8.scaled_matmul {{.+}} : (tensor<?x64xf8E4M3FN>, tensor<?x2xf8E8M0FNU>, tensor<64x32xf8E4M3FN>, tensor<2x32xf8E8M0FNU>) -> tensor<?x32xf32>
// The per-row amax lowers to a reduction into a [?] tensor, expanded to
// [?, 1] (its size from the input's).
// LOWERED-LABEL: func @dynamic_rows
// LOWERED: linalg.fill {{.*}} -> tensor<?x32xf32>
// LOWERED: %[[DIM:.+]] = tensor.dim %arg0, %c0{{.*}} : tensor<?x64xf32>
// LOWERED-NEXT: tensor.empty(%[[DIM]]) : tensor<?xf32>
// LOWERED: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// LOWERED: tensor.expand_shape {{.*}} : tensor<?xf32> into tensor<?x1xf32>
// LOWERED-NOT: fp8.
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

// -----

// A dynamic K (here: an activation x activation product over a dynamic
// length) would need blocks with dynamic padding: per-row and per-block
// recipes keep it in high precision; the per-tensor ones quantize it.
// CURRENT-LABEL: func @dynamic_k
// CURRENT: fp8.scaled_matmul {{.+}} : (tensor<4x?xf8E4M3FN>, tensor<f32>, tensor<?x32xf8E4M3FN>, tensor<f32>) -> tensor<4x32xf32>
// ROWWISE-LABEL: func @dynamic_k
// ROWWISE-NOT: fp8.
// ROWWISE: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x?xf32>, tensor<?x32xf32>)
// BLOCK-LABEL: func @dynamic_k
// BLOCK-NOT: fp8.
// BLOCK: linalg.matmul
func.func @dynamic_k(%x: tensor<4x?xf32>, %w: tensor<?x32xf32>) -> tensor<4x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x?xf32>, tensor<?x32xf32>) outs(%acc : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
