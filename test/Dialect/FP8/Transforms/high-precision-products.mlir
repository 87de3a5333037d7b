// RUN: fp8-opt %s -split-input-file -fp8-high-precision-products | FileCheck %s
// RUN: fp8-opt %s -split-input-file -fp8-high-precision-products=k-major-rhs=false | FileCheck %s --check-prefix=NOT

// A linear layer with a constant weight: the weight is rounded to BF16 and
// transposed at compile time (RNE: 1.00390625 = 1 + 2^-8 is a tie and goes
// to 1.0, 1.01171875 = 1 + 3 * 2^-8 goes up to 1 + 2^-6 = 0x3F82); the
// activation is rounded at run time.
// CHECK-LABEL: func @linear
// CHECK-DAG: %[[ONE:.+]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK-DAG: %[[W:.+]] = arith.constant dense_resource<__fp8_bf16_weight> : tensor<3x2xbf16>
// CHECK-DAG: %[[X:.+]] = arith.truncf %{{.+}} : tensor<4x2xf32> to tensor<4x2xbf16>
// CHECK: %[[Y:.+]] = fp8.scaled_matmul %[[X]], %[[ONE]] layout<tensor>, %[[W]], %[[ONE]] layout<tensor> transpose_rhs : (tensor<4x2xbf16>, tensor<f32>, tensor<3x2xbf16>, tensor<f32>) -> tensor<4x3xf32>
// CHECK: return %[[Y]]
// CHECK: __fp8_bf16_weight: "0x02000000803F803F803F803F803F823F"
// NOT-LABEL: func @linear
// NOT: fp8.scaled_matmul %{{.+}} layout<tensor>, %{{.+}} layout<tensor> : (tensor<4x2xbf16>, tensor<f32>, tensor<2x3xbf16>, tensor<f32>) -> tensor<4x3xf32>
func.func @linear(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %w = arith.constant dense<[[1.0, 1.0, 1.0], [1.00390625, 1.0, 1.01171875]]> : tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x2xf32>, tensor<2x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Attention's batched product of two activations (FP16 graph, FP32
// accumulator): both rounded at run time (FP16 through FP32), the right one
// transposed by a linalg.transpose.
// CHECK-LABEL: func @batched_f16
// CHECK: %[[QF:.+]] = arith.extf %{{.+}} : tensor<2x8x16xf16> to tensor<2x8x16xf32>
// CHECK: %[[Q:.+]] = arith.truncf %[[QF]] : tensor<2x8x16xf32> to tensor<2x8x16xbf16>
// CHECK: %[[KF:.+]] = arith.extf %{{.+}} : tensor<2x16x8xf16> to tensor<2x16x8xf32>
// CHECK: %[[K:.+]] = arith.truncf %[[KF]] : tensor<2x16x8xf32> to tensor<2x16x8xbf16>
// CHECK: %[[KT:.+]] = linalg.transpose ins(%[[K]] : tensor<2x16x8xbf16>) outs(%{{.+}} : tensor<2x8x16xbf16>) permutation = [0, 2, 1]
// CHECK: fp8.scaled_matmul %[[Q]], %{{.+}} layout<tensor>, %[[KT]], %{{.+}} layout<tensor> transpose_rhs : (tensor<2x8x16xbf16>, tensor<f32>, tensor<2x8x16xbf16>, tensor<f32>) -> tensor<2x8x8xf32>
func.func @batched_f16(%q: tensor<2x8x16xf16>, %k: tensor<2x16x8xf16>) -> tensor<2x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  %y = linalg.batch_matmul ins(%q, %k : tensor<2x8x16xf16>, tensor<2x16x8xf16>) outs(%acc : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  return %y : tensor<2x8x8xf32>
}

// -----

// Not served: an accumulator that is not zero (the product adds into it),
// and the FP32 twin an analysis build keeps as its reference.
// CHECK-LABEL: func @left_alone
// CHECK-NOT: fp8.scaled_matmul
// CHECK: linalg.matmul
// CHECK: linalg.matmul {fp8.fp32_reference}
// CHECK-NOT: fp8.scaled_matmul
func.func @left_alone(%x: tensor<4x2xf32>, %w: tensor<2x3xf32>, %acc: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %y = linalg.matmul ins(%x, %w : tensor<4x2xf32>, tensor<2x3xf32>) outs(%acc : tensor<4x3xf32>) -> tensor<4x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %t = linalg.matmul {fp8.fp32_reference} ins(%x, %w : tensor<4x2xf32>, tensor<2x3xf32>) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y, %t : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// fp8.attention: query, key and value rounded to BF16 (FP16 through FP32;
// a constant key at compile time), the result type and the mask kept; an
// attention already in BF16 is left alone.
// CHECK-LABEL: func @attention
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x4x8x16xf16>, %[[V:[^:]+]]: tensor<1x2x8x16xf16>, %[[M:[^:]+]]: tensor<1x1x8x8xf32>
// CHECK: %[[QW:.+]] = arith.extf %[[Q]] : tensor<1x4x8x16xf16> to tensor<1x4x8x16xf32>
// CHECK: %[[QB:.+]] = arith.truncf %[[QW]] : tensor<1x4x8x16xf32> to tensor<1x4x8x16xbf16>
// CHECK: %[[K:.+]] = arith.constant dense_resource<__fp8_bf16_weight> : tensor<1x2x8x16xbf16>
// CHECK: %[[VW:.+]] = arith.extf %[[V]] : tensor<1x2x8x16xf16> to tensor<1x2x8x16xf32>
// CHECK: %[[VB:.+]] = arith.truncf %[[VW]] : tensor<1x2x8x16xf32> to tensor<1x2x8x16xbf16>
// CHECK: fp8.attention %[[QB]], %[[K]], %[[VB]] mask %[[M]] scale(2.500000e-01) causal : (tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x16xf16>
// CHECK: %[[Q2:.+]] = arith.truncf %{{.*}} : tensor<1x4x8x16xf32> to tensor<1x4x8x16xbf16>
// CHECK: %[[K2:.+]] = arith.constant dense<1.000000e+00> : tensor<1x2x8x16xbf16>
// CHECK: %[[V2:.+]] = arith.truncf %{{.*}} : tensor<1x2x8x16xf32> to tensor<1x2x8x16xbf16>
// CHECK-NEXT: fp8.attention %[[Q2]], %[[K2]], %[[V2]] scale(1.000000e+00) : {{.*}} -> tensor<1x4x8x16xf32>
// The key 1 + 2^-8 (exact in FP16) is a BF16 tie: 1.0 (0x3F80) everywhere.
// CHECK: __fp8_bf16_weight: "0x02000000{{(803F)+}}"
// NOT-LABEL: func @attention
// NOT: fp8.attention {{.*}} : (tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x16xf16>
func.func @attention(%q: tensor<1x4x8x16xf16>, %v: tensor<1x2x8x16xf16>, %m: tensor<1x1x8x8xf32>) -> (tensor<1x4x8x16xf16>, tensor<1x4x8x16xf32>) {
  %k = arith.constant dense<1.00390625> : tensor<1x2x8x16xf16>
  %o = fp8.attention %q, %k, %v mask %m scale(0.25) causal : (tensor<1x4x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x2x8x16xf16>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x16xf16>
  %qb = arith.extf %q : tensor<1x4x8x16xf16> to tensor<1x4x8x16xf32>
  %qbb = arith.truncf %qb : tensor<1x4x8x16xf32> to tensor<1x4x8x16xbf16>
  %kb = arith.constant dense<1.0> : tensor<1x2x8x16xbf16>
  %vb = arith.extf %v : tensor<1x2x8x16xf16> to tensor<1x2x8x16xf32>
  %vbb = arith.truncf %vb : tensor<1x2x8x16xf32> to tensor<1x2x8x16xbf16>
  %o2 = fp8.attention %qbb, %kb, %vbb scale(1.0) : (tensor<1x4x8x16xbf16>, tensor<1x2x8x16xbf16>, tensor<1x2x8x16xbf16>) -> tensor<1x4x8x16xf32>
  return %o, %o2 : tensor<1x4x8x16xf16>, tensor<1x4x8x16xf32>
}

// -----

// Dynamic shapes (issue 14): the rounding is element-wise and the
// transpose's destination takes the operand's run-time sizes.
// CHECK-LABEL: func @batched_dynamic
// CHECK-SAME: (%[[Q:.+]]: tensor<?x?x16xf32>, %[[K:.+]]: tensor<?x16x?xf32>)
// CHECK-DAG: %[[QB:.+]] = arith.truncf %[[Q]] : tensor<?x?x16xf32> to tensor<?x?x16xbf16>
// CHECK-DAG: %[[KB:.+]] = arith.truncf %[[K]] : tensor<?x16x?xf32> to tensor<?x16x?xbf16>
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[KB]], %c0
// CHECK-DAG: %[[N:.+]] = tensor.dim %[[KB]], %c2
// CHECK: %[[E:.+]] = tensor.empty(%[[B]], %[[N]]) : tensor<?x?x16xbf16>
// CHECK: %[[KT:.+]] = linalg.transpose ins(%[[KB]] : tensor<?x16x?xbf16>) outs(%[[E]] : tensor<?x?x16xbf16>) permutation = [0, 2, 1]
// CHECK: fp8.scaled_matmul %[[QB]], %{{.+}} layout<tensor>, %[[KT]], %{{.+}} layout<tensor> transpose_rhs : (tensor<?x?x16xbf16>, tensor<f32>, tensor<?x?x16xbf16>, tensor<f32>) -> tensor<?x?x?xf32>
// NOT-LABEL: func @batched_dynamic
// NOT: fp8.scaled_matmul %{{.+}} layout<tensor>, %{{.+}} layout<tensor> : (tensor<?x?x16xbf16>, tensor<f32>, tensor<?x16x?xbf16>, tensor<f32>) -> tensor<?x?x?xf32>
func.func @batched_dynamic(%q: tensor<?x?x16xf32>, %k: tensor<?x16x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %q, %c0 : tensor<?x?x16xf32>
  %m = tensor.dim %q, %c1 : tensor<?x?x16xf32>
  %n = tensor.dim %k, %c2 : tensor<?x16x?xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%b, %m, %n) : tensor<?x?x?xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %y = linalg.batch_matmul ins(%q, %k : tensor<?x?x16xf32>, tensor<?x16x?xf32>) outs(%acc : tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}
