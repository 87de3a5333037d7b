// RUN: fp8-opt %s -split-input-file --fp8-outline-scaled-matmuls | FileCheck %s

// Two products with the same types and attributes share one function; a
// different layout gets its own. The function body is the op itself.

// CHECK-LABEL: func.func @main
// CHECK:         %[[A:.*]] = call @__fp8_gemm_0(%arg0, %arg1, %arg2, %arg3)
// CHECK:         %[[B:.*]] = call @__fp8_gemm_0(%arg0, %arg1, %arg2, %arg3)
// CHECK:         %[[C:.*]] = call @__fp8_gemm_1(%arg0, %arg4, %arg2, %arg5, %arg6)
// CHECK-NOT:     fp8.scaled_matmul
// CHECK:         return %[[A]], %[[B]], %[[C]]
func.func @main(%a: tensor<32x128xf8E4M3FN>, %sa: tensor<f32>,
                %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>,
                %sar: tensor<32x1xf32>, %swr: tensor<64x1xf32>,
                %bias: tensor<64xf32>)
    -> (tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xbf16>) {
  %0 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<32x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<32x64xf32>
  %1 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<32x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<32x64xf32>
  %2 = fp8.scaled_matmul %a, %sar layout<row>, %w, %swr layout<row> bias %bias transpose_rhs epilogue(gelu_tanh)
      : (tensor<32x128xf8E4M3FN>, tensor<32x1xf32>, tensor<64x128xf8E4M3FN>, tensor<64x1xf32>, tensor<64xf32>) -> tensor<32x64xbf16>
  return %0, %1, %2 : tensor<32x64xf32>, tensor<32x64xf32>, tensor<32x64xbf16>
}

// CHECK:       func.func private @__fp8_gemm_0({{.*}}) -> tensor<32x64xf32>
// CHECK-SAME:    attributes {fp8.gemm = {epilogue = 0 : i32, has_bias = false, lhs_layout = #fp8.layout<tensor>, rhs_layout = #fp8.layout<tensor>, transpose_rhs = true}}
// CHECK:         %[[R:.*]] = fp8.scaled_matmul %arg0, %arg1 layout<tensor>, %arg2, %arg3 layout<tensor> transpose_rhs
// CHECK:         return %[[R]]
// CHECK:       func.func private @__fp8_gemm_1({{.*}}) -> tensor<32x64xbf16>
// CHECK-SAME:    fp8.gemm = {epilogue = 2 : i32, has_bias = true, lhs_layout = #fp8.layout<row>, rhs_layout = #fp8.layout<row>, transpose_rhs = true}
// CHECK:         fp8.scaled_matmul {{.*}} bias %arg4 transpose_rhs epilogue(gelu_tanh)

// -----

// A product with a dynamic row count (one library for every token count):
// the caller allocates the result from the lhs's rows (reified sizes) and
// passes it last; the function writes its product into it, which
// bufferization keeps as the one buffer (destination-passing, the form the
// GEMM generator takes with M at run time). A static product beside it
// returns its result as before.

// CHECK-LABEL: func.func @dynamic_rows
// CHECK-SAME:    (%[[A:.*]]: tensor<?x128xf8E4M3FN>, %[[SA:.*]]: tensor<?x1xf32>,
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[M:.*]] = tensor.dim %[[A]], %[[C0]] : tensor<?x128xf8E4M3FN>
// CHECK:         %[[INIT:.*]] = tensor.empty(%[[M]]) : tensor<?x64xbf16>
// CHECK:         %[[R:.*]] = call @[[F:__fp8_gemm_[0-9]+]](%[[A]], %[[SA]], %arg2, %arg3, %[[INIT]])
// CHECK:         %[[S:.*]] = call @[[G:__fp8_gemm_[0-9]+]](%arg4, %arg5, %arg2, %arg3)
// CHECK:         return %[[R]], %[[S]]
func.func @dynamic_rows(%a: tensor<?x128xf8E4M3FN>, %sa: tensor<?x1xf32>,
                        %w: tensor<64x128xf8E4M3FN>, %sw: tensor<64x1xf32>,
                        %b: tensor<8x128xf8E4M3FN>, %sb: tensor<8x1xf32>)
    -> (tensor<?x64xbf16>, tensor<8x64xbf16>) {
  %0 = fp8.scaled_matmul %a, %sa layout<row>, %w, %sw layout<row> transpose_rhs
      : (tensor<?x128xf8E4M3FN>, tensor<?x1xf32>, tensor<64x128xf8E4M3FN>, tensor<64x1xf32>) -> tensor<?x64xbf16>
  %1 = fp8.scaled_matmul %b, %sb layout<row>, %w, %sw layout<row> transpose_rhs
      : (tensor<8x128xf8E4M3FN>, tensor<8x1xf32>, tensor<64x128xf8E4M3FN>, tensor<64x1xf32>) -> tensor<8x64xbf16>
  return %0, %1 : tensor<?x64xbf16>, tensor<8x64xbf16>
}

// CHECK:       func.func private @[[F]]({{.*}}, %[[OUT:.*]]: tensor<?x64xbf16>) -> tensor<?x64xbf16>
// CHECK:         %[[P:.*]] = fp8.scaled_matmul %arg0, %arg1 layout<row>, %arg2, %arg3 layout<row> transpose_rhs
// CHECK:         %[[W:.*]] = bufferization.materialize_in_destination %[[P]] in %[[OUT]]
// CHECK:         return %[[W]]
// CHECK:       func.func private @[[G]]({{.*}}) -> tensor<8x64xbf16>
// CHECK:         %[[Q:.*]] = fp8.scaled_matmul
// CHECK-NEXT:    return %[[Q]]

// -----

// A result type less static than its operands (rows known from the lhs):
// the destination has the result's type, so the call and the function
// keep it.
// CHECK-LABEL: func.func @rows_known_to_lhs
// CHECK:         %[[INIT:.*]] = tensor.empty(%{{.*}}) : tensor<?x64xbf16>
// CHECK:         call @{{.*}}(%arg0, %arg1, %arg2, %arg3, %[[INIT]]) : ({{.*}}, tensor<?x64xbf16>) -> tensor<?x64xbf16>
func.func @rows_known_to_lhs(%a: tensor<8x128xf8E4M3FN>, %sa: tensor<8x1xf32>,
                             %w: tensor<64x128xf8E4M3FN>, %sw: tensor<64x1xf32>)
    -> tensor<?x64xbf16> {
  %0 = fp8.scaled_matmul %a, %sa layout<row>, %w, %sw layout<row> transpose_rhs
      : (tensor<8x128xf8E4M3FN>, tensor<8x1xf32>, tensor<64x128xf8E4M3FN>, tensor<64x1xf32>) -> tensor<?x64xbf16>
  return %0 : tensor<?x64xbf16>
}
