//===- RecipeOptions.h - Typed recipe options, declared once ----*- C++ -*-===//
//
// Part of fp8-opt. The choices a user makes about a recipe -- which recipe,
// which FP8 format, how activation scales are stored -- as enums shared by
// the passes' options (fp8-insert-scales, fp8-block-layout, fp8-kv-cache),
// the pipelines' options and the compile API (fp8/Compiler/Compiler.h).
// Textual pipelines spell them as before (`recipe=block format=e5m2`);
// the option parser rejects any other spelling and lists the valid ones.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_DIALECT_FP8_TRANSFORMS_RECIPEOPTIONS_H
#define FP8_DIALECT_FP8_TRANSFORMS_RECIPEOPTIONS_H

#include "fp8/Dialect/FP8/IR/FP8.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <optional>

namespace mlir::fp8 {

/// A scaling recipe (docs/Recipes.md); None: no FP8 products.
enum class RecipeKind { None, Delayed, Current, Rowwise, Block, MXFP8 };

/// The order of activation scale tensors: the layout's own, or M-major and
/// 16-byte aligned along M (what Hopper's TMA loads).
enum class ScaleStorage { Canonical, TMA };

/// "none", "delayed", "current", "rowwise", "block", "mxfp8".
std::optional<RecipeKind> symbolizeRecipeKind(llvm::StringRef text);
llvm::StringRef stringifyRecipeKind(RecipeKind recipe);
/// "canonical", "tma".
std::optional<ScaleStorage> symbolizeScaleStorage(llvm::StringRef text);
llvm::StringRef stringifyScaleStorage(ScaleStorage storage);

/// The values of the options above, for llvm::cl (pass options are
/// cl options): the FP8 recipes (not `none`); e4m3, e5m2 and hybrid; the
/// formats of a KV cache (e4m3, e5m2); canonical and tma.
llvm::cl::ValuesClass recipeKindValues();
llvm::cl::ValuesClass formatValues();
llvm::cl::ValuesClass cacheFormatValues();
llvm::cl::ValuesClass scaleStorageValues();

} // namespace mlir::fp8

#endif // FP8_DIALECT_FP8_TRANSFORMS_RECIPEOPTIONS_H
