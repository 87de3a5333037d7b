//===- FP8.h - FP8 dialect ---------------------------------------*- C++ -*-===//
//
// Part of fp8-opt. Public header of the `fp8` dialect: dialect, enums,
// attributes (recipes, scale layouts) and ops.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_IR_FP8_H
#define FP8_DIALECT_FP8_IR_FP8_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "fp8/Numerics/Numerics.h"

namespace mlir::fp8 {
/// The largest scale block extent accepted anywhere (recipes, layouts,
/// padding): real recipes use 32 or 128; anything beyond this would only
/// make padding and scale tensors absurdly large.
inline constexpr int64_t kMaxBlockSize = 65536;

/// Module attributes of external weights (fp8.external_weight,
/// docs/Weights.md): the absolute directory their locations are relative
/// to (set by the importer), and after fp8-materialize-external-weights the
/// table global name -> {name, location, offset, length}.
inline constexpr llvm::StringLiteral kExternalDataDirAttr =
    "fp8.external_data_dir";
inline constexpr llvm::StringLiteral kExternalWeightsAttr =
    "fp8.external_weights";

/// Result attribute of a model function: this result is the argument of
/// the given index, updated in place (fp8-kv-cache-in-place). The model
/// ABI records the pair (signature version 4) and passes one buffer for
/// both; fp8-drop-tied-results removes the result after bufferization.
inline constexpr llvm::StringLiteral kTiedInputAttr = "fp8.tied_input";

/// On a tensor.pad: nothing reads the padding (fp8-block-layout's aligned
/// M-major activation scales), so fp8-untie-shared-fills may leave it
/// undefined instead of filling it.
inline constexpr llvm::StringLiteral kUnreadPaddingAttr = "fp8.unread_padding";
} // namespace mlir::fp8

#include "fp8/Dialect/FP8/IR/FP8Dialect.h.inc"
#include "fp8/Dialect/FP8/IR/FP8Enums.h.inc"

#include "fp8/Dialect/FP8/IR/FP8AttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Attributes.h.inc"

#define GET_OP_CLASSES
#include "fp8/Dialect/FP8/IR/FP8Ops.h.inc"

namespace mlir::fp8 {
/// A weight: a constant, or a weight that stays in its file
/// (fp8.external_weight). Recipes treat both alike (no delayed scaling:
/// the amax of a weight never changes).
bool isWeight(Value value);

/// Marks the FP32 twin of a product that an analysis build keeps as the
/// reference for its statistics (fp8-insert-scales{analyze}).
inline constexpr llvm::StringLiteral kFP32ReferenceAttrName =
    "fp8.fp32_reference";
} // namespace mlir::fp8

namespace mlir::fp8 {

/// The builtin element type of a concrete FP8 format (not `hybrid`).
FloatType getFloatType(MLIRContext *ctx, Format format);
/// The format of an FP8 element type, if it is one the dialect handles.
std::optional<Format> getFormat(Type elementType);
/// The scalar numerics format of a concrete FP8 format.
numerics::Fmt toNumericsFormat(Format format);
/// Largest finite value of a concrete format (448 or 57344).
float getMaxFinite(Format format);
/// The amax floor `eps` of a recipe that scales by the current formula
/// (`#fp8.current`, `#fp8.block`); 0 for the others.
float getScaleEps(RecipeAttrInterface recipe);
/// Whether `s` is a positive normal float such that every finite value of
/// `format` times `s` (largest and smallest subnormal included) is a normal
/// number of `type` with headroom: dequantize then quantize with `s` then
/// gives every FP8 value back exactly.
bool isExactRoundTripScale(float s, Format format, FloatType type);
/// A shape as diagnostics and reports write it: "4x?x128", or
/// "scalar (rank 0)".
std::string formatShape(ArrayRef<int64_t> shape);
/// The ONNX node a location names (the importer's NameLoc, also inside
/// fused locations and call sites after inlining); "" if none.
std::string getNodeName(Location loc);
/// The shape of M-major lhs scales (scaled_matmul `m_major(pad)`): the
/// canonical [batch..., Mb, Kb] with its two trailing dims swapped and Mb
/// padded to a multiple of `pad`.
SmallVector<int64_t> mMajorScaleShape(ArrayRef<int64_t> canonical, int64_t pad);

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_IR_FP8_H
