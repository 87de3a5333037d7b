//===- FP8Attributes.td - FP8 dialect attributes -----------*- tablegen -*-===//
#ifndef FP8_ATTRIBUTES_TD
#define FP8_ATTRIBUTES_TD

include "mlir/IR/AttrTypeBase.td"
include "FP8/FP8Dialect.td"
include "FP8/FP8Enums.td"
include "FP8/FP8Interfaces.td"

class FP8_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<FP8_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

def FP8_DelayedScalingAttr : FP8_Attr<"DelayedScaling", "delayed",
    [DeclareAttrInterfaceMethods<FP8_RecipeAttrInterface>]> {
  let summary = "per-tensor delayed scaling from an amax history";
  let description = [{
    The scale of step `t` comes from the amaxes recorded in the previous
    `history` steps (Transformer Engine's `DelayedScaling`):

    ```
    a = max(history)           // algo = max
    a = history[0]             // algo = most_recent
    e = (fp8_max / a) / 2^margin, inf -> FLT_MAX, optionally rounded down
        to a power of two (pow2)
    s = 1 / e                  // dequantization scale
    ```
    If `a` is 0, inf or NaN the previous scale is kept. Defaults follow
    Transformer Engine: history 1024, algo max, margin 0.

    ```mlir
    #fp8.delayed<history = 16, algo = most_recent, margin = 1>
    ```
  }];
  let parameters = (ins "int64_t":$history, "::mlir::fp8::AmaxAlgo":$algo,
                        "int64_t":$margin, "bool":$pow2);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def FP8_CurrentScalingAttr : FP8_Attr<"CurrentScaling", "current",
    [DeclareAttrInterfaceMethods<FP8_RecipeAttrInterface>]> {
  let summary = "per-tensor current scaling (amax of this tensor now)";
  let description = [{
    `e = fp8_max / max(amax, eps)` with `amax` 0, inf or NaN giving `e = 1`,
    an infinite `e` clamped to FLT_MAX, optionally rounded down to a power of
    two; `s = 1 / e`.

    ```mlir
    #fp8.current
    #fp8.current<eps = 1.0e-12, pow2 = true>
    ```
  }];
  let parameters = (ins "::llvm::APFloat":$eps, "bool":$pow2);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins CArg<"float", "0.0f">:$eps, CArg<"bool", "false">:$pow2), [{
      return $_get($_ctxt, ::llvm::APFloat(eps), pow2);
    }]>
  ];
}

def FP8_BlockScalingAttr : FP8_Attr<"BlockScaling", "block",
    [DeclareAttrInterfaceMethods<FP8_RecipeAttrInterface>]> {
  let summary = "sub-channel (generic block) scaling";
  let description = [{
    One FP32 scale per block; each block is quantized from its own amax with
    the `#fp8.current` formula (power-of-two scales by default). `act` is the
    block shape for activations (left GEMM operand), `weight` for weights
    (right operand, in its K x N orientation); defaults are DeepSeek-V3's
    1x128 and 128x128.

    ```mlir
    #fp8.block
    #fp8.block<act = 1x128, weight = 128x128, pow2 = false>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$act,
                        ArrayRefParameter<"int64_t">:$weight,
                        "bool":$pow2, "::llvm::APFloat":$eps);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def FP8_MXScalingAttr : FP8_Attr<"MXScaling", "mxfp8",
    [DeclareAttrInterfaceMethods<FP8_RecipeAttrInterface>]> {
  let summary = "MXFP8: 32-element blocks with E8M0 scales";
  let description = [{
    OCP Microscaling: one E8M0 (power-of-two) scale per 32 consecutive
    elements along the GEMM reduction dimension K.

    ```mlir
    #fp8.mxfp8
    #fp8.mxfp8<rounding = floor>
    ```
  }];
  let parameters = (ins "::mlir::fp8::E8M0Rounding":$rounding);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    static constexpr int64_t kBlockSize = 32;
  }];
}

//===----------------------------------------------------------------------===//
// Scale layout
//===----------------------------------------------------------------------===//

def FP8_ScaleLayoutAttr : FP8_Attr<"ScaleLayout", "layout"> {
  let summary = "which elements of a quantized tensor share a scale";
  let description = [{
    * `tensor`: one scale; the scale tensor has rank 0.
    * `row`: one scale per row (innermost dimension reduced); scale shape is
      the data shape with the last dimension set to 1.
    * `col`: one scale per column (dimension `rank-2` reduced); scale shape is
      the data shape with dimension `rank-2` set to 1.
    * `block AxB...`: blocks over the trailing dimensions; the scale shape is
      the leading dimensions followed by `ceil(d_i / b_i)`. A block at the end
      of a dimension that the block does not divide is partial: padding never
      takes part in amax or in results.

    ```mlir
    #fp8.layout<tensor>
    #fp8.layout<block 1x128>
    ```
  }];
  let parameters = (ins "::mlir::fp8::Granularity":$granularity,
                        ArrayRefParameter<"int64_t">:$block);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::fp8::Granularity":$granularity), [{
      return $_get($_ctxt, granularity, ::llvm::ArrayRef<int64_t>{});
    }]>
  ];
  let extraClassDeclaration = [{
    /// Block extent of this layout in every dimension of a tensor of the
    /// given shape (dynamic dims stay dynamic); fails if the layout does not
    /// fit the rank.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getExpandedBlock(::llvm::ArrayRef<int64_t> shape) const;
    /// Shape of the scale tensor for data of the given shape.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getScaleShape(::llvm::ArrayRef<int64_t> shape) const;
    /// Checks that `scaleType` is a valid scale tensor for `dataType` under
    /// this layout, reporting why not through `emitError`.
    ::mlir::LogicalResult verifyScaleType(
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
        ::mlir::ShapedType dataType, ::mlir::ShapedType scaleType) const;
    bool isPerTensor() const {
      return getGranularity() == ::mlir::fp8::Granularity::Tensor;
    }
  }];
}

#endif // FP8_ATTRIBUTES_TD
