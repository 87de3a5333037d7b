// RUN: fp8-opt %s --fp8-outline-scaled-matmuls --fp8-fuse-gemm-epilogues --split-input-file | FileCheck %s

// SiLU(gate) * up, through the unit-dim reshapes of a [1, T, F] graph: the
// consumer joins the first product's GEMM function (its other input, the
// second product, becomes an argument); the call sits where the consumer
// was. The second product keeps its own call of the shared function. The
// consumer is rebuilt at the products' [T, F] shape (the kernel writes the
// output at the lhs's rank): its other input collapsed back through the
// reshape, the fused call's result expanded for the return.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @silu_mul
// CHECK:         %[[UP:.*]] = call @__fp8_gemm_0(%arg0, %arg1, %arg3, %arg4)
// CHECK:         %[[UPX:.*]] = tensor.expand_shape %[[UP]]
// CHECK:         %[[UPC:.*]] = tensor.collapse_shape %[[UPX]] {{\[\[}}0, 1], [2]] : tensor<1x32x64xf16> into tensor<32x64xf16>
// CHECK:         %[[H:.*]] = call @__fp8_gemm_1(%arg0, %arg1, %arg2, %arg4, %[[UPC]]) : {{.*}} -> tensor<32x64xf16>
// CHECK-NOT:     linalg.generic
// CHECK:         %[[HX:.*]] = tensor.expand_shape %[[H]] {{\[\[}}0, 1], [2]] output_shape [1, 32, 64]
// CHECK:         return %[[HX]]
func.func @silu_mul(%a: tensor<32x128xf8E4M3FN>, %sa: tensor<f32>,
                    %wg: tensor<64x128xf8E4M3FN>, %wu: tensor<64x128xf8E4M3FN>,
                    %sw: tensor<f32>) -> tensor<1x32x64xf16> {
  %g = fp8.scaled_matmul %a, %sa layout<tensor>, %wg, %sw layout<tensor> transpose_rhs
      : (tensor<32x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<32x64xf16>
  %u = fp8.scaled_matmul %a, %sa layout<tensor>, %wu, %sw layout<tensor> transpose_rhs
      : (tensor<32x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<32x64xf16>
  %gx = tensor.expand_shape %g [[0, 1], [2]] output_shape [1, 32, 64] : tensor<32x64xf16> into tensor<1x32x64xf16>
  %ux = tensor.expand_shape %u [[0, 1], [2]] output_shape [1, 32, 64] : tensor<32x64xf16> into tensor<1x32x64xf16>
  %one = arith.constant 1.0 : f16
  %e = tensor.empty() : tensor<1x32x64xf16>
  %h = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%gx, %ux : tensor<1x32x64xf16>, tensor<1x32x64xf16>) outs(%e : tensor<1x32x64xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %n = arith.negf %x : f16
    %ex = math.exp %n : f16
    %d = arith.addf %ex, %one : f16
    %s = arith.divf %one, %d : f16
    %xs = arith.mulf %x, %s : f16
    %r = arith.mulf %xs, %y : f16
    linalg.yield %r : f16
  } -> tensor<1x32x64xf16>
  return %h : tensor<1x32x64xf16>
}
// CHECK:       func.func private @__fp8_gemm_0(
// CHECK:       func.func private @__fp8_gemm_1(%arg0: tensor<32x128xf8E4M3FN>, %arg1: tensor<f32>, %arg2: tensor<64x128xf8E4M3FN>, %arg3: tensor<f32>, %arg4: tensor<32x64xf16>) -> tensor<32x64xf16>
// CHECK-SAME:    epilogue_inputs = 1 : i64
// CHECK:         %[[P:.*]] = fp8.scaled_matmul %arg0, %arg1 layout<tensor>, %arg2, %arg3 layout<tensor> transpose_rhs
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<32x64xf16>
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f16
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[P]], %arg4 : {{.*}}) outs(%[[E]] : {{.*}}) attrs = {fp8.gemm_epilogue}
// CHECK:           math.exp
// CHECK:           arith.divf %[[ONE]]
// CHECK:         return %[[R]]

// -----

// A bias row and a rank-0 scale: both are arguments the kernel indexes by
// column and not at all; two identical fusions share one function, and the
// GEMM function no call uses any more is gone.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @bias_scale
// CHECK:         call @__fp8_gemm_1(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) : {{.*}} -> tensor<32x64xbf16>
// CHECK:         call @__fp8_gemm_1(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5) : {{.*}} -> tensor<32x64xbf16>
// CHECK-NOT:     func.func private @__fp8_gemm_0
// CHECK:         func.func private @__fp8_gemm_1({{.*}}, %arg4: tensor<64xf32>, %arg5: tensor<f32>) -> tensor<32x64xbf16>
// CHECK-SAME:      epilogue_inputs = 2 : i64
// CHECK-NOT:     func.func
func.func @bias_scale(%a: tensor<32x128xf8E4M3FN>, %sa: tensor<f32>,
                      %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>,
                      %b: tensor<64xf32>, %k: tensor<f32>) -> (tensor<32x64xbf16>, tensor<32x64xbf16>) {
  %p = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<32x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<32x64xf32>
  %q = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<32x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<32x64xf32>
  %e = tensor.empty() : tensor<32x64xbf16>
  %r0 = linalg.generic {indexing_maps = [#id, #col, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %b, %k : tensor<32x64xf32>, tensor<64xf32>, tensor<f32>) outs(%e : tensor<32x64xbf16>) {
  ^bb0(%x: f32, %bb: f32, %kk: f32, %o: bf16):
    %s = arith.addf %x, %bb : f32
    %m = arith.mulf %s, %kk : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<32x64xbf16>
  %r1 = linalg.generic {indexing_maps = [#id, #col, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %b, %k : tensor<32x64xf32>, tensor<64xf32>, tensor<f32>) outs(%e : tensor<32x64xbf16>) {
  ^bb0(%x: f32, %bb: f32, %kk: f32, %o: bf16):
    %s = arith.addf %x, %bb : f32
    %m = arith.mulf %s, %kk : f32
    %t = arith.truncf %m : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<32x64xbf16>
  return %r0, %r1 : tensor<32x64xbf16>, tensor<32x64xbf16>
}

// -----

// What stays a separate kernel: a product with a second use, a reduction,
// a body that reads its init or an index, an input read transposed, and an
// output of a type the kernel does not store.

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#red = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @kept
// CHECK-NOT:     fp8.gemm_epilogue
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK:         call @__fp8_gemm_0(
// CHECK:         linalg.generic
// CHECK-NOT:     fp8.gemm_epilogue
// CHECK-NOT:     @__fp8_gemm_1
func.func @kept(%a: tensor<64x128xf8E4M3FN>, %sa: tensor<f32>,
                %w: tensor<64x128xf8E4M3FN>, %sw: tensor<f32>, %z: tensor<64x64xf32>)
    -> (tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
        tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xi8>) {
  %p0 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %twice = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p0 : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %x : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %p1 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<64x64xf32>
  %e1 = tensor.empty() : tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%p1 : tensor<64x64xf32>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %o : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %p2 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<64x64xf32>
  %acc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p2 : tensor<64x64xf32>) outs(%z : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %o : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %p3 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<64x64xf32>
  %idx = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p3 : tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %r = arith.addf %x, %f : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %p4 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<64x64xf32>
  %tr = linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p4, %z : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<64x64xf32>
  %p5 = fp8.scaled_matmul %a, %sa layout<tensor>, %w, %sw layout<tensor> transpose_rhs
      : (tensor<64x128xf8E4M3FN>, tensor<f32>, tensor<64x128xf8E4M3FN>, tensor<f32>) -> tensor<64x64xf32>
  %e8 = tensor.empty() : tensor<64x64xi8>
  %i8 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p5 : tensor<64x64xf32>) outs(%e8 : tensor<64x64xi8>) {
  ^bb0(%x: f32, %o: i8):
    %r = arith.fptosi %x : f32 to i8
    linalg.yield %r : i8
  } -> tensor<64x64xi8>
  return %twice, %p0, %sum, %acc, %idx, %tr, %i8
      : tensor<64x64xf32>, tensor<64x64xf32>, tensor<64xf32>, tensor<64x64xf32>,
        tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xi8>
}
