//===- TorchModule.cpp - The torch module an op came from -----------------===//
//
// Part of fp8-opt.
//
//===----------------------------------------------------------------------===//

#include "fp8/Dialect/FP8/IR/TorchModule.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

using namespace mlir;

static constexpr llvm::StringLiteral kModuleKey = "torch_module";
static constexpr llvm::StringLiteral kClassKey = "torch_class";

Location mlir::fp8::withTorchModule(Location loc, StringRef module,
                                    StringRef moduleClass) {
  if (module.empty())
    return loc;
  MLIRContext *ctx = loc.getContext();
  SmallVector<NamedAttribute, 2> entries{
      NamedAttribute(StringAttr::get(ctx, kModuleKey),
                     StringAttr::get(ctx, module))};
  if (!moduleClass.empty())
    entries.push_back(NamedAttribute(StringAttr::get(ctx, kClassKey),
                                     StringAttr::get(ctx, moduleClass)));
  return FusedLoc::get({loc}, DictionaryAttr::get(ctx, entries), ctx);
}

/// The value of `key` in the first torch metadata found in `loc`.
static std::string findTorchMetadata(Location loc, StringRef key) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    if (auto dict = dyn_cast_or_null<DictionaryAttr>(fused.getMetadata()))
      if (dict.get(kModuleKey))
        if (auto value = dict.getAs<StringAttr>(key))
          return value.str();
    for (Location inner : fused.getLocations())
      if (std::string v = findTorchMetadata(inner, key); !v.empty())
        return v;
    return "";
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return findTorchMetadata(callSite.getCallee(), key);
  if (auto name = dyn_cast<NameLoc>(loc))
    return findTorchMetadata(name.getChildLoc(), key);
  return "";
}

std::string mlir::fp8::getTorchModuleName(Location loc) {
  return findTorchMetadata(loc, kModuleKey);
}

std::string mlir::fp8::getTorchModuleName(Operation *op) {
  return getTorchModuleName(op->getLoc());
}

std::string mlir::fp8::getTorchModuleClass(Location loc) {
  return findTorchMetadata(loc, kClassKey);
}
