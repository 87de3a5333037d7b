//===- FP8Dialect.td - FP8 dialect definition --------------*- tablegen -*-===//
//
// Part of fp8-opt. The `fp8` dialect models FP8 quantization of tensor
// programs: how a high-precision tensor becomes an FP8 tensor plus a scale
// tensor, how those scales are computed by a recipe, and the FP8 GEMM that
// consumes them.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_TD
#define FP8_DIALECT_TD

include "mlir/IR/OpBase.td"

def FP8_Dialect : Dialect {
  let name = "fp8";
  let cppNamespace = "::mlir::fp8";
  let summary = "FP8 quantization, scaling recipes and scaled GEMMs";
  let description = [{
    The `fp8` dialect carries FP8 (E4M3 / E5M2, with FP32 or E8M0 scales)
    quantization through the compiler. Tensors stay in MLIR's builtin types
    (`f8E4M3FN`, `f8E5M2`, `f8E8M0FNU`); the dialect adds

    * attributes describing *scaling recipes* (`#fp8.delayed`,
      `#fp8.current`, `#fp8.block`, `#fp8.mxfp8`) and the *scale layout* of a
      quantized tensor (`#fp8.layout<tensor|row|col|block BxB>`);
    * ops that quantize, dequantize, measure amax, turn amaxes into scales,
      roll amax histories, transpose quantized tensors and multiply them.

    Scale convention: every scale tensor in this dialect holds the
    *dequantization* scale `s`, so that `x ~= q * s` (the `scale_inv` of
    Transformer Engine, the `x_scale` of ONNX `DequantizeLinear`, the E8M0
    block scale of the OCP MX format). Recipes are specified in terms of the
    encode scale `e = fp8_max / amax` and produce `s = 1 / e`.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class FP8_Op<string mnemonic, list<Trait> traits = []>
    : Op<FP8_Dialect, mnemonic, traits>;

#endif // FP8_DIALECT_TD
