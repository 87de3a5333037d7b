// RUN: fp8-opt %s --fp8-expose-quantized | FileCheck %s

// Each quantization of an activation adds three results: its input (f32),
// its FP8 values and its scales (E8M0 as bytes), named with the node and
// with what a checker needs to recompute them.

// CHECK-LABEL: func.func @main
// CHECK-SAME:    -> (tensor<4x64xf32> {onnx.name = "y"},
// CHECK-SAME:        tensor<4x64xf32> {onnx.name = "fp8:x0:matmul_1:layout=tensor;fmt=e4m3;scale=current eps=0 pow2=0"},
// CHECK-SAME:        tensor<4x64xf8E4M3FN> {onnx.name = "fp8:q0:matmul_1:layout=tensor;fmt=e4m3;scale=current eps=0 pow2=0"},
// CHECK-SAME:        tensor<f32> {onnx.name = "fp8:s0:matmul_1:layout=tensor;fmt=e4m3;scale=current eps=0 pow2=0"},
// CHECK-SAME:        tensor<4x64xf32> {onnx.name = "fp8:x1:matmul_2:layout=block 1x32;fmt=e5m2;scale=mxfp8 rceil"},
// CHECK-SAME:        tensor<4x64xf8E5M2> {onnx.name = "fp8:q1:matmul_2:layout=block 1x32;fmt=e5m2;scale=mxfp8 rceil"},
// CHECK-SAME:        tensor<4x2xi8> {onnx.dtype = 2 : i64, onnx.name = "fp8:s1:matmul_2:layout=block 1x32;fmt=e5m2;scale=mxfp8 rceil"},
// CHECK-SAME:        tensor<4x64xf32> {onnx.name = "fp8:x2:matmul_3:layout=row;fmt=e4m3;scale=given"},
// CHECK:         %[[E:.*]] = arith.bitcast %{{.*}} : tensor<4x2xf8E8M0FNU> to tensor<4x2xi8>
// CHECK:         return %arg0, %arg0, %{{.*}}, %{{.*}}, %arg0, %{{.*}}, %[[E]], %arg0, %{{.*}}, %arg1
func.func @main(%x: tensor<4x64xf32>, %given: tensor<4x1xf32>)
    -> (tensor<4x64xf32> {onnx.name = "y"}) {
  %a = fp8.amax %x layout<tensor> : tensor<4x64xf32> -> tensor<f32> loc("matmul_1")
  %s = fp8.compute_scale %a recipe(#fp8.current<>) format(e4m3) : tensor<f32> -> tensor<f32> loc("matmul_1")
  %q = fp8.quantize %x, %s layout<tensor> : tensor<4x64xf32>, tensor<f32> -> tensor<4x64xf8E4M3FN> loc("matmul_1")
  %am = fp8.amax %x layout<block 1x32> : tensor<4x64xf32> -> tensor<4x2xf32> loc("matmul_2")
  %sm = fp8.compute_scale %am recipe(#fp8.mxfp8) format(e5m2) : tensor<4x2xf32> -> tensor<4x2xf8E8M0FNU> loc("matmul_2")
  %qm = fp8.quantize %x, %sm layout<block 1x32> : tensor<4x64xf32>, tensor<4x2xf8E8M0FNU> -> tensor<4x64xf8E5M2> loc("matmul_2")
  %qg = fp8.quantize %x, %given layout<row> : tensor<4x64xf32>, tensor<4x1xf32> -> tensor<4x64xf8E4M3FN> loc("matmul_3")
  return %x : tensor<4x64xf32>
}
