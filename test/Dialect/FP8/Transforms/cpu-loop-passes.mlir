// RUN: fp8-opt %s -split-input-file -fp8-fuse-elementwise | FileCheck %s --check-prefix=FUSE
// RUN: fp8-opt %s -split-input-file -linalg-generalize-named-ops -fp8-contiguous-inner-loops | FileCheck %s --check-prefix=ORDER
// RUN: fp8-opt %s -split-input-file -fp8-fuse-elementwise="into-reductions duplicate-cheap" | FileCheck %s --check-prefix=GPU

#id = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>
// A tanh feeding an element-wise op fuses; a tanh feeding a reduction does
// not (fused, its body would run once per reduction step of every use).
// FUSE-LABEL: func @fusion
// FUSE: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// FUSE-NEXT: ^bb0
// FUSE-NEXT: math.tanh
// FUSE-NEXT: arith.mulf
// FUSE: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// FUSE-NEXT: ^bb0
// FUSE-NEXT: math.tanh
// FUSE-NEXT: linalg.yield
// FUSE: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// FUSE-NEXT: ^bb0
// FUSE-NEXT: arith.addf
func.func @fusion(%x: tensor<4x8xf32>, %acc: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %m = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.mulf %a, %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %t2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "reduction"]}
      ins(%t2 : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %m, %r : tensor<4x8xf32>, tensor<4xf32>
}

// -----

// A matmul runs (m, k, n): n innermost walks B and C contiguously.
// ORDER-DAG: #[[$A:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// ORDER-DAG: #[[$B:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// ORDER-DAG: #[[$C:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// ORDER-LABEL: func @matmul
// ORDER: linalg.generic {indexing_maps = [#[[$A]], #[[$B]], #[[$C]]], iterator_types = ["parallel", "reduction", "parallel"]}
func.func @matmul(%a: tensor<8x16xf32>, %b: tensor<16x32xf32>, %c: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x32xf32>) outs(%c : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

// A row reduction keeps its order: no parallel loop is contiguous in the
// input, so moving one innermost would stride through memory.
// ORDER-LABEL: func @row_sum
// ORDER: iterator_types = ["parallel", "reduction"]
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#red2 = affine_map<(d0, d1) -> (d0)>
func.func @row_sum(%x: tensor<4x8xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #red2], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The GPU pipeline's relaxations: a scale-and-mask producer (arithmetic
// only) with two consumers, a row max and an element-wise exp, is fused
// into both (into-reductions, duplicate-cheap); a tanh producer with two
// consumers is not (not arithmetic only).
// GPU-LABEL: func @duplicate_cheap
// GPU: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// GPU-NEXT: ^bb0
// GPU-NEXT: arith.mulf
// GPU-NEXT: arith.addf
// GPU-NEXT: arith.maximumf
// GPU: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// GPU-NEXT: ^bb0
// GPU-NEXT: arith.mulf
// GPU-NEXT: arith.addf
// GPU-NEXT: math.exp
// GPU: math.tanh
// GPU: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// GPU-NEXT: ^bb0
// GPU-NEXT: arith.maximumf
// FUSE-LABEL: func @duplicate_cheap
// FUSE: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// FUSE-NEXT: ^bb0
// FUSE-NEXT: arith.mulf
// FUSE-NEXT: arith.addf
// FUSE-NEXT: linalg.yield
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#red2 = affine_map<(d0, d1) -> (d0)>
func.func @duplicate_cheap(%s: tensor<4x64xf32>, %mask: tensor<4x64xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x64xf32>, tensor<4xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %c = arith.constant 0.125 : f32
  %t = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %mask : tensor<4x64xf32>, tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %v = arith.mulf %a, %c : f32
    %w = arith.addf %v, %m : f32
    linalg.yield %w : f32
  } -> tensor<4x64xf32>
  %mx = linalg.generic {indexing_maps = [#id2, #red2], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x64xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %th = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %mx2 = linalg.generic {indexing_maps = [#id2, #red2], iterator_types = ["parallel", "reduction"]}
      ins(%th : tensor<4x64xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %mx, %ex, %mx2, %th : tensor<4xf32>, tensor<4x64xf32>, tensor<4xf32>, tensor<4x64xf32>
}

// -----

// A causal mask as a test of the indices (attention's lowering): linalg.index
// counts as cheap, so the masking fuses into both consumers too, the indices
// remapped to the consumer's loops.
// GPU-LABEL: func @duplicate_cheap_index
// GPU: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// GPU-NEXT: ^bb0
// GPU-NEXT: linalg.index 0
// GPU-NEXT: linalg.index 1
// GPU-NEXT: arith.cmpi sgt
// GPU-NEXT: arith.select
// GPU-NEXT: arith.maximumf
// GPU: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]
// GPU-NEXT: ^bb0
// GPU-NEXT: linalg.index 0
// GPU-NEXT: linalg.index 1
// GPU-NEXT: arith.cmpi sgt
// GPU-NEXT: arith.select
// GPU-NEXT: math.exp
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#red2 = affine_map<(d0, d1) -> (d0)>
func.func @duplicate_cheap_index(%s: tensor<4x64xf32>, %acc: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x64xf32>) {
  %e = tensor.empty() : tensor<4x64xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %masked = arith.cmpi sgt, %j, %i : index
    %v = arith.select %masked, %ninf, %a : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  %mx = linalg.generic {indexing_maps = [#id2, #red2], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<4x64xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.maximumf %a, %o : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %ex = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x64xf32>) outs(%e : tensor<4x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x64xf32>
  return %mx, %ex : tensor<4xf32>, tensor<4x64xf32>
}
