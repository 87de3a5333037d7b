//===- Passes.td - FP8 dialect transformation passes -------*- tablegen -*-===//
#ifndef FP8_TRANSFORMS_PASSES_TD
#define FP8_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def FP8ExpandArithCasts : Pass<"fp8-expand-arith-casts"> {
  let summary = "Rewrite f32<->f8E4M3FN/f8E5M2 arith casts as integer code";
  let description = [{
    MLIR 22 has no LLVM lowering for `arith.truncf`/`arith.extf` to or from
    `f8E4M3FN`/`f8E5M2` (upstream `arith-expand` only covers E8M0 and
    E2M1, and `convert-arith-to-apfloat` calls into a soft-float library per
    element and gives NaN on overflow). This pass rewrites them into exact
    integer/FP32 arithmetic that any backend compiles:

    * `truncf`: round to nearest even (normal range by rounding the FP32
      bit pattern, subnormal range with the FPU's own rounding of an added
      power of two), saturating to +-max like PTX `.satfinite`; NaN becomes
      the canonical NaN `0x7F`; `-0.0` and negative underflow keep the sign.
    * `extf`: exact decode (subnormals, NaN, and E5M2 infinities).

    Casts from/to f16 and bf16 go through f32 (exact for extension; for
    truncation f16/bf16 -> f32 is exact, so the single rounding is kept).

    Before:
    ```mlir
    %q = arith.truncf %x : f32 to f8E4M3FN
    ```
    After (abridged):
    ```mlir
    %u = arith.bitcast %x : f32 to i32
    ...
    %b = arith.trunci %bits : i32 to i8
    %q = arith.bitcast %b : i8 to f8E4M3FN
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def FP8CopyStoredState : Pass<"fp8-copy-stored-state"> {
  let summary = "Store a fresh copy into ml_program globals before bufferization";
  let description = [{
    FP8 state (amax histories, previous scales) lives in mutable
    `ml_program.global`s. MLIR 22's bufferization model of
    `ml_program.global_store` declares that the store does not *read* its
    operand; whenever one-shot bufferization decides to give the store its
    own buffer (the stored value is also returned, or comes from another
    global), that buffer is never filled and garbage is stored. This pass
    makes every stored value a private copy
    (`bufferization.alloc_tensor() copy(%v)`) used by the store alone, which
    bufferizes in place and is correct under the buggy and a fixed model
    alike. The cost is one copy of the (small) state per store.

    Before:
    ```mlir
    ml_program.global_store @hist = %h2 : tensor<16xf32>
    return %h2 : tensor<16xf32>
    ```
    After:
    ```mlir
    %c = bufferization.alloc_tensor() copy(%h2) : tensor<16xf32>
    ml_program.global_store @hist = %c : tensor<16xf32>
    return %h2 : tensor<16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect"];
}

#endif // FP8_TRANSFORMS_PASSES_TD
