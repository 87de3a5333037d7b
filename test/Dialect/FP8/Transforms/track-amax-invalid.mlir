// RUN: fp8-opt %s -split-input-file -fp8-track-amax -verify-diagnostics -o /dev/null


func.func @bad_tag(%a: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'fp8.delayed' must be a #fp8.delayed attribute}}
  %s = fp8.compute_scale %a recipe(#fp8.current) format(e4m3) {fp8.delayed = 1 : i32} : tensor<f32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @mx_tag(%a: tensor<4xf32>) -> tensor<4xf8E8M0FNU> {
  // expected-error @+1 {{only a current-scaling compute_scale can become delayed scaling}}
  %s = fp8.compute_scale %a recipe(#fp8.mxfp8) format(e4m3) {fp8.delayed = #fp8.delayed} : tensor<4xf32> -> tensor<4xf8E8M0FNU>
  return %s : tensor<4xf8E8M0FNU>
}
