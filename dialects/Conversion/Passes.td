//===- Passes.td - fp8-opt conversion passes ---------------*- tablegen -*-===//
#ifndef FP8_CONVERSION_PASSES_TD
#define FP8_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFP8ToLinalg : Pass<"convert-fp8-to-linalg"> {
  let summary = "Lower FP8 dialect ops to linalg, tensor, arith and math";
  let description = [{
    Expands every `fp8` op into destination-style tensor code that the
    upstream CPU and GPU pipelines compile: `linalg.generic` for
    element-wise and per-block work, `linalg.reduce`-style generics for amax,
    `linalg.batch_matmul`/`linalg.matmul` for the FP32-accumulating product
    of dequantized operands, `tensor.pad`/`tensor.extract_slice` around
    partial blocks. FP8 rounding is expressed as a clamp to +-max followed by
    `arith.truncf` (round to nearest even), which keeps NaN and makes the
    saturating semantics explicit for every backend.

    Before:
    ```mlir
    %q = fp8.quantize %x, %s layout<tensor>
        : tensor<4x8xf32>, tensor<f32> -> tensor<4x8xf8E4M3FN>
    ```
    After (abridged):
    ```mlir
    %q = linalg.generic {...} ins(%x, %s : tensor<4x8xf32>, tensor<f32>)
        outs(%e : tensor<4x8xf8E4M3FN>) {
      ^bb0(%in: f32, %sc: f32, %out: f8E4M3FN):
        %d = arith.divf %in, %sc : f32
        %c = arith.minimumf %d, %max : f32   // and maximumf with -max
        %t = arith.truncf %c : f32 to f8E4M3FN
        linalg.yield %t : f8E4M3FN
    }
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // FP8_CONVERSION_PASSES_TD
