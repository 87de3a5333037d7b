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

/// Whether `k` is a comparison (its result is bool).
bool isCompare(EwKind k);

/// Compile-time evaluation on Lits: each function computes what the IR
/// builder or handler named in its comment computes at run time, bit for
/// bit (integers wrap, integer division by zero gives 0, float results
/// are rounded once to the result type by Importer::litConstant). Callers
/// decide what to fold (all inputs constant, at most Importer::kFoldLimit
/// result elements) and check shapes and indices first.

/// Importer::elementwise: `kind` applied to `ins`, numpy-broadcast to
/// `outShape`, into `outT` (unsigned when `outUnsigned`). The inputs'
/// element types and signedness are the Lits'.
Lit foldElementwise(EwKind kind, ArrayRef<Lit> ins, ArrayRef<int64_t> outShape,
                    Type outT, bool outUnsigned);

/// Importer::broadcastTo: `in` numpy-broadcast to `shape`.
Lit foldBroadcast(const Lit &in, ArrayRef<int64_t> shape);

/// Importer::transpose: out[i] = in[perm applied to i].
Lit foldTranspose(const Lit &in, ArrayRef<int64_t> perm);

/// Importer::extractSlice (in-bounds offsets, positive strides).
Lit foldSlice(const Lit &in, ArrayRef<int64_t> offsets,
              ArrayRef<int64_t> sizes, ArrayRef<int64_t> strides);

/// Importer::concat along `axis` (equal shapes but on `axis`).
Lit foldConcat(ArrayRef<Lit> ins, int64_t axis);

/// Gather along `axis` with `indices` in [0, in.shape[axis]) (negative ones
/// wrapped already), into `outShape`.
Lit foldGather(const Lit &in, ArrayRef<int64_t> indices, int64_t axis,
               ArrayRef<int64_t> outShape);

/// GatherND with `batchDims` and index tuples of `indices` (of shape
/// `indicesShape`, last dim k; in range, negative ones wrapped already),
/// into `outShape`.
Lit foldGatherND(const Lit &in, ArrayRef<int64_t> indices,
                 ArrayRef<int64_t> indicesShape, int64_t batchDims,
                 ArrayRef<int64_t> outShape);

} // namespace mlir::fp8::onnx_import

#endif // FP8_LIB_IMPORT_CONSTANTFOLDING_H
