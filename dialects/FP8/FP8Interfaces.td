//===- FP8Interfaces.td - FP8 dialect interfaces -----------*- tablegen -*-===//
#ifndef FP8_INTERFACES_TD
#define FP8_INTERFACES_TD

include "mlir/IR/OpBase.td"

//===----------------------------------------------------------------------===//
// Recipe interface
//===----------------------------------------------------------------------===//

def FP8_RecipeAttrInterface : AttrInterface<"RecipeAttrInterface"> {
  let cppNamespace = "::mlir::fp8";
  let description = [{
    A scaling recipe: how the scale of a quantized tensor is derived from
    amax values. Implemented by `#fp8.delayed`, `#fp8.current`, `#fp8.block`
    and `#fp8.mxfp8`.
  }];
  let methods = [
    InterfaceMethod<"Whether scales come from an amax history (delayed scaling).",
      "bool", "usesHistory", (ins)>,
    InterfaceMethod<"Whether scales are E8M0 (MX formats) instead of FP32.",
      "bool", "usesE8M0Scales", (ins)>,
    InterfaceMethod<"Whether FP32 scales are rounded down to a power of two.",
      "bool", "usesPowerOfTwoScales", (ins)>,
    InterfaceMethod<"Short name of the recipe, as in `--recipe=`.",
      "::llvm::StringRef", "getRecipeName", (ins)>,
  ];
}

def FP8_RecipeAttr : Attr<
    CPred<"::llvm::isa<::mlir::fp8::RecipeAttrInterface>($_self)">,
    "FP8 scaling recipe"> {
  let storageType = "::mlir::fp8::RecipeAttrInterface";
  let returnType = "::mlir::fp8::RecipeAttrInterface";
  let convertFromStorage = "$_self";
}

#endif // FP8_INTERFACES_TD
