//===- RecipeOptions.cpp - Typed recipe options, declared once ------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/Transforms/RecipeOptions.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace mlir::fp8;
namespace cl = llvm::cl;

std::optional<RecipeKind> fp8::symbolizeRecipeKind(llvm::StringRef text) {
  return llvm::StringSwitch<std::optional<RecipeKind>>(text)
      .Case("none", RecipeKind::None)
      .Case("delayed", RecipeKind::Delayed)
      .Case("current", RecipeKind::Current)
      .Case("rowwise", RecipeKind::Rowwise)
      .Case("block", RecipeKind::Block)
      .Case("mxfp8", RecipeKind::MXFP8)
      .Default(std::nullopt);
}

llvm::StringRef fp8::stringifyRecipeKind(RecipeKind recipe) {
  switch (recipe) {
  case RecipeKind::None:
    return "none";
  case RecipeKind::Delayed:
    return "delayed";
  case RecipeKind::Current:
    return "current";
  case RecipeKind::Rowwise:
    return "rowwise";
  case RecipeKind::Block:
    return "block";
  case RecipeKind::MXFP8:
    return "mxfp8";
  }
  llvm_unreachable("recipe kind");
}

std::optional<ScaleStorage> fp8::symbolizeScaleStorage(llvm::StringRef text) {
  return llvm::StringSwitch<std::optional<ScaleStorage>>(text)
      .Case("canonical", ScaleStorage::Canonical)
      .Case("tma", ScaleStorage::TMA)
      .Default(std::nullopt);
}

llvm::StringRef fp8::stringifyScaleStorage(ScaleStorage storage) {
  return storage == ScaleStorage::TMA ? "tma" : "canonical";
}

cl::ValuesClass fp8::recipeKindValues() {
  return cl::values(
      clEnumValN(RecipeKind::Delayed, "delayed",
                 "per-tensor scales from an amax history"),
      clEnumValN(RecipeKind::Current, "current",
                 "per-tensor scales from the tensor's own amax"),
      clEnumValN(RecipeKind::Rowwise, "rowwise",
                 "per-row activation scales, per-output-channel weights"),
      clEnumValN(RecipeKind::Block, "block",
                 "1x128 activation and 128x128 weight blocks"),
      clEnumValN(RecipeKind::MXFP8, "mxfp8", "1x32 blocks along K, E8M0"));
}

cl::ValuesClass fp8::formatValues() {
  return cl::values(
      clEnumValN(Format::E4M3, "e4m3", "E4M3 (max 448)"),
      clEnumValN(Format::E5M2, "e5m2", "E5M2 (max 57344)"),
      clEnumValN(Format::Hybrid, "hybrid",
                 "E4M3 forward, E5M2 gradients (inference: E4M3)"));
}

cl::ValuesClass fp8::cacheFormatValues() {
  return cl::values(clEnumValN(Format::E4M3, "e4m3", "E4M3 (max 448)"),
                    clEnumValN(Format::E5M2, "e5m2", "E5M2 (max 57344)"));
}

cl::ValuesClass fp8::scaleStorageValues() {
  return cl::values(
      clEnumValN(ScaleStorage::Canonical, "canonical", "the layout's order"),
      clEnumValN(ScaleStorage::TMA, "tma",
                 "M-major, 16-byte aligned along M (TMA loads)"));
}
