// RUN: fp8-opt %s -convert-fp8-to-linalg -split-input-file | FileCheck %s
// fp8.attention as its reference computation (AttentionToLinalg.cpp);
// test/Integration/CPU/attention.test checks the numbers.

// Grouped-query heads (8 on 2: kv head d1 floordiv 4, never materialized),
// an f16 mask broadcast over heads, FP32 throughout.
// CHECK-DAG: #[[$Q:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-DAG: #[[$K:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
// CHECK-DAG: #[[$S:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$V:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d4, d3)>
// CHECK-DAG: #[[$ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$MASK:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-DAG: #[[$ROW:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func @gqa_mask
// CHECK-SAME: %[[Q:[^:]+]]: tensor<2x8x16x64xf32>, %[[K:[^:]+]]: tensor<2x2x24x64xf32>, %[[V:[^:]+]]: tensor<2x2x24x32xf32>, %[[M:[^:]+]]: tensor<2x1x16x24xf16>
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 1.250000e-01 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// Scores: the contraction over D into a zero-filled FP32 accumulator.
// CHECK: %[[ACC:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<2x8x16x24xf32>)
// CHECK: %[[S:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$K]], #[[$S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[Q]], %[[K]] : {{.*}}) outs(%[[ACC]]
// CHECK: arith.mulf
// CHECK: arith.addf
// Scale, then the mask in FP32.
// CHECK: %[[T:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$MASK]], #[[$ID]]], {{.*}} ins(%[[S]], %[[M]] :
// CHECK: %[[X:.+]] = arith.mulf %{{.*}}, %[[SCALE]] : f32
// CHECK: %[[MF:.+]] = arith.extf %{{.*}} : f16 to f32
// CHECK: arith.addf %[[X]], %[[MF]] : f32
// Softmax: row max from -inf, exp of the difference (a max of -inf counts
// as 0), row sum, division (a sum of 0: probability 0).
// CHECK: %[[MAXINIT:.+]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<2x8x16xf32>)
// CHECK: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[T]] : {{.*}}) outs(%[[MAXINIT]]
// CHECK: arith.maximumf
// CHECK: %[[E:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], {{.*}} ins(%[[T]], %[[MAX]] :
// CHECK: %[[NONE:.+]] = arith.cmpf oeq, %[[RM:.+]], %[[NINF]] : f32
// CHECK: %[[M0:.+]] = arith.select %[[NONE]], %[[ZERO]], %[[RM]] : f32
// CHECK: %[[D:.+]] = arith.subf %{{.*}}, %[[M0]] : f32
// CHECK: math.exp %[[D]] : f32
// CHECK: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]]], {{.*}} ins(%[[E]] :
// CHECK: arith.addf
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[$ID]], #[[$ROW]], #[[$ID]]], {{.*}} ins(%[[E]], %[[SUM]] : {{.*}}) outs(%{{.*}} : tensor<2x8x16x24xf32>)
// CHECK: %[[DIV:.+]] = arith.divf
// CHECK: %[[EMPTY:.+]] = arith.cmpf oeq, %{{.*}}, %[[ZERO]] : f32
// CHECK: arith.select %[[EMPTY]], %[[ZERO]], %[[DIV]] : f32
// CHECK-NOT: arith.truncf
// CHECK: %[[O:.+]] = linalg.generic {indexing_maps = [#[[$Q]], #[[$V]], #[[$S]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[P]], %[[V]] :
// CHECK: return %[[O]] : tensor<2x8x16x32xf32>
// CHECK-NOT: fp8.
func.func @gqa_mask(%q: tensor<2x8x16x64xf32>, %k: tensor<2x2x24x64xf32>, %v: tensor<2x2x24x32xf32>, %m: tensor<2x1x16x24xf16>) -> tensor<2x8x16x32xf32> {
  %0 = fp8.attention %q, %k, %v mask %m scale(0.125) : (tensor<2x8x16x64xf32>, tensor<2x2x24x64xf32>, tensor<2x2x24x32xf32>, tensor<2x1x16x24xf16>) -> tensor<2x8x16x32xf32>
  return %0 : tensor<2x8x16x32xf32>
}

// -----

// Causal with dynamic sequence lengths: key j is masked for query i when
// j > i + (Skv - Sq); scale 1 multiplies nothing. BF16 operands: products
// of widened BF16, probabilities rounded to BF16 before the P V product,
// the result rounded once.
// CHECK-DAG: #[[$KEYS:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func @causal_bf16
// CHECK-SAME: %[[Q:[^:]+]]: tensor<1x4x?x64xbf16>, %[[K:[^:]+]]: tensor<1x4x?x64xbf16>
// CHECK-DAG: %[[NINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[SQ:.+]] = tensor.dim %[[Q]], %c2
// CHECK-DAG: %[[SKV:.+]] = tensor.dim %[[K]], %c2
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[$KEYS]], #{{.+}}], {{.*}} ins(%[[Q]], %[[K]] : {{.*}}) outs(%{{.*}} : tensor<1x4x?x?xf32>)
// CHECK: %[[KF:.+]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: %[[QF:.+]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.mulf %[[QF]], %[[KF]] : f32
// CHECK: %[[OFF:.+]] = arith.subi %[[SKV]], %[[SQ]] : index
// CHECK: linalg.generic
// CHECK-NOT: arith.mulf
// CHECK: %[[I:.+]] = linalg.index 2 : index
// CHECK: %[[J:.+]] = linalg.index 3 : index
// CHECK: %[[LAST:.+]] = arith.addi %[[I]], %[[OFF]] : index
// CHECK: %[[MASKED:.+]] = arith.cmpi sgt, %[[J]], %[[LAST]] : index
// CHECK: arith.select %[[MASKED]], %[[NINF]], %{{.*}} : f32
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: linalg.yield %{{.*}} : bf16
// CHECK: } -> tensor<1x4x?x?xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: } -> tensor<1x4x?x64xf32>
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: } -> tensor<1x4x?x64xbf16>
func.func @causal_bf16(%q: tensor<1x4x?x64xbf16>, %k: tensor<1x4x?x64xbf16>) -> tensor<1x4x?x64xbf16> {
  %0 = fp8.attention %q, %k, %k scale(1.0) causal : (tensor<1x4x?x64xbf16>, tensor<1x4x?x64xbf16>, tensor<1x4x?x64xbf16>) -> tensor<1x4x?x64xbf16>
  return %0 : tensor<1x4x?x64xbf16>
}
