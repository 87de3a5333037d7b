//===- FP8Ops.td - FP8 dialect operations ------------------*- tablegen -*-===//
#ifndef FP8_OPS_TD
#define FP8_OPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "FP8/FP8Dialect.td"
include "FP8/FP8Attributes.td"

def FP8_HighPrecisionTensor : RankedTensorOf<[F32, F16, BF16]>;
def FP8_FloatTensor : RankedTensorOf<[F8E4M3FN, F8E5M2]>;
// What a product's operands may be stored in: FP8, or BF16 for the products a
// recipe keeps out of FP8 (--high-precision=bf16: tensor cores, unit scales).
def FP8_LowPrecisionTensor : RankedTensorOf<[F8E4M3FN, F8E5M2, BF16]>;
def FP8_ScaleTensor : RankedTensorOf<[F32, F8E8M0FNU]>;
def FP8_F32Tensor : RankedTensorOf<[F32]>;
def FP8_AttentionOperand : RankedTensorOf<[F32, F16, BF16, F8E4M3FN, F8E5M2]>;

//===----------------------------------------------------------------------===//
// quantize / dequantize
//===----------------------------------------------------------------------===//

def FP8_QuantizeOp : FP8_Op<"quantize",
    [Pure, AllShapesMatch<["input", "result"]>]> {
  let summary = "saturating FP8 quantization with a dequantization scale";
  let description = [{
    `result = saturate(round_nearest_even(input / broadcast(scale)))`, where
    the scale is broadcast over the blocks of `layout` and the division is an
    IEEE FP32 division (FP16/BF16 inputs are first extended to FP32).
    Saturation follows PTX `.satfinite`: values beyond the largest finite FP8
    value (and infinities) become +-max (448 for E4M3, 57344 for E5M2); NaN
    stays NaN. E8M0 scales are exact powers of two; an E8M0 NaN scale (0xFF)
    makes its whole block NaN.

    ```mlir
    %q = fp8.quantize %x, %s layout<block 1x128>
        : tensor<4x256xf32>, tensor<4x2xf32> -> tensor<4x256xf8E4M3FN>
    ```
  }];
  let arguments = (ins FP8_HighPrecisionTensor:$input, FP8_ScaleTensor:$scale,
                       FP8_ScaleLayoutAttr:$layout);
  let results = (outs FP8_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `layout` `` $layout attr-dict `:` type($input) `,`
    type($scale) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def FP8_DequantizeOp : FP8_Op<"dequantize",
    [Pure, AllShapesMatch<["input", "result"]>]> {
  let summary = "FP8 to high precision: `result = input * broadcast(scale)`";
  let description = [{
    The FP8 value is decoded exactly and multiplied by its block's scale in
    FP32 (then rounded to the result type when it is FP16/BF16). A BF16
    input (a high-precision product's operand) is widened exactly the same
    way.

    ```mlir
    %x = fp8.dequantize %q, %s layout<tensor>
        : tensor<4x256xf8E4M3FN>, tensor<f32> -> tensor<4x256xf32>
    ```
  }];
  let arguments = (ins FP8_LowPrecisionTensor:$input, FP8_ScaleTensor:$scale,
                       FP8_ScaleLayoutAttr:$layout);
  let results = (outs FP8_HighPrecisionTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `layout` `` $layout attr-dict `:` type($input) `,`
    type($scale) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// amax and scales
//===----------------------------------------------------------------------===//

def FP8_AmaxOp : FP8_Op<"amax", [Pure]> {
  let summary = "maximum absolute value per scale block";
  let description = [{
    One FP32 amax per block of `layout`; the result has the layout's scale
    shape. A NaN anywhere in a block makes that block's amax NaN (so that the
    scale computation can see it); infinities give inf. Padding of partial
    blocks does not take part.

    ```mlir
    %a = fp8.amax %x layout<row> : tensor<4x256xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins FP8_HighPrecisionTensor:$input,
                       FP8_ScaleLayoutAttr:$layout);
  let results = (outs FP8_F32Tensor:$result);
  let assemblyFormat = [{
    $input `layout` `` $layout attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP8_ComputeScaleOp : FP8_Op<"compute_scale", [Pure]> {
  let summary = "amax (or amax history) to dequantization scale, per recipe";
  let description = [{
    Applies the scale formula of `recipe` for the FP8 `format` element-wise
    (see the recipe attributes for the exact rules and edge cases).

    * `#fp8.current` / `#fp8.block`: `amax` has the scale's shape.
    * `#fp8.mxfp8`: the result is `f8E8M0FNU` (`rceil` or `floor` rounding).
    * `#fp8.delayed`: `amax` is the amax *history*, shape
      `[history] + scale shape`, index 0 most recent; `previous` is the scale
      of the last step, kept wherever the history's amax is 0, inf or NaN.

    ```mlir
    %s = fp8.compute_scale %a recipe(#fp8.current) format(e4m3)
        : tensor<f32> -> tensor<f32>
    %s2 = fp8.compute_scale %hist previous %s_prev
        recipe(#fp8.delayed<history = 16>) format(e4m3)
        : tensor<16xf32>, tensor<f32> -> tensor<f32>
    ```
  }];
  let arguments = (ins FP8_F32Tensor:$amax,
                       Optional<FP8_F32Tensor>:$previous,
                       FP8_RecipeAttr:$recipe, FP8_Format:$format);
  let results = (outs FP8_ScaleTensor:$scale);
  let assemblyFormat = [{
    $amax (`previous` $previous^)? `recipe` `(` $recipe `)`
    `format` `(` $format `)` attr-dict `:` type($amax)
    (`,` type($previous)^)? `->` type($scale)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def FP8_HistoryUpdateOp : FP8_Op<"history_update",
    [Pure, AllTypesMatch<["history", "result"]>]> {
  let summary = "roll an amax history and record this step's amax";
  let description = [{
    `result[0] = amax`, `result[i] = history[i-1]` for `i >= 1`: the oldest
    entry is dropped. The history's shape is `[H] + amax shape`. Persistent
    histories live in `ml_program.global`s (read with `global_load`, written
    back with `global_store`), so the state of a compiled model survives
    across runs.

    ```mlir
    %h2 = fp8.history_update %h, %a : tensor<16xf32>, tensor<f32>
    ```
  }];
  let arguments = (ins FP8_F32Tensor:$history, FP8_F32Tensor:$amax);
  let results = (outs FP8_F32Tensor:$result);
  let assemblyFormat = [{
    $history `,` $amax attr-dict `:` type($history) `,` type($amax)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// scaled_matmul
//===----------------------------------------------------------------------===//

def FP8_ScaledMatmulOp : FP8_Op<"scaled_matmul",
    [Pure, DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "FP8 x FP8 matrix product with scales, FP32 accumulation";
  let description = [{
    `result = epilogue(dequantize(lhs) @ dequantize(rhs) + bias)` with FP32
    accumulation, rounded once to the result type. `lhs` is `[batch..., M, K]`;
    `rhs` is `[batch..., K, N]`, or `[batch..., N, K]` with `transpose_rhs`
    (the K-major weight layout Hopper's FP8 `wgmma` wants). A rank-2 `rhs`
    is shared by every batch of `lhs`. `bias` is `[N]` or the result's shape.
    Each operand's scale follows its layout. The definition is the FP32 sum
    of dequantized products, so implementations may only differ in the order
    of FP32 additions: a GPU kernel that sums each K-block of FP8 products
    and applies both blocks' scales to the partial sum (as DeepGEMM does for
    1x128 / 128x128 blocks) implements the same value.

    BF16 operands (both, per-tensor layouts) are the products a recipe keeps
    out of FP8 when `--high-precision=bf16` (fp8-high-precision-products):
    the same definition, computed by BF16 tensor-core kernels on the GPU.

    `m_major(P)` stores the lhs scales M-major: the scale tensor its layout
    defines, `[batch..., Mb, Kb]`, transposed over its two trailing
    dimensions and padded along Mb to a multiple of `P`, i.e.
    `[batch..., Kb, align(Mb, P)]` (the order Hopper TMA loads activation
    scales in: one K-block's row scales contiguous, rows 16-byte aligned;
    DeepGEMM's `get_mn_major_tma_aligned_tensor`). Padding entries are
    never read. Made by `fp8-block-layout{scale-storage=tma}`.

    ```mlir
    %y = fp8.scaled_matmul %a, %sa layout<row>, %w, %sw layout<row>
        bias %b transpose_rhs epilogue(gelu_tanh)
        : (tensor<32x128xf8E4M3FN>, tensor<32x1xf32>, tensor<64x128xf8E4M3FN>,
           tensor<64x1xf32>, tensor<64xf32>) -> tensor<32x64xbf16>
    ```
  }];
  let arguments = (ins FP8_LowPrecisionTensor:$lhs, FP8_ScaleTensor:$lhs_scale,
                       FP8_LowPrecisionTensor:$rhs, FP8_ScaleTensor:$rhs_scale,
                       Optional<FP8_HighPrecisionTensor>:$bias,
                       FP8_ScaleLayoutAttr:$lhs_layout,
                       FP8_ScaleLayoutAttr:$rhs_layout,
                       UnitAttr:$transpose_rhs,
                       DefaultValuedAttr<FP8_Epilogue,
                                         "::mlir::fp8::Epilogue::None">:$epilogue,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$lhs_scale_m_major);
  let results = (outs FP8_HighPrecisionTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $lhs_scale `layout` `` $lhs_layout
    (`m_major` `(` $lhs_scale_m_major^ `)`)? `,`
    $rhs `,` $rhs_scale `layout` `` $rhs_layout
    (`bias` $bias^)? (`transpose_rhs` $transpose_rhs^)?
    (`epilogue` `(` $epilogue^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Sizes M, N, K of the product (dynamic sizes as ShapedType::kDynamic).
    int64_t getM();
    int64_t getN();
    int64_t getK();
    /// The lhs scale shape its layout defines ([batch..., Mb, Kb]), before
    /// any M-major storage; failure if the layout does not fit lhs.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>> getCanonicalLhsScaleShape();
  }];
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

def FP8_AttentionOp : FP8_Op<"attention", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface, ["reifyResultShapes"]>]> {
  let summary = "scaled dot-product attention (softmax(scale * q k^T + mask) v)";
  let description = [{
    Multi-head attention with grouped-query heads, as one op: the importer
    makes it from the attention chains exporters write (MatMul, scale, mask,
    Softmax, MatMul) so that a fused kernel can compute it without
    materializing the `Sq x Skv` scores; `convert-fp8-to-linalg` lowers it to
    the reference computation below.

    `query` is `[B, Hq, Sq, D]`, `key` `[B, Hkv, Skv, D]`, `value`
    `[B, Hkv, Skv, Dv]`, the result `[B, Hq, Sq, Dv]`. `Hq` is a multiple of
    `Hkv` (grouped-query attention): query head `h` reads key/value head
    `h / (Hq / Hkv)`. `query`, `key` and `value` share one element type
    (f32, f16 or bf16); the result and the optional additive `mask` may have
    any of those types. Head counts are static; other sizes may be
    dynamic. The mask has rank 4 and broadcasts to
    `[B, Hq, Sq, Skv]` (dimensions of size 1 broadcast); it may hold -inf.
    `causal` masks the keys `j > i + Skv - Sq` of query `i` (bottom-right
    aligned: torch's `is_causal` when `Sq == Skv`, and a decode step whose
    `Skv` includes a cache of `Skv - Sq` earlier tokens).
    `sequence_major`: the result is `[B, Sq, Hq, Dv]` instead (the heads of
    a position together: what the exporters' `transpose(1, 2)` before the
    output projection makes; a fused kernel writes it directly).

    Per query row `i` (of batch `b`, head `h`):

    ```
    s_ij = scale * sum_d q_id k_jd + mask_ij      (FP32 accumulation and adds)
    s_ij = -inf                                    where causal masks j
    p_ij = exp(s_ij - max_j s_ij) / sum_j exp(s_ij - max_j s_ij)   (FP32)
    p_ij = 0                                       if every s_ij is -inf
    o_i  = sum_j p_ij v_j                          (FP32 accumulation)
    ```

    rounded once to the result type. A row whose scores are all -inf gives
    0 (what the exporters' `IsNaN -> Where(0)` guard after Softmax does);
    NaN scores propagate. For 16-bit operand types the probabilities `p`
    are rounded to the operand type before the `p v` product (as a 16-bit
    product of the decomposed graph does). A fused kernel with an online
    softmax may instead round the unnormalized `exp(s - running max)` to the
    operand type and divide by the FP32 sum at the end: that is the op's
    allowed difference, besides the order of FP32 additions.

    FP8 operands: `query`, `key` and `value` may instead be E4M3 or E5M2
    (one type for the three) with f32 dequantization scales
    `scales(%sq, %sk, %sv)` (required with FP8 operands, refused otherwise)
    laid out by `scale_layout` (one layout for the three): `tensor` (the
    default: rank-0 scales) or `block TxD` -- one scale per T consecutive
    positions of one (batch, head), the block covering the whole head
    dimension, so that the scale of `q` is `[B, Hq, ceil(Sq / T), 1]` (as
    `fp8.quantize` with that layout writes it). The op then computes the
    above on the dequantized operands `q * sq`, `k * sk`, `v * sv` in FP32,
    with `p` in FP32. A fused kernel may round `p` (as `256 * exp(s -
    running max)`) to E4M3 for the `p v` product: that, and the order of
    FP32 additions, is its allowed difference (docs/Numerics.md states the
    error). Scales are positive and finite (what fp8.compute_scale makes);
    the GPU kernel reads a zero, negative or NaN one as the smallest normal
    float.

    ```mlir
    %o = fp8.attention %q, %k, %v mask %m scale(0.125) causal
        : (tensor<1x32x128x64xbf16>, tensor<1x8x128x64xbf16>,
           tensor<1x8x128x64xbf16>, tensor<1x1x128x128xf32>)
        -> tensor<1x32x128x64xf32>
    %o8 = fp8.attention %q8, %k8, %v8 scales(%sq, %sk, %sv)
        scale_layout<block 128x64> scale(0.125) causal
        : (tensor<1x32x128x64xf8E4M3FN>, tensor<1x8x128x64xf8E4M3FN>,
           tensor<1x8x128x64xf8E4M3FN>, tensor<1x32x1x1xf32>,
           tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>)
        -> tensor<1x32x128x64xbf16>
    ```
  }];
  let arguments = (ins FP8_AttentionOperand:$query,
                       FP8_AttentionOperand:$key,
                       FP8_AttentionOperand:$value,
                       Optional<FP8_HighPrecisionTensor>:$mask,
                       Optional<FP8_F32Tensor>:$query_scale,
                       Optional<FP8_F32Tensor>:$key_scale,
                       Optional<FP8_F32Tensor>:$value_scale,
                       OptionalAttr<FP8_ScaleLayoutAttr>:$scale_layout,
                       F32Attr:$scale, UnitAttr:$causal,
                       UnitAttr:$sequence_major);
  let results = (outs FP8_HighPrecisionTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` $mask^)?
    (`scales` `(` $query_scale^ `,` $key_scale `,` $value_scale `)`)?
    (`scale_layout` `` $scale_layout^)?
    `scale` `(` $scale `)`
    (`causal` $causal^)? (`sequence_major` $sequence_major^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Query heads per key/value head (Hq / Hkv; the verifier makes head
    /// counts static).
    int64_t getGroupSize();
    /// The layout of the dequantization scales (per tensor by default).
    ::mlir::fp8::ScaleLayoutAttr getScaleLayoutOrDefault() {
      if (auto layout = getScaleLayoutAttr())
        return layout;
      return ::mlir::fp8::ScaleLayoutAttr::get(
          getContext(), ::mlir::fp8::Granularity::Tensor);
    }
    /// FP8 query, key and value (with their dequantization scales).
    bool isFP8() {
      return isa<Float8E4M3FNType, Float8E5M2Type>(
          getQuery().getType().getElementType());
    }
  }];
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

def FP8_TransposeOp : FP8_Op<"transpose", [Pure]> {
  let summary = "transpose a quantized tensor, re-quantizing when its scale "
                "layout does not survive the permutation";
  let description = [{
    When `dst_layout` is `src_layout` permuted (per-tensor scales, or blocks
    whose shape is permuted with the data), the FP8 values and the scales are
    permuted and nothing is rounded. Otherwise the values are dequantized,
    permuted, and quantized again with fresh scales computed for
    `dst_layout` by `recipe` (which is then required): e.g. 1x128 blocks
    along K become 1x128 blocks along the new innermost dimension.

    ```mlir
    %qt, %st = fp8.transpose %q, %s layout<block 1x128> permutation = [1, 0]
        to layout<block 1x128> recipe(#fp8.block)
        : tensor<256x256xf8E4M3FN>, tensor<256x2xf32>
        -> tensor<256x256xf8E4M3FN>, tensor<256x2xf32>
    ```
  }];
  let arguments = (ins FP8_FloatTensor:$input, FP8_ScaleTensor:$scale,
                       FP8_ScaleLayoutAttr:$src_layout,
                       DenseI64ArrayAttr:$permutation,
                       FP8_ScaleLayoutAttr:$dst_layout,
                       OptionalAttr<FP8_RecipeAttr>:$recipe);
  let results = (outs FP8_FloatTensor:$result, FP8_ScaleTensor:$result_scale);
  let assemblyFormat = [{
    $input `,` $scale `layout` `` $src_layout `permutation` `=` $permutation
    `to` `layout` `` $dst_layout (`recipe` `(` $recipe^ `)`)? attr-dict
    `:` type($input) `,` type($scale) `->` type($result) `,`
    type($result_scale)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
  let extraClassDeclaration = [{
    /// Whether the scale layout survives the permutation, so that the
    /// transpose moves bytes without rounding anything.
    bool isPassThrough();
  }];
}


//===----------------------------------------------------------------------===//
// Weights that stay in files
//===----------------------------------------------------------------------===//

def FP8_ExternalWeightOp : FP8_Op<"external_weight", [Pure]> {
  let summary = "a weight whose bytes stay in the model's external data file";
  let description = [{
    The tensor stored at bytes `[offset, offset + length)` of the file
    `location` (relative to the model's directory, which the module's
    `fp8.external_data_dir` attribute names), little-endian and row-major,
    as ONNX external data is. The compiler never reads it: the importer
    makes one for each large external initializer when weights go to a
    weights file (`fp8-compile --weights`), `fp8-materialize-external-weights`
    turns it into an uninitialized constant `memref.global`, and the
    library's weights file receives the bytes, streamed from `location`
    (docs/Weights.md). `name` is the ONNX initializer's.

    ```mlir
    %w = fp8.external_weight "model.layers.0.mlp.up_proj.weight"
        from "model.onnx.data" [4096, 117440512] : tensor<14336x4096xf16>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$location,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$length);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = [{
    $name `from` $location `[` $offset `,` $length `]` attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
}

def FP8_PackedWeightOp : FP8_Op<"packed_weight", [Pure]> {
  let summary = "a weight in a file, quantized by the weights packer";
  let description = [{
    The recipe's weight quantization of the tensor of type `source_type`
    stored at bytes `[offset, offset + length)` of the file `location` (as
    `fp8.external_weight` describes it): the values of

    ```
    %a = fp8.amax %w layout<L>
    %s = fp8.compute_scale %a recipe(R) format(F)
    %q = fp8.quantize %w, %s layout<L>
    // with `permutation`: fp8.transpose %q, %s ... permutation = P (moves
    // bytes: L survives P)
    // a result larger than the (permuted) shape: tensor.pad with FP8 zeros
    // at the high end of each dimension
    ```

    with the same bits, which `fp8-pack-external-weights` folds into this op
    so that the compiler never reads the weight: the weights packer
    (runtime/include/fp8rt/pack.h, in fp8-compile and fp8-pack) computes
    both results from the file, chunk by chunk, into the library's weights
    file. `fp8-materialize-external-weights` turns each result into an
    uninitialized constant global whose entry in `fp8.external_weights`
    describes the quantization (docs/Weights.md).

    ```mlir
    %q, %s = fp8.packed_weight "w" from "model.onnx.data" [0, 117440512]
        : tensor<4096x14336xf16> layout<block 128x128> recipe(#fp8.block)
        format(e4m3) permutation = [1, 0]
        -> tensor<14336x4096xf8E4M3FN>, tensor<112x32xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$location,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$length,
                       TypeAttrOf<FP8_HighPrecisionTensor>:$source_type,
                       FP8_ScaleLayoutAttr:$layout, FP8_RecipeAttr:$recipe,
                       FP8_Format:$format,
                       OptionalAttr<DenseI64ArrayAttr>:$permutation);
  let results = (outs FP8_FloatTensor:$result, FP8_ScaleTensor:$scale);
  let assemblyFormat = [{
    $name `from` $location `[` $offset `,` $length `]` `:` $source_type
    `layout` `` $layout `recipe` `(` $recipe `)` `format` `(` $format `)`
    (`permutation` `=` $permutation^)? attr-dict `->` type($result) `,`
    type($scale)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The (permuted) shape of the quantized weight, before padding.
    ::llvm::SmallVector<int64_t> getPermutedShape();
  }];
}

def FP8_RoundedWeightOp : FP8_Op<"rounded_weight", [Pure]> {
  let summary = "a weight in a file, rounded to BF16 by the weights packer";
  let description = [{
    The tensor of type `source_type` stored at bytes `[offset, offset +
    length)` of the file `location` (as `fp8.external_weight` describes
    it), decoded to FP32 exactly and rounded to BF16 (round to nearest
    even; a NaN stays a quiet NaN), with `permutation` its dimensions
    permuted (result dimension i is source dimension permutation[i]): the
    operand a high-precision product (`fp8-high-precision-products`) makes
    of a weight that stays in its file,

    ```
    %w = fp8.external_weight ... : tensor<4096x128256xf16>
    %x = arith.extf %w : ... to tensor<4096x128256xf32>
    %b = arith.truncf %x : ... to tensor<4096x128256xbf16>
    %t = linalg.transpose ins(%b) outs(...) permutation = [1, 0]
    ```

    with the same bits (NaNs stay NaNs of their sign; their payload bits
    may differ from a run-time `truncf`'s), which
    `fp8-pack-external-weights` folds into this op so that the weights
    packer writes the BF16 (K-major) weight once
    instead of every run converting it (a Llama-3-8B head: 1 GB a run).
    `fp8-materialize-external-weights` turns it into an uninitialized
    constant global whose manifest entry has kind `round`
    (docs/Weights.md).

    ```mlir
    %w = fp8.rounded_weight "lm_head" from "model.onnx.data" [0, 1050673152]
        : tensor<4096x128256xf16> permutation = [1, 0]
        -> tensor<128256x4096xbf16>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$location,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$offset,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$length,
                       TypeAttrOf<FP8_HighPrecisionTensor>:$source_type,
                       OptionalAttr<DenseI64ArrayAttr>:$permutation);
  let results = (outs StaticShapeTensorOf<[BF16]>:$result);
  let assemblyFormat = [{
    $name `from` $location `[` $offset `,` $length `]` `:` $source_type
    (`permutation` `=` $permutation^)? attr-dict `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // FP8_OPS_TD
