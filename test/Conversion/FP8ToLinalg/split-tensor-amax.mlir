// RUN: fp8-opt %s --convert-fp8-to-linalg=split-tensor-amax | FileCheck %s
// RUN: fp8-opt %s --convert-fp8-to-linalg | FileCheck %s --check-prefix=ONE

// A per-tensor amax of 3000 elements as a tree: flattened, zero-padded to
// 32 x 94, reduced along the 32 (slice j holds elements j, j+94, ...); then
// the 94 partial maxima the same way (padded to 32 x 3); then the last 3 in
// one reduction.
// CHECK-LABEL: func.func @amax
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<30x100xf32> into tensor<3000xf32>
// CHECK:         %[[PAD:.*]] = tensor.pad %[[FLAT]] low[0] high[8]
// CHECK:         %[[GRID:.*]] = tensor.expand_shape %[[PAD]] {{\[\[}}0, 1]] output_shape [32, 94] : tensor<3008xf32> into tensor<32x94xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME:      ins(%[[GRID]] : tensor<32x94xf32>) outs(%{{.*}} : tensor<94xf32>)
// CHECK:           math.absf
// CHECK:           arith.maximumf
// CHECK:         tensor.pad %{{.*}} low[0] high[2]
// CHECK:         tensor.expand_shape %{{.*}} output_shape [32, 3]
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]
// CHECK-SAME:      ins(%{{.*}} : tensor<32x3xf32>) outs(%{{.*}} : tensor<3xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK-SAME:      ins(%{{.*}} : tensor<1x3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK:         return %{{.*}} : tensor<f32>

// Without the option: one reduction over both dimensions.
// ONE-LABEL: func.func @amax
// ONE-NOT:     tensor.collapse_shape
// ONE:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// ONE-SAME:      ins(%arg0 : tensor<30x100xf32>)
func.func @amax(%x: tensor<30x100xf32>) -> tensor<f32> {
  %a = fp8.amax %x layout<tensor> : tensor<30x100xf32> -> tensor<f32>
  return %a : tensor<f32>
}

// At most 64 elements: one reduction.
// CHECK-LABEL: func.func @small
// CHECK-NOT:     tensor.collapse_shape
func.func @small(%x: tensor<8x8xf32>) -> tensor<f32> {
  %a = fp8.amax %x layout<tensor> : tensor<8x8xf32> -> tensor<f32>
  return %a : tensor<f32>
}
