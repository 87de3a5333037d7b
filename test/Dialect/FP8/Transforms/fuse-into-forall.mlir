// RUN: fp8-opt %s -split-input-file --pass-pipeline="builtin.module(func.func(fp8-fuse-into-forall))" | FileCheck %s

// A decode step's cache update (fp8-kv-cache-in-place's scf.forall, one
// element a thread): the new keys' RoPE and cast to E4M3 are evaluated by
// each thread at its element -- the rotated read (d + 64) mod 128 at its
// own index -- and the producer generic is gone.
// CHECK-DAG: #[[$ROT:.+]] = affine_map<(d0) -> (d0 - ((d0 + 64) floordiv 128) * 128 + 64)>
// CHECK-LABEL: func.func @update
// CHECK-SAME:    (%[[K:[^:]+]]: tensor<1x8x1x128xf16>, %[[COS:[^:]+]]: tensor<1x1x1x128xf16>
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[H:.+]], %[[D:.+]]) in (8, 128)
// CHECK:           %[[SLOT:.+]] = tensor.extract_slice
// CHECK-DAG:       %[[X:.+]] = tensor.extract %[[K]][%c0, %[[H]], %c0, %[[D]]]
// CHECK-DAG:       %[[RD:.+]] = affine.apply #[[$ROT]](%[[D]])
// CHECK-DAG:       %[[XR:.+]] = tensor.extract %[[K]][%c0, %[[H]], %c0, %[[RD]]]
// CHECK-DAG:       %[[C:.+]] = tensor.extract %[[COS]][%c0, %c0, %c0, %[[D]]]
// CHECK:           %[[M:.+]] = arith.mulf %[[X]], %[[C]] : f16
// CHECK:           %[[S:.+]] = arith.addf %[[M]], %[[XR]] : f16
// CHECK:           %[[Q:.+]] = arith.truncf %[[S]] : f16 to f8E4M3FN
// CHECK:           linalg.generic {{.*}} outs(%[[SLOT]] : tensor<1x1x1x1xf8E4M3FN>)
// CHECK:             arith.select %{{.+}}, %[[Q]], %{{.+}} : f8E4M3FN
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rot = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, (d3 + 64) mod 128)>
#bcast = affine_map<(d0, d1, d2, d3) -> (0, 0, 0, d3)>
func.func @update(%k: tensor<1x8x1x128xf16>, %cos: tensor<1x1x1x128xf16>, %cache: tensor<1x8x16x128xf8E4M3FN>, %pos: index, %ok: i1) -> tensor<1x8x16x128xf8E4M3FN> {
  %e = tensor.empty() : tensor<1x8x1x128xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#map, #rot, #bcast, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k, %k, %cos : tensor<1x8x1x128xf16>, tensor<1x8x1x128xf16>, tensor<1x1x1x128xf16>) outs(%e : tensor<1x8x1x128xf8E4M3FN>) {
  ^bb0(%a: f16, %r: f16, %c: f16, %o: f8E4M3FN):
    %m = arith.mulf %a, %c : f16
    %s = arith.addf %m, %r : f16
    %t = arith.truncf %s : f16 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<1x8x1x128xf8E4M3FN>
  %r = scf.forall (%h, %d) in (8, 128) shared_outs(%c = %cache) -> (tensor<1x8x16x128xf8E4M3FN>) {
    %x = tensor.extract_slice %q[0, %h, 0, %d] [1, 1, 1, 1] [1, 1, 1, 1] : tensor<1x8x1x128xf8E4M3FN> to tensor<1x1x1x1xf8E4M3FN>
    %y = tensor.extract_slice %c[0, %h, %pos, %d] [1, 1, 1, 1] [1, 1, 1, 1] : tensor<1x8x16x128xf8E4M3FN> to tensor<1x1x1x1xf8E4M3FN>
    %u = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x1x1x1xf8E4M3FN>) outs(%y : tensor<1x1x1x1xf8E4M3FN>) {
    ^bb0(%in: f8E4M3FN, %out: f8E4M3FN):
      %v = arith.select %ok, %in, %out : f8E4M3FN
      linalg.yield %v : f8E4M3FN
    } -> tensor<1x1x1x1xf8E4M3FN>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %u into %c[0, %h, %pos, %d] [1, 1, 1, 1] [1, 1, 1, 1] : tensor<1x1x1x1xf8E4M3FN> into tensor<1x8x16x128xf8E4M3FN>
    }
  }
  return %r : tensor<1x8x16x128xf8E4M3FN>
}

// -----

// A chain: the loop reads the cast, the cast reads a scaling generic; both
// come into the thread (the second through the tensor.extract the first
// round leaves), with the scaling's linalg.index at the thread's index.
// CHECK-LABEL: func.func @chain
// CHECK-NOT:     linalg.generic
// CHECK:         scf.forall (%[[I:.+]]) in (64)
// CHECK:           %[[X:.+]] = tensor.extract %arg0[%[[I]]] : tensor<64xf32>
// CHECK:           %[[IDX:.+]] = arith.index_cast %[[I]] : index to i32
// CHECK:           %[[F:.+]] = arith.sitofp %[[IDX]] : i32 to f32
// CHECK:           %[[M:.+]] = arith.mulf %[[X]], %[[F]] : f32
// CHECK:           %[[T:.+]] = arith.truncf %[[M]] : f32 to f16
// CHECK:           linalg.generic
// CHECK:             arith.addf %[[T]], %{{.+}} : f16
#id1 = affine_map<(d0) -> (d0)>
func.func @chain(%x: tensor<64xf32>, %out: tensor<64xf16>) -> tensor<64xf16> {
  %e32 = tensor.empty() : tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e32 : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %a, %f : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %e16 = tensor.empty() : tensor<64xf16>
  %t = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%s : tensor<64xf32>) outs(%e16 : tensor<64xf16>) {
  ^bb0(%a: f32, %o: f16):
    %c = arith.truncf %a : f32 to f16
    linalg.yield %c : f16
  } -> tensor<64xf16>
  %r = scf.forall (%i) in (64) shared_outs(%o = %out) -> (tensor<64xf16>) {
    %x1 = tensor.extract_slice %t[%i] [1] [1] : tensor<64xf16> to tensor<1xf16>
    %y1 = tensor.extract_slice %o[%i] [1] [1] : tensor<64xf16> to tensor<1xf16>
    %u = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x1 : tensor<1xf16>) outs(%y1 : tensor<1xf16>) {
    ^bb0(%in: f16, %acc: f16):
      %v = arith.addf %in, %acc : f16
      linalg.yield %v : f16
    } -> tensor<1xf16>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %u into %o[%i] [1] [1] : tensor<1xf16> into tensor<64xf16>
    }
  }
  return %r : tensor<64xf16>
}

// -----

// Left alone: a producer something outside the loop reads too (it would be
// computed twice), and one the loop reads as a wider slice.
// CHECK-LABEL: func.func @shared
// CHECK:         %[[P:.+]] = linalg.generic
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %[[P]]
// CHECK:         return
// CHECK-LABEL: func.func @wide
// CHECK:         %[[P:.+]] = linalg.generic
// CHECK:         scf.forall
// CHECK:           tensor.extract_slice %[[P]][%{{.+}}] [2] [1]
#id = affine_map<(d0) -> (d0)>
func.func @shared(%x: tensor<64xf32>, %out: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64xf32>
  %r = scf.forall (%i) in (64) shared_outs(%o = %out) -> (tensor<64xf32>) {
    %x1 = tensor.extract_slice %p[%i] [1] [1] : tensor<64xf32> to tensor<1xf32>
    %y1 = tensor.extract_slice %o[%i] [1] [1] : tensor<64xf32> to tensor<1xf32>
    %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x1 : tensor<1xf32>) outs(%y1 : tensor<1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %v = arith.addf %in, %acc : f32
      linalg.yield %v : f32
    } -> tensor<1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %u into %o[%i] [1] [1] : tensor<1xf32> into tensor<64xf32>
    }
  }
  return %r, %p : tensor<64xf32>, tensor<64xf32>
}
func.func @wide(%x: tensor<64xf32>, %out: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<64xf32>
  %r = scf.forall (%j) in (32) shared_outs(%o = %out) -> (tensor<64xf32>) {
    %i = affine.apply affine_map<(d0) -> (d0 * 2)>(%j)
    %x2 = tensor.extract_slice %p[%i] [2] [1] : tensor<64xf32> to tensor<2xf32>
    %y2 = tensor.extract_slice %o[%i] [2] [1] : tensor<64xf32> to tensor<2xf32>
    %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x2 : tensor<2xf32>) outs(%y2 : tensor<2xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %v = arith.addf %in, %acc : f32
      linalg.yield %v : f32
    } -> tensor<2xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %u into %o[%i] [2] [1] : tensor<2xf32> into tensor<64xf32>
    }
  }
  return %r : tensor<64xf32>
}
