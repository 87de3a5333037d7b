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
LogicalResult lowerRowReductionToWarps(RewriterBase &rewriter,
                                       linalg::GenericOp op,
                                       int64_t vectorWidth);

} // namespace mlir::fp8

#endif // FP8_LIB_CONVERSION_FP8TOGPU_ROWREDUCTIONS_H
