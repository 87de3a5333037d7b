//===- VectorAccess.h - Vector loads and stores in GPU loop nests -*- C++
//-*-===//
//
// Part of fp8-opt. Private to lib/Conversion/FP8ToGPU.
//
//===----------------------------------------------------------------------===//

#ifndef FP8_LIB_CONVERSION_FP8TOGPU_VECTORACCESS_H
#define FP8_LIB_CONVERSION_FP8TOGPU_VECTORACCESS_H

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::fp8 {

/// Every buffer a GPU kernel of a model library receives starts at least
/// this many bytes aligned: the runtime's allocations (cuMemAlloc, its
/// pool's 512-byte granules, the weights' per-tensor uploads) are. The
/// vector accesses below claim no more than this.
constexpr int64_t kDeviceBufferAlignment = 16;

/// The byte alignment of a `width`-element vector access to `type` whose
/// last index is a multiple of `width` and whose other indices are
/// arbitrary, given a kDeviceBufferAlignment-aligned base; std::nullopt
/// when such an access cannot be a vector: the layout is not static, the
/// innermost stride is not 1, the offset or an outer stride is not a
/// multiple of `width` (a row could start mid-vector), the innermost
/// extent is not a multiple of `width`, or the element is not 1, 2, 4 or 8
/// bytes (i1 buffers hold a byte per element, a vector of i1 is bit-packed).
std::optional<int64_t> vectorAccessAlignment(MemRefType type, int64_t width);

/// Keeps reduction accumulators in registers: in every scf.for nested in
/// `root` (innermost first; loop-invariant code hoisted first), a load and a
/// later store of the same buffer element at loop-invariant indices, the only
/// accesses to that buffer in the loop, become a loop-carried value loaded
/// before the loop and stored after it. What linalg's loop lowering gives a
/// reduction into its output (load, combine, store at every step) then reads
/// and writes the output once. Assumes the loop's other buffers do not alias
/// that element, which holds for bufferized linalg ops (one-shot bufferization
/// only writes an output in place of an input it reads at the same index).
void promoteLoopAccumulators(RewriterBase &rewriter, Operation *root);

/// Coarsens the innermost dimension of a parallel loop nest by a width V
/// (the largest power of two <= `maxWidth` that divides its static trip
/// count and keeps every contiguous access aligned): each iteration of the
/// result handles V consecutive elements of that dimension, and a load or
/// store whose last index is that dimension's induction variable (its other
/// indices independent of it) becomes one vector.load / vector.store of V
/// elements, so that a GPU thread moves 16 bytes per instruction instead of
/// 1, 2 or 4. The body is cloned V times for the elements; other accesses
/// (a transpose's strided side, a broadcast operand) stay scalar.
///
/// Applies to an scf.parallel without reductions whose innermost loop is
/// `0 to N step 1` with N static, whose body is straight-line code at the
/// memory level or scf.for loops of such code whose bounds do not depend on
/// that dimension (one loop then runs the V clones, carrying V times its
/// values), no other op with memory effects, and no block reads after it
/// writes. Its iterations are
/// independent by definition, which is what lets the clones' stores be
/// gathered after the last clone. Returns the new loop (the old one is
/// erased), or failure with nothing changed.
FailureOr<scf::ParallelOp> coarsenInnermostLoop(RewriterBase &rewriter,
                                                scf::ParallelOp loop,
                                                int64_t maxWidth);

} // namespace mlir::fp8

#endif // FP8_LIB_CONVERSION_FP8TOGPU_VECTORACCESS_H
