//===- MemRefViews.h - The buffer under reshaping views ---------*- C++ -*-===//
//
// Part of fp8-opt. Shared by passes of the FP8 dialect and of the GPU
// conversion (header only: they live in different libraries).
//
//===----------------------------------------------------------------------===//

#ifndef FP8_SUPPORT_MEMREFVIEWS_H
#define FP8_SUPPORT_MEMREFVIEWS_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::fp8 {

/// The buffer under a chain of memref.expand_shape / collapse_shape views of
/// `v` -- and of memref.cast with `throughCasts` --: the same elements at
/// the same linear offsets (identity layouts).
inline Value reshapeRoot(Value v, bool throughCasts = false) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto e = dyn_cast<memref::ExpandShapeOp>(def))
      v = e.getSrc();
    else if (auto c = dyn_cast<memref::CollapseShapeOp>(def))
      v = c.getSrc();
    else if (auto c = dyn_cast<memref::CastOp>(def); c && throughCasts)
      v = c.getSource();
    else
      break;
  }
  return v;
}

/// Whether `t` is a memref of static shape and identity layout: one whose
/// reshapes keep every element at its linear offset.
inline bool isStaticIdentity(Type t) {
  auto m = dyn_cast_if_present<MemRefType>(t);
  return m && m.hasStaticShape() && m.getLayout().isIdentity();
}

} // namespace mlir::fp8

#endif // FP8_SUPPORT_MEMREFVIEWS_H
