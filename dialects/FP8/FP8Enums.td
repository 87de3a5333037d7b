//===- FP8Enums.td - FP8 dialect enums ---------------------*- tablegen -*-===//
#ifndef FP8_ENUMS_TD
#define FP8_ENUMS_TD

include "mlir/IR/EnumAttr.td"

def FP8_Format : I32EnumAttr<"Format", "FP8 element format", [
    I32EnumAttrCase<"E4M3", 0, "e4m3">,
    I32EnumAttrCase<"E5M2", 1, "e5m2">,
    I32EnumAttrCase<"Hybrid", 2, "hybrid">
  ]> {
  let cppNamespace = "::mlir::fp8";
  let description = [{
    `e4m3` (OCP E4M3FN: more precision, max 448), `e5m2` (more range, max
    57344), or `hybrid`: E4M3 for forward tensors and E5M2 for gradients.
  }];
}

def FP8_AmaxAlgo : I32EnumAttr<"AmaxAlgo", "reduction over an amax history", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"MostRecent", 1, "most_recent">
  ]> {
  let cppNamespace = "::mlir::fp8";
}

def FP8_E8M0Rounding : I32EnumAttr<"E8M0Rounding",
    "rounding of an MX block scale to a power of two", [
    I32EnumAttrCase<"RCeil", 0, "rceil">,
    I32EnumAttrCase<"Floor", 1, "floor">
  ]> {
  let cppNamespace = "::mlir::fp8";
  let description = [{
    `rceil` rounds `amax / fp8_max` up to a power of two (cuBLAS and
    Transformer Engine: no element saturates); `floor` is the OCP MX v1.0
    rule `2^(floor(log2 amax) - emax_elem)` (elements may saturate).
  }];
}

def FP8_Granularity : I32EnumAttr<"Granularity", "granularity of a scale", [
    I32EnumAttrCase<"Tensor", 0, "tensor">,
    I32EnumAttrCase<"Row", 1, "row">,
    I32EnumAttrCase<"Col", 2, "col">,
    I32EnumAttrCase<"Block", 3, "block">
  ]> {
  let cppNamespace = "::mlir::fp8";
}

def FP8_Epilogue : I32EnumAttr<"Epilogue",
    "elementwise function fused after a scaled matmul", [
    I32EnumAttrCase<"None", 0, "none">,
    I32EnumAttrCase<"Relu", 1, "relu">,
    I32EnumAttrCase<"GeluTanh", 2, "gelu_tanh">,
    I32EnumAttrCase<"GeluErf", 3, "gelu_erf">,
    I32EnumAttrCase<"Silu", 4, "silu">
  ]> {
  let cppNamespace = "::mlir::fp8";
}

#endif // FP8_ENUMS_TD
