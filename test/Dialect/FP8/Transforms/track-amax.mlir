// RUN: fp8-opt %s -fp8-track-amax | FileCheck %s

// CHECK-DAG: ml_program.global private mutable @fp8_state_0_history(dense<0.000000e+00> : tensor<16xf32>) : tensor<16xf32>
// CHECK-DAG: ml_program.global private mutable @fp8_state_0_scale(dense<1.000000e+00> : tensor<f32>) : tensor<f32>
// CHECK-LABEL: func @step
// CHECK-SAME: (%[[X:.+]]: tensor<8x8xf32>)
// CHECK: %[[A:.+]] = fp8.amax %[[X]]
// CHECK: %[[H:.+]] = ml_program.global_load @fp8_state_0_history : tensor<16xf32>
// CHECK: %[[P:.+]] = ml_program.global_load @fp8_state_0_scale : tensor<f32>
// CHECK: %[[S:.+]] = fp8.compute_scale %[[H]] previous %[[P]] recipe(#fp8.delayed<history = 16, margin = 1>) format(e5m2)
// CHECK: %[[H2:.+]] = fp8.history_update %[[H]], %[[A]]
// CHECK: ml_program.global_store @fp8_state_0_history = %[[H2]]
// CHECK: ml_program.global_store @fp8_state_0_scale = %[[S]]
// CHECK: fp8.quantize %[[X]], %[[S]]
// CHECK-NOT: recipe(#fp8.current)
func.func @step(%x: tensor<8x8xf32>) -> tensor<8x8xf8E5M2> {
  %a = fp8.amax %x layout<tensor> : tensor<8x8xf32> -> tensor<f32>
  %s = fp8.compute_scale %a recipe(#fp8.current) format(e5m2) {fp8.delayed = #fp8.delayed<history = 16, margin = 1>} : tensor<f32> -> tensor<f32>
  %q = fp8.quantize %x, %s layout<tensor> : tensor<8x8xf32>, tensor<f32> -> tensor<8x8xf8E5M2>
  return %q : tensor<8x8xf8E5M2>
}
