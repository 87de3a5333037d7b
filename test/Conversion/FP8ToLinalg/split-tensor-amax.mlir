// RUN: fp8-opt %s --convert-fp8-to-linalg=split-tensor-amax | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-to-linalg | FileCheck %s --check-prefix=ONE

// A per-tensor amax of 3 x 4100 = 12300 elements as a tree of row
// reductions: flattened, zero-padded to 4 rows of 4096, each row reduced
// along its (contiguous) last dimension; then the 4 row maxima as one 1-D
// reduction.
// CHECK-LABEL: func.func @amax
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<3x4100xf32> into tensor<12300xf32>
// CHECK:         %[[PAD:.*]] = tensor.pad %[[FLAT]] low[0] high[4084]
// CHECK:         %[[ROWS:.*]] = tensor.expand_shape %[[PAD]] {{\[\[}}0, 1]] output_shape [4, 4096] : tensor<16384xf32> into tensor<4x4096xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK-SAME:      ins(%[[ROWS]] : tensor<4x4096xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:           math.absf
// CHECK:           arith.maximumf
// CHECK:         %[[MAXIMA:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<4x1xf32> into tensor<4xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK-SAME:      ins(%[[MAXIMA]] : tensor<4xf32>) outs(%{{.*}} : tensor<f32>)
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
