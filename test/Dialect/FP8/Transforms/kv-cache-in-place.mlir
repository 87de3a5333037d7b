// fp8-kv-cache-in-place: a decode step's Concat(past, new) becomes an
// update of the cache input at the run-time slots of a new input; the
// output is tied to the input; a run-time check refuses a slot outside the
// cache, chained after the graph's own checks (or the first one).
// RUN: fp8-opt %s --split-input-file --fp8-kv-cache-in-place | FileCheck %s

// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[PAST:[a-z0-9]+]]: tensor<2x3x8x4xf32> {onnx.name = "past.0"}
// CHECK-SAME: %[[POS:[a-z0-9]+]]: tensor<2xi64> {onnx.name = "cache_position"}
// CHECK-SAME: -> (tensor<2x3x8x4xf32> {fp8.tied_input = 0 : i64, onnx.name = "present.0"}, tensor<2xi64> {fp8.check_status})
// CHECK-SAME: fp8.checks = ["graph input 'cache_position': a cache slot out of range (the cache has 8 slots, valid: 0 to 7)"]
// The first out-of-range slot (2 when none), before any write.
// CHECK: %[[BAD:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]{{.*}} ins(%[[POS]] : tensor<2xi64>)
// CHECK: arith.cmpi uge, %{{.*}}, %c8_i64
// CHECK: %[[UPD:.*]] = scf.forall (%[[B:.*]], %[[H:.*]], %[[D:.*]]) in (2, 3, 4) shared_outs(%[[C:.*]] = %[[PAST]])
// CHECK:   %[[P:.*]] = tensor.extract %[[POS]][%[[B]]]
// CHECK:   %[[IN:.*]] = arith.cmpi ult, %[[P]], %c8_i64
// CHECK:   tensor.extract %[[BAD]][]
// CHECK:   %[[WRITE:.*]] = arith.andi %[[IN]],
// CHECK:   %[[SLOT:.*]] = arith.index_cast
// CHECK:   %[[SRC:.*]] = tensor.extract_slice %arg1[%[[B]], %[[H]], %c0, %[[D]]] [1, 1, 1, 1]
// CHECK:   %[[DST:.*]] = tensor.extract_slice %[[C]][%[[B]], %[[H]], %[[SLOT]], %[[D]]] [1, 1, 1, 1]
// CHECK:   linalg.generic {{.*}} ins(%[[SRC]] {{.*}} outs(%[[DST]]
// CHECK:     arith.select %[[WRITE]]
// CHECK:   tensor.parallel_insert_slice %{{.*}} into %[[C]][%[[B]], %[[H]], %[[SLOT]], %[[D]]] [1, 1, 1, 1]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[UPD]]
// CHECK: return %[[UPD]], %{{.*}} : tensor<2x3x8x4xf32>, tensor<2xi64>
func.func @main(%past: tensor<2x3x7x4xf32> {onnx.name = "past.0"},
                %new: tensor<2x3x1x4xf32>)
    -> (tensor<2x3x8x4xf32> {onnx.name = "present.0"}) {
  %e = tensor.empty() : tensor<2x3x8x4xf32>
  %a = tensor.insert_slice %past into %e[0, 0, 0, 0] [2, 3, 7, 4] [1, 1, 1, 1] : tensor<2x3x7x4xf32> into tensor<2x3x8x4xf32>
  %p = tensor.insert_slice %new into %a[0, 0, 7, 0] [2, 3, 1, 4] [1, 1, 1, 1] : tensor<2x3x1x4xf32> into tensor<2x3x8x4xf32>
  // The attention's read: it now reads the updated cache.
  %i = tensor.empty() : tensor<2x3x8x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<2x3x8x4xf32>) outs(%i : tensor<2x3x8x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<2x3x8x4xf32>
  return %p : tensor<2x3x8x4xf32>
}

// -----

// The graph's own check status stays last and gets the new site after its
// own, and gates the writes (a run it refuses writes no cache); FP8 caches
// (after fp8-kv-cache) are updated alike.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[ST:[a-z0-9]+]]: tensor<2xi64>, %{{.*}}: tensor<1xi64> {onnx.name = "cache_position"}
// CHECK-SAME: -> (tensor<1x1x4x2xf8E4M3FN> {fp8.tied_input = 1 : i64, onnx.name = "present.0"}, tensor<2xi64> {fp8.check_status})
// CHECK-SAME: fp8.checks = ["an earlier check", "graph input 'cache_position': a cache slot out of range (the cache has 4 slots, valid: 0 to 3)"]
// CHECK: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) in (1, 1, 2)
// CHECK:   %[[F:.*]] = tensor.extract %[[ST]][%c0
// CHECK:   arith.cmpi eq, %[[F]], %c0_i64
// CHECK: arith.constant 2 : i64
func.func @main(%ids: tensor<2xi64> {onnx.name = "ids"},
                %past: tensor<1x1x3x2xf8E4M3FN> {onnx.name = "past.0"},
                %new: tensor<1x1x1x2xf8E4M3FN>, %st: tensor<2xi64>)
    -> (tensor<1x1x4x2xf8E4M3FN> {onnx.name = "present.0"}, tensor<2xi64> {fp8.check_status})
    attributes {fp8.checks = ["an earlier check"]} {
  %e = tensor.empty() : tensor<1x1x4x2xf8E4M3FN>
  %a = tensor.insert_slice %past into %e[0, 0, 0, 0] [1, 1, 3, 2] [1, 1, 1, 1] : tensor<1x1x3x2xf8E4M3FN> into tensor<1x1x4x2xf8E4M3FN>
  %p = tensor.insert_slice %new into %a[0, 0, 3, 0] [1, 1, 1, 2] [1, 1, 1, 1] : tensor<1x1x1x2xf8E4M3FN> into tensor<1x1x4x2xf8E4M3FN>
  return %p, %st : tensor<1x1x4x2xf8E4M3FN>, tensor<2xi64>
}

// -----

// A layer's keys and values: one update for both, before the first use of
// either, the pure op that makes the values' new token moved up to it.
// CHECK-LABEL: func.func @main(
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<1x2x4x4xf32> {onnx.name = "past.0.key"}
// CHECK-SAME: %[[V:[a-z0-9]+]]: tensor<1x2x4x4xf32> {onnx.name = "past.0.value"}
// CHECK-SAME: %[[NK:[a-z0-9]+]]: tensor<1x2x1x4xf32>, %[[NV0:[a-z0-9]+]]: tensor<1x2x1x4xf32>
// CHECK: %[[NV:.*]] = arith.negf %[[NV0]]
// CHECK: %[[UPD:.*]]:2 = scf.forall ({{.*}}) in (1, 2, 4) shared_outs(%[[CK:.*]] = %[[K]], %[[CV:.*]] = %[[V]])
// CHECK:   tensor.extract_slice %[[NK]]
// CHECK:   tensor.extract_slice %[[NV]]
// CHECK:   tensor.parallel_insert_slice %{{.*}} into %[[CK]]
// CHECK:   tensor.parallel_insert_slice %{{.*}} into %[[CV]]
// CHECK: %[[Y:.*]] = arith.negf %[[UPD]]#0
// CHECK: return %[[UPD]]#0, %[[UPD]]#1, %[[Y]]
func.func @main(%pk: tensor<1x2x3x4xf32> {onnx.name = "past.0.key"},
                %pv: tensor<1x2x3x4xf32> {onnx.name = "past.0.value"},
                %nk: tensor<1x2x1x4xf32>, %nv0: tensor<1x2x1x4xf32>)
    -> (tensor<1x2x4x4xf32> {onnx.name = "present.0.key"},
        tensor<1x2x4x4xf32> {onnx.name = "present.0.value"},
        tensor<1x2x4x4xf32> {onnx.name = "y"}) {
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %a = tensor.insert_slice %pk into %e[0, 0, 0, 0] [1, 2, 3, 4] [1, 1, 1, 1] : tensor<1x2x3x4xf32> into tensor<1x2x4x4xf32>
  %k = tensor.insert_slice %nk into %a[0, 0, 3, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x4x4xf32>
  %y = arith.negf %k : tensor<1x2x4x4xf32>
  %nv = arith.negf %nv0 : tensor<1x2x1x4xf32>
  %f = tensor.empty() : tensor<1x2x4x4xf32>
  %b = tensor.insert_slice %pv into %f[0, 0, 0, 0] [1, 2, 3, 4] [1, 1, 1, 1] : tensor<1x2x3x4xf32> into tensor<1x2x4x4xf32>
  %v = tensor.insert_slice %nv into %b[0, 0, 3, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x4x4xf32>
  return %k, %v, %y : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A new value computed from another cache's updated contents does not join
// its update (that would read the update's result before it): two updates.
// CHECK-LABEL: func.func @main(
// CHECK: %[[K:.*]] = scf.forall
// CHECK: tensor.extract_slice %[[K]][0, 0, 3, 0]
// CHECK: arith.negf
// CHECK: scf.forall
func.func @main(%pk: tensor<1x2x3x4xf32> {onnx.name = "past.0.key"},
                %pv: tensor<1x2x3x4xf32> {onnx.name = "past.0.value"},
                %nk: tensor<1x2x1x4xf32>)
    -> (tensor<1x2x4x4xf32> {onnx.name = "present.0.key"},
        tensor<1x2x4x4xf32> {onnx.name = "present.0.value"}) {
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %a = tensor.insert_slice %pk into %e[0, 0, 0, 0] [1, 2, 3, 4] [1, 1, 1, 1] : tensor<1x2x3x4xf32> into tensor<1x2x4x4xf32>
  %k = tensor.insert_slice %nk into %a[0, 0, 3, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x4x4xf32>
  %s = tensor.extract_slice %k[0, 0, 3, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> to tensor<1x2x1x4xf32>
  %nv = arith.negf %s : tensor<1x2x1x4xf32>
  %f = tensor.empty() : tensor<1x2x4x4xf32>
  %b = tensor.insert_slice %pv into %f[0, 0, 0, 0] [1, 2, 3, 4] [1, 1, 1, 1] : tensor<1x2x3x4xf32> into tensor<1x2x4x4xf32>
  %v = tensor.insert_slice %nv into %b[0, 0, 3, 0] [1, 2, 1, 4] [1, 1, 1, 1] : tensor<1x2x1x4xf32> into tensor<1x2x4x4xf32>
  return %k, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
