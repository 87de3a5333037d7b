// Per-row amaxes of few long rows, as the GPU pipeline cuts them
// (convert-fp8-to-linalg{split-tensor-amax}: 32 pieces a row, then the
// pieces' maxima), equal the one-reduction form bit for bit: run both on
// the CPU (rows with one large element, a row with a NaN, a row of zeros,
// negative values).
// RUN: fp8-opt %s --convert-fp8-to-linalg=split-tensor-amax | FileCheck %s --check-prefix=SPLIT
// RUN: fp8-opt %s --convert-fp8-to-linalg=split-tensor-amax --fp8-cpu-lowering-pipeline | %mlir-runner | grep -v base@ > %t.split
// RUN: fp8-opt %s --fp8-cpu-lowering-pipeline | %mlir-runner | grep -v base@ > %t.one
// RUN: diff %t.split %t.one
// RUN: FileCheck %s --input-file %t.one
// SPLIT: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x32x256xf32>) outs(%{{.*}} : tensor<4x32xf32>)
// SPLIT: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// SPLIT-SAME: ins(%{{.*}} : tensor<4x32xf32>) outs(%{{.*}} : tensor<4xf32>)
// The maxima's bits: 1000 * |sin(1234)| (row 0), a NaN (row 1), 0 (row
// 2), 2.5 (row 3).
// CHECK: [11423240{{[0-9]+}}]
// CHECK: [2143289344]
// CHECK: [0]
// CHECK: [1075838976]

func.func private @printMemrefI32(memref<*xi32>)

func.func @amax(%x: tensor<4x8192xf32>) -> tensor<4x1xf32> {
  %a = fp8.amax %x layout<row> : tensor<4x8192xf32> -> tensor<4x1xf32>
  return %a : tensor<4x1xf32>
}

func.func @main() {
  %e = tensor.empty() : tensor<4x8192xf32>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x8192xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %s = math.sin %jf : f32
    %c1234 = arith.constant 1234 : index
    %c7000 = arith.constant 7000 : index
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %k1000 = arith.constant 1000.0 : f32
    %big = arith.mulf %s, %k1000 : f32
    %isBig = arith.cmpi eq, %j, %c1234 : index
    %v0 = arith.select %isBig, %big, %s : f32
    %nan = arith.constant 0x7FC00000 : f32
    %isNaN = arith.cmpi eq, %j, %c7000 : index
    %row1 = arith.cmpi eq, %i, %c1 : index
    %putNaN = arith.andi %isNaN, %row1 : i1
    %v1 = arith.select %putNaN, %nan, %v0 : f32
    %zero = arith.constant 0.0 : f32
    %row2 = arith.cmpi eq, %i, %c2 : index
    %v2 = arith.select %row2, %zero, %v1 : f32
    %c3 = arith.constant 3 : index
    %row3 = arith.cmpi eq, %i, %c3 : index
    %neg = arith.constant -2.5 : f32
    %last = arith.cmpi eq, %j, %c0 : index
    %isNeg = arith.andi %row3, %last : i1
    %v3 = arith.select %isNeg, %neg, %v2 : f32
    %small = arith.constant 0.001 : f32
    %tiny = arith.mulf %v3, %small : f32
    %v4 = arith.select %row3, %tiny, %v3 : f32
    %v5 = arith.select %isNeg, %neg, %v4 : f32
    linalg.yield %v5 : f32
  } -> tensor<4x8192xf32>
  %a = call @amax(%x) : (tensor<4x8192xf32>) -> tensor<4x1xf32>
  %b = arith.bitcast %a : tensor<4x1xf32> to tensor<4x1xi32>
  %m = bufferization.to_buffer %b : tensor<4x1xi32> to memref<4x1xi32>
  %u = memref.cast %m : memref<4x1xi32> to memref<*xi32>
  call @printMemrefI32(%u) : (memref<*xi32>) -> ()
  return
}
