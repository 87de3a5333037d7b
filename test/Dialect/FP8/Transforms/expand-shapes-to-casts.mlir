// RUN: fp8-opt %s -fp8-expand-shapes-to-casts -split-input-file | FileCheck %s
// RUN: fp8-opt %s -fp8-expand-shapes-to-casts -expand-strided-metadata -split-input-file | FileCheck %s --check-prefix=EXPANDED
//
// Why the pass exists: MLIR 22.1's expand-strided-metadata crashes on an
// expand_shape with two dynamic sizes in one reassociation group. With
// /usr/lib/llvm-22/bin/mlir-opt (22.1), this function alone
//   func.func @f(%m: memref<?x64xf32>, %a: index, %b: index)
//       -> memref<?x?x64xf32> {
//     %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%a, %b, 64]
//         : memref<?x64xf32> into memref<?x?x64xf32>
//     return %e : memref<?x?x64xf32>
//   }
// run through `mlir-opt --expand-strided-metadata` segfaults in
// mlir::IntegerAttr::getValue (llvm-project issue 186830; upstream rewrote
// getExpandedSizes/getExpandedStrides to read output_shape in PR 187844,
// after the 22 release branch).

// The batch x sequence split of the importer's reshapes.
// CHECK-LABEL: func @two_dynamic
// CHECK-SAME: (%[[M:.+]]: memref<?x64xf32>, %[[A:.+]]: index, %[[B:.+]]: index)
// CHECK-NOT: memref.expand_shape
// CHECK: %[[C64:.+]] = arith.constant 64 : index
// CHECK-NOT: memref.extract_strided_metadata
// CHECK: %[[S0:.+]] = arith.muli %[[C64]], %[[B]] : index
// CHECK-NOT: arith.muli
// CHECK: %[[R:.+]] = memref.reinterpret_cast %[[M]] to offset: [0], sizes: [%[[A]], %[[B]], 64], strides: [%[[S0]], 64, 1] : memref<?x64xf32> to memref<?x?x64xf32>
// CHECK: return %[[R]]
// EXPANDED-LABEL: func @two_dynamic
// EXPANDED-NOT: memref.expand_shape
// EXPANDED: memref.reinterpret_cast
func.func @two_dynamic(%m: memref<?x64xf32>, %a: index, %b: index) -> memref<?x?x64xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%a, %b, 64] : memref<?x64xf32> into memref<?x?x64xf32>
  return %e : memref<?x?x64xf32>
}

// -----

// A static factor between two dynamic sizes, and a strided source whose
// stride and offset come from its metadata.
// CHECK-LABEL: func @strided_source
// CHECK-SAME: (%[[M:.+]]: memref<?x8xf32, strided<[?, 1], offset: ?>>, %[[A:.+]]: index, %[[B:.+]]: index)
// CHECK: %[[BASE:.+]], %[[OFF:.+]], %[[SIZES:.+]]:2, %[[STRIDES:.+]]:2 = memref.extract_strided_metadata %[[M]]
// CHECK: %[[S1:.+]] = arith.muli %[[STRIDES]]#0, %[[B]] : index
// CHECK: %[[S0:.+]] = arith.muli %[[S1]], %{{.+}} : index
// CHECK-NOT: arith.muli
// CHECK: memref.reinterpret_cast %[[M]] to offset: [%[[OFF]]], sizes: [%[[A]], 4, %[[B]], 8], strides: [%[[S0]], %[[S1]], %[[STRIDES]]#0, 1]
func.func @strided_source(%m: memref<?x8xf32, strided<[?, 1], offset: ?>>, %a: index, %b: index) -> memref<?x4x?x8xf32, strided<[?, ?, ?, 1], offset: ?>> {
  %e = memref.expand_shape %m [[0, 1, 2], [3]] output_shape [%a, 4, %b, 8] : memref<?x8xf32, strided<[?, 1], offset: ?>> into memref<?x4x?x8xf32, strided<[?, ?, ?, 1], offset: ?>>
  return %e : memref<?x4x?x8xf32, strided<[?, ?, ?, 1], offset: ?>>
}

// -----

// One dynamic size per group is upstream's: left alone.
// CHECK-LABEL: func @one_dynamic
// CHECK: memref.expand_shape
// CHECK-NOT: memref.reinterpret_cast
func.func @one_dynamic(%m: memref<?x64xf32>, %a: index) -> memref<?x4x64xf32> {
  %e = memref.expand_shape %m [[0, 1], [2]] output_shape [%a, 4, 64] : memref<?x64xf32> into memref<?x4x64xf32>
  return %e : memref<?x4x64xf32>
}
