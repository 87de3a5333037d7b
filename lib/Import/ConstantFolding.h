//===- ConstantFolding.h - The importer's folder ----------------*- C++ -*-===//
//
// Part of fp8-opt. Scalar evaluation for the importer's constant folder
// (ConstantFolding.cpp): the IR builders (Builders.cpp) compute on Lits
// with these instead of emitting IR when all their inputs are small
// constants. Not a public header.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_IMPORT_CONSTANTFOLDING_H
#define FP8_LIB_IMPORT_CONSTANTFOLDING_H

#include "Importer.h"

namespace mlir::fp8::onnx_import {

/// Row-major strides of `shape`.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape);

/// Linear index into a numpy-broadcast input of shape `in` for the output
/// multi-index `idx` (of the output's rank).
int64_t broadcastIndex(ArrayRef<int64_t> idx, ArrayRef<int64_t> in,
                       ArrayRef<int64_t> inStrides);

/// Scalar evaluation for the folder. Integers (incl. bools) travel as int64,
/// floats as double; `outFloat` says which the result is.
double foldFloat(EwKind k, ArrayRef<double> a);

/// `isUnsigned`: the int64s hold uint64 bit patterns (Div, Mod, Max, Min
/// and comparisons differ from the signed ones above 2^63).
int64_t foldInt(EwKind k, ArrayRef<int64_t> a, bool isUnsigned);

bool isCompare(EwKind k);

template <typename T>
bool foldCompare(EwKind k, T x, T y) {
  switch (k) {
  case EwKind::Equal: return x == y;
  case EwKind::Greater: return x > y;
  case EwKind::GreaterOrEqual: return x >= y;
  case EwKind::Less: return x < y;
  default: return x <= y;
  }
}

/// Rounds `d` as converting to `t` would (integer wrap, float rounding), so
/// that folded Casts match runtime ones.
int64_t castToInt(double d, Type t);

} // namespace mlir::fp8::onnx_import

#endif // FP8_LIB_IMPORT_CONSTANTFOLDING_H
