//===- RowReductions.h - Row reductions as warp reductions ------*- C++ -*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_ROWREDUCTIONS_H
#define FP8_LIB_CONVERSION_FP8TOGPU_ROWREDUCTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fp8 {

/// Lanes that share one row of a row reduction (a warp).
constexpr int64_t kReductionLanes = 32;

/// Lowers a row reduction -- a bufferized linalg.generic with parallel
/// dimensions first and one reduction dimension last (at least
/// kReductionLanes long, static) that is the innermost index of every input
/// it indexes (rows contiguous: not a contraction's K x N operand), one f32
/// output indexed by the parallel dimensions only, whose body yields `combine(f(inputs...), out)` with
/// `combine` one of addf, mulf, maximumf, minimumf, maxnumf, minnumf -- to
/// an scf.parallel over (parallel dims..., lane in [0, 32)): lane l folds
/// f over elements l, l + 32, ... from the combiner's identity, the 32
/// partials meet through five gpu.shuffle xor steps, and lane 0 combines
/// the total into the output. fp8-gpu-map-loops linearizes the lane
/// innermost, so the lanes of a row are the 32 threads of one warp and
/// their loads are coalesced. The op is erased on success; on failure
/// (not such a reduction) nothing changed.
/// Lowers a row reduction (every dimension parallel but the last, a
/// reduction over a contiguous row of at least 32) to a warp per row. With
/// `init`, a fill of the whole output (initializingFill), lane 0 stores
/// combine(total, the fill's value) instead of folding into the loaded
/// output; the caller erases the fill when this succeeds.
/// With `epilogue` (rowReductionEpilogue), lane 0 also computes that
/// element-wise generic on the stored total and stores its result; the
/// caller erases the epilogue when this succeeds.
LogicalResult lowerRowReductionToWarps(RewriterBase &rewriter,
                                       linalg::GenericOp op,
                                       int64_t vectorWidth,
                                       linalg::FillOp init = {},
                                       linalg::GenericOp epilogue = {});

/// The element-wise generic right after `op` (the next op in the block with
/// memory effects; `op` writes its whole output) that reads only `op`'s
/// output, element for element
/// (identity maps over the output's shape, static), and writes one buffer
/// of that shape -- the reduction's output itself or a fresh allocation,
/// which cannot alias the rows still being read: RMSNorm's rsqrt(mean +
/// eps) after its sum, a recipe's scale after its amax. Its body must be scalar arithmetic that does not
/// read its own output. Null otherwise.
linalg::GenericOp rowReductionEpilogue(linalg::GenericOp op);

/// The linalg.fill that initializes `op`'s (single) output just before it:
/// the nearest preceding op in the block with memory effects is a fill of
/// the same buffer, and `op`'s output map is a permutation of its parallel
/// dimensions covering the whole (static) output, so every element the
/// fill wrote is written once by `op`. Null otherwise.
linalg::FillOp initializingFill(linalg::GenericOp op);

} // namespace mlir::fp8

#endif // FP8_LIB_CONVERSION_FP8TOGPU_ROWREDUCTIONS_H
