//===- RewriteConfig.h - Greedy driver settings for local rewrites -*- C++ -*-===//
//
// Part of fp8-opt. The passes whose rewrites are local patterns
// (fp8-transpose-rescale, fp8-block-layout) apply them greedily but change
// nothing else: no folding, no constant CSE, no region simplification --
// cleanup is the pipelines' canonicalize, as it was when these passes were
// walks, so their output is what it was.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_DIALECT_FP8_TRANSFORMS_REWRITECONFIG_H
#define FP8_LIB_DIALECT_FP8_TRANSFORMS_REWRITECONFIG_H

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::fp8 {

inline GreedyRewriteConfig localRewriteConfig() {
  GreedyRewriteConfig config;
  config.enableFolding(false)
      .enableConstantCSE(false)
      .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
  return config;
}

} // namespace mlir::fp8

#endif // FP8_LIB_DIALECT_FP8_TRANSFORMS_REWRITECONFIG_H
