// RUN: fp8-opt %s --convert-fp8-to-linalg=split-tensor-amax | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-to-linalg | FileCheck %s --check-prefix=ONE

// A per-tensor amax of 3 x 4100 = 12300 elements as a tree of row
// reductions: the tensor's own rows (its last dimension, 1024 to 32768
// elements, is a warp's row), each reduced along its (contiguous) last
// dimension; then the 3 row maxima as one 1-D reduction.
// CHECK-LABEL: func.func @amax
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<3x4100xf32> into tensor<12300xf32>
// CHECK-NOT:     tensor.pad
// CHECK:         %[[ROWS:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [3, 4100] : tensor<12300xf32> into tensor<3x4100xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%[[ROWS]] : tensor<3x4100xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:           math.absf
// CHECK:           arith.maximumf
// CHECK:         %[[MAXIMA:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<3x1xf32> into tensor<3xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK-SAME:      ins(%[[MAXIMA]] : tensor<3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         return %{{.*}} : tensor<f32>

// Without the option: one reduction over both dimensions.
// ONE-LABEL: func.func @amax
// ONE-NOT:     tensor.collapse_shape
// ONE:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// ONE-SAME:      ins(%arg0 : tensor<3x4100xf32>)
func.func @amax(%x: tensor<3x4100xf32>) -> tensor<f32> {
  %a = fp8.amax %x layout<tensor> : tensor<3x4100xf32> -> tensor<f32>
  return %a : tensor<f32>
}

// More than 2 x 4096 row maxima: a second level of rows (8200 rows of the
// input, padded to 3 rows of 4096 maxima), then the last 3.
// CHECK-LABEL: func.func @two_levels
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<8200x4096xf16>) outs(%{{.*}} : tensor<8200xf32>)
// CHECK:         tensor.pad %{{.*}} low[0] high[4088]
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%{{.*}} : tensor<3x4096xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK-SAME:      ins(%{{.*}} : tensor<3xf32>) outs(%{{.*}} : tensor<f32>)
func.func @two_levels(%x: tensor<8200x4096xf16>) -> tensor<f32> {
  %a = fp8.amax %x layout<tensor> : tensor<8200x4096xf16> -> tensor<f32>
  return %a : tensor<f32>
}

// At most 2 x 4096 elements: one reduction, over the flattened tensor (a
// row: the GPU runs it as one warp).
// CHECK-LABEL: func.func @small
// CHECK:         %[[ROW:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<64x128xf32> into tensor<8192xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK-SAME:      ins(%[[ROW]] : tensor<8192xf32>)
// CHECK-NOT:     linalg.generic
func.func @small(%x: tensor<64x128xf32>) -> tensor<f32> {
  %a = fp8.amax %x layout<tensor> : tensor<64x128xf32> -> tensor<f32>
  return %a : tensor<f32>
}

// The FFN activation of a Llama-3-8B layer, 8192 x 14336: its 8192 rows,
// then their maxima as one warp -- two levels (rows of 4096 took three).
// CHECK-LABEL: func.func @ffn
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<8192x14336xf16>) outs(%{{.*}} : tensor<8192xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK-SAME:      ins(%{{.*}} : tensor<8192xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NOT:     linalg.generic
func.func @ffn(%x: tensor<8192x14336xf16>) -> tensor<f32> {
  %a = fp8.amax %x layout<tensor> : tensor<8192x14336xf16> -> tensor<f32>
  return %a : tensor<f32>
}

// A narrow last dimension (a head dim of 128) keeps rows of 4096
// flattened elements.
// CHECK-LABEL: func.func @narrow
// CHECK:         linalg.generic {{.*}} ins(%{{.*}} : tensor<4x4096xf32>) outs(%{{.*}} : tensor<4xf32>)
func.func @narrow(%x: tensor<128x128xf32>) -> tensor<f32> {
  %a = fp8.amax %x layout<tensor> : tensor<128x128xf32> -> tensor<f32>
  return %a : tensor<f32>
}

// Per-row amaxes stay whole rows, also few long ones (a decode step's
// FFN activation, 1-64 tokens of 14336): the GPU gives such a row several
// warps (wide rows, fp8-gpu-map-loops-wide-rows.mlir) instead of cutting it
// into 32 pieces and a second kernel for their maxima (until 2026-12-06).
// CHECK-LABEL: func.func @few_rows
// CHECK-NOT:     tensor.expand_shape
// CHECK:         linalg.generic {{.*}} ins(%arg0 : tensor<8x14336xf32>) outs(%{{.*}} : tensor<8xf32>)
// ONE-LABEL: func.func @few_rows
// ONE:         linalg.generic {{.*}} ins(%arg0 : tensor<8x14336xf32>) outs(%{{.*}} : tensor<8xf32>)
func.func @few_rows(%x: tensor<8x14336xf32>) -> tensor<8x1xf32> {
  %a = fp8.amax %x layout<row> : tensor<8x14336xf32> -> tensor<8x1xf32>
  return %a : tensor<8x1xf32>
}

// Whole rows of every count and length: 65 of 14336, 2 of 4096 (a norm's
// quantization, chained in its kernel), 2 of 8200.
// CHECK-LABEL: func.func @whole_rows
// CHECK-NOT:     tensor.expand_shape %arg
// CHECK:         linalg.generic {{.*}} ins(%arg0 : tensor<65x14336xf32>) outs(%{{.*}} : tensor<65xf32>)
// CHECK-NOT:     tensor.expand_shape %arg
// CHECK:         linalg.generic {{.*}} ins(%arg1 : tensor<2x4096xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK-NOT:     tensor.expand_shape %arg
// CHECK:         linalg.generic {{.*}} ins(%arg2 : tensor<2x8200xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK:         return
func.func @whole_rows(%x: tensor<65x14336xf32>, %y: tensor<2x4096xf32>, %z: tensor<2x8200xf32>) -> (tensor<65x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) {
  %a = fp8.amax %x layout<row> : tensor<65x14336xf32> -> tensor<65x1xf32>
  %b = fp8.amax %y layout<row> : tensor<2x4096xf32> -> tensor<2x1xf32>
  %c = fp8.amax %z layout<row> : tensor<2x8200xf32> -> tensor<2x1xf32>
  return %a, %b, %c : tensor<65x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>
}
