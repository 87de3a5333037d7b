// RUN: fp8-opt %s -fp8-fuse-elementwise="into-reductions duplicate-cheap" | FileCheck %s

// A decoder's residual stream: h1 = x + a, h2 = h1 + b, ..., each read by
// a norm's row reduction and by the next add. Recomputing the cheap adds
// in their readers is bounded (a recomputed producer's reader may read at
// most 4 inputs after it; a norm of layer l used to re-read every earlier
// layer's output, here the last sum of squares all 7 arguments): some adds
// are written out, and no op reads more than 6 tensors, however long the
// chain (30 layers: the same).

// CHECK-LABEL: func.func @stream
// CHECK-NOT:     ins(%{{[^,:]*}}, %{{[^,:]*}}, %{{[^,:]*}}, %{{[^,:]*}}, %{{[^,:]*}}, %{{[^,:]*}}, %{{[^,:]*}}
// CHECK:         return
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @stream(%x: tensor<2x64xf32>, %a: tensor<2x64xf32>, %b: tensor<2x64xf32>,
                  %c: tensor<2x64xf32>, %d: tensor<2x64xf32>, %e: tensor<2x64xf32>,
                  %f: tensor<2x64xf32>)
    -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
        tensor<2xf32>, tensor<2xf32>, tensor<2x64xf32>) {
  %empty = tensor.empty() : tensor<2x64xf32>
  %zero = arith.constant 0.0 : f32
  %re = tensor.empty() : tensor<2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%re : tensor<2xf32>) -> tensor<2xf32>
  %h1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %a : tensor<2x64xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64xf32>
  %n1 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%h1 : tensor<2x64xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h1, %b : tensor<2x64xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64xf32>
  %n2 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%h2 : tensor<2x64xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %h3 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h2, %c : tensor<2x64xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64xf32>
  %n3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%h3 : tensor<2x64xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %h4 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h3, %d : tensor<2x64xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64xf32>
  %n4 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%h4 : tensor<2x64xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %h5 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h4, %e : tensor<2x64xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64xf32>
  %n5 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%h5 : tensor<2x64xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %h6 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%h5, %f : tensor<2x64xf32>, tensor<2x64xf32>) outs(%empty : tensor<2x64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<2x64xf32>
  %n6 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%h6 : tensor<2x64xf32>) outs(%acc : tensor<2xf32>) {
  ^bb0(%p: f32, %o: f32):
    %m = arith.mulf %p, %p : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %n1, %n2, %n3, %n4, %n5, %n6, %h6 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x64xf32>
}
